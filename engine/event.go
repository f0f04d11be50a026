package engine

import (
	"bytes"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// rawEvent holds slices into one event object's bytes. Strings are the raw contents between the
// quotes (escaped if the matching esc flag is set); numbers are their literal text.
type rawEvent struct {
	ph, cat, name, s, bp []byte
	phEsc, catEsc        bool
	nameEsc              bool
	pid, tid, id         []byte // raw JSON value (number or quoted string)
	id2                  []byte // raw JSON value: {"local": …} or {"global": …}, the id of newer Chrome traces
	ts, dur              []byte // raw JSON value
	args                 []byte // raw object
	hasCat               bool
	// catNotStr, nameNotStr: the cat or name is a JSON value other than a string or null (123), kept as its
	// text (the format wants a string; the value is not lost for that).
	catNotStr, nameNotStr bool
	// argsCompact is args without insignificant whitespace, computed in the same pass that finds the
	// end of args (it aliases argsBuf, or args itself when args is a scalar).
	argsCompact []byte
	argsBuf     []byte // scratch kept across events
	// dupKey is the first key read that the object has twice ("" if none): its last value is the one
	// taken, as Python's json (and so HTA) reads it.
	dupKey string
}

// argsKeyBit is args' bit in scanEvent's mask of the keys seen (each kept key has one).
const argsKeyBit = 1 << 9

// scanEvent fills ev from the object at the start of b (b[0] is '{') and returns where the object
// ends in b: len(b) when b is exactly the object, as the splitter cuts it.
func scanEvent(b []byte, ev *rawEvent) (int, error) {
	buf := ev.argsBuf
	*ev = rawEvent{argsBuf: buf}
	i := skipWS(b, 1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	var seen uint16
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, fmt.Errorf("expected a key")
		}
		ks := i + 1
		ke, kesc, ok := stringEndEsc(b, ks)
		if !ok {
			return 0, fmt.Errorf("unterminated key")
		}
		key := b[ks : ke-1]
		if kesc {
			// "n\u0061me" is the key name (JSON allows escapes in keys; Python's json reads it so)
			key = []byte(unescape(key))
		}
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return 0, fmt.Errorf("expected ':' after key %q", key)
		}
		i = skipWS(b, i+1)
		// Strings are the common case: find the end and note escapes in one pass, so that the
		// string fields need no second scan (strContent).
		var ve int
		var esc bool
		switch {
		case i < len(b) && b[i] == '"':
			j, e, ok := stringEndEsc(b, i+1)
			if !ok {
				return 0, fmt.Errorf("value of %q: %w", key, errUntermString)
			}
			ve, esc = j, e
		case len(key) == 4 && string(key) == "args" && i < len(b) && (b[i] == '{' || b[i] == '['):
			j, out, err := compactValueEnd(b, i, ev.argsBuf[:0])
			if err != nil {
				return 0, fmt.Errorf("value of %q: %w", key, err)
			}
			ev.argsBuf = out
			if seen&argsKeyBit != 0 && ev.dupKey == "" {
				ev.dupKey = "args"
			}
			seen |= argsKeyBit
			ev.args, ev.argsCompact = b[i:j], out
			i = skipWS(b, j)
			goto next
		default:
			var err error
			if ve, err = valueEndIn(b, i); err != nil {
				return 0, fmt.Errorf("value of %q: %w", key, err)
			}
		}
		{
			v := b[i:ve]
			isStr := v[0] == '"'
			var bit uint16
			switch string(key) {
			case "ph":
				bit = 1 << 0
				ev.ph, ev.phEsc = content(v, isStr, esc)
			case "cat":
				bit = 1 << 1
				ev.cat, ev.catEsc = content(v, isStr, esc)
				if ev.catNotStr = !isStr && !isNull(v); ev.catNotStr {
					ev.cat = v
				}
				ev.hasCat = isStr || ev.catNotStr
			case "name":
				bit = 1 << 2
				ev.name, ev.nameEsc = content(v, isStr, esc)
				if ev.nameNotStr = !isStr && !isNull(v); ev.nameNotStr {
					ev.name = v
				}
			case "pid":
				bit = 1 << 3
				ev.pid = v
			case "tid":
				bit = 1 << 4
				ev.tid = v
			case "ts":
				bit = 1 << 5
				ev.ts = v
			case "dur":
				bit = 1 << 6
				ev.dur = v
			case "id":
				bit = 1 << 7
				ev.id = v
			case "id2":
				bit = 1 << 8
				ev.id2 = v
			case "args":
				bit = argsKeyBit
				// A scalar (valueEndIn stops at whitespace) or a string: already compact.
				ev.args, ev.argsCompact = v, v
			case "s":
				bit = 1 << 10
				ev.s, _ = content(v, isStr, esc)
			case "bp":
				bit = 1 << 11
				ev.bp, _ = content(v, isStr, esc)
			}
			if seen&bit != 0 && ev.dupKey == "" {
				ev.dupKey = string(key)
			}
			seen |= bit
			i = skipWS(b, ve)
		}
	next:
		if i >= len(b) {
			return 0, fmt.Errorf("unterminated object")
		}
		if b[i] == '}' {
			return i + 1, nil
		}
		if b[i] != ',' {
			return 0, fmt.Errorf("expected ',' or '}', found %s", byteText(b[i]))
		}
		i = skipWS(b, i+1)
	}
}

