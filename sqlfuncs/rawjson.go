package sqlfuncs

// The JSON reading shared by the trace rewriters (the two overlays and the counters trace). They copy a trace
// through and change a few events, so they never decode it: rawDecoder splits the input into raw values and
// splitObject splits one event into its members. Both track only strings (with their escapes) and bracket
// nesting, the way the loader reads a trace, so whatever the loader accepted (an invalid escape such as
// "C:\Users" in a name, which it keeps as written, raw control characters, invalid UTF-8) comes out byte for
// byte instead of failing as encoding/json does.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// rawDecoder reads JSON from r one raw value at a time.
type rawDecoder struct {
	r   io.Reader
	buf []byte
	pos int   // next unread byte of buf
	off int64 // input bytes dropped before buf[0], for error offsets
	err error // the read error that ended the input (io.EOF at its end)
}

func newRawDecoder(r io.Reader) *rawDecoder {
	return &rawDecoder{r: r, buf: make([]byte, 0, 1<<20)}
}

// fill reads more input onto the end of buf and reports whether it got any. Only calls that start a new value
// drop the bytes already consumed (compact), so indexes into buf stay valid while a value is scanned.
func (d *rawDecoder) fill() bool {
	if d.err != nil {
		return false
	}
	if len(d.buf) == cap(d.buf) {
		grown := make([]byte, len(d.buf), 2*cap(d.buf))
		copy(grown, d.buf)
		d.buf = grown
	}
	for {
		n, err := d.r.Read(d.buf[len(d.buf):cap(d.buf)])
		d.buf = d.buf[:len(d.buf)+n]
		if err != nil {
			d.err = err
		}
		if n > 0 || err != nil {
			return n > 0
		}
	}
}

func (d *rawDecoder) compact() {
	if d.pos < len(d.buf)/2 && len(d.buf) < cap(d.buf) {
		return
	}
	n := copy(d.buf, d.buf[d.pos:])
	d.buf = d.buf[:n]
	d.off += int64(d.pos)
	d.pos = 0
}

// endErr is the error for input that ends inside a value or before one.
func (d *rawDecoder) endErr() error {
	if d.err != nil && d.err != io.EOF {
		return d.err
	}
	return fmt.Errorf("unexpected end of JSON at byte %d", d.off+int64(len(d.buf)))
}

// peek skips white space and returns the next byte without consuming it.
func (d *rawDecoder) peek() (byte, error) {
	d.compact()
	for {
		for d.pos < len(d.buf) {
			switch c := d.buf[d.pos]; c {
			case ' ', '\t', '\n', '\r':
				d.pos++
			default:
				return c, nil
			}
		}
		if !d.fill() {
			return 0, d.endErr()
		}
	}
}

// expect consumes the next byte, which must be c.
func (d *rawDecoder) expect(c byte) error {
	got, err := d.peek()
	if err != nil {
		return err
	}
	if got != c {
		return fmt.Errorf("expected %q at byte %d, found %q", c, d.off+int64(d.pos), got)
	}
	d.pos++
	return nil
}

// more reports whether the object or array being read has another member; it consumes the comma before one.
func (d *rawDecoder) more() (bool, error) {
	c, err := d.peek()
	if err != nil {
		return false, err
	}
	switch c {
	case ',':
		d.pos++
		return true, nil
	case '}', ']':
		return false, nil
	}
	return true, nil
}

// key reads an object's key and the colon after it. It returns the key decoded and a copy of its raw bytes
// (quotes included), which the rewriters write back as they were.
func (d *rawDecoder) key() (string, []byte, error) {
	raw, err := d.value()
	if err != nil {
		return "", nil, err
	}
	if raw[0] != '"' {
		return "", nil, fmt.Errorf("expected an object key at byte %d, found %.20q", d.off+int64(d.pos-len(raw)), raw)
	}
	raw = append([]byte(nil), raw...)
	var k string
	if json.Unmarshal(raw, &k) != nil {
		k = string(raw[1 : len(raw)-1]) // an invalid escape: kept as written, as the loader does
	}
	return k, raw, d.expect(':')
}

