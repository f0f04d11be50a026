package graph

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
)

// CTDA-CPA: the cross-thread dependency-aware critical path of Yang, Li, Huang and Guo ("Hotspot
// Identification in Large Model Training"), built from the method's description (its code is not
// public). Where HTA's graph has two nodes per event and treats CPU threads as independent, the
// computation dependency graph (CDG) here aggregates events into a few hundred nodes:
//
//   - CPU time is cut into atoms, each owned by the innermost event running on the thread. The
//     threads of a process that run Python (the main thread, the autograd threads, any thread with
//     python_function frames) form one logical thread: the GIL lets one of them run at a time. An
//     event that another such thread pre-empts (the main thread's run_backward while the autograd
//     thread works) is waiting, and its own time is dropped.
//   - Consecutive atoms of a thread form one CPU node while they share a training phase (from the
//     phase rules, inherited from the innermost classified ancestor), launch onto one stream, and no
//     synchronisation call ends the node. aggregate=false makes every owner change a new node.
//   - All GPU events a CPU node launches form one GPU node.
//   - Edges: sequential (thread order; stream order), call (CPU node → its GPU node), sync (GPU node
//     → the CPU node after a device/stream/event synchronisation; GPU → GPU for cudaStreamWaitEvent)
//     and cross-thread (consecutive nodes of one logical thread on different threads).
//
// The path is found by backtracking on effective end times from the latest-ending node (Algorithm 1
// of the paper), not by summing weights: a trace's start times are the real schedule.

// PhaseRule classifies events by name: the first rule (in priority order) whose pattern matches.
type PhaseRule struct {
	Pattern *regexp.Regexp
	Phase   string
}

// CTDAOptions are the window options plus the phase rules and whether to aggregate.
type CTDAOptions struct {
	Options
	Phases    []PhaseRule
	Aggregate bool
}

// CDGNode is one node of the computation dependency graph.
type CDGNode struct {
	GPU      bool
	Pid, Tid int64 // CPU: the thread; GPU: the GPU process and the stream
	// Stream: for a CPU node the stream its launches go to (-1 none); for a GPU node its stream.
	Stream int64
	// streamGPU (CPU nodes): the GPU (process id) of Stream.
	streamGPU  int64
	Phase      string // CPU: training phase ('' when no rule applies); GPU: the launcher's
	Start, End int64
	// FirstLaunchEnd: end of the node's first launch call (CPU nodes that launch), else End. It is
	// the CPU node's effective end as seen by the GPU node it launched.
	FirstLaunchEnd int64
	// waitFrom (CPU nodes): the start of the synchronisation call the node ends in, else its end. A
	// synchronisation whose GPU work had ended by then did not wait, so it binds nothing.
	waitFrom int64
	// releasedFrom (CPU nodes): the waitFrom of the node before it on its thread, which holds the
	// synchronisation calls whose edges end in this node (-1: first on its thread).
	releasedFrom int64
	// waitUnplaced (GPU nodes): its stream waited for an event (cudaStreamWaitEvent) whose recording
	// the trace does not place, so the sync edge into it is the schedule's guess, and a late start
	// cannot be told from that wait.
	waitUnplaced bool
	// logical (CPU nodes): the index of its logical thread (the Python threads of a process are one).
	logical     int32
	MainRow     int32 // frame row naming the node: the event (starting in it, for a CPU node) that covers most of it (namingRow)
	Launcher    int32 // GPU nodes: the CPU node that launched it (-1 none)
	Launched    int32 // CPU nodes: the GPU node it launched (-1 none)
	Events      int32 // events in the node
	first, last int32 // its atoms (CPU) or GPU rows (GPU), [first, last)
}

// CDG is the computation dependency graph of one window and its critical path.
type CDG struct {
	// F is the frame the graph was built on, its times shifted by Shift (positiveTimes): every time of the
	// CDG (node, path step, window) is on that clock, and Time gives it back on the trace's.
	F                      *Frame
	Shift                  int64
	WindowStart, WindowEnd int64
	// SpanEnd: the end of the analysed span, the window's end or the end of the last work launched
	// in it (a GPU running behind the CPU finishes a step's kernels after the step's annotation).
	SpanEnd int64
	Nodes   []CDGNode
	// G holds the edges: EdgeDependency (CPU sequential), EdgeKernelKernel (stream order),
	// EdgeLaunchDelay (call), EdgeSyncDependency, EdgeCrossThread.
	G       *Graph
	atoms   []ctdaAtom // CPU atoms grouped by node
	gpuRows []int32    // GPU rows grouped by node
	// gpuLaunched, per gpuRows entry: when its launch call had enqueued it (launchDone; -1: launched
	// before the window).
	gpuLaunched []int64
	Path        []PathStep
	// Counted: Σ over the path of the time its nodes' events cover inside their counted segments.
	Counted int64
	// BusyBound: time of the window covered by cpu_op, runtime/driver and GPU events (ns); no path
	// can cover more.
	BusyBound int64
	instances []int // frame rows of the annotation instances making the window, ascending
	// stepMarker, per symbol: a ProfilerStep#N name (ownAnnotation, windows without instances).
	stepMarker []bool
	// ownThread, per logical thread: it holds the thread of the window's annotation; in a window
	// without one (annotation ''), it runs Python and launched GPU work, the training loop's thread.
	ownThread []bool
}

type ctdaAtom struct {
	start, end int64
	row        int32
	busy       bool // inside a cpu_op or runtime/driver event (what CPCR and the busy bound count)
	cut        bool // its event ran on after the window's end (clipAtoms)
}

// PathStep is one node of the path, in time order. The node counts for [Lo, Hi]: Lo is the later of
// its start and the previous step's effective end, Hi its own effective end as seen by the next
// step (a CPU node followed by the GPU node it launched ends at its first launch).
type PathStep struct {
	Node    int32
	Edge    int32 // edge from the previous step (-1 for the first)
	Lo, Hi  int64
	Gap     int64 // Lo − the previous step's effective end: time only the edge explains
	Counted int64 // time covered by the node's events inside [Lo, Hi]
	// GPU nodes: the parts of [Lo, Hi] none of the node's own events covers. An aggregated GPU node
	// spans every kernel its launcher issued, and the stream can sit idle between them for longer
	// than they run (hta/negative_queue_length_values_check: 23 ms of kernels over 109 ms). Launcher:
	// the gaps before kernels launched only after the gap began, up to the launch (the stream waited
	// for the host to issue them, inside the launcher's events or between them: aggregate=false's path
	// runs through those CPU nodes and the edges between them); Idle: the rest (a kernel gap, as
	// between the nodes of aggregate=false).
	// Hi − Lo − Launcher − Idle is the GPU work.
	Launcher, Idle int64
	// Named: the frame row naming the counted span (namingRow over [Lo, Hi]): a node ending in a
	// synchronisation call counts only the work before it, which the call must not name.
	Named int32
	// LauncherNamed (GPU nodes with Launcher time): the launcher's event naming the time it was busy
	// while the stream waited for its launches (namingRow over that time), not the launcher's
	// MainRow, which may run after it.
	LauncherNamed int32
}

// CDG edge kinds, as graph edge types.
const (
	cdgSequential  = EdgeDependency
	cdgStreamOrder = EdgeKernelKernel
	cdgCall        = EdgeLaunchDelay
	cdgSync        = EdgeSyncDependency
	cdgCrossThread = EdgeCrossThread
)

// CDGEdgeKind names a CDG edge type by the paper's dependency kind.
func CDGEdgeKind(t uint8) string {
	switch t {
	case cdgSequential, cdgStreamOrder:
		return "sequential"
	case cdgCall:
		return "call"
	case cdgSync:
		return "sync"
	case cdgCrossThread:
		return "cross_thread"
	}
	return EdgeTypeName(t)
}

var syncCallNames = map[string]bool{"cudaDeviceSynchronize": true, "cudaStreamSynchronize": true,
	"cudaEventSynchronize": true, "hipDeviceSynchronize": true, "hipStreamSynchronize": true,
	"hipEventSynchronize": true, "cuCtxSynchronize": true, "cuStreamSynchronize": true,
	"cuEventSynchronize": true}

// syncCall: a call after which its thread has waited for GPU work: a synchronisation, or a
// synchronous copy, which is every CUDA/HIP runtime or driver copy without Async in its name
// (cudaMemcpy, cudaMemcpy2D, cudaMemcpyToSymbol, hipMemcpyWithStream, which PyTorch's synchronous
// copies call on ROCm, cuMemcpyDtoH_v2, ...). The prefix keeps out the GPU side's "Memcpy DtoH".
func syncCall(name string) bool {
	if syncCallNames[name] {
		return true
	}
	api := strings.HasPrefix(name, "cuda") || strings.HasPrefix(name, "hip") || strings.HasPrefix(name, "cuMemcpy")
	return api && strings.Contains(name, "Memcpy") && !strings.Contains(name, "Async")
}

// waitedForCopy reports whether call, a CUDA/HIP runtime or driver copy with Async in its name, waited for
// its copy, the GPU row copy, as a synchronous copy does: a copy to or from pageable memory (CUDA returns
// from one to pageable memory only when it is done), which ended before the call returned. Ending first
// alone does not tell: a 1 µs device-to-device copy on an idle stream can end inside a slow call.
func waitedForCopy(f *Frame, call, copy int32) bool {
	name := f.Syms[f.Name[call]]
	api := strings.HasPrefix(name, "cuda") || strings.HasPrefix(name, "hip") || strings.HasPrefix(name, "cuMemcpy")
	return api && strings.Contains(name, "Memcpy") && strings.Contains(name, "Async") &&
		strings.Contains(f.Syms[f.Name[copy]], "Pageable") && f.TS[copy]+f.Dur[copy] <= f.TS[call]+f.Dur[call]
}

// isEventRecord names the calls that record an event on a stream, for a wait to wait for.
var isEventRecord = map[string]bool{"cudaEventRecord": true, "cudaEventRecordWithFlags": true, "hipEventRecord": true, "hipEventRecordWithFlags": true}

// streamWaitNames make a stream wait for an event recorded on another: no CPU wait, but a GPU → GPU
// dependency, so they end a CPU node like the synchronisation calls (the work launched after one is
// the work that waits).
var streamWaitNames = map[string]bool{"cudaStreamWaitEvent": true, "hipStreamWaitEvent": true, "cuStreamWaitEvent": true}

// deviceSyncNames synchronise with every stream (used when the trace has no cuda_sync records).
var deviceSyncNames = map[string]bool{"cudaDeviceSynchronize": true, "hipDeviceSynchronize": true,
	"cuCtxSynchronize": true, "cudaStreamSynchronize": true, "cudaEventSynchronize": true,
	"hipStreamSynchronize": true, "hipEventSynchronize": true, "cuStreamSynchronize": true,
	"cuEventSynchronize": true}

// ctdaCPUCat: categories of CPU events that occupy a thread.
func ctdaCPUCat(c string) bool {
	switch c {
	case "cpu_op", "Operator", "python_function", "user_annotation":
		return true
	}
	return runtimeCat(c)
}

// runtimeCat: CUDA/HIP/MTIA runtime and driver API calls.
func runtimeCat(c string) bool {
	return c == "Runtime" || strings.Contains(c, "runtime") || strings.Contains(c, "driver")
}

// ctdaBusyCat: categories counted by the busy bound (cpu_op and runtime/driver).
func ctdaBusyCat(c string) bool {
	return ctdaCPUCat(c) && c != "python_function" && c != "user_annotation"
}

// autogradOpName: events only the autograd engine records. Current PyTorch wraps each backward op
// in autograd::engine::evaluate_function; 2021-era traces (kineto/resnet50_num_workers_0) name
// the nodes themselves, CudnnConvolutionBackward, ReluBackward1, torch::autograd::AccumulateGrad.
func autogradOpName(s string) bool {
	return strings.HasPrefix(s, "autograd::engine::evaluate_function") || s == "torch::autograd::AccumulateGrad" ||
		legacyBackwardName.MatchString(s)
}

