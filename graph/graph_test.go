package graph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dg "github.com/dominikbraun/graph"
)

// libLongest computes the longest-path length with dominikbraun/graph: its TopologicalSort and
// PredecessorMap (O(V²): small graphs only), then a DP.
func libLongest(t *testing.T, g *Graph) int64 {
	lg, err := g.Library(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	order, err := dg.TopologicalSort(lg)
	if err != nil {
		t.Fatal(err)
	}
	pred, err := lg.PredecessorMap()
	if err != nil {
		t.Fatal(err)
	}
	dist := map[int32]int64{}
	var best int64
	for _, v := range order {
		var d int64
		for u, e := range pred[v] {
			if c := dist[u] + int64(e.Properties.Weight); c > d {
				d = c
			}
		}
		dist[v] = d
		best = max(best, d)
	}
	return best
}

func randomDAG(r *rand.Rand, n, m int) *Graph {
	b := NewBuilder(n, m)
	for i := 0; i < m; i++ {
		u, v := r.Intn(n), r.Intn(n)
		if u == v {
			continue
		}
		if u > v {
			u, v = v, u
		}
		b.AddEdge(int32(u), int32(v), int64(r.Intn(100)), uint8(r.Intn(5)))
	}
	return b.Build()
}

func TestLongestPathMatchesLibrary(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		n := 2 + r.Intn(60)
		g := randomDAG(r, n, r.Intn(4*n))
		p, err := g.LongestPath(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := libLongest(t, g); p.Length != want {
			t.Fatalf("graph %d: CSR length %d, library %d", i, p.Length, want)
		}
		// The path is a real path whose weights add up.
		var sum int64
		for k, e := range p.Edges {
			if g.Src[e] != p.Nodes[k] || g.Dst[e] != p.Nodes[k+1] {
				t.Fatalf("graph %d: edge %d does not join path nodes", i, e)
			}
			sum += g.W[e]
		}
		if sum != p.Length {
			t.Fatalf("graph %d: edges sum %d, length %d", i, sum, p.Length)
		}
		// The CSR order is a topological order, as the library's is.
		order, _ := g.TopoOrder(context.Background())
		pos := make([]int, g.N)
		for k, v := range order {
			pos[v] = k
		}
		for e := range g.Src {
			if pos[g.Src[e]] >= pos[g.Dst[e]] {
				t.Fatalf("graph %d: order puts %d after %d", i, g.Src[e], g.Dst[e])
			}
		}
	}
}

func TestCycleAndOverwrite(t *testing.T) {
	b := NewBuilder(3, 4)
	b.AddEdge(0, 1, 5, EdgeOperator)
	if id, replaced := b.AddEdge(0, 1, 7, EdgeDependency); !replaced || id != 0 {
		t.Fatalf("overwrite: id %d replaced %t", id, replaced)
	}
	b.AddEdge(1, 2, 1, 0)
	b.AddEdge(2, 1, 1, 0)
	g := b.Build()
	if g.W[0] != 7 || g.Type[0] != EdgeDependency || len(g.Src) != 3 {
		t.Fatalf("overwrite kept %v %v", g.W, g.Type)
	}
	if _, err := g.LongestPath(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("cycle: %v", err)
	}
}

func TestDOT(t *testing.T) {
	g := NewGraph(3, []int32{0, 1}, []int32{1, 2}, []int64{3, 4}, nil)
	var buf bytes.Buffer
	if err := g.WriteDOT(&buf, []int32{0, 1, 2}, func(v int32) string { return "n" }, func(e int32) string { return EdgeTypeName(g.Type[e]) }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "digraph") || !strings.Contains(buf.String(), "critical_path_operator") {
		t.Fatalf("DOT: %s", buf.String())
	}
}

func TestArgsortQuickSorts(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 100; i++ {
		keys := make([]int64, r.Intn(300))
		for k := range keys {
			keys[k] = int64(r.Intn(20))
		}
		idx := ArgsortQuick(keys)
		seen := make([]bool, len(keys))
		for k := range idx {
			seen[idx[k]] = true
			if k > 0 && keys[idx[k-1]] > keys[idx[k]] {
				t.Fatalf("not sorted")
			}
		}
		for _, s := range seen {
			if !s {
				t.Fatal("not a permutation")
			}
		}
	}
	// numpy 1.24: np.argsort([1,0,1,0,1,0,...]*10, kind="quicksort") is fixed; small inputs use insertion sort (stable).
	if got := ArgsortQuick([]int64{2, 1, 2, 1}); got[0] != 1 || got[1] != 3 || got[2] != 0 || got[3] != 2 {
		t.Fatalf("small: %v", got)
	}
}

func TestShortName(t *testing.T) {
	for in, want := range map[string]string{
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)": "at::native::vectorized_elementwise_kernel",
		"aten::add":                        "aten::add",
		"Memcpy HtoD (Pageable -> Device)": "Memcpy HtoD (Pageable -> Device)",
	} {
		if got := ShortName(in); got != want {
			t.Errorf("ShortName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNestCPULanes: a CPU event that outlives the event it starts in is clipped to that event's end,
// per thread; nested and disjoint events, GPU rows and rows outside the set are left alone.
func TestNestCPULanes(t *testing.T) {
	// rows: 0 parent [0,10) tid 1; 1 child [5,30) tid 1 → [5,10); 2 grandchild [6,40) → [6,10) (clipped
	// to the clipped child); 3 [12,20) tid 1 disjoint; 4 [5,30) tid 2 (other thread); 5 GPU [5,30);
	// 6 [0,10) and 7 [0,25) tid 3: same start, the longer one encloses; 8 [2,50) tid 1, not in rows.
	// Tid 4, record_function ranges among Python frames: 9 Python main [0,100); 10 Python
	// _record_function_enter_new [10,19), which 11, an annotation [15,60), outlives: the frame is cut
	// where the annotation starts → [10,15), the annotation kept whole; 12 an op [20,30) in it; 13 a
	// Python frame [50,70) that outlives the annotation it starts in → [50,60); 14 an op [65,80) under main.
	// A blocking call that outlives its op: tid 5, 15 op [0,20) and 16 cudaStreamSynchronize [5,25): the op
	// is extended to 25; tid 6, the same, 17 and 18, but 19 an op [22,30) starts before the call returns:
	// the call is cut → [5,20).
	f := &Frame{
		EvIdx:  []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19},
		Pid:    []int64{1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
		Tid:    []int64{1, 1, 1, 1, 2, 7, 3, 3, 1, 4, 4, 4, 4, 4, 4, 5, 5, 6, 6, 6},
		TS:     []int64{0, 5, 6, 12, 5, 5, 0, 0, 2, 0, 10, 15, 20, 50, 65, 0, 5, 0, 5, 22},
		Dur:    []int64{10, 25, 34, 8, 25, 25, 10, 25, 48, 100, 9, 45, 10, 20, 15, 20, 20, 20, 20, 8},
		Stream: []int64{-1, -1, -1, -1, -1, 7, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
		Cat:    []int32{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 0, 1, 0, 0, 5, 0, 5, 0},
		Name:   []int32{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 3, 4, 3},
		Syms:   []string{"cpu_op", "python_function", "user_annotation", "op", "cudaStreamSynchronize", "cuda_runtime"},
	}
	got := nestCPULanes(f, []int32{0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, 100)
	want := []int64{10, 5, 4, 8, 25, 25, 10, 25, 48, 100, 5, 45, 10, 10, 15, 25, 20, 20, 15, 8}
	if !slices.Equal(got.Dur, want) {
		t.Errorf("durations %v, want %v", got.Dur, want)
	}
	if f.Dur[1] != 25 {
		t.Errorf("the input frame was changed: %v", f.Dur)
	}
	if g := nestCPULanes(f, []int32{0, 3, 4}, 100); g != f {
		t.Errorf("a frame with nothing to clip was copied")
	}
}

// TestSerialGPULanes: on one (GPU, stream) a row ends where the next one starts; other lanes, CPU rows,
// sync rows and rows not taken are left alone.
func TestSerialGPULanes(t *testing.T) {
	// rows: 0 [0,100) and 1 [90,150) stream 7 GPU 0 → 0 cut to [0,90); 2 [140,150) inside 1 → 1 cut to
	// [90,140); 3 [160,170) after a gap; 4 [95,200) stream 8 (other lane); 5 [95,200) stream 7 on GPU 1;
	// 6 [300,310) and 7 [300,320) one start: the shorter one cut to nothing; 8 [305,330) a Context Sync on
	// stream 7; 9 [0,500) a CPU row; 10 [315,400) stream 7, not in rows.
	f := &Frame{
		EvIdx:     []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		Pid:       []int64{0, 0, 0, 0, 0, 1, 0, 0, 0, 100, 0},
		Tid:       []int64{7, 7, 7, 7, 8, 7, 7, 7, 7, 100, 7},
		TS:        []int64{0, 90, 140, 160, 95, 95, 300, 300, 305, 0, 315},
		Dur:       []int64{100, 60, 10, 10, 105, 105, 10, 20, 25, 500, 85},
		Stream:    []int64{7, 7, 7, 7, 8, 7, 7, 7, 7, -1, 7},
		IndexCorr: []int64{20, 21, 22, 23, 24, 25, 26, 27, 28, 0, 30},
		Cat:       []int32{0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0},
		Syms:      []string{"kernel", "cuda_sync", "cpu_op"},
	}
	got := serialGPULanes(f, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	want := []int64{90, 50, 10, 10, 105, 105, 0, 20, 25, 500, 85}
	if !slices.Equal(got.Dur, want) {
		t.Errorf("durations %v, want %v", got.Dur, want)
	}
	if f.Dur[0] != 100 {
		t.Errorf("the input frame was changed: %v", f.Dur)
	}
	if g := serialGPULanes(f, []int32{0, 3, 4, 5}); g != f {
		t.Errorf("a frame with nothing to cut was copied")
	}
}

// TestWindowInstances: instances are the CPU annotations in file order by default; Kineto's GPU-timeline copies
// of each step count only in compat mode (HTA), where they used to make instance 1 of two steps a GPU copy.
func TestWindowInstances(t *testing.T) {
	// rows (file order): 0 CPU step#1 [0,100); 1 its GPU copy [10,120); 2 CPU step#2 [100,200); 3 its GPU copy
	// [130,230); 4 an unrelated op.
	// Row 5: a GPU copy of ProfilerStep#1 without a stream, as PyTorch 2.11 writes them (category
	// gpu_user_annotation): not a step in the default mode, an instance in compat mode. Row 6: step#2's op.
	f := &Frame{
		EvIdx:  []int64{0, 1, 2, 3, 4, 5, 6},
		Name:   []int32{0, 0, 1, 1, 2, 0, 2},
		Cat:    []int32{3, 4, 3, 4, 5, 4, 5},
		TS:     []int64{0, 10, 100, 130, 5, 12, 150},
		Dur:    []int64{100, 110, 100, 100, 1, 90, 1},
		Stream: []int64{-1, 7, -1, 7, -1, -1, -1},
		Syms:   []string{"ProfilerStep#1", "ProfilerStep#2", "aten::mm", "user_annotation", "gpu_user_annotation", "cpu_op"},
	}
	for _, c := range []struct {
		instance, end int
		compat        bool
		start, stop   int64
		err           string
	}{
		{0, -1, false, 0, 100, ""},
		{1, -1, false, 100, 200, ""},
		{0, 1, false, 0, 200, ""},
		{2, -1, false, 0, 0, "instance 2..2 of \"ProfilerStep\" requested, the rank has 2 (0..1)"},
		{1, -1, true, 10, 120, ""},
		{3, -1, true, 130, 230, ""},
		{4, -1, true, 12, 102, ""},
		{1, 0, false, 0, 0, "instance_end 0 is before instance 1"},
		// (both were "instance -1..-1 requested" / "instance 5..0": out of range, not what is wrong)
		{-1, -1, false, 0, 0, "instance must be 0 or more (the first \"ProfilerStep\"), not -1"},
		{5, 0, false, 0, 0, "instance_end 0 is before instance 5"},
	} {
		start, stop, err := Window(f, Options{Annotation: "ProfilerStep", Instance: c.instance, InstanceEnd: c.end, Compat: c.compat})
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%+v: error %v, want %q", c, err, c.err)
		case c.err == "" && (err != nil || start != c.start || stop != c.stop):
			t.Errorf("%+v: window [%d, %d] %v, want [%d, %d]", c, start, stop, err, c.start, c.stop)
		}
	}
}

// TestWindowEmpty: a window of 0 ns, or one holding no operator, runtime call or GPU work (only
// annotations), is an error in the default mode (hta gave no rows and ctda a path of the annotation
// alone), the whole trace (an empty annotation) included; compat mode keeps HTA's behaviour for hta, and ctda,
// which HTA does not have, checks in compat mode too (it gave a path of the empty step's annotation).
func TestWindowEmpty(t *testing.T) {
	f := &Frame{
		EvIdx:  []int64{0, 1, 2, 3, 4},
		Name:   []int32{0, 1, 2, 3, 4},
		Cat:    []int32{5, 5, 5, 5, 6},
		TS:     []int64{0, 100, 100, 200, 210},
		Dur:    []int64{0, 50, 10, 50, 5},
		Stream: []int64{-1, -1, -1, -1, -1},
		Syms:   []string{"ProfilerStep#1", "ProfilerStep#2", "## forward ##", "ProfilerStep#3", "aten::mm", "user_annotation", "cpu_op"},
	}
	for _, c := range []struct {
		ann    string
		compat bool
		err    string
	}{
		{"ProfilerStep#1", false, `empty window: instance 0 of "ProfilerStep#1" lasts 0 ns`},
		{"ProfilerStep#2", false, `empty window: instance 0 of "ProfilerStep#2" holds no operator, runtime call or GPU work`},
		{"ProfilerStep#2", true, ""},
		{"ProfilerStep#3", false, ""},
	} {
		_, _, err := Window(f, Options{Annotation: c.ann, InstanceEnd: -1, Compat: c.compat})
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	_, err := BuildCTDA(context.Background(), f, CTDAOptions{Options: Options{Annotation: "ProfilerStep#2", InstanceEnd: -1, Compat: true}, Aggregate: true})
	if want := `empty window: instance 0 of "ProfilerStep#2" holds no operator`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ctda, compat: %v, want %s", err, want)
	}
	// The whole trace: Python frames and annotations only; a 0 µs kernel only.
	pyOnly := &Frame{EvIdx: []int64{0, 1}, Name: []int32{0, 1}, Cat: []int32{2, 3}, TS: []int64{0, 10}, Dur: []int64{100, 50},
		Stream: []int64{-1, -1}, Syms: []string{"train.py(1): step", "## forward ##", "python_function", "user_annotation"}}
	kernel0 := &Frame{EvIdx: []int64{0}, Name: []int32{0}, Cat: []int32{1}, TS: []int64{10}, Dur: []int64{0},
		Stream: []int64{7}, Syms: []string{"k", "kernel"}}
	for _, c := range []struct {
		f      *Frame
		compat bool
		err    string
	}{
		{pyOnly, false, "empty window: the whole trace holds no operator, runtime call or GPU work"},
		{kernel0, false, "empty window: the whole trace lasts 0 ns"},
		{pyOnly, true, ""},
	} {
		_, _, err := Window(c.f, Options{InstanceEnd: -1, Compat: c.compat})
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("whole trace %v, compat %v: %v, want %q", c.f.Syms, c.compat, err, c.err)
		}
	}
}

// TestArgsortQuickMatchesNumpy: ArgsortQuick gives numpy 1.24's permutation, ties included, on keys with many
// ties in every shape (npsort.json, written by numpy itself: testdata/npsort_gen.py). Numpy's insertion sort
// takes runs of up to 16 elements; 17 here reordered ties in 16 of 30 random arrays, and HTA's queue lengths at
// equal timestamps with them.
func TestArgsortQuickMatchesNumpy(t *testing.T) {
	cases := goldenCases[struct {
		Keys []int64 `json:"keys"`
		Perm []int32 `json:"perm"`
	}](t, "npsort.json")
	for i, c := range cases {
		if got := ArgsortQuick(c.Keys); !slices.Equal(got, c.Perm) {
			t.Errorf("case %d (%d keys): permutation differs from numpy's", i, len(c.Keys))
		}
	}
}

// TestPySortMatchesCPython: PySort returns the order CPython 3.11's sorted() returned (pysort.json, written by
// Python itself: testdata/pysort_gen.py), for comparators that are consistent (then it is a stable sort) and for
// ones that are not among equal keys, where the order depends on every comparison the algorithm makes: runs,
// binary insertion, powersort merges and galloping.
func TestPySortMatchesCPython(t *testing.T) {
	cases := goldenCases[struct {
		Keys  []int64 `json:"keys"`
		Wild  bool    `json:"wild"`
		Order []int   `json:"order"`
	}](t, "pysort.json")
	wild := func(x, y int) bool { return ((int64(x)*2654435761+int64(y)*40503)>>7)%3 == 0 }
	for i, c := range cases {
		order := make([]int, len(c.Keys))
		for j := range order {
			order[j] = j
		}
		PySort(order, func(x, y int) bool {
			if c.Keys[x] != c.Keys[y] {
				return c.Keys[x] < c.Keys[y]
			}
			return c.Wild && wild(x, y)
		})
		if !slices.Equal(order, c.Order) {
			t.Errorf("case %d (%d keys, wild %v): order differs from CPython's", i, len(c.Keys), c.Wild)
		}
	}
}

// TestHTACallStacksMatchHTA: HTACallStacks gives every event the parent HTA 0.6.1 gives it (htastack.json, written
// through HTA's own sort_events: testdata/htastack_gen.py) on threads full of ties: zero-length events, shared
// starts and ends, and children that outlive their parents, where HTA's comparator is not an order and its stack
// pops whatever is on top.
func TestHTACallStacksMatchHTA(t *testing.T) {
	cases := goldenCases[struct {
		TS     []int64 `json:"ts"`
		Dur    []int64 `json:"dur"`
		Parent []int32 `json:"parent"`
	}](t, "htastack.json")
	for i, c := range cases {
		n := len(c.TS)
		f := &Frame{TS: c.TS, Dur: c.Dur}
		for j := range n {
			f.EvIdx = append(f.EvIdx, int64(j))
			f.Pid = append(f.Pid, 1)
			f.Tid = append(f.Tid, 1)
			f.Stream = append(f.Stream, -1)
		}
		parent, depth := HTACallStacks(f)
		if !slices.Equal(parent, c.Parent) {
			t.Errorf("case %d (%d events): parents %v, HTA %v", i, n, parent, c.Parent)
			continue
		}
		for j, p := range parent {
			if want := int32(0); p >= 0 && depth[j] != depth[p]+1 || p < 0 && depth[j] != want {
				t.Errorf("case %d: event %d at depth %d under %d at depth %d", i, j, depth[j], p, depth[max(p, 0)])
			}
		}
	}
}

// TestHTACallStacksLanes: HTA's lane rules and the cases its tie rules decide, worked out by hand. A thread whose
// rows are all on GPU streams, or with pid 0 or tid 0, has no call stack; a CPU thread's rows on a stream are left out.
func TestHTACallStacksLanes(t *testing.T) {
	type ev struct {
		pid, tid, ts, dur, stream int64
	}
	cases := []struct {
		name   string
		evs    []ev
		parent []int32
		depth  []int32
	}{
		{"nested", []ev{{1, 1, 0, 100, -1}, {1, 1, 10, 20, -1}, {1, 1, 40, 10, -1}}, []int32{-1, 0, 0}, []int32{0, 1, 1}},
		// B outlives A: A's end pops B, so C, which starts after A ended, is A's child
		{"outlives", []ev{{1, 1, 0, 10, -1}, {1, 1, 5, 10, -1}, {1, 1, 11, 1, -1}}, []int32{-1, 0, 0}, []int32{0, 1, 1}},
		// zero-length events at one timestamp open in index order and nest in a chain
		{"zero chain", []ev{{1, 1, 0, 100, -1}, {1, 1, 50, 0, -1}, {1, 1, 50, 0, -1}, {1, 1, 50, 0, -1}}, []int32{-1, 0, 1, 2}, []int32{0, 1, 2, 3}},
		{"gpu lane", []ev{{1, 7, 0, 100, 7}, {1, 7, 10, 10, 7}}, []int32{-1, -1}, []int32{-1, -1}},
		{"pid 0", []ev{{0, 1, 0, 100, -1}, {0, 1, 10, 10, -1}}, []int32{-1, -1}, []int32{-1, -1}},
		{"tid 0", []ev{{1, 0, 0, 100, -1}, {1, 0, 10, 10, -1}}, []int32{-1, -1}, []int32{-1, -1}},
		// a mixed thread is nested, its stream rows are not
		{"mixed", []ev{{1, 1, 0, 100, -1}, {1, 1, 10, 10, 3}, {1, 1, 20, 10, -1}}, []int32{-1, -1, 0}, []int32{0, -1, 1}},
		{"two threads", []ev{{1, 1, 0, 100, -1}, {1, 2, 10, 10, -1}, {1, 1, 20, 10, -1}}, []int32{-1, -1, 0}, []int32{0, 0, 1}},
	}
	for _, c := range cases {
		f := &Frame{}
		for i, e := range c.evs {
			f.EvIdx = append(f.EvIdx, int64(i))
			f.Pid, f.Tid = append(f.Pid, e.pid), append(f.Tid, e.tid)
			f.TS, f.Dur, f.Stream = append(f.TS, e.ts), append(f.Dur, e.dur), append(f.Stream, e.stream)
		}
		parent, depth := HTACallStacks(f)
		if !slices.Equal(parent, c.parent) || !slices.Equal(depth, c.depth) {
			t.Errorf("%s: parents %v depths %v, want %v %v", c.name, parent, depth, c.parent, c.depth)
		}
	}
}

// TestHTAGraphLaunchKernels: a CUDA graph launch replays several kernels under one correlation, and its
// index_correlation names one of them. Default mode brings every kernel it launched into the window, so the path
// runs through the replayed work (on vllm_decode_full, 421 kernels and 10.4 ms of a 19.1 ms window: without them
// the path was 0.9 ms and 100 % cpu_bound); compat keeps HTA's one kernel. In default mode the first replayed kernel
// on each stream waits for the launch call when the stream was idle (a launch edge), the others for the kernel
// before them; HTA adds no launch edge for a graph launch, which is not one of its launch calls.
func TestHTAGraphLaunchKernels(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 1000)
	b.cpu(1, "cpu_op", "aten::op", 10, 20)
	launch, first := b.launch(1, "cudaGraphLaunch", 40, 10, 7, "k0", 100, 100)
	for i := range 3 {
		k := b.add(0, 7, "kernel", fmt.Sprintf("k%d", i+1), float64(200+100*i), 100, 7)
		b.f.Corr[k], b.f.IndexCorr[k] = b.f.Corr[first], launch
	}
	// a second graph launch while the stream is still busy: its kernel waits for k3, not for the call
	launch2, _ := b.launch(1, "cudaGraphLaunch", 300, 10, 7, "k4", 500, 50)
	f := b.frame()
	for _, c := range []struct {
		compat   bool
		kernels  int
		pathUS   float64
		launched []string // kernels with a launch edge
	}{{false, 5, 500, []string{"k0"}}, {true, 2, 100, nil}} {
		g, err := BuildHTA(context.Background(), f, Options{Annotation: "ProfilerStep", Compat: c.compat})
		if err != nil {
			t.Fatal(err)
		}
		kernels := map[int32]bool{}
		for _, r := range g.NodeRow {
			if f.Stream[r] == 7 {
				kernels[r] = true
			}
		}
		if len(kernels) != c.kernels || float64(g.Path.Length)/1000 < c.pathUS {
			t.Errorf("compat=%v: %d kernels in the graph, path %.1f µs; want %d kernels, a path of at least %.0f µs",
				c.compat, len(kernels), float64(g.Path.Length)/1000, c.kernels, c.pathUS)
		}
		var launched []string
		for e := range g.G.Src {
			if g.G.Type[e] == EdgeLaunchDelay {
				u, v := g.NodeRow[g.G.Src[e]], g.NodeRow[g.G.Dst[e]]
				if ev := f.EvIdx[u]; ev != launch && ev != launch2 {
					t.Errorf("compat=%v: launch edge from %s", c.compat, f.Syms[f.Name[u]])
				}
				launched = append(launched, f.Syms[f.Name[v]])
			}
		}
		if !slices.Equal(launched, c.launched) {
			t.Errorf("compat=%v: launch edges to %v, want %v", c.compat, launched, c.launched)
		}
	}
}

// TestHTALaunchDelayAtTie: a memset waits for its launch call on an idle stream and starts at the very instant the
// next launch call onto that stream begins (hta/critical_path/cuda_event_sync_multi_stream, stream 28: 81 µs).
// By default the start counts before the launch at one time, so the queue is empty when the memset starts and it
// gets its launch-delay edge (15 µs); with the launch first, the new call looked queued ahead of it, and the
// memset had no edge from its launch at all. HTA's order (compat) is numpy's quicksort, here the launch first.
func TestHTALaunchDelayAtTie(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 300)
	b.cpu(1, "cpu_op", "aten::zero_", 60, 20)
	memsetCall, memset := b.launch(1, "cudaMemsetAsync", 66, 10, 28, "Memset (Device)", 81, 1)
	b.cpu(1, "cpu_op", "aten::mm", 80, 20)
	b.launch(1, "cudaLaunchKernel", 81, 14, 28, "sgemm", 97, 123)
	f := b.frame()
	for _, c := range []struct {
		compat bool
		want   []string // launch-delay edges, "call -> GPU row (weight µs)"
	}{{false, []string{"cudaMemsetAsync -> Memset (Device) (15)"}}, {true, nil}} {
		g, err := BuildHTA(context.Background(), f, Options{Annotation: "ProfilerStep", Compat: c.compat})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for e := range g.G.Src {
			if g.G.Type[e] == EdgeLaunchDelay {
				u, v := g.NodeRow[g.G.Src[e]], g.NodeRow[g.G.Dst[e]]
				if f.EvIdx[u] != memsetCall || f.EvIdx[v] != memset {
					t.Errorf("compat=%v: launch edge %s -> %s", c.compat, f.Syms[f.Name[u]], f.Syms[f.Name[v]])
				}
				got = append(got, fmt.Sprintf("%s -> %s (%d)", f.Syms[f.Name[u]], f.Syms[f.Name[v]], g.G.W[e]/1000))
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("compat=%v: launch-delay edges %q, want %q", c.compat, got, c.want)
		}
	}
}

// TestGPURowsByCorrelation: the GPU rows of a correlation id, in row order, from the dense lookup (ids close
// together) and from the sorted fallback (ids spread wide, negative ones among them); CPU rows and -1 are none.
func TestGPURowsByCorrelation(t *testing.T) {
	for _, spread := range []int64{1, 1 << 40} {
		var b frameBuilder
		corrs := []int64{5, 3, 5, -1, 9, 3, 5, -7}
		for i, c := range corrs {
			k := b.add(0, 7, "kernel", "k", float64(i), 1, 7)
			if c > 0 {
				c *= spread
			}
			b.f.Corr[k] = c
		}
		cpu := b.cpu(1, "cuda_runtime", "cudaLaunchKernel", 0, 1)
		b.f.Corr[cpu] = 3 * spread
		rowsOf := gpuRowsByCorrelation(b.frame())
		for _, c := range []struct {
			corr int64
			want []int32
		}{{5, []int32{0, 2, 6}}, {3, []int32{1, 5}}, {9, []int32{4}}, {-7, []int32{7}}, {-1, nil}, {4, nil}, {0, nil}, {100, nil}} {
			corr := c.corr
			if corr > 0 {
				corr *= spread
			}
			if got := rowsOf(corr); !slices.Equal(got, c.want) {
				t.Errorf("spread %d: rows of %d = %v, want %v", spread, corr, got, c.want)
			}
		}
	}
}

// goldenCases reads testdata/name, {"cases": [...]} written by the generator script beside it, and fails the
// test when it holds no case.
func goldenCases[C any](t *testing.T, name string) []C {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Cases []C `json:"cases"`
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Cases) == 0 {
		t.Fatalf("%s: no cases", name)
	}
	return golden.Cases
}

// TestArgsortStable: argsortStable sorts ascending with equal keys in index order, through the radix sort (keys
// close together, negative ones included) and through the fallback (keys spanning nearly all of int64).
func TestArgsortStable(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, c := range []struct {
		n    int
		span int64
		base int64
	}{{0, 1, 0}, {1, 1, 5}, {17, 3, -10}, {5000, 100, 1_700_000_000_000_000_000}, {5000, 1 << 40, -1 << 50}, {300, math.MaxInt64, 0}} {
		keys := make([]int64, c.n)
		for i := range keys {
			keys[i] = c.base + rng.Int63n(c.span)
			if c.span == math.MaxInt64 && i%2 == 0 {
				keys[i] = -keys[i]
			}
		}
		got := argsortStable(keys)
		want := make([]int32, c.n)
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortStableFunc(want, func(a, b int32) int { return cmp.Compare(keys[a], keys[b]) })
		if !slices.Equal(got, want) {
			t.Errorf("n %d span %d: order differs from a stable sort", c.n, c.span)
		}
	}
}
