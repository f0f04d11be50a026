package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Event classes: the normalised category, so that SQL does not need to know every spelling of cat.
const (
	classOther uint8 = iota
	classCPUOp
	classUserAnnotation
	classGPUUserAnnotation
	classRuntime
	classDriver
	classKernel
	classMemcpy
	classMemset
	classSync
	classPythonFunction
	classCuptiRange
	numClasses
)

var classNames = [numClasses]string{"other", "cpu_op", "user_annotation", "gpu_user_annotation", "runtime",
	"driver", "kernel", "memcpy", "memset", "sync", "python_function", "cupti_range"}

// classify maps a raw cat to its class. Legacy (2021) Kineto spellings are included.
func classify(cat []byte) uint8 {
	switch string(cat) {
	case "cpu_op", "Operator":
		return classCPUOp
	case "user_annotation":
		return classUserAnnotation
	case "gpu_user_annotation":
		return classGPUUserAnnotation
	case "cuda_runtime", "Runtime":
		return classRuntime
	case "cuda_driver":
		return classDriver
	case "kernel", "Kernel", "mtia_ccp_events":
		return classKernel
	case "gpu_memcpy", "Memcpy":
		return classMemcpy
	case "gpu_memset", "Memset":
		return classMemset
	case "cuda_sync":
		return classSync
	case "python_function":
		return classPythonFunction
	case "cuda_profiler_range":
		return classCuptiRange
	}
	switch {
	case bytes.HasSuffix(cat, []byte("_runtime")):
		return classRuntime
	case bytes.HasSuffix(cat, []byte("_driver")):
		return classDriver
	}
	return classOther
}

// gpuSide reports classes that run on a device lane: they get their step through the launching
// runtime call and have no CPU call-stack parent.
func gpuSide(c uint8) bool {
	switch c {
	case classKernel, classMemcpy, classMemset, classSync, classGPUUserAnnotation, classCuptiRange:
		return true
	}
	return false
}

var (
	i64 = arrow.PrimitiveTypes.Int64
	str = arrow.BinaryTypes.String
	f64 = arrow.PrimitiveTypes.Float64
	// tok is a string column of few distinct values (names, categories), dictionary-encoded per batch:
	// on a 1 GB trace the parsed copy of events.name shrinks from 152 MB to 6 MB. Its int16 indices
	// hold a batch of a table with one row per event (batchMaxEvents rows at most, checked below); a C
	// event gives a counters row per key, so counters use tok32.
	tok   = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	tok32 = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
)

// A tok column's indices must hold any batch's distinct values.
const _ = uint16(math.MaxInt16 - batchMaxEvents)