// content is strContent for a value whose kind and escapes the scanner already knows.
func content(v []byte, isStr, esc bool) ([]byte, bool) {
	if !isStr || len(v) < 2 {
		return nil, false
	}
	return v[1 : len(v)-1], esc
}

var (
	errUntermString = errors.New("unterminated string")
	errUntermValue  = errors.New("unterminated value")
	errMissingValue = errors.New("missing value")
	errBadValue     = errors.New("not a JSON value")
)

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\n', '\r', '\t':
			i++
		default:
			return i
		}
	}
	return i
}

// Byte classes for the container scanners.
const (
	bcPlain uint8 = iota
	bcSpace
	bcQuote
	bcOpen
	bcClose
)

var byteClass = func() (t [256]uint8) {
	for _, c := range " \n\r\t" {
		t[c] = bcSpace
	}
	t['"'] = bcQuote
	t['{'], t['['] = bcOpen, bcOpen
	t['}'], t[']'] = bcClose, bcClose
	return t
}()

// scalarByte marks the bytes a JSON number, true, false or null is made of.
var scalarByte = func() (t [256]bool) {
	for _, c := range "0123456789+-.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" {
		t[c] = true
	}
	return t
}()

// maxValueDepth bounds the nesting of an event's values and of the metadata kept. Kineto nests args three
// levels deep; DuckDB's JSON functions recurse, and json_structure crashed the process at 100,000 levels.
const maxValueDepth = 1000

// errTooDeep is a value nested deeper than maxValueDepth.
var errTooDeep = fmt.Errorf("nested deeper than %d levels (objects and arrays)", maxValueDepth)

// valueEndIn returns the end of the JSON value starting at b[i], within a complete buffer.
func valueEndIn(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errMissingValue
	}
	switch b[i] {
	case '"':
		j, ok := stringEnd(b, i+1)
		if !ok {
			return 0, errUntermString
		}
		return j, nil
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch byteClass[b[j]] {
			case bcQuote:
				k, ok := stringEnd(b, j+1)
				if !ok {
					return 0, errUntermString
				}
				j = k - 1
			case bcOpen:
				if depth++; depth > maxValueDepth {
					return 0, errTooDeep
				}
			case bcClose:
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errUntermValue
	case ',', '}', ']', ':':
		return 0, errMissingValue
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\n', '\r', '\t':
			return j, nil
		case '"', '{', '[':
			// Not JSON (a number or literal runs into a string or container), and the splitter,
			// which starts a string or a container there, would cut the events elsewhere.
			return 0, fmt.Errorf("%w: %s inside %q", errBadValue, byteText(b[j]), clip(b[i:j+1]))
		}
		j++
	}
	return j, nil
}

