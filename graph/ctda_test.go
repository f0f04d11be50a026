package graph

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	dg "github.com/dominikbraun/graph"
)

// frameBuilder makes small hand-built frames: times in µs, stored as ns.
type frameBuilder struct {
	f  Frame
	in Interner
}

func (b *frameBuilder) add(pid, tid int64, cat, name string, tsUS, durUS float64, stream int64) int64 {
	ev := int64(len(b.f.EvIdx))
	b.f.EvIdx = append(b.f.EvIdx, ev)
	b.f.Cat = append(b.f.Cat, b.in.Intern(cat))
	b.f.Name = append(b.f.Name, b.in.Intern(name))
	b.f.Pid = append(b.f.Pid, pid)
	b.f.Tid = append(b.f.Tid, tid)
	b.f.TS = append(b.f.TS, int64(tsUS*1000))
	b.f.Dur = append(b.f.Dur, int64(durUS*1000))
	b.f.Stream = append(b.f.Stream, stream)
	b.f.Corr = append(b.f.Corr, -1)
	b.f.IndexCorr = append(b.f.IndexCorr, -1)
	b.f.WaitOnStream = append(b.f.WaitOnStream, -1)
	b.f.WaitOnCorr = append(b.f.WaitOnCorr, -1)
	return ev
}

// cpu adds a CPU event on process 1.
func (b *frameBuilder) cpu(tid int64, cat, name string, ts, dur float64) int64 {
	return b.add(1, tid, cat, name, ts, dur, -1)
}

// launch adds a runtime launch call on tid and the GPU event it launches on stream.
func (b *frameBuilder) launch(tid int64, call string, ts, dur float64, stream int64, kernel string, kts, kdur float64) (int64, int64) {
	c := b.cpu(tid, "cuda_runtime", call, ts, dur)
	k := b.add(0, stream, "kernel", kernel, kts, kdur, stream)
	corr := int64(1000 + c)
	b.f.Corr[c], b.f.Corr[k] = corr, corr
	b.f.IndexCorr[c], b.f.IndexCorr[k] = k, c
	return c, k
}

func (b *frameBuilder) frame() *Frame {
	b.f.Syms = b.in.Syms
	return &b.f
}

var testPhases = []PhaseRule{
	{regexp.MustCompile(`^enumerate\(DataLoader\)`), "DataLoad"},
	{regexp.MustCompile(`^autograd::engine::evaluate_function|Backward[0-9]*$`), "Backward"},
	{regexp.MustCompile(`(?i)loss`), "Loss"},
	{regexp.MustCompile(`^Optimizer\.step#`), "Update"},
	{regexp.MustCompile(`^## forward ##`), "Forward"},
}

func buildCTDA(t *testing.T, f *Frame, aggregate bool) *CDG {
	t.Helper()
	c, err := BuildCTDA(context.Background(), f, CTDAOptions{Options: Options{Annotation: "ProfilerStep"}, Phases: testPhases, Aggregate: aggregate})
	if err != nil {
		t.Fatal(err)
	}
	// The CDG must be a DAG: checked with dominikbraun/graph (small graphs only).
	lib, err := c.G.Library(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dg.TopologicalSort(lib); err != nil {
		t.Fatalf("CDG is not a DAG: %v", err)
	}
	return c
}

func pathNames(c *CDG) []string {
	var out []string
	for _, s := range c.Path {
		out = append(out, c.F.Syms[c.F.Name[c.Nodes[s.Node].MainRow]])
	}
	return out
}

func (c *CDG) nodeOf(t *testing.T, ev int64) int32 {
	t.Helper()
	for v := range c.Nodes {
		found := false
		c.pieces(int32(v), func(_, _ int64, r int32, _ bool) {
			if c.F.EvIdx[r] == ev {
				found = true
			}
		})
		if found {
			return int32(v)
		}
	}
	t.Fatalf("event %d is in no node", ev)
	return -1
}

// TestCTDAAutogradThread: the backward pass runs on the autograd thread while the main thread waits
// in run_backward; the path must cross to the main thread and reach its forward and data loading.
// legacy: a 2021-era trace, with no Python frames and backward ops named by their autograd node
// (kineto/resnet50_num_workers_0), where only those names tell the autograd thread.
func TestCTDAAutogradThread(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) { testCTDAAutogradThread(t, legacy) })
	}
}