var legacyBackwardName = regexp.MustCompile(`^[A-Za-z0-9_]+Backward[0-9]*$`)

// ctdaGPUWork: categories of the rows on a stream that are GPU work. The stream alone does not tell:
// Triton's host-side launch ops are cpu_op rows carrying args.stream 0 (hta/triton_example).
func ctdaGPUWork(c string) bool {
	return c != "cuda_sync" && c != "gpu_user_annotation" && !ctdaCPUCat(c)
}

// positiveTimes returns f with no timestamp before 0, and the ns it added (0: f itself). The build takes 0
// and -1 for "no time yet" in many places (a node's end growing from 0, no launch yet): a trace whose clock
// is negative (Chrome traces may be) gave every node an end of 0 and a path of the whole trace.
func positiveTimes(f *Frame) (*Frame, int64) {
	if len(f.TS) == 0 {
		return f, 0
	}
	lo, hi := slices.Min(f.TS), slices.Max(f.TS)
	if lo >= 0 || hi > math.MaxInt64/2 || lo < math.MinInt64/2 {
		return f, 0 // (a clock that far out cannot be shifted without overflow; no trace has one)
	}
	shift := -lo
	g := *f
	g.TS = make([]int64, len(f.TS))
	for i, t := range f.TS {
		g.TS[i] = t + shift
	}
	return &g, shift
}

// Time is a time of the CDG on the trace's clock.
func (c *CDG) Time(t int64) int64 { return t - c.Shift }

// graphLaunchName: a CUDA/HIP graph launch call, the same names as kernel_launches.graph_replay
// (queries/views/00_base.sql); hta_kernels.go uses it too.
var graphLaunchName = regexp.MustCompile(`^(cuda|hip|cu)GraphLaunch`)

