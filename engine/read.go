package engine

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
)

// openTrace opens a trace file, transparently decompressing gzip (detected by its magic bytes, not
// the name). The returned reader decompresses ahead in its own goroutine so that inflating overlaps
// with splitting. rawRead counts bytes read from disk, for progress.
func openTrace(path string, rawRead *atomic.Int64) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	counted := &countingReader{r: f, n: rawRead}
	br := bufio.NewReaderSize(counted, 1<<20)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("corrupt gzip header: %w", err)
		}
		return newReadAhead(&gzipErrors{r: zr, raw: rawRead}, f), nil
	}
	return newReadAhead(br, f), nil
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

// readAhead reads its source in a goroutine, a few chunks ahead of the consumer.
type readAhead struct {
	chunks chan []byte
	cur    []byte
	orig   []byte // the whole chunk cur is a tail of, recycled when consumed
	err    error
	done   chan struct{}
	closer io.Closer
	free   chan []byte
}

const aheadChunk = 1 << 20

func newReadAhead(src io.Reader, closer io.Closer) *readAhead {
	ra := &readAhead{chunks: make(chan []byte, 4), done: make(chan struct{}), closer: closer, free: make(chan []byte, 6)}
	go func() {
		defer close(ra.chunks)
		for {
			var buf []byte
			select {
			case buf = <-ra.free:
			default:
				buf = make([]byte, aheadChunk)
			}
			n, err := io.ReadFull(src, buf)
			if n > 0 {
				select {
				case ra.chunks <- buf[:n]:
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

func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		c, ok := <-ra.chunks
		if !ok {
			return 0, ra.err
		}
		ra.cur, ra.orig = c, c
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	if len(ra.cur) == 0 {
		select {
		case ra.free <- ra.orig[:cap(ra.orig)]:
		default:
		}
		ra.cur, ra.orig = nil, nil
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