func testCTDAAutogradThread(t *testing.T, legacy bool) {
	var b frameBuilder
	const main, bwd = 1, 2
	b.cpu(main, "user_annotation", "ProfilerStep#1", 0, 1000)
	b.cpu(main, "user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, 200)
	b.cpu(main, "cpu_op", "aten::stack", 10, 180)
	b.cpu(main, "user_annotation", "## forward ##", 200, 200)
	b.cpu(main, "cpu_op", "aten::linear", 210, 180)
	b.launch(main, "cudaLaunchKernel", 220, 10, 7, "gemm_fwd", 235, 100)
	b.cpu(main, "cpu_op", "aten::cross_entropy_loss", 400, 50)
	b.launch(main, "cudaLaunchKernel", 410, 10, 7, "loss_kernel", 420, 20)
	if legacy {
		b.cpu(bwd, "cpu_op", "AddmmBackward", 470, 300)
	} else {
		b.cpu(main, "python_function", "torch/autograd/graph.py(814): _engine_run_backward", 460, 400)
		b.cpu(bwd, "cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 470, 300)
	}
	b.launch(bwd, "cudaLaunchKernel", 480, 10, 7, "gemm_bwd", 495, 250)
	b.cpu(main, "user_annotation", "Optimizer.step#SGD.step", 870, 100)
	b.launch(main, "cudaLaunchKernel", 880, 10, 7, "sgd_kernel", 890, 60)
	c := buildCTDA(t, b.frame(), true)

	var phases []string
	crossThread := false
	for i, s := range c.Path {
		nd := c.Nodes[s.Node]
		if !nd.GPU && !slices.Contains(phases, nd.Phase) {
			phases = append(phases, nd.Phase)
		}
		if i > 0 && c.G.Type[s.Edge] == EdgeCrossThread {
			crossThread = true
		}
	}
	for _, want := range []string{"DataLoad", "Forward", "Loss", "Backward", "Update"} {
		if !slices.Contains(phases, want) {
			t.Errorf("path misses phase %s: CPU phases %v, path %v", want, phases, pathNames(c))
		}
	}
	if !crossThread {
		t.Errorf("no cross-thread edge on the path %v", pathNames(c))
	}
	// run_backward only waits: it is in no node.
	for _, a := range c.atoms {
		if c.F.Syms[c.F.Name[a.row]] == "torch/autograd/graph.py(814): _engine_run_backward" {
			t.Errorf("the waiting run_backward frame owns an atom %+v", a)
		}
	}
	// HTA's algorithm sees the main thread only: its path never reaches the backward kernels' launcher.
	if c.Counted <= 0 || c.Counted > c.SpanEnd-c.WindowStart {
		t.Errorf("counted %d outside (0, %d]", c.Counted, c.SpanEnd-c.WindowStart)
	}
	if c.Counted > c.BusyBound {
		t.Errorf("counted %d > busy bound %d", c.Counted, c.BusyBound)
	}
}

// TestCTDANodeNames: a CPU node is named after the event starting in it that covers most of it, not
// after the window's annotation (which starts in the first node) nor after a long frame that only
// starts at the node's end; of nested events covering it alike, the outer names it.
func TestCTDANodeNames(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 1000)
	b.cpu(1, "user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 0, 200)
	b.cpu(1, "cpu_op", "aten::stack", 10, 150)
	b.cpu(1, "python_function", "train.py(10): train_step", 190, 800)
	b.cpu(1, "user_annotation", "## forward ##", 200, 300)
	b.cpu(1, "cpu_op", "aten::linear", 200, 200)
	b.launch(1, "cudaLaunchKernel", 220, 10, 7, "gemm_fwd", 235, 100)
	c := buildCTDA(t, b.frame(), true)
	var names []string
	for _, nd := range c.Nodes {
		if !nd.GPU {
			names = append(names, c.F.Syms[c.F.Name[nd.MainRow]])
		}
	}
	want := []string{"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "## forward ##"}
	if len(names) < len(want) || !slices.Equal(names[:len(want)], want) {
		t.Errorf("CPU node names %q, want them to start %q", names, want)
	}
}

// TestCTDALatestEndWins is the paper's Figure 6: A launches B (long, ends early) on one stream and
// C (shorter, ends late) on another; D waits for both. The latest-end path A→C→D must win over the
// longest-duration path A→B→D.
func TestCTDALatestEndWins(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 300)
	b.cpu(1, "cpu_op", "A", 0, 40)
	_, kB := b.launch(1, "cudaLaunchKernel", 5, 5, 1, "B", 12, 150)  // 12..162
	_, kC := b.launch(1, "cudaLaunchKernel", 20, 5, 2, "C", 100, 90) // 100..190
	b.cpu(1, "cuda_runtime", "cudaDeviceSynchronize", 45, 150)
	b.cpu(1, "cpu_op", "D", 200, 50)
	c := buildCTDA(t, b.frame(), true)
	nB, nC := c.nodeOf(t, kB), c.nodeOf(t, kC)
	var onPath []int32
	for _, s := range c.Path {
		onPath = append(onPath, s.Node)
	}
	if !slices.Contains(onPath, nC) || slices.Contains(onPath, nB) {
		t.Errorf("path %v: want C (node %d) and not B (node %d)", pathNames(c), nC, nB)
	}
	if last := c.Nodes[c.Path[len(c.Path)-1].Node]; c.F.Syms[c.F.Name[last.MainRow]] != "D" {
		t.Errorf("path ends at %v, want D", pathNames(c))
	}
	// The sync edges: from the last GPU node of both streams into D's node.
	nD := c.nodeOf(t, int64(len(c.F.EvIdx)-1))
	for _, g := range []int32{nB, nC} {
		if e := c.G.Edge(g, nD); e < 0 || c.G.Type[e] != EdgeSyncDependency {
			t.Errorf("no sync edge %d→%d", g, nD)
		}
	}
}

// TestCTDASyncRecords: cuda_sync records make stream-sync, event-sync and stream-wait edges.
func TestCTDASyncRecords(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 1000)
	_, k1 := b.launch(1, "cudaLaunchKernel", 0, 5, 1, "k1", 10, 100) // stream 1: 10..110
	rec := b.cpu(1, "cuda_runtime", "cudaEventRecord", 6, 2)
	b.f.Corr[rec] = 77
	wait := b.cpu(1, "cuda_runtime", "cudaStreamWaitEvent", 9, 2)
	swe := b.add(0, 2, "cuda_sync", "Stream Wait Event", 11, 0, 2)
	b.f.IndexCorr[swe], b.f.WaitOnStream[swe], b.f.WaitOnCorr[swe] = wait, 1, 77
	_, k2 := b.launch(1, "cudaLaunchKernel", 12, 5, 2, "k2", 110, 50) // stream 2 waits for k1
	ssync := b.cpu(1, "cuda_runtime", "cudaStreamSynchronize", 20, 150)
	ss := b.add(0, 2, "cuda_sync", "Stream Sync", 160, 10, 2)
	b.f.IndexCorr[ss] = ssync
	after1 := b.cpu(1, "cpu_op", "after_stream_sync", 175, 10)
	_, k3 := b.launch(1, "cudaLaunchKernel", 190, 5, 3, "k3", 200, 100)
	rec2 := b.cpu(1, "cuda_runtime", "cudaEventRecord", 196, 2)
	b.f.Corr[rec2] = 88
	esync := b.cpu(1, "cuda_runtime", "cudaEventSynchronize", 200, 110)
	es := b.add(0, 3, "cuda_sync", "Event Sync", 300, 5, -1)
	b.f.IndexCorr[es], b.f.WaitOnStream[es], b.f.WaitOnCorr[es] = esync, 3, 88
	after2 := b.cpu(1, "cpu_op", "after_event_sync", 320, 10)
	c := buildCTDA(t, b.frame(), true)
	for _, e := range []struct {
		name     string
		from, to int64
	}{{"stream wait", k1, k2}, {"stream sync", k2, after1}, {"event sync", k3, after2}} {
		u, v := c.nodeOf(t, e.from), c.nodeOf(t, e.to)
		if id := c.G.Edge(u, v); id < 0 || c.G.Type[id] != EdgeSyncDependency {
			t.Errorf("%s: no sync edge %d→%d", e.name, u, v)
		}
	}
	// The path ends at after_event_sync and reaches k3 through the event sync.
	names := pathNames(c)
	if names[len(names)-1] != "after_event_sync" || !slices.Contains(names, "k3") {
		t.Errorf("path %v: want ... k3, after_event_sync", names)
	}
}

// TestCTDAEffectiveTime: a CPU node whose first launch starts a long kernel counts only up to the end
// of that launch call; the rest of its time overlaps GPU work.
func TestCTDAEffectiveTime(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 100)
	b.cpu(1, "cpu_op", "aten::big", 0, 100)
	b.launch(1, "cudaLaunchKernel", 10, 2, 7, "long_kernel", 15, 500)
	b.launch(1, "cudaLaunchKernel", 50, 2, 7, "tail_kernel", 515, 5)
	c := buildCTDA(t, b.frame(), true)
	if len(c.Path) != 2 || c.Nodes[c.Path[0].Node].GPU || !c.Nodes[c.Path[1].Node].GPU {
		t.Fatalf("path %v: want the CPU node then its GPU node", pathNames(c))
	}
	cpu := c.Path[0]
	if cpu.Hi != 12_000 {
		t.Errorf("CPU node counted until %d ns, want 12000 (end of its first launch)", cpu.Hi)
	}
	if cpu.Counted > 12_000 {
		t.Errorf("CPU node counts %d ns, more than its effective time", cpu.Counted)
	}
	// Hotspots: the kernels dominate; aten::big gets its effective time only.
	hs := c.Hotspots()
	if hs[0].Name != "long_kernel" {
		t.Errorf("top hotspot %+v, want long_kernel", hs[0])
	}
	for _, h := range hs {
		if h.Name == "aten::big" && h.Dur > 12_000 {
			t.Errorf("aten::big counted %d ns beyond its effective time", h.Dur)
		}
	}
	// Without aggregation every owner change is a node: more nodes, same end.
	ev := buildCTDA(t, b.frame(), false)
	if len(ev.Nodes) <= len(c.Nodes) {
		t.Errorf("aggregate=false: %d nodes, aggregated %d", len(ev.Nodes), len(c.Nodes))
	}
}

