package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"tracesql/internal/traceio"
)

// splitter walks the top level of a Chrome trace as a byte stream, without building a DOM: it keeps
// every top-level key other than traceEvents as raw JSON (the trace metadata) and cuts traceEvents into
// batches of raw event objects for the parallel event scanners. Memory is one read buffer plus the
// largest single event, whatever the file size.
type splitter struct {
	src  chunkReader
	cur  *chunk // the chunk buf belongs to (the splitter holds a reference)
	buf  []byte
	pos  int   // next unread byte in buf
	end  int   // end of valid data in buf
	base int64 // stream offset of buf[0]
	bom  int64 // bytes of the byte-order mark skipped before the stream (the first base)
	eof  bool
	rerr error // a read error other than io.EOF (e.g. a truncated gzip stream)
	// Bytes is the number of input bytes read.
	Bytes int64

	// Metadata holds the raw value of every top-level key except traceEvents.
	Metadata map[string]json.RawMessage
	// MetaKeys lists the metadata keys in file order.
	MetaKeys []string
	// MetaOffsets holds where each metadata value starts in the file, for errors about it.
	MetaOffsets map[string]int64
	// DroppedMeta lists the top-level values longer than maxMetadataValue, which are not kept.
	DroppedMeta []DroppedValue
	// ArrayForm is true when the file is a plain JSON array of events.
	ArrayForm bool
	// Unterminated is true when an array-form file ends without its closing bracket, which the Chrome
	// trace format allows so that a tracer can stream events.
	Unterminated bool
	// CutEvent is the byte offset of an array-form file's last event when the file ends inside it (a
	// tracer stopped mid-write): the event is dropped and the file read as unterminated; 0 otherwise.
	CutEvent int64

	// headOnly makes Run stop at the start of the events (readHead) with errHeadDone: after the first
	// event of an array-form file (checked to be one), or at the traceEvents key, Metadata then
	// holding the keys before it.
	headOnly bool

	// guess lets events() take the end of an event from its lines when it is laid out as Kineto or
	// tracesql inflate write events (guessEnd) instead of scanning its bytes; guessed counts the
	// events so cut.
	// The scanners check each cut (scanEvent ends exactly there), and a file whose parse fails after
	// a guess is parsed again without guessing, so a wrong guess costs time, never a result.
	guess                bool
	guessed, guessMisses int
}

// maxMetadataValue bounds the top-level values (other than traceEvents) kept as the trace's metadata. A
// profiler's are a few KB (deviceProperties of 8 GPUs: 3 KB).
const maxMetadataValue = 16 << 20

// DroppedValue is a top-level value that was not kept: its key and length in bytes.
type DroppedValue struct {
	Key   string
	Bytes int64
}

// closeLine is how Kineto ends an event of traceEvents: a line of two spaces and '}'.
var closeLine = []byte("\n  }")

// guessWindow bounds how far guessEnd looks for closeLine (a Kineto event is a few hundred bytes).
const guessWindow = 64 << 10

// guessEnd returns the end of the event at s.pos when the event is laid out as Kineto writes it
// ("  {" on a line of its own, then lines indented further, then "  }": the end of the first "  }"
// line after it) or on a line of its own. JSON strings cannot hold a raw newline, so every newline
// is between tokens. ok is false when the event does not start either way or its end is not within
// guessWindow of the buffered data; after many misses and few hits guessing stops for the file.
func (s *splitter) guessEnd() (end int, ok bool) {
	p := s.pos
	if !s.guess || p < 1 || p+1 >= s.end || s.buf[p-1] != '\n' && (p < 3 || s.buf[p+1] != '\n') {
		return 0, false
	}
	win := s.buf[p+1 : min(s.end, p+1+guessWindow)]
	switch {
	case s.buf[p-1] == '\n':
		// One event per line, from its first column (the layout of tracesql inflate and of
		// other tracers): the event ends with its line.
		if k := bytes.IndexByte(win, '\n'); k >= 0 {
			line := bytes.TrimRight(win[:k], " \t\r,")
			if len(line) > 0 && line[len(line)-1] == '}' {
				s.guessed++
				return p + 1 + len(line), true
			}
		}
	case s.buf[p-1] == ' ' && s.buf[p-2] == ' ' && s.buf[p-3] == '\n':
		// closeLine, found by its '}': an event has a few of those and several newlines.
		for from := 0; ; {
			k := bytes.IndexByte(win[from:], '}')
			if k < 0 {
				break
			}
			k += from
			if k >= 3 && bytes.Equal(win[k-3:k], closeLine[:3]) {
				s.guessed++
				return p + 1 + k + 1, true
			}
			from = k + 1
		}
	}
	if s.guessMisses++; s.guessMisses > 64 && s.guessMisses > s.guessed {
		s.guess = false
	}
	return 0, false
}

