package graph

import (
	"cmp"
	"slices"
)

// HTA 0.6.1's call stacks (trace_call_stack.py's CallStackGraph, hta-spec.md §4.9 step 1), replayed exactly:
// compat mode needs them wherever HTA reads its call graph, and they are not the nesting the loader derives.
// Frequent kernel sequences and CUPTI counters use that module; the critical path uses call_stack.py, whose
// comparator differs only on zero-length events, which its graph leaves out, so the same replay serves it. HTA sorts the two ends of every event of a thread with a comparator that
// is not a consistent order where zero-length and nonzero events meet at one timestamp, then walks them with a
// stack that pops whatever is on top at any end. So an event that outlives its parent, or a sort that put an
// end before the matching start of a zero-length event, leaves an event open long after it ended, and every
// later event of the thread hangs below it (on negative_queue_length_values_check one 1 µs aten::item becomes
// an ancestor of every later step's backward ops). The outcome depends on which pairs the sort compared, so
// the sort is replayed too: numpy's quicksort by time, then CPython's sorted() with HTA's comparator.

// htaStackEnd is one end of an event as HTA's call-stack sort sees it.
type htaStackEnd struct {
	row   int32
	index int64 // HTA's event index: ev_idx
	dur   int64
	time  int64
	open  bool
}

// htaStackLess is HTA's _less_than: by time; at one time the start of an event before its end; a zero-length
// event opens before, and closes after, any nonzero end at that time, but before a nonzero event's start when
// it is the one closing (this is where the order is not transitive); two zero-length starts by index, two
// zero-length ends by index reversed; a nonzero end before a nonzero start; two starts the longer first, two
// ends the shorter first, then starts by index and ends by index reversed.
func htaStackLess(x, y htaStackEnd) bool {
	if x.time != y.time {
		return x.time < y.time
	}
	if x.index == y.index {
		return x.open
	}
	if x.dur == 0 || y.dur == 0 {
		switch {
		case x.dur == 0 && y.dur > 0:
			return !y.open
		case x.dur > 0 && y.dur == 0:
			return x.open
		case x.open && y.open:
			return x.index < y.index
		case !x.open && !y.open:
			return x.index > y.index
		default:
			return x.open
		}
	}
	if x.open != y.open {
		return !x.open
	}
	if x.dur != y.dur {
		if x.open {
			return x.dur > y.dur
		}
		return x.dur < y.dur
	}
	if x.open {
		return x.index < y.index
	}
	return x.index > y.index
}

// htaStackOrder returns the ends of the events of one thread (rows, in HTA's dataframe order: ev_idx) in
// the order HTA's call-stack construction visits them. HTA lays out every start, then every end (pandas
// melt), sorts that by time with numpy's quicksort, then sorts the result again with its comparator. A
// negative duration counts as 0 (HTA raises "Unexpected case" on one). buf is reused when it has room.
func htaStackOrder(f *Frame, rows []int32, buf []htaStackEnd) []htaStackEnd {
	n := len(rows)
	melt := buf[:0]
	for _, r := range rows {
		melt = append(melt, htaStackEnd{row: r, index: f.EvIdx[r], dur: max(f.Dur[r], 0), time: f.TS[r], open: true})
	}
	keys := make([]int64, 0, 2*n)
	for i := range n {
		e := melt[i]
		e.time += e.dur
		e.open = false
		melt = append(melt, e)
	}
	for _, e := range melt {
		keys = append(keys, e.time)
	}
	perm := ArgsortQuick(keys)
	out := make([]htaStackEnd, len(melt))
	for i, p := range perm {
		out[i] = melt[p]
	}
	PySort(out, htaStackLess)
	return out
}

