package engine

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

// openTrace opens a trace file, transparently decompressing gzip (detected by its magic bytes, not
// the name) and dropping a leading UTF-8 byte order mark. The returned reader decompresses ahead in
// its own goroutine so that inflating overlaps with splitting. rawRead counts bytes read from disk,
// for progress.
func openTrace(path string, rawRead *atomic.Int64) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(&countingReader{r: f, n: rawRead}, 1<<20)
	if strings.HasSuffix(strings.ToLower(path), ".gz") && !looksGzipOrJSON(br) {
		f.Close()
		return nil, errors.New("not gzip: the name ends in .gz but the file starts with neither gzip's magic bytes (1f 8b) nor JSON")
	}
	r, skipped, err := traceStream(br, rawRead)
	if err != nil {
		f.Close()
		return nil, err
	}
	ra := newReadAhead(r, f)
	ra.skipped = skipped
	return ra, nil
}

// looksGzipOrJSON reports whether br starts with gzip's magic bytes or, after a byte order mark and
// white space, with what a trace's JSON starts with (a .gz file that holds plain JSON is read as it is).
func looksGzipOrJSON(br *bufio.Reader) bool {
	head, _ := br.Peek(512)
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return true
	}
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(head) == 0 || head[0] == '{' || head[0] == '['
}

// traceStream returns the content of the trace file that br reads: decompressed when it starts with
// gzip's magic bytes (a truncated or corrupt stream is reported with the bytes read from the file,
// rawRead), without a leading byte order mark, whose length it returns as skipped.
func traceStream(br *bufio.Reader, rawRead *atomic.Int64) (r io.Reader, skipped int64, err error) {
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, 0, fmt.Errorf("corrupt gzip header: %w", err)
		}
		// The smallest bufio buffer: once its few peeked bytes are read, bufio hands large reads
		// straight to the gzip reader, so the BOM check costs no copy of the stream.
		zb := bufio.NewReaderSize(&gzipErrors{r: zr, raw: rawRead}, 16)
		return zb, skipBOM(zb), nil
	}
	return br, skipBOM(br), nil
}

// utf8BOM is the byte order mark some Windows tools (and Python's utf-8-sig) write before JSON.
// JSON forbids it (RFC 8259 §8.1) but lets parsers ignore it, as Perfetto and Python's json do.
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

// gzipErrors turns the gzip reader's errors into messages that say what happened to the file.
type gzipErrors struct {
	r   io.Reader
	raw *atomic.Int64
}

func (g *gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("truncated gzip stream after %d bytes", g.raw.Load())
		} else {
			err = fmt.Errorf("corrupt gzip stream after %d bytes: %w", g.raw.Load(), err)
		}
	}
	return n, err
}

// chunk is a buffer of decompressed input, data in buf[start:end]. The space before start is
// headroom: when an event straddles two chunks, the splitter copies only the cut-off head of the
// event in front of the next chunk's data, so that every event is contiguous in one chunk and the
// batches can point into the chunks instead of copying every event (one pass over the data less).
type chunk struct {
	buf        []byte
	start, end int
	refs       atomic.Int32 // the splitter and each batch that points into buf hold one
	pool       chan *chunk  // where the chunk goes when the last reference is dropped; nil: the GC
}

const (
	chunkData     = 2 << 20
	chunkHeadroom = 64 << 10
)

func (c *chunk) retain() { c.refs.Add(1) }

func (c *chunk) release() {
	if c.refs.Add(-1) == 0 && c.pool != nil {
		select {
		case c.pool <- c:
		default:
		}
	}
}

// chunkReader hands out chunks of input; each comes with one reference, owned by the caller.
// At the end of input it returns io.EOF or the read error.
type chunkReader interface {
	nextChunk() (*chunk, error)
}

// readerChunks adapts a plain io.Reader (tests, uncompressed input without read-ahead).
type readerChunks struct {
	r   io.Reader
	err error
}

func (rc *readerChunks) nextChunk() (*chunk, error) {
	if rc.err != nil {
		return nil, rc.err
	}
	c := &chunk{buf: make([]byte, chunkHeadroom+256<<10), start: chunkHeadroom}
	c.refs.Store(1)
	for {
		n, err := rc.r.Read(c.buf[chunkHeadroom:])
		if err != nil {
			rc.err = err
		}
		if n > 0 {
			c.end = chunkHeadroom + n
			return c, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readAhead reads its source in a goroutine, a few chunks ahead of the consumer. Consumed chunks
// come back through free, so that steady state allocates nothing.
type readAhead struct {
	chunks chan *chunk
	cur    *chunk // Read's current chunk
	err    error
	done   chan struct{}
	closer io.Closer
	free   chan *chunk
	// skipped is the number of bytes dropped before the first chunk (a byte order mark): the
	// splitter starts its stream offsets there, so that error offsets are positions in the file.
	skipped int64
}

func newReadAhead(src io.Reader, closer io.Closer) *readAhead {
	ra := &readAhead{chunks: make(chan *chunk, 3), done: make(chan struct{}), closer: closer, free: make(chan *chunk, 8)}
	go func() {
		defer close(ra.chunks)
		for {
			var c *chunk
			select {
			case c = <-ra.free:
			default:
				c = &chunk{buf: make([]byte, chunkHeadroom+chunkData), pool: ra.free}
			}
			n, err := io.ReadFull(src, c.buf[chunkHeadroom:])
			if n > 0 {
				c.start, c.end = chunkHeadroom, chunkHeadroom+n
				c.refs.Store(1)
				select {
				case ra.chunks <- c:
				case <-ra.done:
					return
				}
			}
			if err != nil {
				if errors.Is(err, io.ErrUnexpectedEOF) {
					err = io.EOF // short final chunk
				}
				ra.err = err
				return
			}
		}
	}()
	return ra
}

func (ra *readAhead) nextChunk() (*chunk, error) {
	c, ok := <-ra.chunks
	if !ok {
		return nil, ra.err
	}
	return c, nil
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for ra.cur == nil {
		c, err := ra.nextChunk()
		if err != nil {
			return 0, err
		}
		ra.cur = c
	}
	n := copy(p, ra.cur.buf[ra.cur.start:ra.cur.end])
	ra.cur.start += n
	if ra.cur.start == ra.cur.end {
		ra.cur.release()
		ra.cur = nil
	}
	return n, nil
}

func (ra *readAhead) Close() error {
	select {
	case <-ra.done:
	default:
		close(ra.done)
	}
	return ra.closer.Close()
}