const (
	batchMaxEvents = 8192
	batchMaxBytes  = 4 << 20
)

// rawBatch is a run of consecutive traceEvents elements: data spans them in the input chunk (with
// the separators between them), ends are the end of each event in data, offsets the stream offset
// of each event's start (for error messages, and offsets[k]-offsets[0] is its start in data).
type rawBatch struct {
	seq      int
	firstIdx int64
	data     []byte
	ends     []int32
	offsets  []int64
	chunk    *chunk // data points into it; done releases it
	dataPos  int    // index of data[0] in chunk.buf
	// The batch of B/E events built by pairDurationEvents: ev_idx per event (not consecutive), and B/E
	// phases parsed as events (a pair made complete) or other_events (unpaired) instead of set aside.
	idxs         []int64
	fileOffsets  []int64 // the events' offsets in the file, for errors (offsets are into data)
	durationPass bool
}

// done releases the input chunk once the batch has been scanned.
func (b *rawBatch) done() {
	if b.chunk != nil {
		b.chunk.release()
		b.chunk = nil
	}
}

// SyntaxError is a malformed-input error with the stream offset where it was noticed.
type SyntaxError struct {
	Offset int64
	Msg    string
	Hint   string // what to do, said after the offset (it read as part of the hint before it: r76 #6)
}

func (e *SyntaxError) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("%s at byte %d: %s", e.Msg, e.Offset, e.Hint)
	}
	return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset)
}

func newSplitter(r io.Reader) *splitter {
	src, ok := r.(chunkReader)
	if !ok {
		src = &readerChunks{r: r}
	}
	return &splitter{src: src, Metadata: map[string]json.RawMessage{}}
}

// fill reads the next chunk, keeping buf[keep:end] (moved in front of the new chunk's data, in its
// headroom when it fits). Stream offsets stay valid across the move. It returns false at end of
// input, leaving buf as it was.
func (s *splitter) fill(keep int) bool {
	if s.eof {
		return false
	}
	c, err := s.src.nextChunk()
	if err != nil {
		s.eof = true
		if !errors.Is(err, io.EOF) {
			s.rerr = err
		}
		return false
	}
	s.Bytes += int64(c.end - c.start)
	t, n := s.end-keep, c.end-c.start
	if t > c.start {
		// A value longer than the headroom: the kept part and the data in a buffer of the splitter's own.
		// When the current one is such a buffer with room, the data goes after what it holds; else the new
		// one has room for as much again, so that a long value is copied a bounded number of times (a
		// buffer the size of the kept part made each 2 MiB block copy all of it: a 363 MB top-level value
		// took 5 s and 1.5 GB).
		if cur := s.cur; cur != nil && cur.ra == nil && s.end == cur.end && s.end+n <= cap(cur.buf) {
			cur.buf = cur.buf[:s.end+n]
			copy(cur.buf[s.end:], c.buf[c.start:c.end])
			c.release()
			cur.end = s.end + n
			s.buf, s.end = cur.buf, cur.end
			return true
		}
		nb := make([]byte, t+n, 2*(t+n))
		copy(nb[t:], c.buf[c.start:c.end])
		c.release()
		c = &chunk{buf: nb, start: t, end: len(nb)}
		c.refs.Store(1)
	}
	copy(c.buf[c.start-t:], s.buf[keep:s.end])
	c.start -= t
	s.base += int64(keep - c.start)
	s.pos += c.start - keep
	s.end = c.end
	if s.cur != nil {
		s.cur.release()
	}
	s.cur, s.buf = c, c.buf
	return true
}

// close drops the splitter's reference to its current chunk.
func (s *splitter) close() {
	if s.cur != nil {
		s.cur.release()
		s.cur = nil
	}
}

func (s *splitter) offset() int64 { return s.base + int64(s.pos) }

func (s *splitter) errf(format string, args ...any) error {
	return &SyntaxError{Offset: s.offset(), Msg: fmt.Sprintf(format, args...)}
}