// orphan adds a GPU event whose launch is not in the trace (index_correlation 0: correlated, the
// partner absent), as when profiling starts while the GPU still runs earlier work.
func (b *frameBuilder) orphan(stream int64, kernel string, ts, dur float64) int64 {
	k := b.add(0, stream, "kernel", kernel, ts, dur, stream)
	b.f.Corr[k], b.f.IndexCorr[k] = 5000+k, 0
	return k
}

func onPath(c *CDG, v int32) bool {
	for _, s := range c.Path {
		if s.Node == v {
			return true
		}
	}
	return false
}

// TestCTDAOrphanWaits: GPU work launched before the window (a GPU running behind the CPU) has no
// launch calls in the window. index_correlation 0 must not tie it to event 0; each stream's orphans
// split into runs where the stream idled until another stream's event ended, with an edge from that
// event, so the walk follows the GPU backlog across streams back to the window's start.
func TestCTDAOrphanWaits(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "cpu_op", "aten::first", 0, 20) // event 0: orphans must not join its node
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 400)
	a1 := b.orphan(1, "a1", 0, 100)    // stream 1 busy 0..100
	b1 := b.orphan(2, "b1", 50, 150)   // stream 2: 50..200
	a2 := b.orphan(1, "a2", 205, 95)   // stream 1 idles 100..205: waits for b1
	a3 := b.orphan(1, "a3", 300.5, 40) // back to back with a2: same run
	b.cpu(1, "cpu_op", "aten::mm", 30, 20)
	_, k := b.launch(1, "cudaLaunchKernel", 35, 5, 1, "mm_kernel", 341, 59) // queued behind the backlog
	c := buildCTDA(t, b.frame(), true)
	nA1, nB1, nA2, nA3, nK := c.nodeOf(t, a1), c.nodeOf(t, b1), c.nodeOf(t, a2), c.nodeOf(t, a3), c.nodeOf(t, k)
	if nA1 == nA2 || nA2 != nA3 {
		t.Errorf("stream 1 runs: a1 %d, a2 %d, a3 %d; want a1 alone, a2 with a3", nA1, nA2, nA3)
	}
	if e := c.G.Edge(nB1, nA2); e < 0 || c.G.Type[e] != EdgeSyncDependency {
		t.Errorf("no inferred wait edge b1 → a2")
	}
	if c.G.Edge(nA1, nA2) < 0 {
		t.Errorf("no stream-order edge a1 → a2")
	}
	for _, v := range []int32{nB1, nA2, nK} {
		if !onPath(c, v) {
			t.Errorf("node %d not on the path %v", v, pathNames(c))
		}
	}
	if c.Nodes[0].Launched >= 0 && c.Nodes[c.Nodes[0].Launched].Events > 1 {
		t.Errorf("event 0's node launched %d GPU events, want its own only", c.Nodes[c.Nodes[0].Launched].Events)
	}
	// The path is the backlog b1 (50..200), a2 and a3 (205..300, 300.5..340.5), mm_kernel (341..400).
	if want := int64((150 + 95 + 40 + 59) * 1000); c.Counted < want {
		t.Errorf("counted %d ns, want ≥ %d", c.Counted, want)
	}
}

// TestCTDAFirstOrphanWaits: a stream's first GPU event in the window, launched before it, that starts
// well into the window idled until then: it waited too, for the latest event of another stream that
// ended before it started. Before, only a stream's later orphans were matched, and this one began
// the path with no predecessor: the walk stopped there and the window's first 122 ms were off the
// path (hta/negative_queue_length_values_check, an NCCL kernel queued behind the compute stream).
func TestCTDAFirstOrphanWaits(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 400)
	a1 := b.orphan(1, "a1", 0, 100)  // stream 1 busy 0..100
	n1 := b.orphan(2, "n1", 101, 99) // stream 2's first event: waited for a1
	b.cpu(1, "cpu_op", "aten::mm", 30, 20)
	_, k := b.launch(1, "cudaLaunchKernel", 35, 5, 2, "mm_kernel", 201, 99) // queued behind n1
	c := buildCTDA(t, b.frame(), true)
	nA1, nN1 := c.nodeOf(t, a1), c.nodeOf(t, n1)
	if e := c.G.Edge(nA1, nN1); e < 0 || c.G.Type[e] != EdgeSyncDependency {
		t.Fatalf("no inferred wait edge a1 → n1")
	}
	for _, v := range []int32{nA1, nN1, c.nodeOf(t, k)} {
		if !onPath(c, v) {
			t.Errorf("node %d not on the path %v", v, pathNames(c))
		}
	}
}