// nestedStackOrder orders the ends of rows (one thread, nested by nestCPULanes) for htaStackWalk by a
// consistent rule, where HTA's comparator is not one: at one time the events ending there close first
// (the shorter first, the later of equal ones first), then events open (the longer first, then by index), a
// zero-length event closing right after it opens. HTA's order put a zero-length launch call at the
// instant one op ends and its sibling starts between the sibling's start and the op's end, which popped
// the wrong event: an edge back in time, and the thread's time counted twice (a 170 µs path on a thread
// of 150 µs).
func nestedStackOrder(f *Frame, rows []int32, buf []htaStackEnd) []htaStackEnd {
	// One sort key per end: (time, k2, k3). k2 puts the ends of nonzero events (their duration, the shorter
	// first) before every start and zero-length end (1<<62 - duration, the longer first); k3 orders ends by
	// index reversed, and starts by index, a zero-length event's end right after its start.
	type keyed struct {
		time, k2, k3 int64
		end          htaStackEnd
	}
	keys := make([]keyed, 0, 2*len(rows))
	for _, r := range rows {
		d, ix := max(f.Dur[r], 0), f.EvIdx[r]
		open := htaStackEnd{row: r, index: ix, dur: d, time: f.TS[r], open: true}
		keys = append(keys, keyed{f.TS[r], 1<<62 - d, 2 * ix, open})
		closing := open
		closing.time, closing.open = f.TS[r]+d, false
		if d > 0 {
			keys = append(keys, keyed{closing.time, d, -ix, closing})
		} else {
			keys = append(keys, keyed{closing.time, 1 << 62, 2*ix + 1, closing})
		}
	}
	slices.SortFunc(keys, func(x, y keyed) int {
		switch {
		case x.time != y.time:
			return cmp.Compare(x.time, y.time)
		case x.k2 != y.k2:
			return cmp.Compare(x.k2, y.k2)
		}
		return cmp.Compare(x.k3, y.k3)
	})
	ends := buf[:0]
	for _, k := range keys {
		ends = append(ends, k.end)
	}
	return ends
}

// htaStackWalk replays HTA's stack over ends (htaStackOrder's result): a start becomes a child of the event
// on top of the stack (parent -1 at the top level) and is pushed; an end pops the top, whatever it is.
// enter is called at each push, exit at each pop, and for the events still open at the end (innermost
// first), so the calls follow a depth-first walk of HTA's tree.
func htaStackWalk(ends []htaStackEnd, stack []int32, enter func(row, parent int32), exit func(row, parent int32)) []int32 {
	stack = stack[:0]
	parentOf := func(i int) int32 {
		if i > 0 {
			return stack[i-1]
		}
		return -1
	}
	for _, e := range ends {
		if e.open {
			enter(e.row, parentOf(len(stack)))
			stack = append(stack, e.row)
		} else if len(stack) > 0 {
			top := len(stack) - 1
			exit(stack[top], parentOf(top))
			stack = stack[:top]
		}
	}
	for top := len(stack) - 1; top >= 0; top-- {
		exit(stack[top], parentOf(top))
	}
	return stack[:0]
}

// HTACallStacks nests the CPU events of f (sorted by ev_idx) as HTA 0.6.1's call graph does, thread by
// thread: parent is the row of each row's parent (-1 at the top level and for rows outside every call
// stack), depth its depth (0 at the top level, -1 outside). A thread (pid, tid) whose rows are all on GPU
// streams (stream > 0), or all have pid 0 or all tid 0, is a GPU lane and has no call stack; in the others
// the rows with stream -1 are nested. The backward-thread merge HTA applies afterwards is not done here.
func HTACallStacks(f *Frame) (parent, depth []int32) {
	n := f.Len()
	parent = make([]int32, n)
	depth = make([]int32, n)
	for i := range parent {
		parent[i], depth[i] = -1, -1
	}
	type laneKey struct{ pid, tid int64 }
	lanes := map[laneKey][]int32{}
	var order []laneKey
	for r := range n {
		k := laneKey{f.Pid[r], f.Tid[r]}
		if _, ok := lanes[k]; !ok {
			order = append(order, k)
		}
		lanes[k] = append(lanes[k], int32(r))
	}
	var ends []htaStackEnd
	var stack, cpu []int32
	for _, k := range order {
		rows := lanes[k]
		allGPU := true
		for _, r := range rows {
			if f.Stream[r] <= 0 {
				allGPU = false
				break
			}
		}
		if allGPU || k.pid == 0 || k.tid == 0 {
			continue
		}
		cpu = cpu[:0]
		for _, r := range rows {
			if f.Stream[r] == -1 {
				cpu = append(cpu, r)
			}
		}
		ends = htaStackOrder(f, cpu, ends)
		stack = htaStackWalk(ends, stack, func(row, p int32) {
			parent[row] = p
			if p >= 0 {
				depth[row] = depth[p] + 1
			} else {
				depth[row] = 0
			}
		}, func(int32, int32) {})
	}
	return parent, depth
}
