package engine

import (
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// derived holds, per events row (in file order across batches), the columns computed after the
// whole file is scanned: step, parent_idx, depth and link_idx.
type derived struct {
	step, parent, depth, link []int64
	stepOK, parentOK, linkOK  []bool
}

// eventView is the compact per-event data the derivation needs, gathered from the Arrow batches.
type eventView struct {
	idx, pid, tid, ts, dur, corr []int64
	pidOK, tidOK, durOK, corrOK  []bool
	facts                        []cpuFacts
}

func gatherEvents(batches []*parsedBatch) *eventView {
	n := 0
	for _, b := range batches {
		n += int(b.events.NumRows())
	}
	v := &eventView{
		idx: make([]int64, 0, n), pid: make([]int64, 0, n), tid: make([]int64, 0, n), ts: make([]int64, 0, n),
		dur: make([]int64, 0, n), corr: make([]int64, 0, n), pidOK: make([]bool, 0, n), tidOK: make([]bool, 0, n),
		durOK: make([]bool, 0, n), corrOK: make([]bool, 0, n), facts: make([]cpuFacts, 0, n),
	}
	for _, b := range batches {
		r := b.events
		get := func(c int) *array.Int64 { return r.Column(c).(*array.Int64) }
		idx, pid, tid, ts, dur, corr := get(0), get(4), get(5), get(6), get(7), get(10)
		for i := 0; i < int(r.NumRows()); i++ {
			v.idx = append(v.idx, idx.Value(i))
			v.pid = append(v.pid, pid.Value(i))
			v.pidOK = append(v.pidOK, pid.IsValid(i))
			v.tid = append(v.tid, tid.Value(i))
			v.tidOK = append(v.tidOK, tid.IsValid(i))
			v.ts = append(v.ts, ts.Value(i))
			v.dur = append(v.dur, dur.Value(i))
			v.durOK = append(v.durOK, dur.IsValid(i))
			v.corr = append(v.corr, corr.Value(i))
			v.corrOK = append(v.corrOK, corr.IsValid(i))
		}
		v.facts = append(v.facts, b.facts...)
	}
	return v
}

// derive computes step, parent_idx and depth.
//
// step: a CPU-side event belongs to the ProfilerStep#N annotation whose [ts, ts+dur) contains its ts
// (the later one in file order if several do, as HTA); a GPU-side event takes the step of the CPU
// event that launched it (same correlation id); else NULL.
//
// parent_idx/depth: CPU-side events of one (pid, tid) are nested by an interval stack. Order: ts
// ascending, then longer first, then lower ev_idx (HTA's call-graph tie rules). An event that starts
// exactly where the open one ends is its sibling when both have a duration, and its child when
// either is zero-length (HTA puts the start first in that case).
func derive(v *eventView) *derived {
	n := len(v.idx)
	d := &derived{step: make([]int64, n), parent: make([]int64, n), depth: make([]int64, n),
		stepOK: make([]bool, n), parentOK: make([]bool, n)}
	d.link, d.linkOK = links(v)
	end := func(i int) int64 {
		if v.durOK[i] {
			return v.ts[i] + v.dur[i]
		}
		return v.ts[i]
	}

	// Steps, sorted by start; prefix max of ends bounds the backwards scan.
	var steps []int
	for i := 0; i < n; i++ {
		if v.facts[i].stepNum >= 0 {
			steps = append(steps, i)
		}
	}
	sort.SliceStable(steps, func(a, b int) bool { return v.ts[steps[a]] < v.ts[steps[b]] })
	maxEnd := make([]int64, len(steps))
	for k, s := range steps {
		maxEnd[k] = end(s)
		if k > 0 && maxEnd[k-1] > maxEnd[k] {
			maxEnd[k] = maxEnd[k-1]
		}
	}
	stepOf := func(ts int64) (int64, bool) {
		k := sort.Search(len(steps), func(j int) bool { return v.ts[steps[j]] > ts }) - 1
		best := -1
		for ; k >= 0 && maxEnd[k] > ts; k-- {
			s := steps[k]
			if ts < end(s) && (best < 0 || s > best) {
				best = s
			}
		}
		if best < 0 {
			return 0, false
		}
		return v.facts[best].stepNum, true
	}

	corrStep := map[int64]int64{}
	lanes := map[[2]int64][]int32{}
	for i := 0; i < n; i++ {
		if gpuSide(v.facts[i].class) {
			continue
		}
		if len(steps) > 0 {
			d.step[i], d.stepOK[i] = stepOf(v.ts[i])
			if d.stepOK[i] && v.corrOK[i] {
				corrStep[v.corr[i]] = d.step[i]
			}
		}
		key := [2]int64{v.pid[i], v.tid[i]}
		if !v.pidOK[i] {
			key[0] = -1 << 62
		}
		if !v.tidOK[i] {
			key[1] = -1 << 62
		}
		lanes[key] = append(lanes[key], int32(i))
	}
	if len(corrStep) > 0 {
		for i := 0; i < n; i++ {
			if gpuSide(v.facts[i].class) && v.corrOK[i] {
				d.step[i], d.stepOK[i] = corrStep[v.corr[i]]
			}
		}
	}

	var stack []int32
	for _, lane := range lanes {
		sort.Slice(lane, func(a, b int) bool {
			x, y := lane[a], lane[b]
			if v.ts[x] != v.ts[y] {
				return v.ts[x] < v.ts[y]
			}
			if dx, dy := end(int(x)), end(int(y)); dx != dy {
				return dx > dy
			}
			return x < y
		})
		stack = stack[:0]
		for _, e := range lane {
			for len(stack) > 0 {
				top := stack[len(stack)-1]
				te := end(int(top))
				if te < v.ts[e] || (te == v.ts[e] && te > v.ts[top] && end(int(e)) > v.ts[e]) {
					stack = stack[:len(stack)-1]
					continue
				}
				break
			}
			if len(stack) > 0 {
				d.parent[e], d.parentOK[e] = v.idx[stack[len(stack)-1]], true
			}
			d.depth[e] = int64(len(stack))
			stack = append(stack, e)
		}
	}
	return d
}

// links pairs launches with GPU events by correlation id, as HTA's index_correlation does on the whole
// parsed trace: each side gets the ev_idx of the last event (in file order) of the other side with the
// same correlation. Correlation -1 and missing correlations pair nothing.
func links(v *eventView) ([]int64, []bool) {
	n := len(v.idx)
	link, ok := make([]int64, n), make([]bool, n)
	lastCPU, lastGPU := map[int64]int64{}, map[int64]int64{}
	for i := 0; i < n; i++ {
		if !v.corrOK[i] || v.corr[i] == -1 {
			continue
		}
		switch v.facts[i].link {
		case linkCPU:
			lastCPU[v.corr[i]] = v.idx[i] // file order: the last write is the largest ev_idx
		case linkGPU:
			lastGPU[v.corr[i]] = v.idx[i]
		}
	}
	for i := 0; i < n; i++ {
		if !v.corrOK[i] || v.corr[i] == -1 {
			continue
		}
		switch v.facts[i].link {
		case linkCPU:
			link[i], ok[i] = lastGPU[v.corr[i]]
		case linkGPU:
			link[i], ok[i] = lastCPU[v.corr[i]]
		}
	}
	return link, ok
}

// withDerived returns the events batches with the derived columns appended, sharing the parsed
// columns (no copy).
func withDerived(batches []*parsedBatch, d *derived, mem memory.Allocator) []arrow.RecordBatch {
	out := make([]arrow.RecordBatch, 0, len(batches))
	off := 0
	for _, b := range batches {
		r := b.events
		n := int(r.NumRows())
		cols := make([]arrow.Array, 0, r.NumCols()+4)
		cols = append(cols, r.Columns()...)
		cols = append(cols, int64Array(mem, d.step[off:off+n], d.stepOK[off:off+n]))
		cols = append(cols, int64Array(mem, d.parent[off:off+n], d.parentOK[off:off+n]))
		cols = append(cols, int64Array(mem, d.depth[off:off+n], depthValid(b.facts)))
		cols = append(cols, int64Array(mem, d.link[off:off+n], d.linkOK[off:off+n]))
		out = append(out, array.NewRecordBatch(eventsSchema, cols, int64(n)))
		off += n
	}
	return out
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

func depthValid(f []cpuFacts) []bool {
	ok := make([]bool, len(f))
	for i := range f {
		ok[i] = !gpuSide(f[i].class)
	}
	return ok
}

func int64Array(mem memory.Allocator, vals []int64, valid []bool) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(vals, valid)
	return b.NewArray()
}