// TestCTDAStreamWaitCall: without cuda_sync records, a cudaStreamWaitEvent ends the CPU node and
// the work launched after it (on the stream launched onto next) depends on the latest-ending GPU
// node of another stream that was launched before the call and ended before that work started.
func TestCTDAStreamWaitCall(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 600)
	_, k0 := b.launch(1, "hipLaunchKernel", 0, 5, 1, "short", 10, 20)   // stream 1: 10..30
	_, k1 := b.launch(1, "hipLaunchKernel", 6, 5, 2, "comm", 12, 400)   // stream 2: 12..412
	_, k2 := b.launch(1, "hipLaunchKernel", 12, 5, 3, "late", 400, 200) // stream 3: 400..600, still running
	wait := b.cpu(1, "cuda_runtime", "hipStreamWaitEvent", 20, 3)
	_, k3 := b.launch(1, "hipLaunchKernel", 24, 5, 1, "after_wait", 414, 50) // stream 1 idles until comm ends
	c := buildCTDA(t, b.frame(), true)
	n0, n1, n2, n3 := c.nodeOf(t, k0), c.nodeOf(t, k1), c.nodeOf(t, k2), c.nodeOf(t, k3)
	if n0 == n3 {
		t.Fatalf("the launches before and after %s share GPU node %d", "hipStreamWaitEvent", n0)
	}
	if e := c.G.Edge(n1, n3); e < 0 || c.G.Type[e] != EdgeSyncDependency {
		t.Errorf("no inferred wait edge comm → after_wait")
	}
	if c.G.Edge(n2, n3) >= 0 {
		t.Errorf("edge from %q, which was still running when after_wait started", "late")
	}
	if cn := c.nodeOf(t, wait); c.Nodes[cn].End != c.F.TS[wait]+c.F.Dur[wait] {
		t.Errorf("the CPU node holding the wait call does not end with it")
	}
}

// TestCTDAStartsAtWork: a Python frame trailing the step (the profiler's step(), open while the GPU
// drains) holds no work; the walk starts at the GPU work that ends last, not in the frame.
func TestCTDAStartsAtWork(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 100)
	b.cpu(1, "cpu_op", "aten::mm", 0, 20)
	b.launch(1, "cudaLaunchKernel", 5, 5, 7, "gemm", 12, 300) // 12..312
	b.cpu(1, "python_function", "torch/profiler/profiler.py(811): step", 30, 320)
	c := buildCTDA(t, b.frame(), true)
	last := c.Nodes[c.Path[len(c.Path)-1].Node]
	if !last.GPU {
		t.Errorf("path ends at CPU node %q, want the gemm kernel: %v", c.F.Syms[c.F.Name[last.MainRow]], pathNames(c))
	}
	if want := int64(300_000); c.Counted < want {
		t.Errorf("counted %d ns, want ≥ %d (the kernel)", c.Counted, want)
	}
}

// TestCTDATrailingBlockingFrame: a Python function with nothing profiled beneath it that runs after
// the step's last op (a logger's flush) is the step's work, as it is between two ops (review r75 #4:
// the path stopped at the last op, 100 of the 500 µs); a Python frame with ops beneath it that
// trails them is not, nor is the profiler's own frame (TestCTDAStartsAtWork).
func TestCTDATrailingBlockingFrame(t *testing.T) {
	for _, tc := range []struct {
		name     string
		frame    string
		withOp   bool
		wantHot  bool
		wantPath int64 // µs
	}{
		{"a logger's flush", "logger.py(5): flush", false, true, 500},
		{"the profiler's own frame", "torch/profiler/profiler.py(5): _transit_action", false, false, 100},
		{"a frame with an op beneath it", "logger.py(5): flush", true, false, 120},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b frameBuilder
			b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 600)
			b.cpu(1, "python_function", "train.py(10): step", 0, 590)
			b.cpu(1, "cpu_op", "aten::mm", 10, 90)
			b.launch(1, "cudaLaunchKernel", 20, 10, 7, "k", 35, 50)
			b.cpu(1, "python_function", tc.frame, 100, 400)
			if tc.withOp {
				b.cpu(1, "cpu_op", "aten::copy_", 105, 15)
			}
			c := buildCTDA(t, b.frame(), true)
			var path int64
			for _, s := range c.Path {
				path += s.Hi - s.Lo
			}
			if first := c.Path[0].Lo; first != 0 || path != tc.wantPath*1000 {
				t.Errorf("path from %d ns, %d ns long, want from 0, %d µs long: %v", first, path, tc.wantPath, pathNames(c))
			}
			hot := false
			for _, h := range c.Hotspots() {
				hot = hot || h.Name == tc.frame && h.Dur == 400_000
			}
			if hot != tc.wantHot {
				t.Errorf("%q a 400 µs hotspot: %v, want %v (%v)", tc.frame, hot, tc.wantHot, c.Hotspots())
			}
		})
	}
}

// TestCTDABlockingLaunch: a cudaMemcpyAsync from pageable memory returns only once the stream has
// run the copy. Its end is not when the copy was enqueued, so the copy's predecessor is the kernel
// the stream was busy with (the CPU was waiting), not the CPU call. (The stream sync after the copy
// puts the copy on the path.)
func TestCTDABlockingLaunch(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 400)
	b.cpu(1, "user_annotation", "## forward ##", 0, 15)
	b.cpu(1, "cpu_op", "aten::conv", 0, 10)
	_, k0 := b.launch(1, "cudaLaunchKernel", 2, 5, 7, "conv_kernel", 8, 300) // 8..308
	b.cpu(1, "user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 18, 304)
	b.cpu(1, "cpu_op", "aten::to", 20, 300)
	_, cp := b.launch(1, "cudaMemcpyAsync", 25, 290, 7, "Memcpy HtoD (Pageable -> Device)", 309, 5) // call 25..315
	b.cpu(1, "cuda_runtime", "cudaStreamSynchronize", 316, 2)
	b.cpu(1, "user_annotation", "## forward ##", 325, 35)
	b.cpu(1, "cpu_op", "aten::relu", 330, 10)
	b.launch(1, "cudaLaunchKernel", 332, 5, 7, "relu_kernel", 338, 20)
	c := buildCTDA(t, b.frame(), true)
	nK0, nCp := c.nodeOf(t, k0), c.nodeOf(t, cp)
	if nK0 == nCp {
		t.Fatalf("conv_kernel and the copy share node %d", nK0)
	}
	if want := int64(25_000); c.Nodes[c.Nodes[nCp].Launcher].FirstLaunchEnd != want {
		t.Errorf("the copy's launcher ends at %d as seen by the copy, want %d (the call's start)", c.Nodes[c.Nodes[nCp].Launcher].FirstLaunchEnd, want)
	}
	found := false
	for i := 1; i < len(c.Path); i++ {
		if c.Path[i].Node == nCp {
			found = true
			if c.Path[i-1].Node != nK0 {
				t.Errorf("the copy follows node %d (%v), want conv_kernel", c.Path[i-1].Node, pathNames(c))
			}
		}
	}
	if !found {
		t.Errorf("the copy is not on the path %v", pathNames(c))
	}
}