// BuildCTDA builds the CDG of a window of f and backtracks its critical path.
func BuildCTDA(ctx context.Context, f *Frame, o CTDAOptions) (*CDG, error) {
	f, shift := positiveTimes(f)
	ws, we, instances, err := windowOf(f, o.Options, true)
	if err != nil {
		return nil, err
	}
	c := &CDG{F: f, Shift: shift, WindowStart: ws, WindowEnd: we, instances: slices.Sorted(slices.Values(instances))}
	n := f.Len()
	row := rowIndex(f)
	// linked: the row an event's index_correlation names. 0 means "correlated but the partner is
	// absent" (a GPU event whose launch happened before profiling began), not event 0.
	linked := func(r int) int32 {
		if f.IndexCorr[r] <= 0 {
			return -1
		}
		return row(f.IndexCorr[r])
	}
	isCPU := make([]bool, len(f.Syms))
	busy := newBusyKinds(f)
	c.stepMarker = busy.marker
	isPython := make([]bool, len(f.Syms))
	isAutograd := make([]bool, len(f.Syms))
	isSyncCall := make([]bool, len(f.Syms))
	isStreamWait := make([]bool, len(f.Syms))
	endsNode := make([]bool, len(f.Syms)) // a node ends after these calls
	isDeviceSync := make([]bool, len(f.Syms))
	phaseOf := make([]int16, len(f.Syms)) // index into phases, -1 none
	nestRank := make([]int8, len(f.Syms)) // sortByStart
	var phases []string
	for i, s := range f.Syms {
		isCPU[i] = ctdaCPUCat(s)
		switch {
		case s == "user_annotation":
			nestRank[i] = 0
		case s == "python_function":
			nestRank[i] = 1
		case runtimeCat(s):
			nestRank[i] = 3
		default:
			nestRank[i] = 2
		}
		isPython[i] = s == "python_function"
		isAutograd[i] = autogradOpName(s)
		isSyncCall[i], isDeviceSync[i] = syncCall(s), deviceSyncNames[s]
		isStreamWait[i] = streamWaitNames[s]
		endsNode[i] = isSyncCall[i] || isStreamWait[i]
		phaseOf[i] = -2 // not classified yet: only the names of the window's CPU events are
	}
	// Phases are int16 indexes per row: past that many, one wrapped onto another phase, silently.
	if distinct := len(slices.Compact(slices.Sorted(func(yield func(string) bool) {
		for _, r := range o.Phases {
			if !yield(r.Phase) {
				return
			}
		}
	}))); distinct > math.MaxInt16 {
		return nil, fmt.Errorf("phase_rules name %d distinct phases; at most %d are supported", distinct, math.MaxInt16)
	}
	classify := func(sym int32) {
		if phaseOf[sym] != -2 {
			return
		}
		phaseOf[sym] = -1
		for _, r := range o.Phases {
			if r.Pattern.MatchString(f.Syms[sym]) {
				k := slices.Index(phases, r.Phase)
				if k < 0 {
					k = len(phases)
					phases = append(phases, r.Phase)
				}
				phaseOf[sym] = int16(k)
				return
			}
		}
	}

	// Rows of the window: CPU events starting in it (dur > 0); GPU work they launched, or that
	// starts in the window when its launcher is unknown.
	type laneKey struct{ pid, tid int64 }
	cpuRows := map[laneKey][]int32{}
	inWindow := make([]bool, n)
	var gpuAll []int32
	// A launch call of zero duration (a sub-µs call in a trace of whole µs) is one too: without it its
	// kernel looked launched before the window, and the path lost the operator that launched it.
	zeroLaunch := func(r int) bool {
		l := linked(r)
		return f.Dur[r] == 0 && l >= 0 && f.Stream[l] >= 0 && busy.gpu[f.Cat[l]]
	}
	for r := 0; r < n; r++ {
		// Half-open, as clipAtoms: an event starting at the window's end is the next window's.
		if isCPU[f.Cat[r]] && (f.Dur[r] > 0 || zeroLaunch(r)) && f.TS[r] >= ws && (f.TS[r] < we || ws == we) {
			k := laneKey{f.Pid[r], f.Tid[r]}
			cpuRows[k] = append(cpuRows[k], int32(r))
			inWindow[r] = true
			classify(f.Name[r])
		}
	}
	// GPU work: what the window's CPU events launched, then (earlier) work still running in the
	// analysed span — a GPU running behind the CPU executes the previous step's kernels first, and
	// the stream order makes the window's kernels wait for them. Earlier work that outlasts the span
	// is no one's predecessor there (a kernel of the window on its stream would end later still, and
	// stretch the span): it is left out, so that it neither stretches the span nor starts the path.
	launcher := make([]int32, n) // GPU row → launching CPU row in the window, -1 none
	spanEnd := we
	for r := 0; r < n; r++ {
		launcher[r] = -1
		if f.Stream[r] < 0 || !busy.gpu[f.Cat[r]] {
			continue
		}
		if l := linked(r); l >= 0 && inWindow[l] {
			launcher[r] = l
			gpuAll = append(gpuAll, int32(r))
			spanEnd = max(spanEnd, f.TS[r]+f.Dur[r])
		}
	}
	for r := 0; r < n; r++ {
		if f.Stream[r] >= 0 && busy.gpu[f.Cat[r]] && launcher[r] < 0 && f.TS[r] < spanEnd && f.TS[r]+f.Dur[r] > ws && f.TS[r]+f.Dur[r] <= spanEnd {
			gpuAll = append(gpuAll, int32(r))
		}
	}
	launches := make([]int32, n) // CPU row → first GPU row it launched, -1 none
	for i := range launches {
		launches[i] = -1
	}
	for _, r := range gpuAll {
		if l := launcher[r]; l >= 0 && (launches[l] < 0 || f.TS[r] < f.TS[launches[l]]) {
			launches[l] = r
		}
	}
	// waitedCopy: asynchronous copy calls that waited for their copy (waitedForCopy); each is a
	// synchronous copy for the graph (it ends its node, and its copy is its sync dependency), as a
	// cudaMemcpy: a 930 µs pageable cudaMemcpyAsync was the top hotspot, the 1000 µs kernel it waited
	// for off the path. splitAfter: the rows after which a node ends, by row (nil none).
	var waitedCopy, splitAfter []bool
	for r := 0; r < n; r++ {
		if g := launches[r]; g >= 0 && waitedForCopy(f, int32(r), g) {
			if waitedCopy == nil {
				waitedCopy = make([]bool, n)
			}
			waitedCopy[r] = true
		}
	}
	syncRow := func(r int32) bool { return isSyncCall[f.Name[r]] || waitedCopy != nil && waitedCopy[r] }
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// launchDone: when a launch call had enqueued its work, as the GPU work sees it. Normally the
	// call's end. A call still running when its GPU work started (a cudaMemcpyAsync from pageable
	// memory, a blocking cudaMemcpy) waited for the stream to reach the work, so its end says when
	// the stream got there, not when the work was enqueued: its start does. One that returned as the work
	// started did not wait (whole-µs times tie often: a kernel at 30 µs after a call ending at 30 made the
	// call blocking, and 1 µs later did not).
	// A CUDA/HIP graph launch does not wait for the stream: it submits its graph in pieces while it
	// runs (on the recorded graphed trace 7 of 29 events ran during the 134-165 µs call, the rest 1-3
	// µs after it returned, the stream idle in between), so it is never blocking, and each event it
	// replays was enqueued by its own start or by the call's end, whichever came first (enqueued).
	isGraphLaunch := make([]bool, len(f.Syms))
	for i, s := range f.Syms {
		isGraphLaunch[i] = graphLaunchName.MatchString(s)
	}
	blocking := func(call int32) bool {
		g := launches[call]
		return g >= 0 && f.TS[call]+f.Dur[call] > f.TS[g] && f.TS[call] < f.TS[g] && !isGraphLaunch[f.Name[call]]
	}
	launchDone := func(call int32) int64 {
		if blocking(call) {
			return f.TS[call]
		}
		return f.TS[call] + f.Dur[call]
	}
	enqueued := func(call, gpuRow int32) int64 {
		if isGraphLaunch[f.Name[call]] {
			return min(f.TS[gpuRow], launchDone(call))
		}
		return launchDone(call)
	}

	// An event record that a stream wait or an event sync names ends its node too: the work launched
	// before it is what the wait waited for, the work after it not. (A node that launched k1, recorded,
	// then launched k2 was one GPU node, which had not ended when the work waiting for k1 began: the
	// wait was lost, and counted as launch overhead or CPU work.)
	// A wait whose record names no record call (CUDA 12 writes -1 for it) may have waited for any
	// record: each one ends its node then.
	var awaitedRecord []bool
	unnamedRecord := false
	for r := 0; r < n; r++ {
		if f.Syms[f.Cat[r]] != "cuda_sync" {
			continue
		}
		if f.WaitOnCorr[r] >= 0 {
			if awaitedRecord == nil {
				awaitedRecord = make([]bool, n)
			}
			awaitedRecord[r] = true
		} else if nm := f.Syms[f.Name[r]]; nm == "Event Sync" || nm == "Stream Wait Event" {
			unnamedRecord = true
		}
	}
	if awaitedRecord != nil || unnamedRecord {
		corrs := map[int64]bool{}
		for r := 0; r < n && awaitedRecord != nil; r++ {
			if awaitedRecord[r] {
				corrs[f.WaitOnCorr[r]] = true
				awaitedRecord[r] = false
			}
		}
		if awaitedRecord == nil {
			awaitedRecord = make([]bool, n)
		}
		for r := 0; r < n; r++ {
			awaitedRecord[r] = isCPU[f.Cat[r]] && (f.Corr[r] >= 0 && corrs[f.Corr[r]] || unnamedRecord && isEventRecord[f.Syms[f.Name[r]]])
		}
	}
	splitAfter = awaitedRecord
	if waitedCopy != nil {
		splitAfter = slices.Clone(waitedCopy)
		for r, at := range awaitedRecord {
			splitAfter[r] = splitAfter[r] || at
		}
	}

	// So does a launch after a device or stream synchronisation that another thread began after the
	// node's previous launch onto that stream: the call waited for the work launched before it, not
	// for the rest. (A C++ thread's op launching kB1, then kB2 after the main thread's
	// cudaDeviceSynchronize began, made one GPU node still running when the sync returned: the
	// wait was lost, and the main thread's wait counted as CPU work.)
	type syncKey struct{ gpu, stream int64 } // stream -1: every stream of the GPU
	syncStarts := map[syncKey][]int64{}
	for r := 0; r < n; r++ {
		if f.Syms[f.Cat[r]] != "cuda_sync" {
			continue
		}
		k := syncKey{f.Pid[r], -1}
		switch f.Syms[f.Name[r]] {
		case "Context Sync":
		case "Stream Sync":
			k.stream = f.Stream[r]
		default:
			continue
		}
		if call := linked(r); call >= 0 {
			syncStarts[k] = append(syncStarts[k], f.TS[call])
		}
	}
	for _, ts := range syncStarts {
		slices.Sort(ts)
	}
	// syncedBetween: a synchronisation of the stream began in (lo, hi].
	syncedBetween := func(gpu, stream, lo, hi int64) bool {
		for _, k := range []syncKey{{gpu, -1}, {gpu, stream}} {
			ts := syncStarts[k]
			i, _ := slices.BinarySearch(ts, lo+1)
			if i < len(ts) && ts[i] <= hi {
				return true
			}
		}
		return false
	}

	// Logical threads: per process, the Python threads are one; every other thread is its own.
	lanes := make([]laneKey, 0, len(cpuRows))
	for k := range cpuRows {
		lanes = append(lanes, k)
	}
	slices.SortFunc(lanes, func(a, b laneKey) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.tid, b.tid))
	})
	pythonLane := func(k laneKey) bool {
		for _, r := range cpuRows[k] {
			nm := f.Name[r]
			if isPython[f.Cat[r]] || isAutograd[nm] || StepMarker(f.Syms[nm]) {
				return true
			}
		}
		return false
	}
	// A process's main thread (tid = pid) joins its Python threads: without Python stacks the
	// autograd thread is still recognisable, the main thread not.
	hasPython := map[int64]bool{}
	isPyLane := map[laneKey]bool{}
	for _, k := range lanes {
		if pythonLane(k) {
			isPyLane[k], hasPython[k.pid] = true, true
		}
	}
	for _, k := range lanes {
		if k.tid == k.pid && hasPython[k.pid] {
			isPyLane[k] = true
		}
	}
	var groups [][]laneKey
	byPid := map[int64]int{}
	for _, k := range lanes {
		if !isPyLane[k] {
			groups = append(groups, []laneKey{k})
			continue
		}
		if gi, ok := byPid[k.pid]; ok {
			groups[gi] = append(groups[gi], k)
			continue
		}
		byPid[k.pid] = len(groups)
		groups = append(groups, []laneKey{k})
	}

	// Atoms and phases per thread, then per logical thread; nodes.
	phase := make([]int16, n)
	inEngine := make([]bool, n) // per row: autograd engine work, or inside it on its thread
	cpuNodeOfRow := make([]int32, n)
	for i := range cpuNodeOfRow {
		cpuNodeOfRow[i] = -1
	}
	var logical [][]int32 // node ids per logical thread, in time order
	annotationLane := map[laneKey]bool{}
	for _, r := range instances {
		if f.Stream[r] == -1 {
			annotationLane[laneKey{f.Pid[r], f.Tid[r]}] = true
		}
	}
	for gi, grp := range groups {
		own := false
		for _, k := range grp {
			own = own || annotationLane[k]
		}
		c.ownThread = append(c.ownThread, own)
		var atoms []ctdaAtom
		var atomTid []int32 // index into grp
		for gi, k := range grp {
			rows := cpuRows[k]
			sortByStart(f, rows, nestRank)
			before := len(atoms)
			atoms = threadAtoms(f, rows, phaseOf, phase, isAutograd, inEngine, busy, atoms)
			atoms = clipAtoms(atoms, before, we)
			for range atoms[before:] {
				atomTid = append(atomTid, int32(gi))
			}
		}
		if len(grp) > 1 {
			atoms, atomTid = dropPreempted(atoms, atomTid, len(grp), func(r int32) bool { return syncRow(r) || launches[r] >= 0 },
				func(r int32) bool { return inEngine[r] })
		}
		var ids []int32
		if !o.Aggregate {
			// Event-level nodes: up to one per atom, millions on a long window; growing the slice
			// by doubling cost 1.6 s of copying on a 850k-event trace.
			c.Nodes = slices.Grow(c.Nodes, len(atoms))
		}
		carried := int16(-1) // the phase a node split at an event record hands to the rest of its work
		for i := 0; i < len(atoms); {
			k := grp[atomTid[i]]
			nd := CDGNode{Pid: k.pid, Tid: k.tid, Stream: -1, Start: atoms[i].start, Launcher: -1, Launched: -1,
				logical: int32(gi), first: int32(len(c.atoms))}
			ph := carried
			carried = -1
			firstLaunch, lastLaunchAt := int64(-1), int64(-1)
			j := i
			for ; j < len(atoms); j++ {
				a := atoms[j]
				ls, ld := int64(-1), int64(-1) // stream and GPU of its launch
				if g := launches[a.row]; g >= 0 {
					ls, ld = f.Stream[g], f.Pid[g]
				}
				if j > i && c.splits(o.Aggregate, atoms[j-1], a, atomTid[j-1] != atomTid[j], endsNode, splitAfter, phase[a.row], ph, ls, nd.Stream, ld, nd.streamGPU) {
					break
				}
				if ls >= 0 && lastLaunchAt >= 0 && len(syncStarts) > 0 && syncedBetween(ld, ls, lastLaunchAt, f.TS[a.row]) {
					break
				}
				if ph < 0 && phase[a.row] >= 0 {
					ph = phase[a.row]
				}
				if ls >= 0 {
					if nd.Stream < 0 {
						nd.Stream, nd.streamGPU = ls, ld
					}
					if firstLaunch < 0 {
						firstLaunch = launchDone(a.row)
					}
					lastLaunchAt = f.TS[a.row]
				}
				if cpuNodeOfRow[a.row] != int32(len(c.Nodes)) {
					cpuNodeOfRow[a.row] = int32(len(c.Nodes))
					nd.Events++
				}
				nd.End = max(nd.End, a.end)
				c.atoms = append(c.atoms, a)
			}
			if ph >= 0 {
				nd.Phase = phases[ph]
			}
			if j < len(atoms) && awaitedRecord != nil && awaitedRecord[atoms[j-1].row] && atomTid[j-1] == atomTid[j] {
				// A record splits the work it ends from what follows for the waits' sake only: the copy
				// after a DataLoader's record is still the data loading's (it became Forward's, the
				// phase of the next classified event, and 150-270 µs a step left data_loading).
				carried = ph
			}
			nd.FirstLaunchEnd = nd.End
			if firstLaunch >= 0 {
				nd.FirstLaunchEnd = min(firstLaunch, nd.End)
			}
			nd.last = int32(len(c.atoms))
			nd.MainRow = c.namingRow(nd, nd.Start, nd.End)
			nd.waitFrom = nd.End
			if a := c.atoms[nd.last-1]; syncRow(a.row) {
				nd.waitFrom = max(nd.Start, f.TS[a.row])
			}
			ids = append(ids, int32(len(c.Nodes)))
			c.Nodes = append(c.Nodes, nd)
			i = j
			if len(instances) == 0 && nd.Stream >= 0 && isPyLane[k] {
				c.ownThread[gi] = true
			}
		}
		logical = append(logical, ids)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	// Release nodes: a synchronisation's dependency lands on the node after the call, the work it
	// held back. A thread whose last node ends in one (the cudaDeviceSynchronize closing a profile)
	// gets an empty node at the call's end for it; without it the path would end inside the call,
	// and count the wait for the GPU as CPU work (hta/ns_resolution_trace: 89 ms).
	var releases [][2]int32 // holding node, release node
	for _, ids := range logical {
		lastOf := map[[2]int64]int32{}
		for _, v := range ids {
			lastOf[[2]int64{c.Nodes[v].Pid, c.Nodes[v].Tid}] = v
		}
		for _, v := range ids {
			nd := c.Nodes[v]
			if lastOf[[2]int64{nd.Pid, nd.Tid}] != v || nd.last == nd.first {
				continue
			}
			a := c.atoms[nd.last-1]
			if !syncRow(a.row) || a.end != f.TS[a.row]+f.Dur[a.row] {
				continue
			}
			releases = append(releases, [2]int32{v, int32(len(c.Nodes))})
			c.Nodes = append(c.Nodes, CDGNode{Pid: nd.Pid, Tid: nd.Tid, Stream: -1, Phase: nd.Phase, Start: a.end, End: a.end, logical: nd.logical,
				FirstLaunchEnd: a.end, waitFrom: a.end, MainRow: a.row, Launcher: -1, Launched: -1, first: nd.last, last: nd.last})
		}
	}
	nCPU := len(c.Nodes)

	// GPU nodes: the GPU rows of one launching CPU node (one stream); work launched before the
	// window (orphans) forms one node per stream and run between inferred waits (orphanWaits).
	orphanRun, orphanEdges := orphanWaits(f, gpuAll, launcher)
	groupOf := func(r int32) int64 {
		if run := orphanRun[r]; run >= 0 {
			return -2 - int64(run)
		}
		if l := launcher[r]; l >= 0 {
			return int64(cpuNodeOfRow[l])
		}
		return -1
	}
	slices.SortFunc(gpuAll, func(a, b int32) int {
		return cmp.Or(cmp.Compare(groupOf(a), groupOf(b)), cmp.Compare(f.Pid[a], f.Pid[b]), cmp.Compare(f.Stream[a], f.Stream[b]), cmp.Compare(f.TS[a], f.TS[b]), cmp.Compare(a, b))
	})
	gpuNodeOfCPU := map[[3]int64]int32{}
	gpuNodeOfRow := make([]int32, n)
	for i := range gpuNodeOfRow {
		gpuNodeOfRow[i] = -1
	}
	if !o.Aggregate {
		c.Nodes = slices.Grow(c.Nodes, len(gpuAll)) // one node per GPU row: see the CPU nodes' Grow
	}
	for _, r := range gpuAll {
		cn := int32(-1)
		if l := launcher[r]; l >= 0 {
			cn = cpuNodeOfRow[l]
		}
		key := [3]int64{groupOf(r), f.Pid[r], f.Stream[r]}
		id, ok := gpuNodeOfCPU[key]
		if !ok || !o.Aggregate {
			id = int32(len(c.Nodes))
			ph := ""
			if cn >= 0 {
				ph = c.Nodes[cn].Phase
				c.Nodes[cn].Launched = id
			}
			c.Nodes = append(c.Nodes, CDGNode{GPU: true, Pid: f.Pid[r], Tid: f.Stream[r], Stream: f.Stream[r], Phase: ph, Launcher: cn, Launched: -1,
				Start: f.TS[r], End: f.TS[r] + f.Dur[r], MainRow: r, first: int32(len(c.gpuRows)), last: int32(len(c.gpuRows))})
			gpuNodeOfCPU[key] = id
		}
		nd := &c.Nodes[id]
		c.gpuRows = append(c.gpuRows, r)
		if l := launcher[r]; l >= 0 {
			c.gpuLaunched = append(c.gpuLaunched, enqueued(l, r))
		} else {
			c.gpuLaunched = append(c.gpuLaunched, -1)
		}
		nd.last++
		nd.Events++
		nd.Start = min(nd.Start, f.TS[r])
		nd.End = max(nd.End, f.TS[r]+f.Dur[r])
		nd.FirstLaunchEnd = nd.End
		gpuNodeOfRow[r] = id
	}
	// A GPU node launched by several CPU-node-less rows keeps per-node order; the CPU node's stream
	// may differ from a memcpy's (a launch onto another stream started a new node, so not here).
	for g := nCPU; g < len(c.Nodes); g++ {
		nd := &c.Nodes[g]
		nd.MainRow = c.namingRow(*nd, nd.Start, nd.End)
	}

	// Edges.
	b := NewBuilder(len(c.Nodes), 3*len(c.Nodes))
	gap := func(u, v int32) int64 { return c.Nodes[v].Start - c.effEnd(u, v) }
	add := func(u, v int32, t uint8) {
		if u == v || u < 0 || v < 0 {
			return
		}
		b.AddEdge(u, v, gap(u, v), t)
	}
	// Sequential on each thread, cross-thread within a logical thread.
	for _, ids := range logical {
		lastOf := map[int64]int32{}
		for i, v := range ids {
			nd := c.Nodes[v]
			if u, ok := lastOf[nd.Tid]; ok {
				add(u, v, cdgSequential)
			}
			if i > 0 {
				if u := ids[i-1]; c.Nodes[u].Tid != nd.Tid {
					add(u, v, cdgCrossThread)
				}
			}
			lastOf[nd.Tid] = v
		}
	}
	for _, p := range releases {
		add(p[0], p[1], cdgSequential)
	}
	// Calls.
	for g := int32(nCPU); g < int32(len(c.Nodes)); g++ {
		if cn := c.Nodes[g].Launcher; cn >= 0 {
			add(cn, g, cdgCall)
		}
	}
	// Stream order.
	type streamKey struct{ pid, stream int64 }
	byStream := map[streamKey][]int32{}
	for g := int32(nCPU); g < int32(len(c.Nodes)); g++ {
		k := streamKey{c.Nodes[g].Pid, c.Nodes[g].Stream}
		byStream[k] = append(byStream[k], g)
	}
	streamKeys := make([]streamKey, 0, len(byStream))
	for k := range byStream {
		streamKeys = append(streamKeys, k)
	}
	// Sorted, so that the edges (and cdg_edges' rows) come in the same order on every run.
	slices.SortFunc(streamKeys, func(a, b streamKey) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.stream, b.stream))
	})
	// A stream runs its events in order, but the GPU nodes of different launchers can interleave on
	// it (a kernel another thread launched runs between two of a node's kernels), so ordering the
	// nodes by start would make a node wait for the whole of one that started earlier and ended after
	// it (hta/trace_diff/test rank 1 step 2: a 159 µs kernel inside a 16.5 ms node). What a node's
	// first event waited for is the stream's event that ended last before it started: the stream
	// edge comes from that event's node, and effEnd gives that event's end as the edge's end. Edges
	// go from earlier- to later-starting nodes only, so the CDG stays a DAG (a subset of the old
	// start-order chain's transitive closure).
	for _, k := range streamKeys {
		ids := byStream[k]
		key := func(a, b int32) int {
			return cmp.Or(cmp.Compare(c.Nodes[a].Start, c.Nodes[b].Start), cmp.Compare(a, b))
		}
		slices.SortFunc(ids, key)
		var rows []int32 // the stream's events by end
		for _, g := range ids {
			rows = append(rows, c.gpuRows[c.Nodes[g].first:c.Nodes[g].last]...)
		}
		end := func(r int32) int64 { return f.TS[r] + f.Dur[r] }
		slices.SortFunc(rows, func(a, b int32) int { return cmp.Or(cmp.Compare(end(a), end(b)), cmp.Compare(a, b)) })
		for _, v := range ids {
			j, _ := slices.BinarySearchFunc(rows, c.Nodes[v].Start+1, func(r int32, t int64) int { return cmp.Compare(end(r), t) })
			for j--; j >= 0; j-- {
				if u := gpuNodeOfRow[rows[j]]; u != v && key(u, v) < 0 {
					add(u, v, cdgStreamOrder)
					break
				}
			}
		}
	}
	// Waits of the work launched before the window, inferred from the schedule (orphanWaits).
	for _, e := range orphanEdges {
		u, v := gpuNodeOfRow[e[0]], gpuNodeOfRow[e[1]]
		if u >= 0 && v >= 0 && c.Nodes[u].End <= c.Nodes[v].Start {
			add(u, v, cdgSync)
		}
	}
	// launchTime: when a GPU node's work was enqueued (its first launch call's start). Work launched
	// before the window was enqueued by its launch call there, even when it started only after a
	// synchronisation in the window began (a stream running behind). Work whose launch call the trace
	// lacks was launched before profiling began, so before the window: a stream wait in the window
	// waits for it too (taking its start for its launch, a wait for a 400 µs backlog kernel starting
	// after the wait call found none, and the 400 µs read as a gap).
	launchAt := make([]int64, len(c.Nodes))
	for g := nCPU; g < len(c.Nodes); g++ {
		launchAt[g] = c.Nodes[g].Start
		for _, r := range c.gpuRows[c.Nodes[g].first:c.Nodes[g].last] {
			l := launcher[r]
			if l < 0 {
				l = linked(int(r))
			}
			if l >= 0 {
				launchAt[g] = min(launchAt[g], f.TS[l])
			} else {
				launchAt[g] = min(launchAt[g], ws)
			}
		}
	}
	launchTime := func(g int32) int64 { return launchAt[g] }
	// The searches below run once per synchronisation call, so each stream's nodes are indexed for
	// them: a linear scan per call made a 1.1M-event window (45 steps) spend 1.4 s in one loop.
	streams := make(map[streamKey]*streamNodes, len(byStream))
	for k, ids := range byStream {
		streams[k] = newStreamNodes(c.Nodes, ids, launchAt)
	}
	// lastLaunched: the last GPU node of a stream enqueued before time t (-1 none).
	lastLaunched := func(k streamKey, t int64) int32 {
		if sn := streams[k]; sn != nil {
			return sn.lastLaunched(t)
		}
		return -1
	}
	// firstLaunchedAfter: the first GPU node of a stream enqueued at or after t (-1 none).
	firstLaunchedAfter := func(k streamKey, t int64) int32 {
		if sn := streams[k]; sn != nil {
			return sn.firstLaunchedAfter(t)
		}
		return -1
	}
	// latestEnded: the latest-ending GPU node of a stream that ended by t and was enqueued before
	// launchedBefore (at or before it when orAt), the first of the stream's order on a tie (-1 none).
	latestEnded := func(k streamKey, t, launchedBefore int64, orAt bool) int32 {
		if sn := streams[k]; sn != nil {
			return sn.latestEnded(t, launchedBefore, orAt)
		}
		return -1
	}
	nextCPU := make([]int32, nCPU) // the CPU node after each on its thread (-1 none)
	{
		type thread struct{ pid, tid int64 }
		after := map[thread]int32{}
		for v := int32(nCPU) - 1; v >= 0; v-- {
			k := thread{c.Nodes[v].Pid, c.Nodes[v].Tid}
			if w, ok := after[k]; ok {
				nextCPU[v] = w
			} else {
				nextCPU[v] = -1
			}
			after[k] = v
		}
	}
	for v := range nCPU {
		c.Nodes[v].releasedFrom = -1
	}
	for v, w := range nextCPU {
		if w >= 0 {
			c.Nodes[w].releasedFrom = c.Nodes[v].waitFrom
		}
	}
	// nextOnThreadNode: the CPU node after cn on its thread (-1 none).
	nextOnThreadNode := func(cn int32) int32 { return nextCPU[cn] }
	// nextOnThread: the CPU node after the one holding a sync call (where its dependency lands).
	nextOnThread := func(cpuRow int32) int32 {
		if cn := cpuNodeOfRow[cpuRow]; cn >= 0 {
			return nextOnThreadNode(cn)
		}
		return -1
	}
	// waited: the GPU node a synchronisation into dst waited for, given the candidate g. The wait
	// ended (dst started) only after that work had ended, so a candidate still running when dst
	// started was not waited for in full: its stream's earlier work was (an aggregated node whose
	// later launches came from another thread after the call). That is the latest-ending node of
	// the stream, launched no later than g, that ended by dst's start (-1 none).
	waited := func(g, dst int32) int32 {
		if g < 0 || dst < 0 || c.Nodes[g].End <= c.Nodes[dst].Start {
			return g
		}
		return latestEnded(streamKey{c.Nodes[g].Pid, c.Nodes[g].Stream}, c.Nodes[dst].Start, launchTime(g), true)
	}
	addSync := func(g, dst int32) { add(waited(g, dst), dst, cdgSync) }
	// recordedOn: the stream an event a wait on GPU pid names by stream id ws was recorded on, by t
	// (recordedGPU).
	recordedOn := func(pid, ws int64, waiting streamKey, t int64) streamKey {
		var gpus []int64
		for _, k := range streamKeys {
			if k.stream == ws {
				gpus = append(gpus, k.pid)
			}
		}
		gpu := recordedGPU(pid, waiting == streamKey{pid, ws}, gpus, func(gpu int64) (int64, bool) {
			if g := lastLaunched(streamKey{gpu, ws}, t); g >= 0 {
				return launchTime(g), true
			}
			return 0, false
		})
		return streamKey{gpu, ws}
	}
	sawSync := false
	waitRecorded := map[int32]bool{} // stream-wait calls a "Stream Wait Event" record explains
	var recordRow map[int64]int32    // CPU correlation id → row (cudaEventRecord lookups)
	for r := 0; r < n; r++ {
		if f.Syms[f.Cat[r]] != "cuda_sync" {
			continue
		}
		call := linked(r)
		if call < 0 || !inWindow[call] {
			continue
		}
		sawSync = true
		t := f.TS[call]
		pid := f.Pid[r]
		switch f.Syms[f.Name[r]] {
		case "Context Sync":
			// the record is on the synchronised GPU's process: its streams, not every device's
			dst := nextOnThread(call)
			for _, k := range streamKeys {
				if k.pid != pid {
					continue
				}
				if g := lastLaunched(k, t); g >= 0 {
					addSync(g, dst)
				}
			}
		case "Stream Sync":
			if g := lastLaunched(streamKey{pid, f.Stream[r]}, t); g >= 0 {
				addSync(g, nextOnThread(call))
			}
		case "Event Sync", "Stream Wait Event":
			evSync := f.Syms[f.Name[r]] == "Event Sync"
			if f.WaitOnStream[r] < 0 {
				// The record names no stream (CUDA 12 traces write -1 for the stream and the record
				// call): a stream wait is left to the inference from the schedule below; an event
				// synchronisation waited for work enqueued on this GPU before the call, and returned
				// after it ended: the latest-ending such node (the schedule's guess, as below).
				if dst := nextOnThread(call); evSync && dst >= 0 {
					src := int32(-1)
					for _, k := range streamKeys {
						if k.pid != pid {
							continue
						}
						if g := latestEnded(k, c.Nodes[dst].Start, t, false); g >= 0 && (src < 0 || c.Nodes[g].End > c.Nodes[src].End) {
							src = g
						}
					}
					if src >= 0 {
						addSync(src, dst)
					}
				}
				continue
			}
			if !evSync {
				waitRecorded[call] = true
			}
			var dst int32
			if evSync {
				dst = nextOnThread(call)
			} else {
				dst = firstLaunchedAfter(streamKey{pid, f.Stream[r]}, t)
			}
			if dst < 0 {
				continue
			}
			if recordRow == nil {
				recordRow = map[int64]int32{}
				for q := range f.Corr {
					if isCPU[f.Cat[q]] && f.Corr[q] >= 0 {
						recordRow[f.Corr[q]] = int32(q)
					}
				}
			}
			waiting := streamKey{-1, -1}
			if !evSync {
				waiting = streamKey{pid, f.Stream[r]}
			}
			src := int32(-1)
			if rec, ok := recordRow[f.WaitOnCorr[r]]; ok {
				src = lastLaunched(recordedOn(pid, f.WaitOnStream[r], waiting, f.TS[rec]), f.TS[rec])
			} else {
				waitOn := recordedOn(pid, f.WaitOnStream[r], waiting, t)
				// Older CUDA traces name the stream the event was recorded on but not the record
				// call (no wait_on_cuda_event_record_corr_id). The event was recorded there before
				// this call, and what waits started after the awaited work ended: of that stream's
				// nodes launched before the call, the latest-ending one that ended by then.
				src = latestEnded(waitOn, c.Nodes[dst].Start, t, false)
				c.Nodes[dst].waitUnplaced = true
			}
			addSync(src, dst)
		}
	}
	// Stream waits without a record (ROCm traces, older CUDA ones): the waiting stream is the one
	// the thread launches onto next, and the event waited for was recorded on another stream before
	// the call. Which one the trace does not say; the schedule does: the waiting work started after
	// it ended. The latest-ending such GPU node is the dependency (an earlier one cannot have held
	// the waiting work back).
	for _, ids := range logical {
		for _, v := range ids {
			for _, a := range c.atoms[c.Nodes[v].first:c.Nodes[v].last] {
				if !isStreamWait[f.Name[a.row]] || waitRecorded[a.row] {
					continue
				}
				dst := int32(-1)
				for w := nextOnThread(a.row); w >= 0 && dst < 0; w = nextOnThreadNode(w) {
					dst = c.Nodes[w].Launched
				}
				if dst < 0 {
					continue
				}
				c.Nodes[dst].waitUnplaced = true
				t, nd := f.TS[a.row], c.Nodes[dst]
				src := int32(-1)
				for _, k := range streamKeys {
					// any other stream, of any GPU (a copy between GPUs waits for the other's)
					if k.pid == nd.Pid && k.stream == nd.Stream {
						continue
					}
					if g := latestEnded(k, nd.Start, t, false); g >= 0 && (src < 0 || c.Nodes[g].End > c.Nodes[src].End) {
						src = g
					}
				}
				addSync(src, dst)
			}
		}
	}
	// A synchronous copy waits for its own copy, which waited for its stream's work before it: CUPTI
	// writes no sync record for it, so this holds in a trace with records too (one Stream Sync anywhere
	// in the window made a 470 µs kernel that a cudaMemcpy waited for 515 µs of cpu_bound aten::to).
	// Without any sync record, a synchronising call waits for every stream.
	for _, ids := range logical {
		for _, v := range ids {
			for _, a := range c.atoms[c.Nodes[v].first:c.Nodes[v].last] {
				nm := f.Name[a.row]
				if !syncRow(a.row) {
					continue
				}
				dst := nextOnThread(a.row)
				if g := launches[a.row]; g >= 0 && !isDeviceSync[nm] {
					addSync(gpuNodeOfRow[g], dst)
					continue
				}
				if !sawSync {
					for _, k := range streamKeys {
						if g := lastLaunched(k, f.TS[a.row]); g >= 0 {
							addSync(g, dst)
						}
					}
				}
			}
		}
	}
	c.G = b.Build()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.SpanEnd = we
	for _, nd := range c.Nodes {
		c.SpanEnd = max(c.SpanEnd, nd.End)
	}
	c.backtrack()
	c.BusyBound = busyBound(f, ws, we, c.SpanEnd, busy)
	return c, nil
}

