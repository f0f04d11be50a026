// Package traceio is the one place trace files are opened and decompressed: the loader (package engine)
// and the exports that rewrite a loaded trace (package sqlfuncs) read a file through it, so that both see
// the same bytes and refuse the same files with the same words. A trace file is plain or gzip JSON
// (told by its magic bytes, not its name), gzip in one member or several (concatenated members are one
// stream, as gzip -d reads them), with zero bytes tolerated after the last member, and a leading UTF-8
// byte order mark dropped. Reader decompresses ahead in its own goroutine.
package traceio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
)

// Open opens the trace file at path (see OpenFile). The file is closed when the Reader is, or on error.
func Open(path string, rawRead *atomic.Int64) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := OpenFile(f, rawRead)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// OpenFile reads the trace file f, transparently decompressing gzip (detected by its magic bytes, not the
// name) and dropping a leading UTF-8 byte order mark. The returned Reader decompresses ahead in its own
// goroutine so that inflating overlaps with what consumes it; closing it closes f. On error f is left open,
// for the caller to close. rawRead, when not nil, counts bytes read from disk, for progress.
func OpenFile(f *os.File, rawRead *atomic.Int64) (*Reader, error) {
	if rawRead == nil {
		rawRead = new(atomic.Int64)
	}
	path := f.Name()
	br := bufio.NewReaderSize(&countingReader{r: f, n: rawRead}, 1<<20)
	if head, _ := br.Peek(12); len(head) == 12 && string(head[8:12]) == "DUCK" {
		return nil, fmt.Errorf("a DuckDB database, not a trace: open it with --db %s", path)
	}
	if strings.HasSuffix(strings.ToLower(path), ".gz") && !looksGzipOrJSON(br) {
		// A file recompressed (zstd, xz) that kept its .gz name: named, as under any other name (r76 #3).
		if head, _ := br.Peek(8); OtherFormat(head) != "" {
			return nil, errors.New("not gzip: " + OtherFormat(head))
		}
		return nil, errors.New("not gzip: the name ends in .gz but the file starts with neither gzip's magic bytes (1f 8b) nor JSON")
	}
	r, skipped, err := Stream(br)
	if err != nil {
		return nil, err
	}
	ra := newReader(r, f)
	ra.skipped = skipped
	return ra, nil
}

// OtherFormat names the format of a file that starts with head when it is one a trace is sometimes
// found in but tracesql does not read (another compressor, an archive, UTF-16), with what to do; "" when
// it is none of them.
func OtherFormat(head []byte) string {
	for _, f := range []struct{ magic, what string }{
		{"\x28\xb5\x2f\xfd", "zstd-compressed data: tracesql reads plain and gzip JSON (zstd -d it, or recompress with gzip)"},
		{"BZh", "bzip2-compressed data: tracesql reads plain and gzip JSON (bunzip2 it)"},
		{"\xfd7zXZ\x00", "xz-compressed data: tracesql reads plain and gzip JSON (unxz it)"},
		{"PK\x03\x04", "a zip archive: unzip it and load the trace inside"},
		{"\xff\xfe", "UTF-16 text (its byte-order mark): convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"},
		{"\xfe\xff", "UTF-16 text (its byte-order mark): convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"},
	} {
		if bytes.HasPrefix(head, []byte(f.magic)) {
			return f.what
		}
	}
	return ""
}

// looksGzipOrJSON reports whether br starts with gzip's magic bytes or, after a byte order mark and
// white space, with what a trace's JSON starts with (a .gz file that holds plain JSON is read as it is).
func looksGzipOrJSON(br *bufio.Reader) bool {
	head, _ := br.Peek(512)
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return true
	}
	head = bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	return len(head) == 0 || head[0] == '{' || head[0] == '['
}

// Stream returns the content of the trace file that br reads: decompressed when it starts with gzip's
// magic bytes (a truncated or corrupt stream is reported with the bytes of the file read so far), without
// a leading byte order mark, whose length it returns as skipped. It reads no further ahead than its
// callers' reads need (no read-ahead: for those that read only a file's head).
func Stream(br *bufio.Reader) (r io.Reader, skipped int64, err error) {
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		// The gzip reader reads through its own counted bufio.Reader so that the end of each member
		// is known exactly (a count of what was read from disk would include the read-ahead, and the
		// callers that read only a file's head keep none). A *bufio.Reader keeps flate's fast path, and
		// flate reads no byte past a member's end from a ByteReader.
		g := &gzipMembers{}
		g.src = bufio.NewReaderSize(&countingReader{r: br, n: &g.consumed}, 64<<10)
		zr, err := gzip.NewReader(g.src)
		if err != nil {
			return nil, 0, fmt.Errorf("corrupt gzip header: %w", err)
		}
		zr.Multistream(false) // gzipMembers starts each next member itself, to tell one from junk
		g.zr = zr
		// The smallest bufio buffer: once its few peeked bytes are read, bufio hands large reads
		// straight to the gzip reader, so the BOM check costs no copy of the stream.
		zb := bufio.NewReaderSize(g, 16)
		return zb, skipBOM(zb), nil
	}
	return br, skipBOM(br), nil
}