func fields(spec ...any) *arrow.Schema {
	fs := make([]arrow.Field, 0, len(spec)/2)
	for i := 0; i < len(spec); i += 2 {
		fs = append(fs, arrow.Field{Name: spec[i].(string), Type: spec[i+1].(arrow.DataType), Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

// eventsDurColumn is the position of dur in the events schemas.
const eventsDurColumn = 7

// Arrow schemas of the per-phase batches. The events schema is completed by the derived columns.
var (
	eventsParsedSchema = fields("ev_idx", i64, "cat", tok, "cat_class", tok, "name", tok, "pid", i64, "tid", i64,
		"ts", i64, "dur", i64, "stream", i64, "device", i64, "correlation", i64, "external_id", i64, "args", str)
	eventsSchema = fields("ev_idx", i64, "cat", tok, "cat_class", tok, "name", tok, "pid", i64, "tid", i64,
		"ts", i64, "dur", i64, "stream", i64, "device", i64, "correlation", i64, "external_id", i64, "args", str,
		"step", i64, "parent_idx", i64, "depth", i64, "link_idx", i64)
	flowsSchema    = fields("ev_idx", i64, "ph", tok, "id", str, "cat", tok, "name", tok, "pid", i64, "tid", i64, "ts", i64, "bp", tok, "args", str)
	countersSchema = fields("ev_idx", i64, "name", tok32, "cat", tok32, "pid", i64, "tid", i64, "ts", i64, "id", str, "key", tok32, "value", f64)
	instantsSchema = fields("ev_idx", i64, "ph", tok, "cat", tok, "name", tok, "pid", i64, "tid", i64, "ts", i64, "scope", tok, "args", str)
	otherSchema    = fields("ev_idx", i64, "ph", tok, "cat", tok, "name", tok, "id", str, "pid", i64, "tid", i64, "ts", i64, "dur", i64, "args", str)
	metaSchema     = fields("ev_idx", i64, "name", str, "pid", i64, "tid", i64, "ts", i64, "args", str)
)

// cpuFacts are the per-event facts the derived-column pass needs, kept outside Arrow for speed.
type cpuFacts struct {
	class   uint8
	link    uint8 // linkNone, linkCPU or linkGPU: the event's side when launches are paired with GPU events
	stepNum int64 // N of ProfilerStep#N, -1 otherwise
}

// The sides of the launch ↔ GPU-event pairing by correlation id (events.link_idx). They follow HTA's
// dataframe: only events with a category other than Trace and a duration take part, and the GPU side is
// an event on a stream with a correlation id, or an Event Sync / Context Sync record.
const (
	linkNone uint8 = iota
	linkCPU
	linkGPU
)

// parsedBatch is one rawBatch turned into Arrow record batches, one per target table.
type parsedBatch struct {
	seq                                       int
	events, flows, counters, instants, others arrow.RecordBatch
	meta                                      arrow.RecordBatch
	facts                                     []cpuFacts
	laneNames                                 map[laneKey]string // synthetic pid/tid ids of string values
	durationEvents                            []durationEvent    // B and E events, for pairDurationEvents
	pairedDurations                           bool               // the batch pairDurationEvents made
	sawLaunch                                 uint8              // bit set of launch-call flavours seen
	count                                     int
	oddLanes                                  int    // events whose pid or tid is neither an integer nor a string (lane's odd)
	oddLaneExample                            string // the first such value
	dupKeys                                   int    // events with a key written twice (rawEvent.dupKey, hotArgs.dupKey)
	dupKeyExample                             string // the first: its index and key
	badEscapes                                int    // events whose name or cat is not a valid JSON string (unescapeValid)
	badEscapeExample                          string // the first: its index and text
	negativeDur                               int    // X events with a negative dur (in others, not events)
	negativeDurExample                        string // the first: its index and dur
	noTS                                      int    // events other than M without a ts (X ones in others, not events)
	noTSExample                               string // the first: its index and phase
}

// laneKey names a process (tid unset) or a thread whose id was synthesised from a string.
type laneKey struct {
	pid, tid int64
	isTid    bool
}

const (
	sawCUDA uint8 = 1 << iota
	sawHIP
	sawMTIA
)

type builders struct {
	events, flows, counters, instants, others, meta *array.RecordBuilder
	hints                                           [6]sizeHint
	mem                                             memory.Allocator
}

// sizeHint remembers a table's rows and string bytes per input event in the worker's last batch, so
// that the next batch's builders are reserved once at about the right size instead of growing by
// doubling (each growth zeroes a new buffer and copies the old one: ~8 % of the scan's CPU).
type sizeHint struct {
	rows float64
	data []float64 // per column; 0 for non-string columns
}

func (h *sizeHint) reserve(b *array.RecordBuilder, events int) {
	if h.rows == 0 {
		return
	}
	n := int(h.rows*float64(events)*1.05) + 16
	for i, f := range b.Fields() {
		f.Resize(n) // exact: Reserve would round up to a power of two (the builders are empty here)
		if sb, ok := f.(*array.StringBuilder); ok && h.data[i] > 0 {
			sb.ReserveData(int(h.data[i]*float64(events)*1.05) + 64)
		}
	}
}

func (h *sizeHint) record(rec arrow.RecordBatch, events int) {
	if events == 0 {
		return
	}
	h.rows = float64(rec.NumRows()) / float64(events)
	if h.data == nil {
		h.data = make([]float64, rec.NumCols())
	}
	for i, c := range rec.Columns() {
		if s, ok := c.(*array.String); ok {
			h.data[i] = float64(len(s.ValueBytes())) / float64(events)
		}
	}
}

func (bld *builders) all() [6]*array.RecordBuilder {
	return [6]*array.RecordBuilder{bld.events, bld.flows, bld.counters, bld.instants, bld.others, bld.meta}
}

func newBuilders(mem memory.Allocator) *builders {
	return &builders{
		events:   array.NewRecordBuilder(mem, eventsParsedSchema),
		flows:    array.NewRecordBuilder(mem, flowsSchema),
		counters: array.NewRecordBuilder(mem, countersSchema),
		instants: array.NewRecordBuilder(mem, instantsSchema),
		others:   array.NewRecordBuilder(mem, otherSchema),
		meta:     array.NewRecordBuilder(mem, metaSchema),
		mem:      mem,
	}
}

// EventError is a problem with one event, reported with its index in traceEvents.
type EventError struct {
	Index  int64
	Offset int64
	Msg    string
}

func (e *EventError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("event %d: %s", e.Index, e.Msg)
	}
	return fmt.Sprintf("event %d (byte %d): %s", e.Index, e.Offset, e.Msg)
}

// appendOther appends ev as a row of other_events: any phase without a table of its own, an unpaired B or
// E, and an X event with a negative dur.
func appendOther(b *array.RecordBuilder, ev *rawEvent, idx, pid int64, pidOK bool, tid int64, tidOK bool, ts int64, hasTS bool, dur int64, hasDur bool) {
	b.Field(0).(*array.Int64Builder).Append(idx)
	appendStr(b.Field(1), ev.ph, ev.phEsc, ev.ph != nil)
	appendStr(b.Field(2), ev.cat, ev.catEsc, ev.hasCat)
	appendStr(b.Field(3), ev.name, ev.nameEsc, ev.name != nil)
	appendIDText(b.Field(4), ev.id, ev.id2)
	appendI64(b.Field(5), pid, pidOK)
	appendI64(b.Field(6), tid, tidOK)
	appendI64(b.Field(7), ts, hasTS)
	appendI64(b.Field(8), dur, hasDur)
	appendArgs(b.Field(9), ev)
}

// noteDupKey counts an event with a key written twice.
func (pb *parsedBatch) noteDupKey(idx int64, key string) {
	if pb.dupKeys == 0 {
		pb.dupKeyExample = fmt.Sprintf("event %d's %s", idx, key)
	}
	pb.dupKeys++
}

// parseBatch scans every event of rb into Arrow columns.
func parseBatch(rb *rawBatch, bld *builders) (*parsedBatch, error) {
	pb := &parsedBatch{seq: rb.seq, count: len(rb.ends)}
	for t, b := range bld.all() {
		bld.hints[t].reserve(b, len(rb.ends))
	}
	var ev rawEvent
	var hot hotArgs
	e := bld.events
	for k, end := range rb.ends {
		raw := rb.data[rb.offsets[k]-rb.offsets[0] : end]
		idx := rb.firstIdx + int64(k)
		if rb.idxs != nil {
			idx = rb.idxs[k]
		}
		off := rb.offsets[k]
		if rb.fileOffsets != nil {
			off = rb.fileOffsets[k]
		}
		fail := func(format string, a ...any) error {
			return &EventError{Index: idx, Offset: off, Msg: fmt.Sprintf(format, a...)}
		}
		n, err := scanEvent(raw, &ev)
		if err != nil {
			return nil, fail("%v", err)
		}
		if n != len(raw) {
			// Only a guessed split (splitter.guessEnd) can cut an event wrong; parseFile then parses
			// the file again with exact splits.
			return nil, fail("the object ends at byte %d of the %d the splitter gave it", n, len(raw))
		}
		if ev.dupKey != "" && !rb.durationPass { // (a B/E pair made complete repeats keys of its own making)
			pb.noteDupKey(idx, strconv.Quote(ev.dupKey))
		}
		// A name or cat written with escapes ("cpu_\u006fp") is decoded here, once, so that what is
		// derived from it (cat_class, step, launch flavour, sync links, process metadata) reads the
		// text the columns show.
		catOK, nameOK := !ev.catNotStr, !ev.nameNotStr
		if ev.catEsc {
			var c string
			c, catOK = unescapeValid(ev.cat)
			ev.cat, ev.catEsc = []byte(c), false
		}
		if ev.nameEsc {
			var n string
			n, nameOK = unescapeValid(ev.name)
			ev.name, ev.nameEsc = []byte(n), false
		}
		if !catOK || !nameOK {
			if pb.badEscapes == 0 {
				what, text := "name", ev.name
				if !catOK {
					what, text = "cat", ev.cat
				}
				pb.badEscapeExample = fmt.Sprintf("event %d's %s %s", idx, what, clip(text))
			}
			pb.badEscapes++
		}
		var ts int64
		hasTS := len(ev.ts) > 0 && !isNull(ev.ts)
		if hasTS {
			var err error
			if ts, err = usToNs(numberText(ev.ts)); err != nil {
				return nil, fail("%s", timeError("ts", ev.ts, err))
			}
		}
		if (len(ev.tid) == 0 || isNull(ev.tid)) && !processMetadata(&ev) {
			// Perfetto's importer reads an event without a tid as on its process's main thread (tid = pid),
			// so a B without a tid pairs with an E on that thread, and a thread_name names it.
			ev.tid = ev.pid
		}
		pid, pidOK, pidText, pidOdd := lane(ev.pid)
		tid, tidOK, tidText, tidOdd := lane(ev.tid)
		if pidOdd || tidOdd {
			if pb.oddLanes == 0 {
				pb.oddLaneExample = clip(ev.tid)
				if pidOdd {
					pb.oddLaneExample = clip(ev.pid)
				}
			}
			pb.oddLanes++
		}
		if pidText != "" || tidText != "" {
			pb.nameLanes(pid, tid, pidText, tidText)
		}
		ph := string(ev.ph)
		if ev.phEsc {
			ph = unescape(ev.ph)
		}
		if !hasTS && ph != "M" && ph != "" && !rb.durationPass { // (an element without ph, a placeholder, is no event)
			// Perfetto drops such an event (stat json_tokenizer_failure) and loads the rest; a complete one
			// refused the whole file here, any other was kept without a word.
			if pb.noTS == 0 {
				pb.noTSExample = fmt.Sprintf("event %d, ph %s", idx, clip(ev.ph))
			}
			pb.noTS++
		}
		switch ph {
		case "X":
			var dur int64
			hasDur := len(ev.dur) > 0 && !isNull(ev.dur)
			if hasDur {
				var err error
				if dur, err = usToNs(numberText(ev.dur)); err != nil {
					return nil, fail("%s", timeError("dur", ev.dur, err))
				}
				if dur < 0 {
					// Perfetto drops such a slice (stat slice_negative_duration); one bad record should not
					// stop a multi-GB load either. Kept where nothing reads it as a duration, and said.
					if pb.negativeDur == 0 {
						pb.negativeDurExample = fmt.Sprintf("event %d, dur %s", idx, clip(ev.dur))
					}
					pb.negativeDur++
					appendOther(bld.others, &ev, idx, pid, pidOK, tid, tidOK, ts, hasTS, dur, true)
					continue
				}
			}
			if !hasTS {
				appendOther(bld.others, &ev, idx, pid, pidOK, tid, tidOK, 0, false, dur, hasDur)
				continue
			}
			if hasDur {
				if ts > math.MaxInt64-dur {
					return nil, fail("ts %s + dur %s is out of range (the end in ns must fit in int64: at most %d)", clip(ev.ts), clip(ev.dur), int64(math.MaxInt64))
				}
			}
			cls := classOther
			if ev.hasCat {
				cls = classify(ev.cat)
			}
			scanArgs(ev.args, &hot)
			if hot.dupKey != "" && ev.dupKey == "" && !rb.durationPass {
				pb.noteDupKey(idx, strconv.Quote(hot.dupKey)+" in args")
			}
			e.Field(0).(*array.Int64Builder).Append(idx)
			appendStr(e.Field(1), ev.cat, ev.catEsc, ev.hasCat)
			appendText(e.Field(2), classNames[cls])
			appendStr(e.Field(3), ev.name, ev.nameEsc, ev.name != nil)
			appendI64(e.Field(4), pid, pidOK)
			appendI64(e.Field(5), tid, tidOK)
			appendI64(e.Field(6), ts, true)
			appendI64(e.Field(7), dur, hasDur)
			stream := hot.stream
			streamOK := hot.hasStream && stream >= 0 && stream != 4294967295
			appendI64(e.Field(8), stream, streamOK)
			dev, devOK := hot.device, hot.hasDevice
			if !devOK && gpuSide(cls) {
				dev, devOK = pid, pidOK
			}
			appendI64(e.Field(9), dev, devOK)
			appendI64(e.Field(10), hot.correlation, hot.hasCorr)
			appendI64(e.Field(11), hot.externalID, hot.hasExt)
			appendArgs(e.Field(12), &ev)
			f := cpuFacts{class: cls, stepNum: -1}
			if hasDur && ev.hasCat && string(ev.cat) != "Trace" {
				f.link = linkCPU
				if (streamOK && hot.hasCorr && hot.correlation >= 0) || string(ev.name) == "Event Sync" || string(ev.name) == "Context Sync" {
					f.link = linkGPU
				}
			}
			f.stepNum = stepNumber(cls, ev.name)
			if cls == classRuntime || cls == classDriver {
				pb.sawLaunch |= launchFlavour(ev.name)
			}
			pb.facts = append(pb.facts, f)
		case "s", "t", "f":
			b := bld.flows
			b.Field(0).(*array.Int64Builder).Append(idx)
			appendText(b.Field(1), ph)
			appendIDText(b.Field(2), ev.id, ev.id2)
			appendStr(b.Field(3), ev.cat, ev.catEsc, ev.hasCat)
			appendStr(b.Field(4), ev.name, ev.nameEsc, ev.name != nil)
			appendI64(b.Field(5), pid, pidOK)
			appendI64(b.Field(6), tid, tidOK)
			appendI64(b.Field(7), ts, hasTS)
			appendStr(b.Field(8), ev.bp, false, ev.bp != nil)
			appendArgs(b.Field(9), &ev)
		case "C":
			series, err := appendCounters(bld.counters, idx, &ev, pid, pidOK, tid, tidOK, ts, hasTS)
			if err != nil {
				return nil, fail("%v", err)
			}
			if !series {
				// No series to store (no args, {}, or args that are not an object): kept as written.
				appendOther(bld.others, &ev, idx, pid, pidOK, tid, tidOK, ts, hasTS, 0, false)
			}
		case "i", "I", "R": // R, a mark, is an instant to Perfetto too
			b := bld.instants
			b.Field(0).(*array.Int64Builder).Append(idx)
			appendText(b.Field(1), ph)
			appendStr(b.Field(2), ev.cat, ev.catEsc, ev.hasCat)
			appendStr(b.Field(3), ev.name, ev.nameEsc, ev.name != nil)
			appendI64(b.Field(4), pid, pidOK)
			appendI64(b.Field(5), tid, tidOK)
			appendI64(b.Field(6), ts, hasTS)
			appendStr(b.Field(7), ev.s, false, ev.s != nil)
			appendArgs(b.Field(8), &ev)
		case "M":
			b := bld.meta
			b.Field(0).(*array.Int64Builder).Append(idx)
			appendStr(b.Field(1), ev.name, ev.nameEsc, ev.name != nil)
			appendI64(b.Field(2), pid, pidOK)
			appendI64(b.Field(3), tid, tidOK)
			appendI64(b.Field(4), ts, hasTS)
			appendArgs(b.Field(5), &ev)
		case "B", "E":
			if !rb.durationPass {
				// Paired once the whole file is read (pairDurationEvents): a pair may span batches.
				pb.durationEvents = append(pb.durationEvents, durationEvent{idx: idx, off: off, begin: ph == "B", pid: pid, tid: tid,
					pidOK: pidOK, tidOK: tidOK, ts: ts, hasTS: hasTS, raw: append([]byte(nil), raw...),
					name: matchText(ev.name, ev.nameEsc), cat: matchText(ev.cat, ev.catEsc)})
				continue
			}
			fallthrough // an unpaired B or E
		default: // b/e/n async events, unpaired B/E, and any other phase: nothing is dropped
			var dur int64
			hasDur := len(ev.dur) > 0 && !isNull(ev.dur)
			if hasDur {
				var err error
				if dur, err = usToNs(numberText(ev.dur)); err != nil {
					return nil, fail("%s", timeError("dur", ev.dur, err))
				}
			}
			appendOther(bld.others, &ev, idx, pid, pidOK, tid, tidOK, ts, hasTS, dur, hasDur)
		}
	}
	pb.events = bld.events.NewRecordBatch()
	pb.flows = bld.flows.NewRecordBatch()
	pb.counters = bld.counters.NewRecordBatch()
	pb.instants = bld.instants.NewRecordBatch()
	pb.others = bld.others.NewRecordBatch()
	pb.meta = bld.meta.NewRecordBatch()
	for t, r := range [6]*arrow.RecordBatch{&pb.events, &pb.flows, &pb.counters, &pb.instants, &pb.others, &pb.meta} {
		bld.hints[t].record(*r, len(rb.ends))
		*r = trimmed(*r, bld.mem)
	}
	// Each batch gets its own dictionaries: a builder's memo table otherwise keeps every value it has
	// seen, and each batch's dictionary would copy them all.
	for _, b := range bld.all() {
		for _, f := range b.Fields() {
			if db, ok := f.(array.DictionaryBuilder); ok {
				db.ResetFull()
			}
		}
	}
	return pb, nil
}

// trimmed returns rec with the buffers of each column that holds more than 1/8 unused capacity copied
// to their exact size. The parsed copy of a file lives until the file is inserted, so unused capacity
// is peak memory: Arrow's builders reserve and grow to the next power of two, and the size hints miss
// when a batch's mix of events differs from the last one's. Untrimmed, a 1 GB trace's parsed copy held
// 1452 MB for 928 MB of data; trimmed, 953 MB.
func trimmed(rec arrow.RecordBatch, mem memory.Allocator) arrow.RecordBatch {
	cols := rec.Columns()
	var out []arrow.Array
	for i, c := range cols {
		d := c.Data()
		if len(d.Children()) > 0 || d.Offset() != 0 {
			continue
		}
		used, held := 0, 0
		for _, b := range d.Buffers() {
			if b != nil {
				used += b.Len()
				held += cap(b.Buf())
			}
		}
		if held <= used+used/8+256 {
			continue
		}
		bufs := make([]*memory.Buffer, len(d.Buffers()))
		for j, b := range d.Buffers() {
			if b != nil {
				exact := mem.Allocate(b.Len())
				copy(exact, b.Bytes())
				bufs[j] = memory.NewBufferBytes(exact)
			}
		}
		var nd *array.Data
		if d.DataType().ID() == arrow.DICTIONARY { // (Dictionary() is a typed nil otherwise)
			nd = array.NewDataWithDictionary(d.DataType(), d.Len(), bufs, d.NullN(), 0, d.Dictionary().(*array.Data))
		} else {
			nd = array.NewData(d.DataType(), d.Len(), bufs, nil, d.NullN(), 0)
		}
		if out == nil {
			out = make([]arrow.Array, len(cols))
			copy(out, cols)
			for _, o := range out {
				o.Retain()
			}
		}
		out[i].Release()
		out[i] = array.MakeFromData(nd)
		nd.Release()
	}
	if out == nil {
		return rec
	}
	trimmedRec := array.NewRecordBatch(rec.Schema(), out, rec.NumRows())
	for _, o := range out {
		o.Release()
	}
	rec.Release()
	return trimmedRec
}

// timeError says why a ts or dur (µs) did not convert to ns: not a number, or a number whose ns do
// not fit the BIGINT columns.
func timeError(field string, v []byte, err error) string {
	if errors.Is(err, errRange) {
		hint := ""
		if _, err := strconv.ParseInt(string(numberText(v)), 10, 64); err == nil {
			// It would fit as ns: the likely mistake is a file written in ns.
			hint = "; Chrome-trace times are in µs, and this one reads as ns"
		}
		return fmt.Sprintf("%s %s is out of range (in ns it must fit in int64: %d to %d%s)", field, clip(v), int64(math.MinInt64), int64(math.MaxInt64), hint)
	}
	return fmt.Sprintf("%s is not a number: %s", field, clip(v))
}

func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

func appendI64(b array.Builder, v int64, ok bool) {
	ib := b.(*array.Int64Builder)
	if ok {
		ib.Append(v)
	} else {
		ib.AppendNull()
	}
}

func appendStr(b array.Builder, v []byte, esc, ok bool) {
	switch {
	case !ok:
		b.AppendNull()
	case esc:
		appendText(b, strings.ToValidUTF8(unescape(v), "\uFFFD"))
	default:
		appendBytes(b, validUTF8(v))
	}
}

// appendText and appendBytes append valid UTF-8 to a str or tok column.
func appendText(b array.Builder, v string) {
	switch sb := b.(type) {
	case *array.StringBuilder:
		sb.Append(v)
	case *array.BinaryDictionaryBuilder:
		sb.AppendString(v) // cannot fail: the value type is the builder's own
	}
}

func appendBytes(b array.Builder, v []byte) {
	switch sb := b.(type) {
	case *array.StringBuilder:
		sb.BinaryBuilder.Append(v)
	case *array.BinaryDictionaryBuilder:
		sb.Append(v)
	}
}

// validUTF8 replaces invalid UTF-8 (which DuckDB rejects) by U+FFFD, as Perfetto does; the check is
// a fast ASCII scan in the common case.
func validUTF8(v []byte) []byte {
	if utf8.Valid(v) {
		return v
	}
	return bytes.ToValidUTF8(v, []byte("\uFFFD"))
}

// appendArgs stores the args object as compact JSON text (NULL when absent); scanEvent compacted it.
func appendArgs(b array.Builder, ev *rawEvent) {
	sb := b.(*array.StringBuilder)
	if len(ev.args) == 0 || isNull(ev.args) {
		sb.AppendNull()
		return
	}
	sb.BinaryBuilder.Append(validUTF8(ev.argsCompact))
}

// appendIDText stores a flow/async id as text: numbers as written, strings unquoted.
func appendIDText(b array.Builder, v, id2 []byte) {
	if (len(v) == 0 || isNull(v)) && len(id2) > 0 {
		// The Chrome format's id2 (Perfetto reads it): {"local": "0x1"} is scoped to its process,
		// {"global": …} is not. Kept as "local:0x1" / "global:…", so that the two never pair with
		// each other or with a plain id.
		var scoped map[string]json.RawMessage
		if json.Unmarshal(id2, &scoped) == nil {
			for _, scope := range [2]string{"local", "global"} {
				if raw, ok := scoped[scope]; ok {
					var s string
					if json.Unmarshal(raw, &s) != nil {
						s = string(raw) // a number
					}
					appendBytes(b, []byte(scope+":"+s))
					return
				}
			}
		}
	}
	switch {
	case len(v) == 0 || isNull(v):
		b.AppendNull()
	case v[0] == '"':
		c, esc := strContent(v)
		appendStr(b, c, esc, true)
	default:
		appendBytes(b, v)
	}
}

// lane converts a pid or tid value. Numbers (and numeric strings) are kept; other strings such as
// "Spans" or the legacy "stream 7" get a stable synthetic id above 2^40 and are returned as text, so
// that the threads view can show them as the process or thread name. odd: a value that is neither an
// integer nor a string (laneNumber).
func lane(v []byte) (id int64, ok bool, text string, odd bool) {
	if len(v) == 0 || isNull(v) {
		return 0, false, "", false
	}
	if v[0] != '"' {
		id, ok, odd = laneNumber(v)
		return id, ok, "", odd
	}
	c, esc := strContent(v)
	if n, err := parseInt(c); err == nil && len(c) > 0 {
		return n, true, "", false
	}
	text = string(c)
	if esc {
		text = unescape(c)
	}
	h := fnv.New64a()
	h.Write([]byte(text))
	return int64(1<<40) | int64(h.Sum64()&(1<<40-1)), true, text, false
}

// laneNumber reads a pid or tid written as a JSON value other than a string. An integer (12, or 12.0) is
// the id; odd reports a value that is not one: a fraction (rounded to the nearest integer, as before),
// a number beyond int64, true/false, an object or array (no id: NULL). The loader says how many.
func laneNumber(v []byte) (id int64, ok, odd bool) {
	// Kineto's case, a short run of digits, without decimalScaled's generality.
	i, neg := 0, false
	if v[0] == '-' {
		i, neg = 1, true
	}
	if n := len(v) - i; n > 0 && n <= 18 {
		var x int64
		j := i
		for ; j < len(v) && v[j] >= '0' && v[j] <= '9'; j++ {
			x = x*10 + int64(v[j]-'0')
		}
		if j == len(v) {
			if neg {
				x = -x
			}
			return x, true, false
		}
	}
	n, err := parseInt(v)
	if err != nil {
		return 0, false, true
	}
	if milli, err := decimalScaled(v, 3); err == nil && milli%1000 != 0 {
		return n, true, true
	}
	return n, true, false
}

func (pb *parsedBatch) nameLanes(pid, tid int64, pidText, tidText string) {
	if pb.laneNames == nil {
		pb.laneNames = map[laneKey]string{}
	}
	if pidText != "" {
		pb.laneNames[laneKey{pid: pid}] = pidText
	}
	if tidText != "" {
		pb.laneNames[laneKey{pid: pid, tid: tid, isTid: true}] = tidText
	}
}

// stepNumber returns N when a complete event of class cls named name is the ProfilerStep#N window,
// else -1. It is the one rule for what a step is: the loader's events.step and the windows the
// inflator replicates both go by it, so that an inflated trace has the steps it was asked for. A
// cpu_op counts as well as a user annotation because 2021 traces write the step as an Operator (and
// HTA goes by the name alone).
func stepNumber(cls uint8, name []byte) int64 {
	if cls != classUserAnnotation && cls != classCPUOp {
		return -1
	}
	return profilerStep(name)
}

// profilerStep returns N for a name of the form ProfilerStep#N (spaces allowed around '#'), else -1.
func profilerStep(name []byte) int64 {
	start, end := profilerStepDigits(name)
	if start < 0 {
		return -1
	}
	n, err := strconv.ParseInt(string(name[start:end]), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// profilerStepDigits returns where the N of a name of the form ProfilerStep#N… lies, or -1, -1: the
// inflator renumbers a copy's steps by replacing them, keeping the rest of the name as written.
func profilerStepDigits(name []byte) (start, end int) {
	const p = "ProfilerStep"
	if !bytes.HasPrefix(name, []byte(p)) {
		return -1, -1
	}
	i := len(p)
	for i < len(name) && (name[i] == ' ' || name[i] == '\t') {
		i++
	}
	if i == len(name) || name[i] != '#' {
		return -1, -1
	}
	i++
	for i < len(name) && (name[i] == ' ' || name[i] == '\t') {
		i++
	}
	start = i
	for i < len(name) && name[i] >= '0' && name[i] <= '9' {
		i++
	}
	if i == start {
		return -1, -1
	}
	return start, i
}

// launchFlavour says which vendor's kernel-launch call name is (a sawCUDA/sawHIP/sawMTIA bit, or 0).
// HTA looks for cudaLaunchKernel and hipLaunchKernel only, so a Triton trace (cuLaunchKernel) or a
// ROCm one launching through hipModuleLaunchKernel was an "UNKNOWN GPU"; any launch call counts here.
func launchFlavour(name []byte) uint8 {
	switch {
	case bytes.HasPrefix(name, []byte("cudaLaunchKernel")) || bytes.HasPrefix(name, []byte("cuLaunchKernel")):
		return sawCUDA
	case bytes.HasPrefix(name, []byte("hip")) && bytes.Contains(name, []byte("LaunchKernel")):
		return sawHIP
	case bytes.HasPrefix(name, []byte("runFunction - job_prep_and_submit_for_execution")):
		return sawMTIA
	}
	return 0
}

// appendCounters writes one row per key of a counter event's args object (value NULL when it is not a
// number) and reports whether it wrote any.
func appendCounters(b *array.RecordBuilder, idx int64, ev *rawEvent, pid int64, pidOK bool, tid int64, tidOK bool, ts int64, hasTS bool) (bool, error) {
	args := ev.args
	if len(args) < 2 || args[0] != '{' {
		return false, nil
	}
	type entry struct{ key, value []byte } // key decoded
	var entries [8]entry
	kv := entries[:0]
	i := skipWS(args, 1)
	for i < len(args) && args[i] == '"' {
		ke, ok := stringEnd(args, i+1)
		if !ok {
			return false, fmt.Errorf("bad counter args")
		}
		key, esc := strContent(args[i:ke])
		i = skipWS(args, ke)
		if i >= len(args) || args[i] != ':' {
			return false, fmt.Errorf("bad counter args")
		}
		i = skipWS(args, i+1)
		ve, err := valueEndIn(args, i)
		if err != nil {
			return false, fmt.Errorf("bad counter args: %v", err)
		}
		v := args[i:ve]
		if c := v[0]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			// NaN and Infinity are not JSON, but Python's json writes them and DuckDB's reads them; inf and nan
			// (any case) are taken too, as -inf always was: the value is the float they name.
			_, ferr := strconv.ParseFloat(string(v), 64)
			if s := string(v); s != "true" && s != "false" && s != "null" && ferr != nil {
				return false, fmt.Errorf("bad counter args: %q is not a JSON value", clip(v))
			}
		}
		// A key given twice is one series with the last value, as JSON readers (Python's, DuckDB's) take it.
		if esc {
			key = []byte(unescape(key))
		}
		dup := false
		for k := range kv {
			if bytes.Equal(kv[k].key, key) {
				kv[k].value, dup = v, true
				break
			}
		}
		if !dup {
			kv = append(kv, entry{key, v})
		}
		i = skipWS(args, ve)
		if i < len(args) && args[i] == ',' {
			i = skipWS(args, i+1)
		} else if i >= len(args) || args[i] != '}' {
			// "a":1 2, "b":3 ended the series at a and dropped b without a word
			return false, fmt.Errorf("bad counter args: expected ',' or '}' after the value of %q", key)
		}
	}
	if i != len(args)-1 || args[i] != '}' {
		return false, fmt.Errorf("bad counter args: expected a key or '}' at %q", clip(args[i:]))
	}
	for _, e := range kv {
		b.Field(0).(*array.Int64Builder).Append(idx)
		appendStr(b.Field(1), ev.name, ev.nameEsc, ev.name != nil)
		appendStr(b.Field(2), ev.cat, ev.catEsc, ev.hasCat)
		appendI64(b.Field(3), pid, pidOK)
		appendI64(b.Field(4), tid, tidOK)
		appendI64(b.Field(5), ts, hasTS)
		appendIDText(b.Field(6), ev.id, ev.id2)
		appendStr(b.Field(7), e.key, false, true)
		fb := b.Field(8).(*array.Float64Builder)
		if x, err := strconv.ParseFloat(string(numberText(e.value)), 64); err == nil {
			fb.Append(x)
		} else {
			fb.AppendNull()
		}
	}
	return len(kv) > 0, nil
}

// nonEmpty leaves out the batches without rows. An INSERT from a registered Arrow stream of only empty
// batches, followed in the same transaction by an insert of two row groups or more into the same table of a
// database file, left the second insert's rows invisible until the next session (a trace of only B/E pairs,
// whose plain-event batches are all empty, read as having no events, and its time span was stored NULL).
func nonEmpty(recs []arrow.RecordBatch) []arrow.RecordBatch {
	out := recs[:0:0]
	for _, r := range recs {
		if r != nil && r.NumRows() > 0 {
			out = append(out, r)
		}
	}
	return out
}