// splits reports whether atom b starts a new CPU node after atom a (same logical thread): on a
// thread change, after a synchronisation or stream-wait call (endsNode) or an awaited event record
// (endsAfter, by row; nil: none), on a phase change, on a launch onto another stream (of another GPU:
// stream ids repeat across devices), and, without aggregation, whenever the owning event changes.
func (c *CDG) splits(aggregate bool, a, b ctdaAtom, threadChange bool, endsNode, endsAfter []bool, bPhase, nodePhase int16, bStream, nodeStream, bGPU, nodeGPU int64) bool {
	switch {
	case threadChange:
		return true
	case b.row != a.row && (!aggregate || endsNode[c.F.Name[a.row]] || endsAfter != nil && endsAfter[a.row]):
		return true
	case bPhase >= 0 && nodePhase >= 0 && bPhase != nodePhase:
		return true
	case bStream >= 0 && nodeStream >= 0 && (bStream != nodeStream || bGPU != nodeGPU):
		return true
	}
	return false
}

// orphanWaits infers the waits of GPU work launched before the window (orphans, launcher[r] < 0):
// its launch calls are not in the window, so neither are its synchronisation calls. Such work was
// queued when the window began, so when its stream idles before an orphan event, the stream was
// waiting; if an event on another stream of the same device ended inside that idle gap, the latest
// one to end is what it waited for (the stream resumed after it). A stream's first event in the window
// idled from before the window, so any such end before it counts. The orphans of a stream form one
// run between such waits (a new run starts at the waiting event, and one ends at the event waited
// for, when that is an orphan too). It returns each row's run (-1: not an orphan) and the inferred
// edges as (waited-for row, waiting row).
func orphanWaits(f *Frame, gpuAll []int32, launcher []int32) ([]int32, [][2]int32) {
	run := make([]int32, len(f.TS))
	for i := range run {
		run[i] = -1
	}
	type key struct{ pid, stream int64 }
	byStream := map[key][]int32{}
	orphans := false
	for _, r := range gpuAll {
		k := key{f.Pid[r], f.Stream[r]}
		byStream[k] = append(byStream[k], r)
		orphans = orphans || launcher[r] < 0
	}
	if !orphans {
		return run, nil
	}
	keys := make([]key, 0, len(byStream))
	byEnd := map[key][]int32{} // each stream's rows by end time
	for k, rows := range byStream {
		slices.SortFunc(rows, func(a, b int32) int { return cmp.Or(cmp.Compare(f.TS[a], f.TS[b]), cmp.Compare(a, b)) })
		e := slices.Clone(rows)
		slices.SortFunc(e, func(a, b int32) int {
			return cmp.Or(cmp.Compare(f.TS[a]+f.Dur[a], f.TS[b]+f.Dur[b]), cmp.Compare(a, b))
		})
		byEnd[k] = e
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.stream, b.stream)) })
	end := func(r int32) int64 { return f.TS[r] + f.Dur[r] }
	waitsAfter := map[int32]bool{} // a run starts at these rows
	endsRun := map[int32]bool{}    // a run ends after these rows
	var edges [][2]int32
	for _, k := range keys {
		prevEnd := int64(math.MinInt64) // the stream's first event: it idled from before the window
		for _, w := range byStream[k] {
			if launcher[w] < 0 && f.TS[w] > prevEnd {
				// The latest end on another stream of the device inside (prevEnd, ts].
				src := int32(-1)
				for _, o := range keys {
					if o.pid != k.pid || o == k {
						continue
					}
					e := byEnd[o]
					j, _ := slices.BinarySearchFunc(e, f.TS[w]+1, func(r int32, t int64) int { return cmp.Compare(end(r), t) })
					if j > 0 && end(e[j-1]) > prevEnd && (src < 0 || end(e[j-1]) > end(src)) {
						src = e[j-1]
					}
				}
				if src >= 0 {
					edges = append(edges, [2]int32{src, w})
					waitsAfter[w] = true
					if launcher[src] < 0 {
						endsRun[src] = true
					}
				}
			}
			prevEnd = max(prevEnd, end(w))
		}
	}
	next := int32(0)
	for _, k := range keys {
		prev := int32(-1)
		for _, r := range byStream[k] {
			if launcher[r] >= 0 {
				continue
			}
			if prev < 0 || waitsAfter[r] || endsRun[prev] {
				next++
			}
			run[r] = next - 1
			prev = r
		}
	}
	return run, edges
}