// TestCTDAStreamWaitRecordWithoutCall: older CUDA traces write a "Stream Wait Event" record that
// names the stream the event was recorded on (wait_on_stream) but not the record call
// (wait_on_cuda_event_record_corr_id). The waiting work still depends on that stream: on its
// latest-ending node launched before the wait call that ended before the waiting work started.
func TestCTDAStreamWaitRecordWithoutCall(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 1000)
	_, prod := b.launch(1, "cudaLaunchKernel", 0, 5, 2, "producer", 10, 390) // stream 2: 10..400
	_, other := b.launch(1, "cudaLaunchKernel", 6, 5, 1, "other", 12, 8)     // stream 1: 12..20
	wait := b.cpu(1, "cuda_runtime", "cudaStreamWaitEvent", 12, 2)
	swe := b.add(0, 1, "cuda_sync", "Stream Wait Event", 13, 0, 1)
	b.f.IndexCorr[swe], b.f.WaitOnStream[swe] = wait, 2                       // WaitOnCorr stays -1
	_, cons := b.launch(1, "cudaLaunchKernel", 15, 5, 1, "consumer", 401, 49) // 401..450: waited for producer
	c := buildCTDA(t, b.frame(), true)
	nProd, nOther, nCons := c.nodeOf(t, prod), c.nodeOf(t, other), c.nodeOf(t, cons)
	if e := c.G.Edge(nProd, nCons); e < 0 || c.G.Type[e] != EdgeSyncDependency {
		t.Fatalf("no sync edge producer → consumer")
	}
	if e := c.G.Edge(nOther, nCons); e >= 0 && c.G.Type[e] == EdgeSyncDependency {
		t.Errorf("sync edge from %q, which runs on the waiting stream", "other")
	}
	// The walk from consumer (it ends last) goes to producer, whose end is the latest effective
	// end among consumer's predecessors, and explains the idle stream: no gap is left.
	k := len(c.Path) - 1
	if k < 1 || c.Path[k].Node != nCons || c.Path[k-1].Node != nProd || c.Path[k].Gap > 1_000 {
		t.Errorf("path %v (last gap %d ns): want ..., producer, consumer with consumer starting right after producer", pathNames(c), c.Path[k].Gap)
	}
}

// TestCTDAPacingInsideGPUNode: inside a GPU node on the path, the launcher paces the pair until the
// last kernel that waited for its launch call (sgemm, launched after a long cudaMalloc while the
// GPU idled); from there the GPU does: relu_kernel sat queued behind sgemm, so the CPU's aten::relu_
// running under sgemm is off the path and sgemm gets its whole duration. Before the switch the CPU
// paces: early_kernel runs under aten::linear's own time and gets none of it. (A rule on the whole
// node — GPU first when its kernels fill half its span — gave this sparse node to the CPU
// throughout, and sgemm only the part after the CPU went idle.)
func TestCTDAPacingInsideGPUNode(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 1000)
	b.cpu(1, "cpu_op", "aten::linear", 0, 600)
	b.launch(1, "cudaLaunchKernel", 10, 5, 7, "early_kernel", 16, 84) // 16..100, under linear
	b.cpu(1, "cuda_runtime", "cudaMalloc", 100, 400)                  // GPU idles 100..506
	_, sgemm := b.launch(1, "cudaLaunchKernel", 500, 5, 7, "sgemm", 506, 300)
	b.cpu(1, "cpu_op", "aten::relu_", 520, 80)
	b.launch(1, "cudaLaunchKernel", 530, 5, 7, "relu_kernel", 806, 10) // queued behind sgemm
	c := buildCTDA(t, b.frame(), true)
	g := c.nodeOf(t, sgemm)
	if last := c.Path[len(c.Path)-1]; last.Node != g {
		t.Fatalf("path %v: want it to end in the GPU node", pathNames(c))
	}
	if p := c.paceFrom(g, c.Nodes[g].End); p != 506_000 {
		t.Errorf("GPU node paced from %d ns, want 506000 (sgemm's start)", p)
	}
	if p := c.paceFrom(g, 506_000); p != 16_000 {
		t.Errorf("GPU node's segment up to sgemm paced from %d ns, want 16000 (the node's start)", p)
	}
	got := map[string]int64{}
	for _, h := range c.Hotspots() {
		got[h.Name] = h.Dur
	}
	for name, want := range map[string]int64{"sgemm": 300_000, "relu_kernel": 10_000, "cudaMalloc": 400_000, "aten::relu_": 0, "early_kernel": 0} {
		if got[name] != want {
			t.Errorf("%s: %d ns attributed, want %d (hotspots %v)", name, got[name], want, got)
		}
	}
}