// compactValueEnd is valueEndIn for an object or array at b[i] that also appends the value without
// insignificant whitespace to out (what appendCompact makes of b[i:end]): args are scanned once
// instead of twice. Runs of plain bytes are copied at once.
func compactValueEnd(b []byte, i int, out []byte) (int, []byte, error) {
	depth := 0
	j := i
	for j < len(b) {
		c := b[j]
		switch byteClass[c] {
		case bcPlain:
			k := j + 1
			for k < len(b) && byteClass[b[k]] == bcPlain {
				k++
			}
			out = append(out, b[j:k]...)
			j = k
			continue
		case bcSpace:
			j++
			for j < len(b) && byteClass[b[j]] == bcSpace {
				j++
			}
			// Between two tokens whitespace goes; between two parts of one ("1 2", "t rue") it is not JSON,
			// and dropping it would make another value.
			if j < len(b) && scalarByte[b[j]] && len(out) > 0 && scalarByte[out[len(out)-1]] {
				return 0, out, fmt.Errorf("whitespace inside a value, before %q", clip(b[j:min(len(b), j+20)]))
			}
			continue
		case bcQuote:
			k, esc, ok := stringEndEsc(b, j+1)
			if !ok {
				return 0, out, errUntermString
			}
			if esc && bytes.Contains(b[j:k], []byte(`\u`)) {
				out = appendLoneSurrogatesFixed(out, b[j:k])
			} else {
				out = append(out, b[j:k]...)
			}
			j = k
			continue
		case bcOpen:
			if depth++; depth > maxValueDepth {
				return 0, out, errTooDeep
			}
		case bcClose:
			depth--
			if depth == 0 {
				return j + 1, append(out, c), nil
			}
		}
		out = append(out, c)
		j++
	}
	return 0, out, errUntermValue
}

// appendLoneSurrogatesFixed appends JSON text s with every \u escape of a UTF-16 surrogate that is not
// half of a pair replaced by \ufffd. encoding/json and Perfetto read such an escape as U+FFFD; DuckDB's
// JSON type rejects the whole value ("no low surrogate in string"), which failed the file's load.
func appendLoneSurrogatesFixed(out, s []byte) []byte {
	surrogate := func(i int) (v rune, ok bool) { // the \uXXXX at s[i:], if it is one
		if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
			return 0, false
		}
		for _, c := range s[i+2 : i+6] {
			var d rune
			switch {
			case c >= '0' && c <= '9':
				d = rune(c - '0')
			case c >= 'a' && c <= 'f':
				d = rune(c-'a') + 10
			case c >= 'A' && c <= 'F':
				d = rune(c-'A') + 10
			default:
				return 0, false
			}
			v = v<<4 | d
		}
		return v, v >= 0xD800 && v < 0xE000
	}
	for i := 0; i < len(s); {
		if s[i] != '\\' || i+1 >= len(s) {
			out = append(out, s[i])
			i++
			continue
		}
		hi, ok := surrogate(i)
		if !ok {
			out = append(out, s[i], s[i+1]) // any other escape, \\ included, as it is
			i += 2
			continue
		}
		if lo, ok := surrogate(i + 6); ok && hi < 0xDC00 && lo >= 0xDC00 {
			out = append(out, s[i:i+12]...)
			i += 12
			continue
		}
		out = append(out, `\ufffd`...)
		i += 6
	}
	return out
}

// validJSONText is JSON text as DuckDB's JSON type takes it: invalid UTF-8 and lone surrogate escapes
// become U+FFFD (as Perfetto reads them).
func validJSONText(b []byte) []byte {
	if bytes.IndexByte(b, '\\') >= 0 {
		b = appendLoneSurrogatesFixed(nil, b)
	}
	return validUTF8(b)
}

// strContent returns the bytes between the quotes of a JSON string value, or nil for a non-string.
func strContent(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' {
		return nil, false
	}
	c := v[1 : len(v)-1]
	for _, x := range c {
		if x == '\\' {
			return c, true
		}
	}
	return c, false
}

