package traceio

import (
	"io"
)

const (
	// BlockSize is the most data a block of the read-ahead holds.
	BlockSize = 2 << 20
	// Headroom is the free space in front of a block's data, for a consumer of Next that moves the
	// cut-off tail of one block in front of the next one's data (the engine's splitter keeps every
	// event contiguous in one block that way, instead of copying every event).
	Headroom = 64 << 10
)

// Reader reads its source in a goroutine, a few blocks ahead of the consumer. Blocks used up come back
// through free, so that steady state allocates nothing. It is read either with Read or block by block
// with Next and Recycle, not both.
type Reader struct {
	blocks chan []byte
	free   chan []byte
	cur    []byte // Read's unread part of its current block
	curBuf []byte // the block cur lies in, recycled once cur is read
	err    error  // set before blocks is closed: io.EOF at the clean end, else why it ended
	done   chan struct{}
	closer io.Closer
	// skipped is the number of bytes dropped before the first block (a byte order mark).
	skipped int64
}

func newReader(src io.Reader, closer io.Closer) *Reader {
	ra := &Reader{blocks: make(chan []byte, 3), done: make(chan struct{}), closer: closer, free: make(chan []byte, 8)}
	go func() {
		defer close(ra.blocks)
		for {
			var b []byte
			select {
			case b = <-ra.free:
			default:
				b = make([]byte, Headroom+BlockSize)
			}
			// Each block is filled up (or to the end of src) before it is handed on, but not with
			// io.ReadFull: it turns the end of src inside a block into io.ErrUnexpectedEOF, which then has
			// to be read as a short final block, and src's own errors say io.ErrUnexpectedEOF too, for a
			// gzip stream cut short (truncatedError, or the bare word of a gzip reader): taken for a short
			// final block, a truncated file would pass for a shorter trace. So src's error is kept as it
			// is, io.EOF only at src's clean end, and none is lost when it comes with the block's last bytes.
			n := Headroom
			var err error
			for n < len(b) && err == nil {
				var k int
				k, err = src.Read(b[n:])
				n += k
			}
			if n > Headroom {
				select {
				case ra.blocks <- b[:n]:
				case <-ra.done:
					return
				}
			}
			if err != nil {
				ra.err = err
				return
			}
		}
	}()
	return ra
}

// Skipped returns the number of bytes dropped before the content (a byte order mark): a consumer that
// reports positions in the file starts its offsets there.
func (ra *Reader) Skipped() int64 { return ra.skipped }

// Next returns the next block read: its data is b[Headroom:], and b[:Headroom] and b[len(b):cap(b)] are
// free for the caller to use. At the end of the content it returns io.EOF, or the error that ended it.
// The caller hands b back with Recycle once done with it.
func (ra *Reader) Next() (b []byte, err error) {
	b, ok := <-ra.blocks
	if !ok {
		return nil, ra.err
	}
	return b, nil
}

// Recycle gives back a block that Next returned, for the read-ahead to fill again. It may be called from
// any goroutine, and need not be: a block not given back is left to the garbage collector.
func (ra *Reader) Recycle(b []byte) {
	select {
	case ra.free <- b[:cap(b)]:
	default:
	}
}

func (ra *Reader) Read(p []byte) (int, error) {
	if ra.curBuf == nil {
		b, err := ra.Next()
		if err != nil {
			return 0, err
		}
		ra.curBuf, ra.cur = b, b[Headroom:] // a block holds data: Next hands out none empty
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	if len(ra.cur) == 0 {
		ra.Recycle(ra.curBuf)
		ra.curBuf, ra.cur = nil, nil
	}
	return n, nil
}

// Close stops the read-ahead and closes the file. The goroutine may still be inside a read of the file,
// which closing it ends; it is not waited for.
func (ra *Reader) Close() error {
	select {
	case <-ra.done:
	default:
		close(ra.done)
	}
	return ra.closer.Close()
}