// TestCTDAPacingCPUStep: in the span of a CPU node that the path leaves for the next CPU node, the
// thread paces: the next node waits for it, not for the kernels it launched. Those kernels still
// fill the time the thread is idle (none here), but where both are busy the CPU event gets it, even
// when the GPU node is dense.
func TestCTDAPacingCPUStep(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 300)
	b.cpu(1, "user_annotation", "## forward ##", 0, 100)
	b.cpu(1, "cpu_op", "aten::fwd", 0, 100)
	b.launch(1, "cudaLaunchKernel", 1, 5, 7, "dense_kernel", 7, 91) // 7..98: fills its node
	b.cpu(1, "cpu_op", "aten::mse_loss", 100, 200)                  // Loss: a new CPU node, no launches
	c := buildCTDA(t, b.frame(), true)
	if names := pathNames(c); !slices.Equal(names, []string{"aten::fwd", "aten::mse_loss"}) {
		t.Fatalf("path %v: want aten::fwd, aten::mse_loss", names)
	}
	got := map[string]int64{}
	for _, h := range c.Hotspots() {
		got[h.Name] = h.Dur
	}
	for name, want := range map[string]int64{"aten::fwd": 95_000, "cudaLaunchKernel": 5_000, "dense_kernel": 0, "aten::mse_loss": 200_000} {
		if got[name] != want {
			t.Errorf("%s: %d ns attributed, want %d (hotspots %v)", name, got[name], want, got)
		}
	}
	if c.Counted != 300_000 {
		t.Errorf("counted %d ns, want 300000", c.Counted)
	}
}

// TestCTDABusyEndsWithItsEvent: time inside a cpu_op is busy whatever runs inside it, but only until
// that cpu_op ends. An annotation that starts inside a cpu_op and outlives it (improper nesting, as
// some traces have) is not busy afterwards, so CPCR cannot exceed the busy bound.
func TestCTDABusyEndsWithItsEvent(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 100)
	b.cpu(1, "cpu_op", "aten::op", 10, 20)              // busy 10..30
	b.cpu(1, "user_annotation", "## region ##", 20, 60) // outlives aten::op: busy 20..30 only
	b.cpu(1, "cpu_op", "aten::later", 90, 5)            // busy 90..95
	c := buildCTDA(t, b.frame(), true)
	var busyNS, regionBusy int64
	for v := range c.Nodes {
		c.pieces(int32(v), func(s, e int64, r int32, busy bool) {
			if busy {
				busyNS += e - s
				if c.F.Syms[c.F.Name[r]] == "## region ##" {
					regionBusy += e - s
				}
			}
		})
	}
	if regionBusy != 10_000 {
		t.Errorf("## region ## counted busy for %d ns, want 10000 (until aten::op ends)", regionBusy)
	}
	if busyNS != 25_000 {
		t.Errorf("busy pieces cover %d ns, want 25000 (the two cpu_ops)", busyNS)
	}
	if c.Counted > c.BusyBound {
		t.Errorf("CPCR numerator %d ns above the busy bound %d ns", c.Counted, c.BusyBound)
	}
}

// TestCTDAEdgeOrderStable: the CDG's edges (cdg_edges' rows) come in the same order on every build.
func TestCTDAEdgeOrderStable(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 200)
	// Two rounds over six streams: each launch switches stream, so every stream has two GPU nodes
	// and a stream-order edge between them.
	for round := range 2 {
		for s := range 6 {
			at := float64(10 + 80*round + 12*s)
			b.launch(1, "cudaLaunchKernel", at, 2, int64(7+s), "k", at+5, 8)
		}
	}
	first := buildCTDA(t, b.frame(), true)
	for range 20 {
		again := buildCTDA(t, b.frame(), true)
		if !slices.Equal(first.G.Src, again.G.Src) || !slices.Equal(first.G.Dst, again.G.Dst) {
			t.Fatal("edge order differs between two builds of one frame")
		}
	}
}

// TestCTDAFinalSync: a step that ends in cudaDeviceSynchronize waits for its GPU work there; the
// path must end in that work, not count the wait as CPU time.
func TestCTDAFinalSync(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 305)
	b.cpu(1, "user_annotation", "## forward ##", 0, 20)
	b.cpu(1, "cpu_op", "aten::mm", 0, 20)
	_, k := b.launch(1, "cudaLaunchKernel", 5, 3, 7, "gemm", 10, 290) // 10..300
	// Another phase: the call is a node of its own, which launches nothing.
	b.cpu(1, "cpu_op", "aten::cross_entropy_loss", 20, 285)
	b.cpu(1, "cuda_runtime", "cudaDeviceSynchronize", 20, 285) // 20..305
	c := buildCTDA(t, b.frame(), true)
	if nk := c.nodeOf(t, k); !slices.ContainsFunc(c.Path, func(s PathStep) bool { return s.Node == nk }) {
		t.Fatalf("path %v misses the kernel the synchronisation waited for", pathNames(c))
	}
	for _, h := range c.Hotspots() {
		if h.Name == "cudaDeviceSynchronize" && h.Dur > 5_000 {
			t.Errorf("the synchronisation counts %d ns of waiting as path time", h.Dur)
		}
	}
	if c.Counted > 300_000 {
		t.Errorf("counted %d ns, want at most the kernel's end (300 µs)", c.Counted)
	}
}

// TestCTDAIsolatedThread: a thread that launches nothing and runs no Python (NCCL's watchdog
// polling cudaEventQuery) is no path's start, even when it ends last.
func TestCTDAIsolatedThread(t *testing.T) {
	var b frameBuilder
	const main, watchdog = 1, 9
	b.cpu(main, "user_annotation", "ProfilerStep#1", 0, 1000)
	b.cpu(main, "cpu_op", "aten::mm", 0, 20)
	_, k := b.launch(main, "cudaLaunchKernel", 5, 3, 7, "gemm", 10, 290)
	for _, ts := range []float64{1, 300, 600, 950} {
		b.cpu(watchdog, "cuda_runtime", "cudaEventQuery", ts, 2)
	}
	c := buildCTDA(t, b.frame(), true)
	nk := c.nodeOf(t, k)
	if last := c.Path[len(c.Path)-1].Node; last != nk {
		t.Errorf("path %v ends at node %d, want the kernel's node %d", pathNames(c), last, nk)
	}
	for _, s := range c.Path {
		if nd := c.Nodes[s.Node]; !nd.GPU && nd.Tid == watchdog {
			t.Errorf("path %v visits the polling thread", pathNames(c))
		}
	}
}