// sortByStart sorts a thread's rows by start, longer first (enclosing events before their
// children), then, for equal extents, by nesting level of the category (nestRank: an annotation
// encloses a Python frame, which encloses an operator, which encloses a runtime call; a launch
// call with its operator's exact extent, listed first, had become its parent and lost its launch),
// then by row. The keys are copied next to the rows first: a thread can hold 100k events, and
// comparing through the frame's columns is several times slower.
func sortByStart(f *Frame, rows []int32, nestRank []int8) {
	type key struct {
		ts, negDur int64
		nest       int8
		r          int32
	}
	keys := make([]key, len(rows))
	for i, r := range rows {
		keys[i] = key{f.TS[r], -f.Dur[r], nestRank[f.Cat[r]], r}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.ts != b.ts {
			return cmp.Compare(a.ts, b.ts)
		}
		if a.negDur != b.negDur {
			return cmp.Compare(a.negDur, b.negDur)
		}
		if a.nest != b.nest {
			return cmp.Compare(a.nest, b.nest)
		}
		return cmp.Compare(a.r, b.r)
	})
	for i, k := range keys {
		rows[i] = k.r
	}
}

// rowIndex returns a lookup from event index to frame row (-1 when absent).
func rowIndex(f *Frame) func(int64) int32 {
	var maxIdx int64 = -1
	for _, e := range f.EvIdx {
		maxIdx = max(maxIdx, e)
	}
	rowOf := make([]int32, maxIdx+1)
	for i := range rowOf {
		rowOf[i] = -1
	}
	for r, e := range f.EvIdx {
		rowOf[e] = int32(r)
	}
	return func(ev int64) int32 {
		if ev < 0 || ev > maxIdx {
			return -1
		}
		return rowOf[ev]
	}
}

// clipAtoms cuts atoms[from:] at the window's end. A thread's event that starts in the window may
// run long after it: a Python thread blocked in a wait (a logger waiting for its next item) is not
// the step's work, and its time after the step belongs to later steps. The annotation's own thread
// ends inside the window anyway.
func clipAtoms(atoms []ctdaAtom, from int, we int64) []ctdaAtom {
	out := atoms[:from]
	for _, a := range atoms[from:] {
		if a.start >= we {
			continue
		}
		if a.end > we {
			a.end, a.cut = we, true
		}
		out = append(out, a)
	}
	return out
}

// threadAtoms cuts one thread's time into atoms owned by the innermost running event, appending
// them to atoms; it sets each row's phase (its own rule, else its parent's). rows are sorted by
// start, longer first. An event of zero duration owns no time, so it gets no atom, except a launch
// call (rows hold those of zero duration only): an atom of length 0 ties it, and its GPU work, to
// the node it falls in.
func threadAtoms(f *Frame, rows []int32, phaseOf []int16, phase []int16, isEngine, inEngine []bool, busy busyKinds, atoms []ctdaAtom) []ctdaAtom {
	var stack []int32
	// busyUntil, per stack entry: the end of the latest-ending busy event among it and the events
	// enclosing it (-1: none). Time inside a busy event is busy whatever runs inside it, and only
	// until that event ends: an annotation that outlives the cpu_op it started in is not busy after it.
	var busyUntil []int64
	var cur int64
	add := func(owner int32, from, to int64, busy bool) {
		if k := len(atoms) - 1; k >= 0 && atoms[k].row == owner && atoms[k].end == from && atoms[k].busy == busy {
			atoms[k].end = to
			return
		}
		atoms = append(atoms, ctdaAtom{from, to, owner, busy, false})
	}
	emit := func(owner int32, from, to int64) {
		if to <= from {
			return
		}
		until := busyUntil[len(busyUntil)-1]
		if until > from {
			add(owner, from, min(to, until), true)
		}
		if to > max(from, until) {
			add(owner, max(from, until), to, false)
		}
	}
	end := func(r int32) int64 { return f.TS[r] + f.Dur[r] }
	popUntil := func(t int64) {
		for len(stack) > 0 && end(stack[len(stack)-1]) <= t {
			top := stack[len(stack)-1]
			if f.Dur[top] == 0 {
				atoms = append(atoms, ctdaAtom{cur, cur, top, true, false})
			}
			emit(top, cur, end(top))
			cur = max(cur, end(top))
			stack, busyUntil = stack[:len(stack)-1], busyUntil[:len(busyUntil)-1]
		}
	}
	for _, r := range rows {
		popUntil(f.TS[r])
		if len(stack) > 0 {
			emit(stack[len(stack)-1], cur, f.TS[r])
		}
		cur = f.TS[r]
		phase[r] = phaseOf[f.Name[r]]
		if phase[r] < 0 && len(stack) > 0 {
			phase[r] = phase[stack[len(stack)-1]]
		}
		inEngine[r] = isEngine[f.Name[r]] || len(stack) > 0 && inEngine[stack[len(stack)-1]]
		until := int64(-1)
		if len(busyUntil) > 0 {
			until = busyUntil[len(busyUntil)-1]
		}
		if busy.cpuWork(f, r) {
			until = max(until, end(r))
		}
		stack, busyUntil = append(stack, r), append(busyUntil, until)
	}
	popUntil(1<<62 - 1)
	return atoms
}