// unescape decodes the contents of a JSON string that contains escapes, as encoding/json does (a lone
// surrogate becomes U+FFFD), except that a run of invalid UTF-8 becomes one U+FFFD, as bytes.ToValidUTF8
// makes of a string without escapes. What is not valid JSON (an unknown escape such as \q, a \u
// without four hex digits, a raw control character) is kept as written and the rest still decoded, as
// Perfetto shows such a name; valid reports whether there was none. Written by hand: going through
// json.Unmarshal, which validates and then decodes, cost 3.5 % of the CPU time of loading a 1 GB trace.
func unescapeValid(c []byte) (_ string, valid bool) {
	valid = true
	out := make([]byte, 0, len(c))
	badRunEnd := -1 // a run of invalid bytes becomes one U+FFFD, as where the text has no escape
	for i := 0; i < len(c); {
		b := c[i]
		switch {
		case b < 0x20:
			out = append(out, b)
			i++
			valid = false
			continue
		case b < utf8.RuneSelf && b != '\\':
			out = append(out, b)
			i++
			continue
		case b >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(c[i:])
			if r == utf8.RuneError && size == 1 {
				if i != badRunEnd {
					out = utf8.AppendRune(out, utf8.RuneError)
				}
				badRunEnd = i + 1
			} else {
				out = append(out, c[i:i+size]...)
			}
			i += size
			continue
		}
		if i+1 >= len(c) {
			return string(append(out, b)), false
		}
		switch c[i+1] {
		case '"', '\\', '/':
			out = append(out, c[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(c[i+2:])
			if r < 0 {
				out = append(out, '\\')
				i++
				valid = false
				continue
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if len(c) >= i+2 && c[i] == '\\' && c[i+1] == 'u' {
					if r2 := hex4(c[i+2:]); r2 >= 0 {
						if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
							out = utf8.AppendRune(out, dec)
							i += 6
							continue
						}
					}
				}
				r = unicode.ReplacementChar
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			// the backslash kept; what follows it is read as any other text
			out = append(out, '\\')
			i++
			valid = false
			continue
		}
		i += 2
	}
	return string(out), valid
}

// unescape is unescapeValid's text.
func unescape(c []byte) string {
	s, _ := unescapeValid(c)
	return s
}

// hex4 is the value of the four hex digits that b starts with, or -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, d := range b[:4] {
		switch {
		case '0' <= d && d <= '9':
			d -= '0'
		case 'a' <= d && d <= 'f':
			d = d - 'a' + 10
		case 'A' <= d && d <= 'F':
			d = d - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(d)
	}
	return r
}

// isNull reports a JSON null literal.
func isNull(v []byte) bool { return len(v) == 4 && string(v) == "null" }

// numberText returns the text of a JSON number, also accepting a number written as a string.
func numberText(v []byte) []byte {
	if len(v) >= 2 && v[0] == '"' {
		return v[1 : len(v)-1]
	}
	return v
}

// The args keys read as events.external_id. 2021 traces spell it in lowercase on runtime calls and
// GPU events (their ops have "External id"). The inflator renumbers every key listed here: one it left
// alone would tie each copy's launches to the first copy's ops.
const (
	externalIDKey       = "External id"
	legacyExternalIDKey = "external id"
)

// hotArgs are the args that get their own events columns.
type hotArgs struct {
	stream, correlation, externalID, device int64
	hasStream, hasCorr, hasExt, hasDevice   bool
	dupKey                                  string // the first hot key that args has twice (its last value is taken)
}

// scanArgs picks the hot keys out of an args object.
func scanArgs(b []byte, h *hotArgs) {
	*h = hotArgs{}
	if len(b) < 2 || b[0] != '{' {
		return
	}
	var seen uint8 // the hot keys read so far
	i := skipWS(b, 1)
	for i < len(b) && b[i] == '"' {
		ke, ok := stringEnd(b, i+1)
		if !ok {
			return
		}
		key := b[i+1 : ke-1]
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return
		}
		i = skipWS(b, i+1)
		ve, err := valueEndIn(b, i)
		if err != nil {
			return
		}
		v := b[i:ve]
		var bit uint8
		switch string(key) {
		case "stream":
			h.stream, h.hasStream = argInt(v)
			bit = 1
		case "correlation":
			h.correlation, h.hasCorr = argInt(v)
			bit = 2
		case externalIDKey:
			h.externalID, h.hasExt = argInt(v)
			bit = 4
		case legacyExternalIDKey:
			h.externalID, h.hasExt = argInt(v)
			bit = 8
		case "device":
			h.device, h.hasDevice = argInt(v)
			bit = 16
		}
		if seen&bit != 0 && h.dupKey == "" {
			h.dupKey = string(key)
		}
		seen |= bit
		i = skipWS(b, ve)
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
		}
	}
}

func argInt(v []byte) (int64, bool) {
	if len(v) == 0 || isNull(v) {
		return 0, false
	}
	n, err := parseInt(numberText(v))
	return n, err == nil
}

// processMetadata reports whether ev is metadata about a whole process (process_name, process_labels,
// process_sort_index, …), which names no thread even when it carries no tid.
func processMetadata(ev *rawEvent) bool {
	return len(ev.ph) == 1 && ev.ph[0] == 'M' && bytes.HasPrefix(ev.name, []byte("process_"))
}