// TestCTDASyncThatDidNotWait: a synchronisation that begins long after its GPU work ended waited
// for nothing; the path stays on the CPU work before it instead of jumping to the GPU (the Triton
// example, hta/triton_example).
func TestCTDASyncThatDidNotWait(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 400)
	b.cpu(1, "user_annotation", "## forward ##", 0, 300)
	b.cpu(1, "cpu_op", "aten::mm", 0, 20)
	b.launch(1, "cudaLaunchKernel", 5, 3, 7, "gemm", 10, 90) // 10..100
	busy := b.cpu(1, "cpu_op", "aten::cpu_work", 30, 260)    // 30..290
	b.cpu(1, "cuda_runtime", "cudaDeviceSynchronize", 295, 3)
	b.cpu(1, "cpu_op", "aten::cross_entropy_loss", 310, 50)
	c := buildCTDA(t, b.frame(), true)
	nb := c.nodeOf(t, busy)
	if !slices.ContainsFunc(c.Path, func(s PathStep) bool { return s.Node == nb }) {
		t.Errorf("path %v skips the CPU work the synchronisation followed", pathNames(c))
	}
	for i, s := range c.Path {
		if i > 0 && c.G.Type[s.Edge] == EdgeSyncDependency {
			t.Errorf("path %v follows a synchronisation that did not wait", pathNames(c))
		}
	}
}

// TestCTDASynchronousCopy: PyTorch's synchronous copies call hipMemcpyWithStream on ROCm (and
// cudaMemcpy, cuMemcpyDtoH_v2, ... elsewhere). The call waits for its stream, so it ends the CPU
// node like a synchronisation, and the work after it depends on the copy through a sync edge;
// an asynchronous copy does so only when its copy is to or from pageable memory and ended before it returned,
// and the GPU side's "Memcpy DtoH" event is no call at all.
func TestCTDASynchronousCopy(t *testing.T) {
	for _, c := range []struct {
		call string
		dur  float64 // of the call, from 32; the copy runs 300..305
		sync bool
	}{
		{"hipMemcpyWithStream", 277, true}, {"cudaMemcpy", 277, true}, {"cuMemcpyDtoH_v2", 277, true},
		{"cudaMemcpyAsync", 277, true}, {"hipMemcpyAsync", 277, true},
		{"cudaMemcpyAsync", 8, false}, {"hipMemcpyAsync", 8, false},
	} {
		var b frameBuilder
		b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 500)
		b.cpu(1, "cpu_op", "aten::mm", 0, 20)
		b.launch(1, "hipLaunchKernel", 5, 3, 3, "gemm", 10, 290)                               // 10..300
		b.cpu(1, "cpu_op", "aten::copy_", 30, 280)                                             // 30..310
		_, cp := b.launch(1, c.call, 32, c.dur, 3, "Memcpy DtoH (Device -> Pageable)", 300, 5) // call 32..309 or 32..40
		after := b.cpu(1, "cpu_op", "aten::item", 320, 20)
		b.launch(1, "hipLaunchKernel", 325, 3, 3, "next", 330, 10)
		cdg := buildCTDA(t, b.frame(), true)
		nCp, nAfter := cdg.nodeOf(t, cp), cdg.nodeOf(t, after)
		e := cdg.G.Edge(nCp, nAfter)
		if got := e >= 0 && cdg.G.Type[e] == EdgeSyncDependency; got != c.sync {
			t.Errorf("%s of %d µs: sync edge copy → aten::item: %v, want %v", c.call, int(c.dur), got, c.sync)
		}
	}
	if syncCall("Memcpy DtoH (Device -> Host)") {
		t.Errorf("the GPU copy event counts as a synchronous call")
	}
}

// TestCTDAInterleavedStreamNodes: GPU nodes of different launchers interleave on one stream. Thread 1's
// aten::a launches k1 (100–200) and k3 (300–400) onto stream 7, one GPU node; thread 2's aten::b
// launches k2 (220–260), which the stream runs between them; thread 3's aten::c launches k4 (410–500)
// early. k4 waited for k3, so the path runs k1+k3's node → k4's node; k2's node ended before k3 did and
// is no part of it. What k2 waited for is k1: the stream edge into it ends at 200, k1's end, not at
// 400. Before, the stream edges followed the nodes' starts (k1+k3 → k2 → k4), so the path went
// k1+k3 → k2 → k4 and showed k2's node as a zero-length span at 400, after it had ended
// (hta/trace_diff/test rank 1 step 2). With one node per event the stream order is exact, and the
// path k2 → k3 → k4 is right: k3 ran after k2.
func TestCTDAInterleavedStreamNodes(t *testing.T) {
	for _, aggregate := range []bool{true, false} {
		t.Run(fmt.Sprintf("aggregate=%v", aggregate), func(t *testing.T) {
			var b frameBuilder
			b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 1000)
			b.cpu(1, "cpu_op", "aten::a", 0, 60)
			_, k1 := b.launch(1, "cudaLaunchKernel", 10, 5, 7, "k1", 100, 100)
			_, k3 := b.launch(1, "cudaLaunchKernel", 30, 5, 7, "k3", 300, 100)
			b.cpu(3, "cpu_op", "aten::c", 65, 20)
			_, k4 := b.launch(3, "cudaLaunchKernel", 70, 5, 7, "k4", 410, 90)
			b.cpu(2, "cpu_op", "aten::b", 205, 15)
			_, k2 := b.launch(2, "cudaLaunchKernel", 210, 5, 7, "k2", 220, 40)
			c := buildCTDA(t, b.frame(), aggregate)
			n2, n3, n4 := c.nodeOf(t, k2), c.nodeOf(t, k3), c.nodeOf(t, k4)
			if aggregate && c.nodeOf(t, k1) != n3 {
				t.Fatalf("k1 and k3 are in nodes %d and %d, want one GPU node", c.nodeOf(t, k1), n3)
			}
			if onPath(c, n2) == aggregate || !onPath(c, n3) || !onPath(c, n4) {
				t.Errorf("path %v: want k3's and k4's nodes, and k2's only with one node per event", pathNames(c))
			}
			if e := c.G.Edge(n3, n4); e < 0 || c.G.Type[e] != EdgeKernelKernel || c.G.W[e] != 10_000 {
				t.Errorf("stream edge k3's node → k4's node: edge %d, want kernel_kernel with a 10 µs gap", e)
			}
			if e := c.G.Edge(n2, n4); e >= 0 {
				t.Errorf("stream edge k2's node → k4's node (gap %d ns): k4 started after k3, not after k2", c.G.W[e])
			}
			pred := c.nodeOf(t, k1)
			if e := c.G.Edge(pred, n2); e < 0 || c.effEnd(pred, n2) != 200_000 {
				t.Errorf("k1's node → k2's node: edge %d, effective end %d, want k1's end 200000", e, c.effEnd(pred, n2))
			}
			// Every step lies within its node's own time and the steps form one chain.
			for i, s := range c.Path {
				nd := c.Nodes[s.Node]
				if s.Lo < nd.Start || s.Hi > nd.End || s.Hi < s.Lo {
					t.Errorf("step %d (%s): [%d, %d] outside the node's [%d, %d]", i, pathNames(c)[i], s.Lo, s.Hi, nd.Start, nd.End)
				}
				if i > 0 && s.Lo != c.Path[i-1].Hi+s.Gap {
					t.Errorf("step %d starts at %d, want the previous end %d + gap %d", i, s.Lo, c.Path[i-1].Hi, s.Gap)
				}
			}
			if last := c.Path[len(c.Path)-1]; last.Hi != 500_000 {
				t.Errorf("path ends at %d, want k4's end 500000", last.Hi)
			}
		})
	}
}