// value returns the next value's raw bytes, valid until the next call.
func (d *rawDecoder) value() ([]byte, error) {
	first, err := d.peek()
	if err != nil {
		return nil, err
	}
	switch first {
	case ',', ':', '}', ']':
		return nil, fmt.Errorf("unexpected %q at byte %d", first, d.off+int64(d.pos))
	}
	start := d.pos
	i, depth := start, 0
	inString, strStart := false, 0
	for {
		for i < len(d.buf) {
			if inString {
				q := bytes.IndexByte(d.buf[i:], '"')
				if q < 0 {
					i = len(d.buf)
					break
				}
				q += i
				escaped := false
				for j := q - 1; j > strStart && d.buf[j] == '\\'; j-- {
					escaped = !escaped
				}
				i = q + 1
				if escaped {
					continue
				}
				inString = false
				if depth == 0 {
					d.pos = i
					return d.buf[start:i], nil
				}
				continue
			}
			switch c := d.buf[i]; c {
			case '"':
				inString, strStart = true, i
			case '{', '[':
				depth++
			case '}', ']':
				if depth == 0 { // the end of a number or literal
					d.pos = i
					return d.buf[start:i], nil
				}
				depth--
				if depth == 0 {
					d.pos = i + 1
					return d.buf[start : i+1], nil
				}
			case ',', ' ', '\t', '\n', '\r', ':':
				if depth == 0 {
					d.pos = i
					return d.buf[start:i], nil
				}
			}
			i++
			if depth > 0 {
				for i < len(d.buf) && !jsonSpecial[d.buf[i]] {
					i++
				}
			}
		}
		if !d.fill() {
			if depth == 0 && !inString && i > start { // a number or literal that ends the input
				d.pos = i
				return d.buf[start:i], nil
			}
			return nil, d.endErr()
		}
	}
}

// errNotTrace is returned for input whose top level is neither an object nor an array.
var errNotTrace = errors.New("the trace is neither a JSON object nor an array of events")

// copyTrace copies a trace's top-level value from dec to w, member by member, and hands its traceEvents array
// (the '[' read) to events, which writes it through its ']'. A trace in the plain array form (the events alone,
// which the loader accepts too) comes out in the object form, {"traceEvents": [...]}. tail, when not nil,
// writes what goes before the closing '}'; comma says that a member comes before it.
func copyTrace(dec *rawDecoder, w *bufio.Writer, events func() error, tail func(comma bool)) error {
	top, err := dec.peek()
	if err != nil {
		return err
	}
	switch top {
	case '[':
		dec.pos++
		w.WriteString(`{"traceEvents":`)
		if err := events(); err != nil {
			return err
		}
		if tail != nil {
			tail(true)
		}
		w.WriteString("}\n")
		return nil
	case '{':
		dec.pos++
	default:
		return errNotTrace
	}
	w.WriteByte('{')
	first, sawEvents := true, false
	for {
		more, err := dec.more()
		if err != nil {
			return err
		} else if !more {
			break
		}
		key, rawKey, err := dec.key()
		if err != nil {
			return err
		}
		if !first {
			w.WriteByte(',')
		}
		first = false
		w.Write(rawKey)
		w.WriteByte(':')
		if key == "traceEvents" && !sawEvents {
			sawEvents = true
			if err := dec.expect('['); err != nil {
				return fmt.Errorf("traceEvents is not an array: %w", err)
			}
			if err := events(); err != nil {
				return err
			}
			continue
		}
		raw, err := dec.value()
		if err != nil {
			return fmt.Errorf("read %q: %w", key, err)
		}
		w.Write(raw)
	}
	if !sawEvents {
		return errors.New("the trace has no traceEvents")
	}
	if tail != nil {
		tail(!first)
	}
	w.WriteString("}\n")
	return nil
}

// objField is one member of a JSON object held in a byte slice: the key's bytes inside its quotes are
// obj[ks:ke], the raw value obj[vs:ve].
type objField struct{ ks, ke, vs, ve int }

type objFields []objField

// find returns the member named key; of a key given twice, the last, as the loader, Python and HTA read it
// (r72 #8: the overlay marked args.critical in the first of two args, which a viewer then did not show).
func (l objFields) find(obj []byte, key string) (objField, bool) {
	for i := len(l) - 1; i >= 0; i-- {
		if f := l[i]; string(obj[f.ks:f.ke]) == key {
			return f, true
		}
	}
	return objField{}, false
}

// get returns a member's raw value (nil when absent).
func (l objFields) get(obj []byte, key string) []byte {
	if f, ok := l.find(obj, key); ok {
		return obj[f.vs:f.ve]
	}
	return nil
}

// splitObject splits a JSON object (a value rawDecoder returned) into its top-level members, appended to out.
// ok is false when obj is not an object. Keys are compared raw (trace keys never need unescaping).
func splitObject(obj []byte, out objFields) (objFields, bool) {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return out, false
	}
	i++
	for {
		i = skipWS(obj, i)
		if i >= len(obj) {
			return out, false
		}
		if obj[i] == '}' {
			return out, true
		}
		if obj[i] == ',' {
			i++
			continue
		}
		if obj[i] != '"' {
			return out, false
		}
		ks := i + 1
		ke := skipString(obj, i)
		i = skipWS(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return out, false
		}
		i = skipWS(obj, i+1)
		vs := i
		i = skipValue(obj, i)
		out = append(out, objField{ks, ke - 1, vs, i})
	}
}

// skipWS, skipString and skipValue scan a raw value whose brackets rawDecoder has matched; on a truncated value
// they stop at len(b).
func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	default:
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\n', '\t', '\r':
				return i
			}
		}
		return len(b)
	}
}