// dropPreempted merges the atoms of a logical thread's threads into time order and drops the
// atoms of events another thread pre-empted: while the autograd thread runs, the main thread's
// run_backward only waits. Only busy atoms (cpu_op or runtime work) pre-empt: a logger thread's 2 µs
// Python frame does not. A Python frame or annotation pre-empts nothing and is pre-empted as soon as
// such work of another thread starts while it runs (## backward ## while the autograd thread works). A
// running op is pre-empted when the autograd engine's work (engine: an engine event or one inside it on
// its thread) runs whole inside it, since backward() waits for the engine: run_backward while the
// autograd thread works, even where the backward is GPU-bound and its ops take little of that time
// (run_backward stayed on the path, and the path went back in time to the autograd thread's work inside
// it). Other work pre-empts an op only when what started inside it takes more than half of its time: a
// pin-memory thread's 20 µs copy inside a 300 µs aten::linear runs beside it (dropping the linear for it
// took it off the path). Events for which keep holds are never pre-empted: a synchronisation call waits
// for the GPU with the GIL released, so another thread may run meanwhile (a logger thread woken during
// torch.cuda.synchronize()), and dropping the call would drop its synchronisation edges;
// a launch call is linked to its GPU work by the correlation id, and dropping it left that work without
// a launcher (a pin-memory thread's copy starting 2 µs into a 5 µs cudaLaunchKernel took 110 µs of
// the linear that launched a 600 µs gemm off the path).
func dropPreempted(atoms []ctdaAtom, tid []int32, threads int, keep, engine func(row int32) bool) ([]ctdaAtom, []int32) {
	// Each thread's atoms are in time order and do not overlap.
	byThread := make([][]int32, threads)
	for i := range atoms {
		byThread[tid[i]] = append(byThread[tid[i]], int32(i))
	}
	waiting := map[int32]bool{}
	taken := map[int32]int64{} // busy rows: time of other threads' busy atoms that started inside them
	for t := range threads {
		type work struct {
			start, end int64
			engine     bool // the autograd engine's
		}
		var others []work // other threads' busy atoms, by start
		for u := range threads {
			if u == t {
				continue
			}
			for _, i := range byThread[u] {
				if atoms[i].busy {
					others = append(others, work{atoms[i].start, atoms[i].end, engine(atoms[i].row)})
				}
			}
		}
		if len(others) == 0 {
			continue
		}
		slices.SortFunc(others, func(a, b work) int { return cmp.Compare(a.start, b.start) })
		for _, i := range byThread[t] {
			a := atoms[i]
			k, _ := slices.BinarySearchFunc(others, a.start, func(w work, t int64) int { return cmp.Compare(w.start, t) })
			if k == len(others) || others[k].start >= a.end || keep(a.row) {
				continue
			}
			if !a.busy {
				waiting[a.row] = true
				continue
			}
			for ; k < len(others) && others[k].start < a.end; k++ {
				taken[a.row] += min(a.end, others[k].end) - others[k].start
				if others[k].engine && !engine(a.row) && others[k].end <= a.end {
					// its caller waits for the engine: backward() returns when it is done (the engine's own
					// work on two threads, AccumulateGrad and the ops under it on the caller's, runs side by
					// side, and a side thread's op that engine work only starts in runs beside it)
					waiting[a.row] = true
				}
			}
		}
	}
	if len(taken) > 0 {
		own := map[int32]int64{}
		for _, a := range atoms {
			if _, ok := taken[a.row]; ok && a.busy {
				own[a.row] += a.end - a.start
			}
		}
		for r, c := range taken {
			if 2*c > own[r] {
				waiting[r] = true
			}
		}
	}
	idx := make([]int32, len(atoms))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int { return cmp.Compare(atoms[a].start, atoms[b].start) })
	outA := make([]ctdaAtom, 0, len(atoms))
	outT := make([]int32, 0, len(atoms))
	for _, i := range idx {
		if !waiting[atoms[i].row] {
			outA, outT = append(outA, atoms[i]), append(outT, tid[i])
		}
	}
	return outA, outT
}

// effEnd is node u's effective end as seen by its successor v: a CPU node launching v ends at its
// first launch; a GPU node still running on v's stream when v started (their events interleave)
// ends, for v, with its last event that had ended by then (v waited for no more of it); otherwise
// its end.
func (c *CDG) effEnd(u, v int32) int64 {
	nu := c.Nodes[u]
	if v < 0 {
		return nu.End
	}
	nv := c.Nodes[v]
	if !nu.GPU && nv.GPU {
		return nu.FirstLaunchEnd
	}
	if nu.GPU && nv.GPU && nu.Pid == nv.Pid && nu.Stream == nv.Stream && nu.End > nv.Start {
		end := int64(-1)
		for _, r := range c.gpuRows[nu.first:nu.last] {
			if e := c.F.TS[r] + c.F.Dur[r]; e <= nv.Start {
				end = max(end, e)
			}
		}
		if end >= 0 {
			return end
		}
	}
	return nu.End
}

// syncSlack: a synchronisation that began at most this long after its GPU work ended still counts
// as having waited for it. The return from a blocking call (a copy from pageable memory that waited
// for the stream) and the Python between it and the next call take microseconds; the Triton
// example's sync that began 158 µs after its kernel ended did not wait.
const syncSlack = 10_000

// blockingFrames are the Python functions that ran with nothing profiled beneath them (a logger's
// flush, a DataLoader's resize): their atoms are all of their time. Such a frame is work where it
// ends a step as where it sits between ops (review r75 #4: at the step's end the path stopped at the
// last op before it). The profiler's own frames are not the job's work.
func (c *CDG) blockingFrames() map[int32]bool {
	own := map[int32]int64{}
	for _, a := range c.atoms {
		if !a.busy && !a.cut && c.F.Syms[c.F.Cat[a.row]] == "python_function" {
			own[a.row] += a.end - a.start
		}
	}
	blocking := map[int32]bool{}
	for r, t := range own {
		if t > 0 && t == c.F.Dur[r] && !strings.Contains(c.F.Syms[c.F.Name[r]], "torch/profiler/") {
			blocking[r] = true
		}
	}
	return blocking
}

// backtrack walks Algorithm 1 from the latest-ending node and fills Path and Counted.
func (c *CDG) backtrack() {
	if len(c.Nodes) == 0 {
		return
	}
	// The start: the node whose work ends last. A CPU node's work ends with its last cpu_op or
	// runtime event, or with a blocking Python function (blockingFrames): other Python frames or
	// annotations after it (the profiler's own step() frame, trailing the last step for as long as
	// the GPU takes to drain) are no work a path could end in. A node a synchronisation releases
	// has waited for the GPU until its start, so that is work too. When no CPU node has work, a CPU
	// node's end counts.
	workEnd := make([]int64, len(c.Nodes))
	anyWork := false
	blocking := c.blockingFrames()
	for v, nd := range c.Nodes {
		workEnd[v] = -1
		if nd.GPU {
			c.pieces(int32(v), func(_, e int64, _ int32, _ bool) { workEnd[v] = max(workEnd[v], e) })
		} else {
			// An atom cut at the window's end ends there, not with its event: what a node did inside the
			// window ended with its last uncut busy atom.
			for _, a := range c.atoms[nd.first:nd.last] {
				if (a.busy || blocking[a.row]) && !a.cut {
					workEnd[v] = max(workEnd[v], a.end)
				}
			}
		}
		if !nd.GPU {
			for _, e := range c.G.In(int32(v)) {
				if c.G.Type[e] == cdgSync {
					workEnd[v] = max(workEnd[v], nd.Start)
				}
			}
		}
		anyWork = anyWork || (!nd.GPU && workEnd[v] >= 0)
	}
	start := int32(-1)
	var bestCPU, bestGPU int32 = -1, -1
	candidate := c.startCandidates()
	// A node whose last event runs on past the window's end (another thread's, cut there) did not
	// end with the window: without work that ended inside it, it starts the path only when no other
	// CPU node can. (One with such work competes with that work's end: the annotation's own thread
	// can run on past the step too, a sglang decode step's Python frame, with 33 ms of calls inside.)
	cut := func(nd CDGNode) bool { return !nd.GPU && nd.last > nd.first && c.atoms[nd.last-1].cut }
	// CPU work of another thread (a C++ communication thread, a DataLoader worker process) that ends
	// after the window's own thread is done was waited for by nothing in the window: had the own
	// thread waited, its work would end later. Such a node starts the path only when the own thread
	// has no work; the GPU work it launched still competes (the GPU's end is the path's end).
	ownAny := slices.Contains(c.ownThread, true)
	for _, pass := range []struct{ ownOnly, allowCut bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
		if pass.ownOnly && !ownAny {
			continue
		}
		for v, nd := range c.Nodes {
			if (candidate != nil && !candidate[v]) || (cut(nd) && !pass.allowCut && workEnd[v] < 0) {
				continue
			}
			if nd.GPU {
				if bestGPU < 0 || nd.End > c.Nodes[bestGPU].End {
					bestGPU = int32(v)
				}
				continue
			}
			if pass.ownOnly && !c.ownThread[nd.logical] {
				continue
			}
			if !anyWork {
				workEnd[v] = nd.End
			}
			// Ties go to the later node (a thread's nodes are numbered in time order): the node a
			// synchronisation releases, not the one holding the call.
			if workEnd[v] >= 0 && (bestCPU < 0 || workEnd[v] >= workEnd[bestCPU]) {
				bestCPU = int32(v)
			}
		}
		if bestCPU >= 0 {
			break
		}
	}
	start = bestCPU
	if bestGPU >= 0 && (bestCPU < 0 || c.Nodes[bestGPU].End > workEnd[bestCPU]) {
		start = bestGPU
	}
	visited := make([]bool, len(c.Nodes))
	var rev []int32 // nodes, last first
	var revEdge []int32
	v, via := start, int32(-1)
	for v >= 0 && !visited[v] {
		visited[v] = true
		rev, revEdge = append(rev, v), append(revEdge, via)
		next, nextEdge := int32(-1), int32(-1)
		var nextEnd int64
		consider := func(e int32) {
			u := c.G.Src[e]
			if visited[u] {
				return
			}
			end := c.effEnd(u, v)
			if next < 0 || end > nextEnd || (end == nextEnd && c.Nodes[u].GPU && !c.Nodes[next].GPU) {
				next, nextEdge, nextEnd = u, e, end
			}
		}
		nd := c.Nodes[v]
		in := c.G.In(v)
		if !nd.GPU {
			// A synchronisation binds when its GPU work ended after the call began, give or take
			// syncSlack (it waited); then the path goes to that work, else it stays on the CPU. The
			// call is the thread's own, in the node before this one: the latest-ending CPU predecessor
			// can be another Python thread's node (a logger woken during the synchronisation, ending
			// after it returned), whose end said a synchronisation that waited 400 µs had not.
			for _, e := range in {
				if !c.Nodes[c.G.Src[e]].GPU {
					consider(e)
				}
			}
			cpu, cpuEdge := next, nextEdge
			next = -1
			for _, e := range in {
				if c.G.Type[e] == cdgSync {
					consider(e)
				}
			}
			waitFrom := nd.releasedFrom
			if waitFrom < 0 && cpu >= 0 {
				waitFrom = c.Nodes[cpu].waitFrom
			}
			if next < 0 || (cpu >= 0 && nextEnd <= waitFrom-syncSlack) {
				next, nextEdge = cpu, cpuEdge
			}
		} else {
			for _, e := range in {
				consider(e)
			}
		}
		v, via = next, nextEdge
	}
	// Forward order; counted segments.
	c.Path = make([]PathStep, len(rev))
	prevEff := c.WindowStart
	for i := range rev {
		k := len(rev) - 1 - i
		node := rev[k]
		step := PathStep{Node: node, Edge: -1}
		if i > 0 {
			step.Edge = revEdge[k+1]
		}
		hi := c.Nodes[node].End
		if k > 0 {
			hi = c.effEnd(node, rev[k-1])
		} else if workEnd[node] >= 0 {
			// The path ends where the work it started from ended: Python frames or annotations
			// running on after it (the step's own annotation, to the window's end) are no work.
			hi = min(hi, workEnd[node])
		}
		lo := max(c.Nodes[node].Start, prevEff)
		if i > 0 {
			step.Gap = max(0, lo-prevEff)
		}
		step.Lo, step.Hi = lo, max(lo, hi)
		step.Counted = c.covered(node, step.Lo, step.Hi, nil)
		if c.Nodes[node].GPU {
			own, launcher, wlo, whi := c.gpuSpanParts(node, step.Lo, step.Hi)
			step.Launcher, step.Idle = launcher, step.Hi-step.Lo-own-launcher
			if launcher > 0 {
				step.LauncherNamed = c.namingRow(c.Nodes[c.Nodes[node].Launcher], wlo, whi)
			}
		}
		step.Named = c.Nodes[node].MainRow
		if step.Hi > step.Lo {
			step.Named = c.namingRow(c.Nodes[node], step.Lo, step.Hi)
		}
		c.Counted += step.Counted
		c.Path[i] = step
		prevEff = max(prevEff, hi)
	}
}