// TestCTDAGPUNodeGaps: an aggregated GPU node's span on the path splits into its kernels' time, the
// launcher's work while the stream waited for a launch, and idle time. aten::step launches k1
// (20–40 µs, queued at 15) and k2 (110–120, launched only at 105), and k3 (130–150, queued at 112,
// before k2 ended) onto one stream. The gap before k2 is the CPU's: aten::step runs until the launch
// (40–105), then 5 µs of launch latency; the gap before k3 (120–130) waited for nothing on the CPU.
func TestCTDAGPUNodeGaps(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 200)
	b.cpu(1, "cpu_op", "aten::step", 0, 115)
	_, k1 := b.launch(1, "cudaLaunchKernel", 10, 5, 7, "k1", 20, 20)
	b.launch(1, "cudaLaunchKernel", 100, 5, 7, "k2", 110, 10)
	b.launch(1, "cudaLaunchKernel", 107, 5, 7, "k3", 130, 20)
	c := buildCTDA(t, b.frame(), true)
	g := c.nodeOf(t, k1)
	i := slices.IndexFunc(c.Path, func(s PathStep) bool { return s.Node == g })
	if i < 0 {
		t.Fatalf("the GPU node is not on the path %v", pathNames(c))
	}
	s := c.Path[i]
	got := []int64{s.Lo, s.Hi, s.Hi - s.Lo - s.Launcher - s.Idle, s.Launcher, s.Idle}
	if want := []int64{20_000, 150_000, 50_000, 65_000, 15_000}; !slices.Equal(got, want) {
		t.Errorf("GPU node step [lo hi kernels launcher idle] = %v, want %v", got, want)
	}
}

// TestCTDAUnplacedStreamWait: a kernel that starts long after its launch, on a stream that waited
// for an event the trace does not place (hipStreamWaitEvent, no record), was held by that wait, not
// by a slow launch; a short delay on such a stream, or any delay on a stream that waited for
// nothing, stays launch overhead.
func TestCTDAUnplacedStreamWait(t *testing.T) {
	for _, tc := range []struct {
		name      string
		wait      bool
		kernelTS  float64
		wantBound string
	}{
		{"wait, held 545 µs", true, 600, BoundKernelKernel},
		{"wait, held 25 µs", true, 80, BoundLaunch},
		{"no wait, held 545 µs", false, 600, BoundLaunch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b frameBuilder
			b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 1000)
			b.launch(1, "hipLaunchKernel", 0, 5, 2, "early", 10, 20) // stream 2: 10..30
			if tc.wait {
				b.cpu(1, "cuda_runtime", "hipStreamWaitEvent", 40, 2)
			}
			_, k := b.launch(1, "hipLaunchKernel", 50, 5, 3, "held", tc.kernelTS, 100)
			c := buildCTDA(t, b.frame(), true)
			last := c.Path[len(c.Path)-1]
			if last.Node != c.nodeOf(t, k) || last.Edge < 0 {
				t.Fatalf("path ends at node %d via edge %d, want the held kernel's node: %v", last.Node, last.Edge, pathNames(c))
			}
			if got := c.EdgeBoundBy(last.Edge); got != tc.wantBound {
				t.Errorf("the %d µs before the held kernel: bound_by %q, want %q", last.Gap/1000, got, tc.wantBound)
			}
		})
	}
}

// TestCTDAStepAnnotationElsewhere: the ProfilerStep annotation is on a thread of another process that does
// nothing else (hta/triton_example: the profiler's step on one process, the compiled region on another). The
// step's thread holds no work, so the path starts in the group that does: the operator, its launch, the
// kernel and the sync; not an empty path (the preference for the step's own thread found only the annotation).
func TestCTDAStepAnnotationElsewhere(t *testing.T) {
	var b frameBuilder
	b.add(7, 7, "user_annotation", "ProfilerStep#1", 0, 1000, -1)
	b.cpu(1, "cpu_op", "aten::sin", 10, 100)
	b.launch(1, "cudaLaunchKernel", 20, 10, 7, "k", 120, 200)
	b.cpu(1, "cuda_runtime", "cudaDeviceSynchronize", 200, 130)
	c := buildCTDA(t, b.frame(), true)
	if c.Counted <= 0 || len(c.Path) < 2 {
		t.Fatalf("path %+v, counted %d ns: want the work of thread 1 and the kernel", c.Path, c.Counted)
	}
}

// TestCTDATooManyPhases: phases are int16 indexes per event; rules naming more distinct phases are an error
// (the 32,768th wrapped onto the unclassified phase, silently, and later ones onto real phases).
func TestCTDATooManyPhases(t *testing.T) {
	var b frameBuilder
	b.cpu(1, "user_annotation", "ProfilerStep#1", 0, 100)
	b.cpu(1, "cpu_op", "aten::mm", 10, 50)
	rules := make([]PhaseRule, math.MaxInt16+1)
	for i := range rules {
		rules[i] = PhaseRule{regexp.MustCompile(`^never$`), fmt.Sprintf("p%d", i)}
	}
	opts := CTDAOptions{Options: Options{Annotation: "ProfilerStep"}, Phases: rules, Aggregate: true}
	if _, err := BuildCTDA(context.Background(), b.frame(), opts); err == nil || !strings.Contains(err.Error(), "32768 distinct phases") {
		t.Errorf("32768 phases: %v", err)
	}
	opts.Phases = rules[:math.MaxInt16]
	if _, err := BuildCTDA(context.Background(), b.frame(), opts); err != nil {
		t.Errorf("32767 phases: %v", err)
	}
}