// truncated reports input that ended early: a read error if there was one (a truncated gzip stream
// says so itself), else a truncated-JSON syntax error.
func (s *splitter) truncated(where string) error {
	if s.rerr != nil {
		return s.rerr
	}
	return &SyntaxError{Offset: s.base + int64(s.end), Msg: "truncated JSON: input ends " + where}
}

// peek skips whitespace and returns the next byte without consuming it; ok is false at end of input.
func (s *splitter) peek() (byte, bool) {
	for {
		for s.pos < s.end {
			c := s.buf[s.pos]
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return c, true
			}
			s.pos++
		}
		if !s.fill(s.pos) {
			return 0, false
		}
	}
}

// valueEnd returns the index in buf just past the JSON value starting at s.pos, refilling (and so
// possibly moving buf) as needed; the value then lies at buf[s.pos:end]. Strings, objects and arrays
// are matched structurally; scalars end at the next delimiter.
func (s *splitter) valueEnd(where string) (int, error) {
	return s.valueEndKeeping(where, -1)
}

// valueEndKeeping is valueEnd keeping at most keep bytes of an object or array (keep < 0: all of it): past
// that, s.pos moves along with the scan, so that buf[s.pos:end] is the value's tail and the rest is
// given back.
func (s *splitter) valueEndKeeping(where string, keep int) (int, error) {
	i := s.pos
	depth := 0
	for {
		if keep >= 0 && depth > 0 && i-s.pos > keep {
			s.pos = i
		}
		if i >= s.end {
			rel := i - s.pos
			if !s.fill(s.pos) {
				if depth == 0 && rel > 0 && !isStructural(s.buf[s.pos]) {
					return s.end, nil // a scalar at the very end of input
				}
				return 0, s.truncated(where)
			}
			i = s.pos + rel
			continue
		}
		c := s.buf[i]
		switch c {
		case '"':
			j, ok := stringEnd(s.buf[:s.end], i+1)
			if !ok {
				rel := i - s.pos
				if !s.fill(s.pos) {
					return 0, s.truncated(where + " inside a string")
				}
				i = s.pos + rel
				continue
			}
			i = j
			if depth == 0 {
				return i, nil
			}
			continue
		case '{', '[':
			if depth++; depth > maxValueDepth {
				return 0, s.errf("%s: %v", where, errTooDeep)
			}
		case '}', ']':
			if depth == 0 { // the delimiter after a scalar
				if i == s.pos {
					return 0, s.errf("expected a value, found %s", byteText(c))
				}
				return i, nil
			}
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		case ',', ' ', '\n', '\r', '\t', ':':
			if depth == 0 {
				if i == s.pos {
					return 0, s.errf("expected a value, found %s", byteText(c))
				}
				return i, nil
			}
		}
		i++
	}
}

func isStructural(c byte) bool {
	return c == '{' || c == '[' || c == '"' || c == '}' || c == ']' || c == ','
}

// stringEnd returns the index just past the closing quote of the string whose contents start at i.
func stringEnd(b []byte, i int) (int, bool) {
	j, _, ok := stringEndEsc(b, i)
	return j, ok
}

// SWAR constants: byte-parallel comparisons on 8-byte words. Most JSON strings in a trace are short
// keys and names, for which bytes.IndexByte's setup costs more than it saves; one word at a time is
// 2–3× faster here and also notices escapes in the same pass.
const (
	swarLSB  = 0x0101010101010101
	swarMSB  = 0x8080808080808080
	swarCase = 0x2020202020202020 // ORed in, folds '[' ']' onto '{' '}'
)

// eqMask marks (with 0x80) the bytes of w equal to c. Only the lowest mark is exact (a borrow can
// mark a higher byte too), which is all the callers use.
func eqMask(w, c uint64) uint64 {
	x := w ^ (c * swarLSB)
	return (x - swarLSB) &^ x & swarMSB
}

// stringEndEsc is stringEnd that also reports whether the contents hold a backslash escape.
func stringEndEsc(b []byte, i int) (end int, esc, ok bool) {
	for {
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			if m := eqMask(w, '"') | eqMask(w, '\\'); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(b) && b[i] != '"' && b[i] != '\\' {
			i++
		}
		if i >= len(b) {
			return 0, esc, false
		}
		if b[i] == '"' {
			return i + 1, esc, true
		}
		esc = true
		i += 2 // the backslash and the byte it escapes
	}
}