// startCandidates marks the nodes a path may start from; nil when any may. A thread that only
// calls the CUDA runtime or driver, launching nothing and running no operator, is a poller (NCCL's
// watchdog polling cudaEventQuery until the trace ends; hta/nccl_parser_config: one 601 ms node
// holding 146 µs of calls): its nodes connect to nothing else, so as the latest-ending node it
// would be the whole path. Such a group of nodes, connected to no GPU node and holding no other
// event, is left out. So is, in a window of annotation instances, every group that holds none of their
// threads, when one that does holds work: a pin-memory thread copying the next batch at the end of a
// step, ending last but waited for by nothing in the step, was the whole path (95 µs of a 1 ms step
// whose work covers 83 %).
func (c *CDG) startCandidates() []bool {
	parent := make([]int32, len(c.Nodes))
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(v int32) int32 {
		for parent[v] != v {
			parent[v] = parent[parent[v]]
			v = parent[v]
		}
		return v
	}
	for e := range c.G.Src {
		a, b := find(c.G.Src[e]), find(c.G.Dst[e])
		if a != b {
			parent[a] = b
		}
	}
	// Groups in order of preference: those holding the thread of the window's annotation (the step's
	// own thread and the threads joined to it) and some work (GPU work, an operator or runtime call),
	// then those holding GPU work or any event but runtime calls.
	type thread struct{ pid, tid int64 }
	stepThreads := map[thread]bool{}
	for _, r := range c.instances {
		if c.F.Stream[r] == -1 {
			stepThreads[thread{c.F.Pid[r], c.F.Tid[r]}] = true
		}
	}
	hasStep := make([]bool, len(c.Nodes))
	hasWork := make([]bool, len(c.Nodes))
	for v, nd := range c.Nodes {
		g := find(int32(v))
		if nd.GPU {
			hasWork[g] = true
			continue
		}
		if stepThreads[thread{nd.Pid, nd.Tid}] {
			hasStep[g] = true
		}
		for _, a := range c.atoms[nd.first:nd.last] {
			if a.busy {
				hasWork[g] = true
				break
			}
		}
	}
	tiers := []func(v int32, nd CDGNode) bool{
		func(v int32, nd CDGNode) bool { g := find(v); return hasStep[g] && hasWork[g] },
		func(v int32, nd CDGNode) bool {
			if nd.GPU {
				return true // (first/last index gpuRows)
			}
			for _, a := range c.atoms[nd.first:nd.last] {
				if !runtimeCat(c.F.Syms[c.F.Cat[a.row]]) {
					return true
				}
			}
			return false
		},
	}
	keep := make([]bool, len(c.Nodes))
	for _, in := range tiers {
		found := false
		for v, nd := range c.Nodes {
			if in(int32(v), nd) {
				keep[find(int32(v))], found = true, true
			}
		}
		if found {
			break
		}
	}
	out := make([]bool, len(c.Nodes))
	anyKept := false
	for v := range c.Nodes {
		out[v] = keep[find(int32(v))]
		anyKept = anyKept || out[v]
	}
	if !anyKept {
		return nil
	}
	return out
}

// covered returns the time in [lo, hi] the node's work covers, calling fn with each covered piece's
// owner row when fn is not nil. A CPU node and the GPU node it launched are one piece of work: a
// GPU node progresses as fast as its launcher issues work and the GPU runs it, and a CPU node that
// stalls between launches (the caching allocator, a hidden synchronisation) waits for its own GPU
// work; so either node's segment counts the union of both nodes' time. CPU time counts towards
// the total only inside cpu_op or runtime events (as the busy bound), while fn sees all of it.
// Overlaps count once.
//
// Where both sides are busy at once, fn sees the side that paces the pair at that instant. In a
// CPU node's segment that is the CPU: what follows it on the path waits for the thread. In a GPU
// node's segment the launcher paces it until the last kernel that had to wait for its launch call
// (paceFrom); every later kernel was already queued when the one before it ended, so from there the
// GPU paces it and the CPU work running meanwhile (launching what queues up) is off the path. The
// total does not depend on that choice.
func (c *CDG) covered(node int32, lo, hi int64, fn func(row int32, ns int64)) int64 {
	if hi <= lo {
		return 0
	}
	nd := c.Nodes[node]
	if !nd.GPU {
		return c.coveredPair(node, nd.Launched, lo, hi, fn)
	}
	mid := min(max(lo, c.paceFrom(node, hi)), hi)
	return c.coveredPair(nd.Launcher, node, lo, mid, fn) + c.coveredPair(node, nd.Launcher, mid, hi, fn)
}

// paceFrom is where the GPU takes over pacing GPU node g and its launcher in a segment ending at hi:
// the start of the last of g's events starting before hi that waited for its launch call (an event
// whose launch call was done before the node's previous event ended sat queued behind it instead), or
// g's start. Events after the segment do not count: a node whose launcher sent a second kernel 40 µs
// after the first had the first kernel's whole segment counted as the launcher's time.
func (c *CDG) paceFrom(g int32, hi int64) int64 {
	nd := c.Nodes[g]
	pace, prevEnd := nd.Start, int64(-1)
	// gpuRows are in start order within a node.
	for i, r := range c.gpuRows[nd.first:nd.last] {
		if c.F.TS[r] >= hi {
			break
		}
		if l := c.gpuLaunched[int(nd.first)+i]; i > 0 && l >= 0 && l > prevEnd {
			pace = c.F.TS[r]
		}
		prevEnd = max(prevEnd, c.F.TS[r]+c.F.Dur[r])
	}
	return pace
}

// coveredPair is covered over [lo, hi] for the pair (first, second): first's busy time, then
// second's where first is not busy, then (for fn) the non-busy CPU time where neither is busy.
// Either may be -1.
func (c *CDG) coveredPair(first, second int32, lo, hi int64, fn func(row int32, ns int64)) int64 {
	if hi <= lo {
		return 0
	}
	type iv struct{ s, e int64 }
	var taken []iv
	var total int64
	// take adds v's pieces of one kind (busy or not) outside the avoid intervals.
	take := func(v int32, wantBusy bool, avoid []iv) {
		if v < 0 {
			return
		}
		cursor, k := lo, 0
		c.pieces(v, func(s, e int64, r int32, busy bool) {
			if busy != wantBusy {
				return
			}
			s, e = max(s, lo, cursor), min(e, hi)
			for s < e {
				for k < len(avoid) && avoid[k].e <= s {
					k++
				}
				end := e
				if k < len(avoid) && avoid[k].s < e {
					if avoid[k].s <= s {
						s = avoid[k].e
						continue
					}
					end = avoid[k].s
				}
				if busy {
					total += end - s
				}
				if fn != nil {
					fn(r, end-s)
				}
				taken = append(taken, iv{s, end})
				s = end
			}
			cursor = max(cursor, e)
		})
	}
	// Busy time first (the pacing side's, then the other's), then, for attribution only, the
	// non-busy CPU time (Python frames, annotations) where neither is busy.
	sorted := func() []iv {
		out := slices.Clone(taken)
		slices.SortFunc(out, func(a, b iv) int { return cmp.Compare(a.s, b.s) })
		return out
	}
	take(first, true, nil)
	take(second, true, sorted())
	if fn != nil {
		busyTaken := sorted()
		take(first, false, busyTaken)
		take(second, false, busyTaken)
	}
	return total
}

// gpuSpanParts splits [lo, hi] of a GPU node's span: own, the time its events cover; launcher, the
// time of the gaps that waited for a launch (PathStep.Launcher), whose part the launcher was busy in
// lies in [wlo, whi].
func (c *CDG) gpuSpanParts(node int32, lo, hi int64) (own, launcher, wlo, whi int64) {
	nd := c.Nodes[node]
	type iv struct{ s, e int64 }
	var waits []iv // parts of the gaps between the node's events that waited for a launch call
	prevEnd := lo
	// gpuRows are in start order within a node.
	for i, r := range c.gpuRows[nd.first:nd.last] {
		if c.F.TS[r] >= hi {
			break // after the segment (cut by the next path node): neither its time nor its wait is in it
		}
		s, e := max(c.F.TS[r], lo), min(c.F.TS[r]+c.F.Dur[r], hi)
		if s > prevEnd {
			if l := c.gpuLaunched[int(nd.first)+i]; l > prevEnd {
				waits = append(waits, iv{prevEnd, min(l, s)})
			}
		}
		if e > max(s, prevEnd) {
			own += e - max(s, prevEnd)
		}
		prevEnd = max(prevEnd, e)
	}
	if len(waits) == 0 || nd.Launcher < 0 {
		return own, 0, 0, 0
	}
	// The stream waited for the host for the whole of each wait, inside the launcher's events or
	// between them (time the trace does not show: the Python between two launches), as the event-level
	// path's edges between the launcher's calls count it; [wlo, whi] is where the launcher was busy
	// (its events name the time), or the waits' extent when it never was.
	for _, w := range waits {
		launcher += w.e - w.s
	}
	k := 0
	wlo, whi = hi, lo
	c.pieces(nd.Launcher, func(s, e int64, _ int32, busy bool) {
		for busy && k < len(waits) && waits[k].e <= s {
			k++
		}
		for j := k; busy && j < len(waits) && waits[j].s < e; j++ {
			wlo, whi = min(wlo, max(s, waits[j].s)), max(whi, min(e, waits[j].e))
		}
	})
	if wlo >= whi {
		wlo, whi = waits[0].s, waits[len(waits)-1].e
	}
	return own, launcher, wlo, whi
}

// pieces calls fn with each time piece of a node (CPU atoms; GPU events) and whether it is busy.
func (c *CDG) pieces(node int32, fn func(start, end int64, row int32, busy bool)) {
	n := c.Nodes[node]
	if n.GPU {
		for _, r := range c.gpuRows[n.first:n.last] {
			fn(c.F.TS[r], c.F.TS[r]+c.F.Dur[r], r, true)
		}
		return
	}
	for _, a := range c.atoms[n.first:n.last] {
		fn(a.start, a.end, a.row, a.busy)
	}
}

// Hotspot is one event name's share of the critical path.
type Hotspot struct {
	Name, Cat string
	Dur       int64 // ns
}

