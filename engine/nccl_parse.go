package engine

// This file parses the trace files written by NCCL's example profiler plugin (NVIDIA/nccl
// plugins/profiler/example, print_event.cc): a JSON array of Chrome-trace async events, one object
// per line, printed depth-first at communicator finalize, so that an event's children sit between
// its "b" and its "e". The parser is lenient because released plugin versions wrote invalid JSON
// (unquoted %s and %p values), and it rebuilds the hierarchy from that print order: the async ids
// cannot do it (every category has its own counter, and KernelCh events all carry the same id).

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ncclRawEvent is one element of the plugin's array.
type ncclRawEvent struct {
	name, cat, ph string
	id, pid       int64
	hasID         bool
	ts            int64 // ns since plugin start
	tsZero        bool  // the text was a zero ("0.000000")
	args          []ncclKV
	offset        int // byte offset of the element in the (quote-normalised) text
	elem          int // 0-based position in the array
}

// ncclKV is one args entry; json is the value as valid JSON text.
type ncclKV struct {
	key, json string
	bare      bool     // the value was an unquoted token, now quoted in json
	sub       []ncclKV // the entries of an object value
}

// ncclQuirks counts the irregularities of older plugin outputs that were accepted.
type ncclQuirks struct {
	curlyQuotes   int
	bareValues    int
	firstBare     string
	apiZeroTS     int
	stopGpuClk0   int
	trailingEmpty bool // the "{}" terminator every version writes (not reported)
	emptyObjects  int  // "{}" elements elsewhere
	otherPhases   int
}

func (q ncclQuirks) String() string {
	var parts []string
	if q.bareValues > 0 {
		parts = append(parts, fmt.Sprintf("%d unquoted values (first: %s)", q.bareValues, q.firstBare))
	}
	if q.curlyQuotes > 0 {
		parts = append(parts, fmt.Sprintf("%d curly quotes read as \"", q.curlyQuotes))
	}
	if q.apiZeroTS > 0 {
		parts = append(parts, fmt.Sprintf("%d API begins with ts 0 (start unknown, ts left NULL)", q.apiZeroTS))
	}
	if q.stopGpuClk0 > 0 {
		parts = append(parts, fmt.Sprintf("%d KernelCh with StopGpuClk 0 (GPU stop not captured)", q.stopGpuClk0))
	}
	if q.emptyObjects > 0 {
		parts = append(parts, fmt.Sprintf("%d empty {} elements before the end", q.emptyObjects))
	}
	if q.otherPhases > 0 {
		parts = append(parts, fmt.Sprintf("%d events with a phase other than b/e ignored", q.otherPhases))
	}
	return strings.Join(parts, ", ")
}

// ncclCurly are the typographic quotes seen in pasted plugin output; each is read as '"'.
var ncclCurly = [][]byte{[]byte("\u201c"), []byte("\u201d"), []byte("\u201e"), []byte("\u201f")}

// parseNCCLEvents parses the whole file text. Errors name the element index and byte offset.
func parseNCCLEvents(data []byte) ([]ncclRawEvent, ncclQuirks, error) {
	var q ncclQuirks
	for _, c := range ncclCurly {
		if n := bytes.Count(data, c); n > 0 {
			q.curlyQuotes += n
			data = bytes.ReplaceAll(data, c, []byte{'"'})
		}
	}
	p := &ncclParser{b: data, q: &q}
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		return nil, q, fmt.Errorf("not NCCL profiler-plugin output: expected a JSON array ('[') at byte %d", p.i)
	}
	p.i++
	var out []ncclRawEvent
	for elem := 0; ; elem++ {
		p.ws()
		if p.i >= len(p.b) {
			return nil, q, fmt.Errorf("truncated after %d events at byte %d: the array has no closing ']' (the plugin writes the file when the communicator is finalized; was the job killed?)", len(out), p.i)
		}
		if p.b[p.i] == ']' {
			p.i++
			break
		}
		if p.b[p.i] != '{' {
			return nil, q, fmt.Errorf("element %d at byte %d: expected '{', found %s", elem, p.i, p.near())
		}
		start := p.i
		kvs, err := p.object()
		if err != nil {
			return nil, q, fmt.Errorf("element %d at byte %d: %w", elem, start, err)
		}
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == ',' {
			p.i++
		}
		if len(kvs) == 0 {
			p.ws()
			if p.i < len(p.b) && p.b[p.i] == ']' {
				q.trailingEmpty = true
			} else {
				q.emptyObjects++
			}
			continue
		}
		ev, err := ncclEventFrom(kvs, start, &q)
		ev.elem = elem
		if err != nil {
			return nil, q, fmt.Errorf("element %d at byte %d: %w", elem, start, err)
		}
		if ev.ph != "b" && ev.ph != "e" {
			q.otherPhases++
			continue
		}
		out = append(out, ev)
	}
	p.ws()
	if p.i < len(p.b) {
		return nil, q, fmt.Errorf("unexpected %s after the closing ']' at byte %d", p.near(), p.i)
	}
	return out, q, nil
}

