package engine

import (
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// LoaderVersion numbers the meaning of the columns a load derives (traces.loader_version), so that
// a database loaded before a change can be found and reloaded (StaleTraces; LoadOptions.Replace
// reloads such files even when they did not change). 1 (stored as NULL): before 2026-11-24; its
// parent_idx took the event open at the start, however early that one ended (ProfilerSteps nested
// under each other, subtrees reached past their root's end). 2: the parent is the innermost
// event that holds the whole event, depth is the parent's + 1, and zero-length events at one
// timestamp are siblings (HTA's sort nests them in a chain; README, "Differences from HTA").
const LoaderVersion = 2

// derive returns the events batches with the columns computed after the whole file is scanned
// appended: step, parent_idx, depth and link_idx. The parsed columns are shared, not copied, and the
// derived ones are written straight into their Arrow buffers: on a 1 GB trace a gathered copy of the
// inputs and an intermediate copy of the outputs came to 500 MB at the load's memory peak.
//
// step: a CPU-side event belongs to the ProfilerStep#N annotation whose [ts, ts+dur) contains its ts
// (the later one in file order if several do, as HTA); a GPU-side event takes the step of the CPU
// event that launched it (same correlation id); else NULL.
//
// parent_idx/depth: CPU-side events of one (pid, tid) are nested by an interval stack. Order: ts
// ascending, then longer first, then lower ev_idx (HTA's call-graph tie rules). An event that starts
// exactly where the open one ends is its sibling when both have a duration or both are zero-length,
// and its child when one is (HTA puts the start first in that case). The parent is the innermost
// event that holds the whole event, so a subtree never reaches past its root's end; depth is the
// parent's + 1 (0 for a root).
//
// link_idx: see links.
func derive(batches []*parsedBatch, mem memory.Allocator) []arrow.RecordBatch {
	in := make([]deriveInput, len(batches))
	out := make([]derivedCols, len(batches))
	start := 0
	for b, pb := range batches {
		in[b] = newDeriveInput(pb, start)
		out[b] = newDerivedCols(mem, len(pb.facts))
		start += len(pb.facts)
	}
	ids := corrRange(in)
	links(in, out, ids)

	// Steps, sorted by start; prefix max of ends bounds the backwards scan.
	var steps []stepSpan
	for b := range in {
		for i, f := range in[b].facts {
			if f.stepNum >= 0 {
				steps = append(steps, stepSpan{ts: in[b].ts[i], end: in[b].end(i), num: f.stepNum, idx: in[b].idx.Value(i)})
			}
		}
	}
	sort.SliceStable(steps, func(x, y int) bool { return steps[x].ts < steps[y].ts })
	maxEnd := make([]int64, len(steps))
	for k, s := range steps {
		maxEnd[k] = s.end
		if k > 0 && maxEnd[k-1] > maxEnd[k] {
			maxEnd[k] = maxEnd[k-1]
		}
	}
	stepOf := func(ts int64) (int64, bool) {
		k := sort.Search(len(steps), func(j int) bool { return steps[j].ts > ts }) - 1
		best := -1
		for ; k >= 0 && maxEnd[k] > ts; k-- {
			if ts < steps[k].end && (best < 0 || steps[k].idx > steps[best].idx) {
				best = k
			}
		}
		if best < 0 {
			return 0, false
		}
		return steps[best].num, true
	}

	// CPU-side events: their step, the step each correlation id takes, and their lanes.
	// corrStep: the last CPU-side event in file order with both a step and this correlation.
	var corrStep *corrTable
	if len(steps) > 0 {
		corrStep = newCorrTable(ids)
	}
	laneSize := map[[2]int64]int{}
	cpuEvents := 0
	for b := range in {
		for i, f := range in[b].facts {
			if gpuSide(f.class) {
				continue
			}
			cpuEvents++
			laneSize[in[b].lane(i)]++
			if len(steps) == 0 {
				continue
			}
			if s, ok := stepOf(in[b].ts[i]); ok {
				out[b].step.set(i, s)
				if in[b].corr.IsValid(i) {
					corrStep.putLater(in, in[b].corr.Value(i), in[b].start+i)
				}
			}
		}
	}
	if corrStep != nil {
		for b := range in {
			for i, f := range in[b].facts {
				if gpuSide(f.class) && in[b].corr.IsValid(i) {
					if pos, ok := corrStep.get(in[b].corr.Value(i)); ok {
						cb, row := locate(in, pos)
						out[b].step.set(i, out[cb].step.values[row])
					}
				}
			}
		}
	}

	// One backing array for all lanes, cut by the counts above.
	backing := make([]laneEvent, cpuEvents)
	lanes := make(map[[2]int64][]laneEvent, len(laneSize))
	at := 0
	for key, n := range laneSize {
		lanes[key] = backing[at : at : at+n]
		at += n
	}
	for b := range in {
		for i, f := range in[b].facts {
			if !gpuSide(f.class) {
				key := in[b].lane(i)
				lanes[key] = append(lanes[key], laneEvent{ts: in[b].ts[i], end: in[b].end(i), idx: in[b].idx.Value(i), b: int32(b), row: int32(i)})
			}
		}
	}
	var stack []laneEvent
	var minEnd []int64 // minEnd[k]: the earliest end among stack[:k+1]
	var depths []int64 // depths[k]: the depth given to stack[k]
	for _, lane := range lanes {
		slices.SortFunc(lane, func(x, y laneEvent) int {
			switch {
			case x.ts != y.ts:
				return cmpInt64(x.ts, y.ts)
			case x.end != y.end:
				return cmpInt64(y.end, x.end)
			}
			return cmpInt64(x.idx, y.idx)
		})
		stack, minEnd, depths = stack[:0], minEnd[:0], depths[:0]
		for _, e := range lane {
			for len(stack) > 0 && endedBefore(stack[len(stack)-1], e) {
				stack, minEnd, depths = stack[:len(stack)-1], minEnd[:len(minEnd)-1], depths[:len(depths)-1]
			}
			if len(stack) > 0 && minEnd[len(minEnd)-1] <= e.ts {
				// An event below the top has ended: its child outlived it (a record_function range
				// opened inside a Python frame and closed in a later one). The stack keeps the
				// events still open.
				kept, keptDepths := stack[:0], depths[:0]
				minEnd = minEnd[:0]
				for k, x := range stack {
					if !endedBefore(x, e) {
						kept, keptDepths = append(kept, x), append(keptDepths, depths[k])
						minEnd = append(minEnd, min(x.end, lastOr(minEnd, x.end)))
					}
				}
				stack, depths = kept, keptDepths
			}
			// The parent is the innermost open event that also holds e's end: an event that
			// outlives the one it starts in (ProfilerStep#3 opens inside the 9 µs
			// _record_function_enter_new frame of step()) belongs to no subtree of that event, or
			// a recursive sum over parent_idx gives a 9 µs frame a whole step's work.
			depth := int64(0)
			for k := len(stack) - 1; k >= 0; k-- {
				if x := stack[k]; x.end >= e.end {
					out[e.b].parent.set(int(e.row), in[x.b].idx.Value(int(x.row)))
					depth = depths[k] + 1
					break
				}
			}
			out[e.b].depth.set(int(e.row), depth)
			stack = append(stack, e)
			depths = append(depths, depth)
			minEnd = append(minEnd, min(e.end, lastOr(minEnd, e.end)))
		}
	}

	recs := make([]arrow.RecordBatch, len(batches))
	for b, pb := range batches {
		r := pb.events
		cols := make([]arrow.Array, 0, r.NumCols()+4)
		cols = append(cols, r.Columns()...)
		derivedArrays := []arrow.Array{out[b].step.array(), out[b].parent.array(), out[b].depth.array(), out[b].link.array()}
		cols = append(cols, derivedArrays...)
		recs[b] = array.NewRecordBatch(eventsSchema, cols, r.NumRows())
		for _, a := range derivedArrays {
			a.Release()
		}
	}
	return recs
}

// frameInputColumns are the columns of events that _hta_frame_of (10_hta_frame.sql) reads: all of them
// must be read (see there).
var frameInputColumns = []string{"trace_id", "rank", "ev_idx", "cat", "cat_class", "name", "pid", "tid", "ts", "dur",
	"stream", "correlation", "link_idx", "step", "args"}

// frameInput turns the events batches into frameInputColumns: those of the batches, plus the constant
// trace_id and rank (slices of one array each, so no per-batch copy).
func frameInput(recs []arrow.RecordBatch, traceID, rank int64, mem memory.Allocator) []arrow.RecordBatch {
	longest := 0
	for _, r := range recs {
		longest = max(longest, int(r.NumRows()))
	}
	constant := func(v int64) arrow.Array {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.Reserve(longest)
		for range longest {
			b.UnsafeAppend(v)
		}
		return b.NewArray()
	}
	consts := map[string]arrow.Array{"trace_id": constant(traceID), "rank": constant(rank)}
	defer consts["trace_id"].Release()
	defer consts["rank"].Release()
	fields := make([]arrow.Field, len(frameInputColumns))
	from := make([]int, len(frameInputColumns))
	for i, name := range frameInputColumns {
		fields[i] = arrow.Field{Name: name, Type: i64, Nullable: true}
		from[i] = -1
		if idx := eventsSchema.FieldIndices(name); len(idx) == 1 {
			fields[i], from[i] = eventsSchema.Field(idx[0]), idx[0]
		}
	}
	schema := arrow.NewSchema(fields, nil)
	out := make([]arrow.RecordBatch, 0, len(recs))
	for _, r := range recs {
		n := r.NumRows()
		cols := make([]arrow.Array, len(from))
		for i, j := range from {
			if j >= 0 {
				cols[i] = r.Column(j)
				cols[i].Retain()
			} else {
				cols[i] = array.NewSlice(consts[frameInputColumns[i]], 0, n)
			}
		}
		out = append(out, array.NewRecordBatch(schema, cols, n))
		for _, c := range cols {
			c.Release()
		}
	}
	return out
}

// links pairs launches with GPU events by correlation id, as HTA's index_correlation does on the whole
// parsed trace: each side gets the ev_idx of the last event (in file order) of the other side with the
// same correlation. Correlation -1 and missing correlations pair nothing.
func links(in []deriveInput, out []derivedCols, ids idRange) {
	lastCPU, lastGPU := newCorrTable(ids), newCorrTable(ids)
	for b := range in {
		for i, f := range in[b].facts {
			if corr, ok := in[b].linkCorr(i); ok {
				switch f.link {
				case linkCPU:
					lastCPU.putLater(in, corr, in[b].start+i)
				case linkGPU:
					lastGPU.putLater(in, corr, in[b].start+i)
				}
			}
		}
	}
	for b := range in {
		for i, f := range in[b].facts {
			corr, ok := in[b].linkCorr(i)
			if !ok {
				continue
			}
			other := lastCPU
			switch f.link {
			case linkCPU:
				other = lastGPU
			case linkNone:
				continue
			}
			if pos, ok := other.get(corr); ok {
				lb, row := locate(in, pos)
				out[b].link.set(i, in[lb].idx.Value(row))
			}
		}
	}
}

// deriveInput is one events batch as the derivation reads it.
type deriveInput struct {
	idx, pid, tid, dur, corr *array.Int64
	ts                       []int64
	facts                    []cpuFacts
	start                    int  // position of the batch's first event among the file's events
	paired                   bool // the batch of B/E pairs (pairDurationEvents)
}

func newDeriveInput(pb *parsedBatch, start int) deriveInput {
	r := pb.events
	col := func(c int) *array.Int64 { return r.Column(c).(*array.Int64) }
	return deriveInput{idx: col(0), pid: col(4), tid: col(5), ts: col(6).Int64Values(), dur: col(7), corr: col(10),
		facts: pb.facts, start: start, paired: pb.pairedDurations}
}

// locate returns the batch and row of the event at position pos.
func locate(in []deriveInput, pos int) (int, int) {
	b := sort.Search(len(in), func(j int) bool { return in[j].start > pos }) - 1
	return b, pos - in[b].start
}

func (d *deriveInput) end(i int) int64 {
	if d.dur.IsValid(i) {
		return d.ts[i] + d.dur.Value(i)
	}
	return d.ts[i]
}

// lane is the (pid, tid) key of event i, with a value no real id takes for a missing one.
func (d *deriveInput) lane(i int) [2]int64 {
	key := [2]int64{d.pid.Value(i), d.tid.Value(i)}
	if !d.pid.IsValid(i) {
		key[0] = -1 << 62
	}
	if !d.tid.IsValid(i) {
		key[1] = -1 << 62
	}
	return key
}

func (d *deriveInput) linkCorr(i int) (int64, bool) {
	if !d.corr.IsValid(i) || d.corr.Value(i) == -1 {
		return 0, false
	}
	return d.corr.Value(i), true
}

type stepSpan struct {
	ts, end, num int64
	idx          int64 // ev_idx: file order (B/E pairs come last among the batches but keep their B's place)
}

// laneEvent is a CPU-side event as the call-stack nesting sorts it: b and row locate it.
type laneEvent struct {
	ts, end, idx int64
	b, row       int32
}

// endedBefore reports whether x, on the stack, is no longer open when e starts (see derive on ties).
func endedBefore(x, e laneEvent) bool {
	return x.end < e.ts || (x.end == e.ts && (x.end > x.ts) == (e.end > e.ts))
}

// lastOr returns the last element of s, or v when s is empty.
func lastOr(s []int64, v int64) int64 {
	if len(s) == 0 {
		return v
	}
	return s[len(s)-1]
}

func cmpInt64(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// derivedCols are one batch's derived columns under construction.
type derivedCols struct{ step, parent, depth, link *int64Column }

func newDerivedCols(mem memory.Allocator, n int) derivedCols {
	return derivedCols{newInt64Column(mem, n), newInt64Column(mem, n), newInt64Column(mem, n), newInt64Column(mem, n)}
}

// int64Column is an Arrow int64 column written in any row order; rows never set are NULL.
type int64Column struct {
	n            int
	values       []int64
	valid        []byte
	data, bitmap *memory.Buffer
}

func newInt64Column(mem memory.Allocator, n int) *int64Column {
	data, bitmap := memory.NewResizableBuffer(mem), memory.NewResizableBuffer(mem)
	data.Resize(n * arrow.Int64SizeBytes)
	bitmap.Resize(int(bitutil.BytesForBits(int64(n))))
	memory.Set(data.Bytes(), 0)
	memory.Set(bitmap.Bytes(), 0)
	return &int64Column{n: n, values: arrow.Int64Traits.CastFromBytes(data.Bytes()), valid: bitmap.Bytes(), data: data, bitmap: bitmap}
}

func (c *int64Column) set(i int, v int64) {
	c.values[i] = v
	bitutil.SetBit(c.valid, i)
}

// array hands the buffers over to a new Arrow array.
func (c *int64Column) array() arrow.Array {
	d := array.NewData(arrow.PrimitiveTypes.Int64, c.n, []*memory.Buffer{c.bitmap, c.data}, nil, array.UnknownNullCount, 0)
	defer d.Release()
	c.data.Release()
	c.bitmap.Release()
	return array.NewInt64Data(d)
}

// corrTable maps correlation ids to an event, by its position in the file's events (eventPos). Kineto
// numbers correlations consecutively, so a slice over the ids' range serves: on a 1 GB trace, 4 bytes a
// slot over 7.8 M ids against 180 MB for Go maps of the 1.5 M ids. Ids spread wider than that fall back
// to a map. Positions are uint32: a file would need 4 G events (over a TB of JSON) to overflow them.
type corrTable struct {
	lo         int64
	dense      []uint32 // position + 1; 0 when unset
	m          map[int64]uint32
	outOfOrder bool // positions are not in ev_idx order (B/E pairs): putLater compares
}

// idRange is the span of the correlation ids of a file's events.
type idRange struct {
	lo, hi     int64
	count      int
	outOfOrder bool // some batch holds B/E pairs, whose events come before earlier batches' in the file
}

func corrRange(in []deriveInput) idRange {
	var r idRange
	for _, d := range in {
		r.outOfOrder = r.outOfOrder || d.paired
		for i := 0; i < d.corr.Len(); i++ {
			if d.corr.IsValid(i) {
				v := d.corr.Value(i)
				if r.count == 0 || v < r.lo {
					r.lo = v
				}
				if r.count == 0 || v > r.hi {
					r.hi = v
				}
				r.count++
			}
		}
	}
	return r
}

func newCorrTable(ids idRange) *corrTable {
	t := &corrTable{lo: ids.lo, outOfOrder: ids.outOfOrder}
	if span := uint64(ids.hi - ids.lo); ids.count > 0 && span < uint64(16*ids.count+1024) {
		t.dense = make([]uint32, span+1)
	} else {
		t.m = map[int64]uint32{}
	}
	return t
}

// putLater records pos for id k (within the range the table was made for) unless the event already
// recorded comes later in the file (a larger ev_idx): batches are in file order, except the B/E pairs
// appended after them.
func (t *corrTable) putLater(in []deriveInput, k int64, pos int) {
	if !t.outOfOrder {
		t.put(k, pos)
		return
	}
	if prev, ok := t.get(k); ok {
		pb, prow := locate(in, prev)
		b, row := locate(in, pos)
		if in[pb].idx.Value(prow) > in[b].idx.Value(row) {
			return
		}
	}
	t.put(k, pos)
}

func (t *corrTable) put(k int64, pos int) {
	if t.m != nil {
		t.m[k] = uint32(pos)
		return
	}
	t.dense[k-t.lo] = uint32(pos) + 1
}

func (t *corrTable) get(k int64) (int, bool) {
	if t.m != nil {
		v, ok := t.m[k]
		return int(v), ok
	}
	if k < t.lo || uint64(k-t.lo) >= uint64(len(t.dense)) || t.dense[k-t.lo] == 0 {
		return 0, false
	}
	return int(t.dense[k-t.lo]) - 1, true
}
