// Package arrayrepair reads a Chrome trace in the plain array form as tracesql's loader does when the
// file is not terminated (the Chrome trace format lets a profiler that stopped while writing leave the
// closing ']' out): the events the loader kept, then ']'. Whatever re-reads a loaded trace file (the
// exports, the inflater) sees the same events as the database.
package arrayrepair

import (
	"bytes"
	"io"
)

// IsArray reports whether the JSON text that starts with head is an array: its first byte past a UTF-8
// byte order mark and white space is '['.
func IsArray(head []byte) bool {
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(head) > 0 && head[0] == '['
}

// Reader passes an array-form trace through, ending it as the loader reads one that is not terminated
// (a profiler stopped while writing): a file that ends without its closing ']', or inside its last event, comes
// out as the events the loader kept, then ']'. The rewriters then read the complete trace the database holds.
// Each top-level element is held back, from the comma before it, until it is known to be whole.
type Reader struct {
	src      io.Reader
	chunk    []byte
	out      []byte // scanned bytes ready to hand out
	held     []byte // the current top-level element and the comma before it, not yet closed
	holding  bool
	depth    int
	inString bool
	escaped  bool
	closed   bool // the top-level array's ']' was seen: the rest passes through
	finished bool // src is at its end
}

// NewReader returns a Reader of src, an array-form trace.
func NewReader(src io.Reader) *Reader {
	return &Reader{src: src, chunk: make([]byte, 256<<10)}
}

func (a *Reader) Read(p []byte) (int, error) {
	for len(a.out) == 0 {
		if a.finished {
			return 0, io.EOF
		}
		if a.closed {
			return a.src.Read(p)
		}
		n, err := a.src.Read(a.chunk)
		a.scan(a.chunk[:n])
		if err == io.EOF {
			a.finished = true
			if !a.closed {
				a.held, a.holding = nil, false // the event the file ends inside: left out, as the loader does
				a.out = append(a.out, ']')
			}
		} else if err != nil {
			return 0, err
		}
	}
	n := copy(p, a.out)
	a.out = a.out[n:]
	if len(a.out) == 0 {
		a.out = a.out[:0:0] // let the consumed buffer go
	}
	return n, nil
}

// scan moves b into out or held, tracking strings and nesting.
func (a *Reader) scan(b []byte) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if a.closed {
			a.out = append(a.out, b[i:]...)
			return
		}
		if a.inString {
			switch {
			case a.escaped:
				a.escaped = false
			case c == '\\':
				a.escaped = true
			case c == '"':
				a.inString = false
			}
			a.held = append(a.held, c)
			continue
		}
		switch {
		case a.depth == 0:
			a.out = append(a.out, c)
			if c == '[' {
				a.depth = 1
			}
			continue
		case a.depth == 1 && c == ',':
			a.flush() // a scalar element ends at its comma
			a.held, a.holding = append(a.held, c), true
			continue
		case a.depth == 1 && c == ']':
			a.flush()
			a.out = append(a.out, c)
			a.depth, a.closed = 0, true
			continue
		}
		if a.depth == 1 && !a.holding && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			a.holding = true
		}
		if a.holding {
			a.held = append(a.held, c)
		} else {
			a.out = append(a.out, c)
		}
		switch c {
		case '"':
			a.inString = true
		case '{', '[':
			a.depth++
		case '}', ']':
			a.depth--
			if a.depth == 1 {
				a.flush()
			}
		}
	}
}

func (a *Reader) flush() {
	a.out = append(a.out, a.held...)
	a.held, a.holding = a.held[:0], false
}