// utf8BOM is the byte order mark some Windows tools (and Python's utf-8-sig) write before JSON.
// JSON forbids it (RFC 8259 §8.1) but lets parsers ignore it, as Perfetto and Python's json do.
// One is dropped; a second one is content, which no JSON reader takes.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// skipBOM drops a leading byte order mark and returns the number of bytes dropped. A read error while
// peeking is left for the next Read.
func skipBOM(br *bufio.Reader) int64 {
	if head, _ := br.Peek(len(utf8BOM)); bytes.Equal(head, utf8BOM) {
		n, _ := br.Discard(len(utf8BOM))
		return int64(n)
	}
	return 0
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// truncatedError is a gzip stream that ends inside a member. It is io.ErrUnexpectedEOF for errors.Is,
// as the gzip reader's own word for it: whoever reads the stream cannot take it for a clean end.
type truncatedError struct{ after int64 }

func (e *truncatedError) Error() string {
	return fmt.Sprintf("truncated gzip stream after %d bytes", e.after)
}

func (e *truncatedError) Unwrap() error { return io.ErrUnexpectedEOF }

// gzipMembers reads a gzip file member by member (concatenated members are one stream, as gzip -d
// reads them) and turns the gzip reader's errors into messages that say what happened to the file.
// The gzip reader's own multistream mode would take bytes after the last member for the header of
// another one: a few bytes of junk read as "truncated", more as a corrupt header.
type gzipMembers struct {
	zr       *gzip.Reader
	src      *bufio.Reader // the compressed bytes, counted into consumed as they are read ahead
	consumed atomic.Int64
	err      error // sticky: the gzip reader is Reset for each member and forgets its own
}

func (g *gzipMembers) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	for {
		n, err := g.zr.Read(p)
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			err = g.nextMember()
			if err == nil && n == 0 {
				continue
			}
		case errors.Is(err, io.ErrUnexpectedEOF):
			err = &truncatedError{after: g.consumed.Load()}
		default:
			err = fmt.Errorf("corrupt gzip stream after %d bytes: %w", g.consumed.Load(), err)
		}
		g.err = err
		return n, err
	}
}

// nextMember is called at the end of a member, its trailer checked. It starts the next member and
// returns nil, or returns io.EOF at the end of the file, or an error for what follows instead.
func (g *gzipMembers) nextMember() error {
	end := g.consumed.Load() - int64(g.src.Buffered()) // the member's end, a position in the file
	head, err := g.src.Peek(2)
	switch {
	case len(head) == 0 && errors.Is(err, io.EOF):
		return io.EOF
	case len(head) == 0:
		return fmt.Errorf("read after the gzip stream ended at byte %d: %w", end, err)
	case head[0] == 0x1f && (len(head) == 1 || head[1] == 0x8b):
		if err := g.zr.Reset(g.src); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return &truncatedError{after: g.consumed.Load()}
			}
			return fmt.Errorf("corrupt gzip header at byte %d: %w", end, err)
		}
		g.zr.Multistream(false) // Reset turns it back on
		return nil
	}
	// Not another member. Zero bytes are accepted: some tools pad a file to a block size, and
	// gzip -d itself only warns of trailing zeros ("trailing zero bytes ignored").
	var tail zeroCounter
	if _, err := g.src.WriteTo(&tail); err != nil {
		return fmt.Errorf("read after the gzip stream ended at byte %d: %w", end, err)
	}
	if tail.nonZero {
		return fmt.Errorf("%d bytes of trailing data after the gzip stream ended at byte %d (not gzip)", tail.n, end)
	}
	return io.EOF
}

// zeroCounter counts the bytes written to it and notes whether any of them is not zero.
type zeroCounter struct {
	n       int64
	nonZero bool
}

func (z *zeroCounter) Write(p []byte) (int, error) {
	z.n += int64(len(p))
	for _, c := range p {
		if c != 0 {
			z.nonZero = true
			break
		}
	}
	return len(p), nil
}