// Hotspots groups the path's counted time by the owning event's name (innermost event for CPU
// time, the GPU event for GPU time), longest first.
//
// Two kinds of time are left out: synchronisation calls (their time is the GPU work they wait for,
// which the path attributes to that work when it matters) and the window's own annotation events
// (their self time is the step's unprofiled gaps, not an event's work); other events whose names
// hold the annotation pattern stay (an aten::forward_helper_op in a 'forward' window).
func (c *CDG) Hotspots() []Hotspot {
	type key struct{ name, cat int32 }
	skip := make([]bool, len(c.F.Syms))
	for i, s := range c.F.Syms {
		skip[i] = syncCall(s)
	}
	sums := map[key]int64{}
	for _, s := range c.Path {
		c.covered(s.Node, s.Lo, s.Hi, func(r int32, ns int64) {
			if !skip[c.F.Name[r]] && !c.ownAnnotation(r) {
				sums[key{c.F.Name[r], c.F.Cat[r]}] += ns
			}
		})
	}
	out := make([]Hotspot, 0, len(sums))
	for k, d := range sums {
		out = append(out, Hotspot{c.F.Syms[k.name], c.F.Syms[k.cat], d})
	}
	SortHotspots(out)
	return out
}

// ownAnnotation reports whether row r marks the window rather than doing work in it: one of the
// window's annotation instances (each of several spans part of the window only), or, in a window
// without them (an empty annotation: the whole trace), the profiler's step marker on a thread (its time
// with nothing beneath is the CPU idling between steps, not a hotspot).
func (c *CDG) ownAnnotation(r int32) bool {
	if len(c.instances) == 0 {
		return c.stepMarker[c.F.Name[r]] && c.F.Stream[r] < 0
	}
	_, found := slices.BinarySearch(c.instances, int(r))
	return found
}

// SortHotspots orders hotspots by duration, longest first, then by name.
func SortHotspots(h []Hotspot) {
	slices.SortFunc(h, func(a, b Hotspot) int {
		return cmp.Or(cmp.Compare(b.Dur, a.Dur), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Cat, b.Cat))
	})
}

// busyBound is the time covered by busy CPU events inside [ws, we] or GPU work inside [ws, spanEnd]
// (ns): CPU time after the window is not the window's (BuildCTDA cuts it), GPU work launched in it may
// finish later.
func busyBound(f *Frame, ws, we, spanEnd int64, busy busyKinds) int64 {
	type iv struct{ s, e int64 }
	var ivs []iv
	for r := range f.TS {
		if !busy.row(f, int32(r)) || f.Dur[r] <= 0 {
			continue
		}
		end := we
		if f.Stream[r] >= 0 {
			end = spanEnd
		}
		s, e := max(f.TS[r], ws), min(f.TS[r]+f.Dur[r], end)
		if e > s {
			ivs = append(ivs, iv{s, e})
		}
	}
	// Sorted in place by start (no index indirection: this runs over every event of the trace).
	slices.SortFunc(ivs, func(a, b iv) int { return cmp.Compare(a.s, b.s) })
	var total, cs, ce int64
	for i, v := range ivs {
		if i == 0 || v.s > ce {
			total += ce - cs
			cs, ce = v.s, v.e
			continue
		}
		ce = max(ce, v.e)
	}
	return total + ce - cs
}

// String describes the graph's size (for timing logs).
func (c *CDG) String() string {
	return fmt.Sprintf("CDG: %d nodes, %d edges, path %d nodes", len(c.Nodes), len(c.G.Src), len(c.Path))
}

// SpanBounder classifies the time of path nodes as HTA's bound_by buckets do: a CPU node in the
// DataLoad phase (or whose naming event matches a data-load pattern) is data_loading, other CPU
// nodes cpu_bound; a GPU node of collectives is gpu_communication_bound, else gpu_compute_bound.
// Names are classified once (an event-level path has millions of rows). Not safe for concurrent use.
type SpanBounder struct {
	c     *CDG
	names nameBounds
}

// namingRow is the event that names the span [lo, hi] of a node (the whole node: its MainRow). Of a
// CPU node:
// of the events starting in the node, the one that covers most of the span (the longer on a tie: the
// outer of nested events), else the owner of its first piece. An event that holds the whole window (its annotation, a whole-run
// range) names no node: it would name the window's first node after the window. Coverage, not
// length: a step's first node is its DataLoader call, not the 4 ms train_step frame that starts
// in the node's last 0.2 ms.
func (c *CDG) namingRow(nd CDGNode, lo, hi int64) int32 {
	f := c.F
	if nd.GPU {
		// A GPU node: its event covering most of the span (the first on a tie), not its first event,
		// a 0 µs kernel ahead of the 200 µs one.
		rows := c.gpuRows[nd.first:nd.last]
		best, bestIn := rows[0], int64(-1)
		for _, r := range rows {
			if in := max(0, min(f.TS[r]+f.Dur[r], hi)-max(f.TS[r], lo)); in > bestIn {
				best, bestIn = r, in
			}
		}
		return best
	}
	best, bestIn := c.atoms[nd.first].row, int64(-1)
	for _, a := range c.atoms[nd.first:nd.last] {
		r := a.row
		ts, end := f.TS[r], f.TS[r]+f.Dur[r]
		if ts < nd.Start || ts <= c.WindowStart && end >= c.WindowEnd || c.ownAnnotation(r) {
			continue
		}
		if in := max(0, min(end, hi)-max(ts, lo)); in > bestIn || in == bestIn && f.Dur[r] > f.Dur[best] {
			best, bestIn = r, in
		}
	}
	return best
}

// NewSpanBounder returns a SpanBounder for c's nodes under rules.
func (c *CDG) NewSpanBounder(rules BoundRules) *SpanBounder {
	return &SpanBounder{c: c, names: newNameBounds(rules, c.F.Syms)}
}

// BoundBy is the bucket of node's time.
func (b *SpanBounder) BoundBy(node int32) string {
	return b.BoundByNamed(node, b.c.Nodes[node].MainRow)
}

// BoundByNamed is the bucket of the time of node's span named by the frame row named
// (PathStep.Named).
func (b *SpanBounder) BoundByNamed(node, named int32) string {
	nd := b.c.Nodes[node]
	if !nd.GPU && nd.Phase == "DataLoad" {
		return BoundDataLoading
	}
	return b.names.of(b.c.F.Name[named], !nd.GPU)
}

// unplacedWaitSlack: a launch whose work started later than this after the call, on a stream that
// waited for an event the trace does not place, was held by that wait: no launch takes so long on an
// idle stream (HTA flags launch delays over 100 µs as outliers), while an awaited event recorded on a
// stream or process the trace does not show can hold the stream for as long as it likes (a sglang
// decode step's stream waits 463 ms).
const unplacedWaitSlack = 100_000

// EdgeBoundBy classifies the waiting time an edge explains, on the timeline of the node it enters:
// launch delay for call edges, unless the stream waited for an event the trace does not place and the
// work started over unplacedWaitSlack after its launch; kernel gaps for stream order and for the other
// dependencies into a GPU node (a stream waiting on another stream's event); untraced CPU time (Python
// between ops, a GIL hand-over, the return from a synchronisation) for the other dependencies into a
// CPU node. HTA leaves dependency and sync edges unclassified (""), but there they weigh nothing; here
// they carry the gaps between nodes, which a summary must not hide in an unnamed bucket.
func (c *CDG) EdgeBoundBy(e int32) string {
	switch c.G.Type[e] {
	case cdgCall:
		if dst := c.G.Dst[e]; c.Nodes[dst].waitUnplaced && c.Nodes[dst].Start-c.effEnd(c.G.Src[e], dst) > unplacedWaitSlack {
			return BoundKernelKernel
		}
		return BoundLaunch
	case cdgStreamOrder:
		return BoundKernelKernel
	}
	if c.Nodes[c.G.Dst[e]].GPU {
		return BoundKernelKernel
	}
	return BoundCPU
}

// SpanEnd is the end of HTA's analysed span, as BuildCTDA's: the window's end or the end of the last
// GPU work launched in it (it may finish after the window) by a call that started in [start, end),
// BuildCTDA's half-open window. CPU events do not stretch it, as they do not BuildCTDA's: one that
// starts in the window and outlives it is another thread's (a Python thread blocked in a wait), and
// its time after the window is not the step's. Clipped rows that are not work do not stretch it
// either: a gpu_user_annotation (stream -1 in the frame) and HTA's Stream Wait Event rows, which are
// clipped wherever they are in the trace.
func (g *CPGraph) SpanEnd() int64 {
	f := g.Source
	gpuWork := make([]int8, len(f.Syms)) // per category symbol: 0 unknown, 1 GPU work, 2 not
	end := g.WindowEnd
	launchTS := map[int64]int64{} // clipped CPU rows by event index: a launcher outside them was not in the window
	for _, r := range g.Clipped {
		if f.Stream[r] == -1 {
			launchTS[f.EvIdx[r]] = f.TS[r]
		}
	}
	for _, r := range g.Clipped {
		c := f.Cat[r]
		if gpuWork[c] == 0 {
			gpuWork[c] = 2
			if ctdaGPUWork(f.Syms[c]) {
				gpuWork[c] = 1
			}
		}
		if f.Stream[r] != -1 && gpuWork[c] == 1 {
			if ts, ok := launchTS[f.IndexCorr[r]]; ok && f.IndexCorr[r] > 0 && ts >= g.WindowStart && (ts < g.WindowEnd || g.WindowStart == g.WindowEnd) {
				end = max(end, f.TS[r]+f.Dur[r])
			}
		}
	}
	return end
}

// BusyBoundOf is the busy bound of the window [ws, we] analysed up to spanEnd on f (ns): the time
// covered by cpu_op and runtime/driver events up to we and by GPU work up to spanEnd, which no
// critical path can exceed.
func BusyBoundOf(f *Frame, ws, we, spanEnd int64) int64 {
	return busyBound(f, ws, we, spanEnd, newBusyKinds(f))
}

// BusyRow reports whether row r is an event the busy bound counts: a cpu_op or runtime/driver event
// on a thread, or GPU work on a stream; never the profiler's step marker.
func BusyRow(f *Frame, r int32) bool {
	c := f.Syms[f.Cat[r]]
	return ctdaBusyCat(c) && !StepMarker(f.Syms[f.Name[r]]) || (f.Stream[r] >= 0 && ctdaGPUWork(c))
}

// StepMarker reports whether an event name is the profiler's step marker, ProfilerStep#N: an
// annotation whatever its category. 2021-era Kineto wrote every record_function, this one too, in
// category Operator (kineto/resnet50_num_workers_0), which made the step's unprofiled gaps look like
// an operator's work: hta's CPCR counted 6.9 ms of a 188 ms step in ProfilerStep#5's self time, and
// the busy bound was 1.000 over the whole trace.
func StepMarker(name string) bool { return strings.HasPrefix(name, "ProfilerStep#") }

// busyKinds is, per symbol, what BusyRow tells per row: busy CPU categories, GPU work categories and
// step marker names.
type busyKinds struct{ cpu, gpu, marker []bool }

func newBusyKinds(f *Frame) busyKinds {
	b := busyKinds{make([]bool, len(f.Syms)), make([]bool, len(f.Syms)), make([]bool, len(f.Syms))}
	for i, s := range f.Syms {
		b.cpu[i], b.gpu[i], b.marker[i] = ctdaBusyCat(s), ctdaGPUWork(s), StepMarker(s)
	}
	return b
}

// cpuWork: row r is a busy CPU event (not the step marker).
func (b busyKinds) cpuWork(f *Frame, r int32) bool { return b.cpu[f.Cat[r]] && !b.marker[f.Name[r]] }

// row is BusyRow.
func (b busyKinds) row(f *Frame, r int32) bool {
	return b.cpuWork(f, r) || f.Stream[r] >= 0 && b.gpu[f.Cat[r]]
}