// afterEvent says where input that ends after n complete events ended (events count from 0).
func afterEvent(n int64) string {
	if n == 0 {
		return "inside traceEvents before its first event"
	}
	return fmt.Sprintf("inside traceEvents after event %d", n-1)
}

// objectEnd is valueEnd for an object or array at s.pos (the only kind an event can be): it skips
// everything but quotes and brackets eight bytes at a time. where is formatted only on error.
func (s *splitter) objectEnd(idx int64) (int, error) {
	i := s.pos
	depth := 0
	for {
		buf := s.buf[:s.end]
		for i+8 <= len(buf) {
			w := binary.LittleEndian.Uint64(buf[i:])
			f := w | swarCase
			m := eqMask(w, '"') | eqMask(f, '{') | eqMask(f, '}')
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
			switch buf[i] {
			case '"':
				j, ok := stringEnd(buf, i+1)
				if !ok {
					goto refill
				}
				i = j
				continue
			case '{', '[':
				depth++
			default: // '}', ']'
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		for i < len(buf) {
			switch buf[i] {
			case '"':
				j, ok := stringEnd(buf, i+1)
				if !ok {
					goto refill
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
	refill:
		// i is at the end of the data, or at the opening quote of a string that the data cuts off.
		inString := i < s.end
		rel := i - s.pos
		if !s.fill(s.pos) {
			if s.ArrayForm && s.rerr == nil && !s.headOnly && idx > 0 {
				return 0, errEventCut // a file with no whole event is broken, not a stream stopped early
			}
			where := fmt.Sprintf("inside event %d", idx)
			if inString {
				where += " inside a string"
			}
			return 0, s.truncated(where)
		}
		i = s.pos + rel
	}
}

// Run parses the top level and sends batches of raw events on out (closing it when done). It returns
// the first syntax or read error.
func (s *splitter) Run(out chan<- *rawBatch, stop <-chan struct{}) error {
	defer close(out)
	c, ok := s.peek()
	if !ok {
		if s.rerr != nil {
			return s.rerr
		}
		if s.offset() > s.bom {
			return &SyntaxError{Offset: s.offset(), Msg: "nothing but white space up to the end", Hint: "want a JSON object with traceEvents or an array of events"}
		}
		return &SyntaxError{Offset: s.offset(), Msg: "empty file", Hint: "want a JSON object with traceEvents or an array of events"}
	}
	if (c == '[' || c == '{') && s.pos+1 < s.end && s.buf[s.pos+1] == 0 {
		// ('{' then NUL: a JSON byte of UTF-16 little-endian text)
		return &SyntaxError{Offset: s.offset(), Msg: "not JSON", Hint: utf16NoBOM}
	}
	switch c {
	case '[':
		s.ArrayForm = true
		s.pos++
		if err := s.events(out, stop); err != nil {
			return err
		}
	case '{':
		s.pos++
		if err := s.object(out, stop); err != nil {
			return err
		}
	default:
		return &SyntaxError{Offset: s.offset(), Msg: "not JSON", Hint: describeStart(s.buf[s.pos:s.end])}
	}
	if c, ok := s.peek(); ok {
		return s.errf("unexpected %s after the end of the top-level value", byteText(c))
	}
	if s.rerr != nil {
		return s.rerr
	}
	return nil
}

const utf16NoBOM = "UTF-16 text (NUL bytes between its characters, no byte-order mark): convert it to UTF-8 (iconv -f UTF-16LE -t UTF-8, or UTF-16BE)"

// describeStart says what a file that does not start as JSON holds, from its first bytes.
func describeStart(head []byte) string {
	if bytes.HasPrefix(head, []byte("\x1f\x8b")) {
		// (after gzip is taken off, whatever the name: a gzip stream here is a second layer)
		return "gzip data inside gzip: compressed twice (gunzip it once)"
	}
	if what := traceio.OtherFormat(head); what != "" {
		return what
	}
	c := head[0]
	switch {
	case c == 0 && len(head) > 1 && head[1] != 0:
		return utf16NoBOM // (NUL then a character: UTF-16 big-endian)
	case c == '"':
		return "top-level value is a string, want an object with traceEvents or an array of events"
	case c == '-' || (c >= '0' && c <= '9'):
		return "top-level value is a number, want an object with traceEvents or an array of events"
	case c == 't' || c == 'f' || c == 'n':
		return "top-level value is a literal, want an object with traceEvents or an array of events"
	}
	return fmt.Sprintf("unexpected %s at the start", byteText(c))
}

func (s *splitter) object(out chan<- *rawBatch, stop <-chan struct{}) error {
	sawEvents := false
	for first := true; ; first = false {
		c, ok := s.peek()
		if !ok {
			return s.truncated("inside the top-level object")
		}
		if c == '}' {
			s.pos++
			break
		}
		if !first {
			if c != ',' {
				return s.errf("expected ',' or '}' in the top-level object, found %s", byteText(c))
			}
			s.pos++
			if c, ok = s.peek(); !ok {
				return s.truncated("inside the top-level object")
			}
		}
		if c != '"' {
			return s.errf("expected a key in the top-level object, found %s", byteText(c))
		}
		end, err := s.valueEnd("inside a top-level key")
		if err != nil {
			return err
		}
		var key string
		if err := json.Unmarshal(s.buf[s.pos:end], &key); err != nil {
			return s.errf("bad top-level key: %v", err)
		}
		s.pos = end
		if c, ok = s.peek(); !ok {
			return s.truncated("after key " + key)
		} else if c != ':' {
			return s.errf("expected ':' after key %q, found %s", key, byteText(c))
		}
		s.pos++
		if c, ok = s.peek(); !ok {
			return s.truncated("after key " + key)
		}
		if key == "traceEvents" {
			if c != '[' {
				return s.errf("traceEvents is %s, want an array", kindOf(c))
			}
			if sawEvents {
				return s.errf("traceEvents appears twice")
			}
			if s.headOnly {
				return errHeadDone
			}
			sawEvents = true
			s.pos++
			if err := s.events(out, stop); err != nil {
				return err
			}
			continue
		}
		if _, dup := s.Metadata[key]; dup && key == "distributedInfo" {
			// The rank is read from the file's head, which stops at traceEvents, and from the whole
			// metadata, which keeps the last value: two of them leave the file's rank undecided.
			return s.errf("distributedInfo appears twice")
		}
		from := s.offset()
		end, err = s.valueEndKeeping("inside the value of "+key, maxMetadataValue)
		if err != nil {
			return err
		}
		if size := s.base + int64(end) - from; size > maxMetadataValue {
			// (an execution trace's nodes, when one sits beside its Kineto trace: not a trace, and kept whole
			// it cost the file's size in memory before it was skipped)
			s.DroppedMeta = append(s.DroppedMeta, DroppedValue{Key: key, Bytes: size})
			s.pos = end
			continue
		}
		if _, dup := s.Metadata[key]; !dup {
			s.MetaKeys = append(s.MetaKeys, key)
		}
		if s.MetaOffsets == nil {
			s.MetaOffsets = map[string]int64{}
		}
		s.MetaOffsets[key] = from
		s.Metadata[key] = append(json.RawMessage(nil), compactJSON(s.buf[s.pos:end])...)
		s.pos = end
	}
	if !sawEvents {
		return ErrNoTraceEvents
	}
	return nil
}

// ErrNotATrace marks a JSON file that is not a Chrome trace (a file of a directory that is one is
// skipped, not an error): ErrNoTraceEvents or ErrNoEvents.
var ErrNotATrace = errors.New("not a Chrome trace")

// ErrNoTraceEvents marks a JSON object that is not a Chrome trace (no traceEvents key).
var ErrNoTraceEvents = fmt.Errorf("%w: the JSON object has no traceEvents array", ErrNotATrace)

// ErrNoEvents marks a JSON array that is not a Chrome trace: none of its first arrayProbeEvents elements has
// a ph (TraceLens writes such an execution_details.json beside its traces).
var ErrNoEvents = fmt.Errorf("%w: none of the first elements of the JSON array is an event (has a ph)", ErrNotATrace)

// arrayProbeEvents is how many elements of an array-form file are read for one with a ph.
const arrayProbeEvents = 16

func kindOf(c byte) string {
	switch {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	}
	return byteText(c)
}

// events splits the elements of the traceEvents array (positioned just after '[').
func (s *splitter) events(out chan<- *rawBatch, stop <-chan struct{}) error {
	var idx int64
	seq := 0
	newBatch := func() *rawBatch {
		return &rawBatch{seq: seq, ends: make([]int32, 0, batchMaxEvents), offsets: make([]int64, 0, batchMaxEvents)}
	}
	b := newBatch()
	flush := func() bool {
		if len(b.ends) == 0 {
			return true
		}
		select {
		case out <- b:
		case <-stop:
			b.done()
			return false
		}
		seq++
		b = newBatch()
		return true
	}
	defer func() { b.done() }() // a batch not handed on (error or stop)
	// probing: an array-form file is a trace once one of its first elements has a ph. One placeholder
	// element ({}) before the events does not make it something else; a file of records none of which
	// has a ph (TraceLens's execution_details.json) is not a trace.
	probing := s.ArrayForm
	noEvents := func() bool { return probing && idx > 0 }
	for first := true; ; first = false {
		c, ok := s.peek()
		if !ok {
			if noEvents() {
				return ErrNoEvents
			}
			if s.ArrayForm && s.rerr == nil {
				// The Chrome trace format lets an array-form trace end without ']'.
				s.Unterminated = true
				flush()
				return nil
			}
			return s.truncated(afterEvent(idx))
		}
		if c == ']' {
			if noEvents() {
				return ErrNoEvents
			}
			s.pos++
			if !flush() {
				return errStopped
			}
			return nil
		}
		if !first {
			if c != ',' {
				return s.errf("expected ',' or ']' after event %d, found %s", idx-1, byteText(c))
			}
			s.pos++
			if c, ok = s.peek(); !ok {
				if noEvents() {
					return ErrNoEvents
				}
				if s.ArrayForm && s.rerr == nil {
					s.Unterminated = true
					flush()
					return nil
				}
				return s.truncated(afterEvent(idx))
			}
			if c == ']' { // tolerate a trailing comma, as Perfetto does
				if noEvents() {
					return ErrNoEvents
				}
				s.pos++
				if !flush() {
					return errStopped
				}
				return nil
			}
		}
		if c != '{' {
			return s.errf("event %d is %s, want an object", idx, kindOf(c))
		}
		off := s.offset()
		end, guessed := s.guessEnd()
		if !guessed {
			var err error
			if end, err = s.objectEnd(idx); err != nil {
				if errors.Is(err, errEventCut) {
					s.Unterminated, s.CutEvent, s.pos = true, off, s.end
					flush()
					return nil
				}
				return err
			}
		}
		if probing {
			var ev rawEvent
			if n, err := scanEvent(s.buf[s.pos:end], &ev); err == nil && n == end-s.pos && len(ev.ph) == 0 {
				if idx+1 >= arrayProbeEvents {
					return ErrNoEvents
				}
			} else {
				probing = false
				if s.headOnly {
					return errHeadDone
				}
			}
		}
		// A batch points into one chunk: an event that made the splitter move on to the next
		// chunk starts a new batch.
		if len(b.ends) > 0 && b.chunk != s.cur {
			if !flush() {
				return errStopped
			}
		}
		if len(b.ends) == 0 {
			b.firstIdx, b.chunk, b.dataPos = idx, s.cur, s.pos
			s.cur.retain()
		}
		b.offsets = append(b.offsets, off)
		b.ends = append(b.ends, int32(end-b.dataPos))
		b.data = s.buf[b.dataPos:end]
		s.pos = end
		idx++
		if len(b.ends) >= batchMaxEvents || len(b.data) >= batchMaxBytes {
			if !flush() {
				return errStopped
			}
		}
	}
}

var errStopped = errors.New("load cancelled")

// errEventCut: an array-form file ends inside an event (events reads the file as unterminated).
var errEventCut = errors.New("array-form file ends inside an event")

// errHeadDone stops a headOnly splitter at the traceEvents key.
var errHeadDone = errors.New("reached traceEvents")

// compactJSON drops insignificant whitespace (Kineto pretty-prints metadata and args).
func compactJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	return appendCompact(out, b)
}

func appendCompact(out, b []byte) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch c {
		case ' ', '\n', '\r', '\t':
			continue
		case '"':
			j, ok := stringEnd(b, i+1)
			if !ok {
				return append(out, b[i:]...)
			}
			out = append(out, b[i:j]...)
			i = j - 1
			continue
		}
		out = append(out, c)
	}
	return out
}

// byteText quotes one byte of input for a message: an ASCII byte as Go quotes a rune ('x', '\x1b'), any
// other in hex ('\xc3'), since alone it is no character (%q showed 0xc3 as 'Ã').
func byteText(c byte) string {
	if c < utf8.RuneSelf {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf(`'\x%02x'`, c)
}
