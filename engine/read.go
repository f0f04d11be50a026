package engine

import (
	"bufio"
	"io"
	"sync/atomic"

	"tracesql/internal/traceio"
)

// openTrace opens a trace file through traceio (which decompresses gzip, told by its magic bytes, and
// drops a leading UTF-8 byte order mark, as the exports read the file too). The returned reader
// decompresses ahead in its own goroutine so that inflating overlaps with splitting, and hands the
// splitter its blocks as chunks. rawRead counts bytes read from disk, for progress.
func openTrace(path string, rawRead *atomic.Int64) (io.ReadCloser, error) {
	r, err := traceio.Open(path, rawRead)
	if err != nil {
		return nil, err
	}
	return &readAhead{Reader: r, skipped: r.Skipped()}, nil
}

// traceStream returns the content of the trace file that br reads, without read-ahead (for the callers
// that read only a file's head): see traceio.Stream.
func traceStream(br *bufio.Reader) (r io.Reader, skipped int64, err error) {
	return traceio.Stream(br)
}

// chunk is a buffer of decompressed input, data in buf[start:end]. The space before start is
// headroom: when an event straddles two chunks, the splitter copies only the cut-off head of the
// event in front of the next chunk's data, so that every event is contiguous in one chunk and the
// batches can point into the chunks instead of copying every event (one pass over the data less).
type chunk struct {
	buf        []byte
	start, end int
	refs       atomic.Int32    // the splitter and each batch that points into buf hold one
	ra         *traceio.Reader // where buf goes back when the last reference is dropped; nil: the GC
}

const chunkHeadroom = traceio.Headroom

func (c *chunk) retain() { c.refs.Add(1) }

func (c *chunk) release() {
	if c.refs.Add(-1) == 0 && c.ra != nil {
		c.ra.Recycle(c.buf)
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

// readAhead is the loader's traceio.Reader: its blocks are the splitter's chunks.
type readAhead struct {
	*traceio.Reader
	// skipped is the number of bytes dropped before the first chunk (a byte order mark): the
	// splitter starts its stream offsets there, so that error offsets are positions in the file.
	skipped int64
}

func (ra *readAhead) nextChunk() (*chunk, error) {
	b, err := ra.Next()
	if err != nil {
		return nil, err
	}
	c := &chunk{buf: b[:cap(b)], start: chunkHeadroom, end: len(b), ra: ra.Reader}
	c.refs.Store(1)
	return c, nil
}