// ncclEventFrom checks and converts one parsed object.
func ncclEventFrom(kvs []ncclKV, offset int, q *ncclQuirks) (ncclRawEvent, error) {
	ev := ncclRawEvent{offset: offset}
	var tsText string
	for _, kv := range kvs {
		switch kv.key {
		case "name", "cat", "ph":
			s, ok := ncclJSONString(kv.json)
			if !ok {
				return ev, fmt.Errorf("%q is not a string: %s", kv.key, clipStr(kv.json))
			}
			switch kv.key {
			case "name":
				ev.name = s
			case "cat":
				ev.cat = s
			default:
				ev.ph = s
			}
		case "id", "pid":
			n, err := parseInt([]byte(kv.json))
			if err != nil {
				return ev, fmt.Errorf("%q is not an integer: %s", kv.key, clipStr(kv.json))
			}
			if kv.key == "id" {
				ev.id, ev.hasID = n, true
			} else {
				ev.pid = n
			}
		case "ts":
			tsText = kv.json
		case "args":
			if !strings.HasPrefix(kv.json, "{") {
				return ev, fmt.Errorf("args is not an object: %s", clipStr(kv.json))
			}
			ev.args = kv.sub
		}
	}
	if ev.ph == "" || ev.cat == "" {
		return ev, fmt.Errorf("not a plugin event: no \"ph\" or \"cat\"")
	}
	if tsText == "" {
		return ev, fmt.Errorf("%s %q has no \"ts\"", ev.cat, ev.name)
	}
	// The value reader quotes a bare token and an integer beyond int64: unquote to parse (and to
	// tell out of range from not a number).
	ts, err := usToNs(numberText([]byte(tsText)))
	if err != nil {
		return ev, errors.New(timeError("ts", numberText([]byte(tsText)), err))
	}
	ev.ts = ts
	ev.tsZero = ts == 0
	return ev, nil
}

func ncclJSONString(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' {
		return "", false
	}
	u, err := strconv.Unquote(s)
	if err != nil {
		return s[1 : len(s)-1], true
	}
	return u, true
}

func clipStr(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// ncclParser is a small recursive-descent reader for the plugin's JSON dialect: standard JSON plus
// bare tokens (ncclFloat32, 0x262ca50, (nil)) as values.
type ncclParser struct {
	b []byte
	i int
	q *ncclQuirks
}

func (p *ncclParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *ncclParser) near() string {
	if p.i >= len(p.b) {
		return "end of file"
	}
	end := min(p.i+20, len(p.b))
	return strconv.Quote(string(p.b[p.i:end]))
}

var errNCCLTruncated = fmt.Errorf("file ends inside an event (truncated)")

// object reads {…} at p.i and returns its entries with values as valid JSON text.
func (p *ncclParser) object() ([]ncclKV, error) {
	p.i++ // '{'
	var kvs []ncclKV
	for {
		p.ws()
		if p.i >= len(p.b) {
			return nil, errNCCLTruncated
		}
		if p.b[p.i] == '}' {
			p.i++
			return kvs, nil
		}
		if p.b[p.i] != '"' {
			return nil, fmt.Errorf("expected a quoted key at byte %d, found %s", p.i, p.near())
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		k, _ := ncclJSONString(key)
		p.ws()
		if p.i >= len(p.b) {
			return nil, errNCCLTruncated
		}
		if p.b[p.i] != ':' {
			return nil, fmt.Errorf("expected ':' after key %s at byte %d, found %s", key, p.i, p.near())
		}
		p.i++
		p.ws()
		kv, err := p.value(k)
		if err != nil {
			return nil, err
		}
		kvs = append(kvs, kv)
		p.ws()
		if p.i >= len(p.b) {
			return nil, errNCCLTruncated
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
		default:
			return nil, fmt.Errorf("expected ',' or '}' at byte %d, found %s", p.i, p.near())
		}
	}
}

func (p *ncclParser) value(key string) (ncclKV, error) {
	if p.i >= len(p.b) {
		return ncclKV{}, errNCCLTruncated
	}
	switch c := p.b[p.i]; {
	case c == '"':
		s, err := p.str()
		return ncclKV{key: key, json: s}, err
	case c == '{':
		kvs, err := p.object()
		if err != nil {
			return ncclKV{}, err
		}
		var b strings.Builder
		b.WriteByte('{')
		for i, kv := range kvs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quoteJSON(kv.key))
			b.WriteByte(':')
			b.WriteString(kv.json)
		}
		b.WriteByte('}')
		return ncclKV{key: key, json: b.String(), sub: kvs}, nil
	case c == '[':
		return ncclKV{}, fmt.Errorf("unexpected array value for %q at byte %d", key, p.i)
	}
	// A number, literal or bare token: read up to the next delimiter.
	start := p.i
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ',', '}', ']', '\n', '\r':
			goto done
		}
		p.i++
	}
	return ncclKV{}, errNCCLTruncated
done:
	tok := strings.TrimSpace(string(p.b[start:p.i]))
	if tok == "" {
		return ncclKV{}, fmt.Errorf("missing value for %q at byte %d", key, start)
	}
	if isJSONNumber(tok) {
		if !strings.ContainsAny(tok, ".eE") {
			if _, err := strconv.ParseInt(tok, 10, 64); err != nil {
				// A uint64 beyond int64 (CommHash): JSON readers would round it through a double.
				return ncclKV{key: key, json: quoteJSON(tok)}, nil
			}
		}
		return ncclKV{key: key, json: tok}, nil
	}
	if tok == "true" || tok == "false" || tok == "null" {
		return ncclKV{key: key, json: tok}, nil
	}
	// printf("%s") / printf("%p") without quotes in older plugins: keep the text as a string.
	p.q.bareValues++
	if p.q.firstBare == "" {
		p.q.firstBare = fmt.Sprintf("%q: %s", key, tok)
	}
	return ncclKV{key: key, json: quoteJSON(tok), bare: true}, nil
}

// str reads a JSON string at p.i and returns its text, quotes included.
func (p *ncclParser) str() (string, error) {
	start := p.i
	p.i++
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			return string(p.b[start:p.i]), nil
		case '\n':
			return "", fmt.Errorf("unterminated string at byte %d", start)
		}
		p.i++
	}
	return "", errNCCLTruncated
}

func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if digits == 0 || (digits > 1 && s[i-digits] == '0') {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		d := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			d++
		}
		if d == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			d++
		}
		if d == 0 {
			return false
		}
	}
	return i == len(s)
}
