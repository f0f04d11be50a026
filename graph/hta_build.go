package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Edge types, numbered as stored in Graph.Type. Names are HTA's (EdgeTypeName).
const (
	EdgeOperator       uint8 = iota // critical_path_operator: span of an op/kernel, or time between nested op nodes
	EdgeDependency                  // critical_path_dependency: zero-weight ordering
	EdgeLaunchDelay                 // critical_path_kernel_launch_delay: launch start → kernel start
	EdgeKernelKernel                // critical_path_kernel_kernel_delay: previous kernel end → kernel start
	EdgeSyncDependency              // critical_path_sync_dependency: GPU → CPU or GPU → GPU synchronisation
	EdgeCrossThread                 // critical_path_cross_thread (CTDA)
	edgeTypeCount
)

var edgeTypeNames = [...]string{"critical_path_operator", "critical_path_dependency",
	"critical_path_kernel_launch_delay", "critical_path_kernel_kernel_delay",
	"critical_path_sync_dependency", "critical_path_cross_thread"}

// EdgeTypeName returns HTA's name of an edge type.
func EdgeTypeName(t uint8) string {
	if int(t) < len(edgeTypeNames) {
		return edgeTypeNames[t]
	}
	return fmt.Sprintf("edge_type_%d", t)
}

// Frame is one rank's HTA frame (tracesql's hta_frame rows) in columns, sorted by EvIdx. Times are
// ns. Names and categories are ids into Syms.
type Frame struct {
	EvIdx     []int64
	Cat       []int32
	Name      []int32
	Pid       []int64
	Tid       []int64
	TS        []int64
	Dur       []int64
	Stream    []int64
	Corr      []int64
	IndexCorr []int64
	// WaitOnStream / WaitOnCorr: args wait_on_stream and wait_on_cuda_event_record_corr_id, -1 when absent.
	WaitOnStream []int64
	WaitOnCorr   []int64
	Syms         []string
}

// Len is the number of rows.
func (f *Frame) Len() int { return len(f.EvIdx) }

// Interner assigns symbol ids to strings while a Frame is filled.
type Interner struct {
	ids  map[string]int32
	Syms []string
}

// Intern returns the id of s.
func (in *Interner) Intern(s string) int32 {
	if in.ids == nil {
		in.ids = map[string]int32{}
	}
	if id, ok := in.ids[s]; ok {
		return id
	}
	id := int32(len(in.Syms))
	in.ids[s] = id
	in.Syms = append(in.Syms, s)
	return id
}

// Options are HTA's critical_path_analysis parameters.
type Options struct {
	Annotation  string // substring of the window annotation's name; "" = whole trace
	Instance    int    // first matching annotation instance (0-based, file order; CPU ones only unless Compat)
	InstanceEnd int    // last instance, inclusive; < 0 = Instance
	// DataLoadEvents: name substrings whose events get nodes and whose CPU time is "data_loading".
	DataLoadEvents []string
	// ZeroWeightLaunchEdges: HTA's CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE.
	ZeroWeightLaunchEdges bool
	// StreamOrderEdges (not HTA's; for what-if): a zero-weight edge from the end of the previous kernel on
	// the stream to each kernel that has no edge from it. HTA links a kernel to its launch call or to the
	// kernel before it, whichever held it back; with weights changed the other one can, and without its
	// edge a lengthened kernel overlapped the next on its own stream.
	StreamOrderEdges bool
	// StrictNegativeWeights: HTA's CRITICAL_PATH_STRICT_NEGATIVE_WEIGHT_CHECKS: weights below -1 µs fail.
	StrictNegativeWeights bool
	// Compat: the frame is HTA's (µs-rounded) and HTA's -1 µs tolerance applies exactly; otherwise
	// every negative weight (ns) is clamped to 0 in the graph.
	Compat bool
}

// Errors callers can test for.
var (
	ErrAnnotationNotFound = errors.New("annotation not found")
	ErrInstanceRange      = errors.New("instance out of range")
	ErrEmptyWindow        = errors.New("empty window")
	ErrInvalidGraph       = errors.New("critical path graph is invalid")
)

// kernelKernelDelayThreshold: HTA counts a gap between consecutive kernels on a stream as a
// kernel-kernel delay only below 1500 µs.
const kernelKernelDelayThreshold = 1_500_000

// CPGraph is HTA's critical-path graph of one window of one rank.
type CPGraph struct {
	F *Frame
	// Source: the frame as given; F differs from it when default mode clipped CPU events that
	// outlive their parent (nestCPULanes). The busy bound is measured on Source, as ctda's is.
	Source      *Frame
	WindowStart int64 // ns
	WindowEnd   int64
	Clipped     []int32 // frame rows in the window (ascending)
	clippedSet  []bool
	// waitedCopy: by default, the asynchronous copy calls that waited for their copy (waitedForCopy): the
	// thread waited for the GPU inside them (per frame row; nil none).
	waitedCopy []bool

	// Nodes: NodeRow = frame row of the event, NodeTS ns, NodeStart = start node of its event.
	NodeRow   []int32
	NodeTS    []int64
	NodeStart []bool
	startNode []int32 // per frame row, -1 none
	endNode   []int32

	G *Graph
	// GW: the weights the longest path uses (negative weights clamped as HTA's validation does);
	// G.W keeps the edge's own weight (HTA's CPEdge.weight), used by the breakdown.
	GW []int64
	// Attr: per edge, the frame row the edge's time is attributed to (-1 none), for operator and
	// kernel-kernel edges (HTA's edge_to_event_map; it survives a later overwrite of the edge).
	Attr []int32

	Path Path
	opts Options
}

// EvIdx returns the event index of a frame row (-1 for -1).
func (g *CPGraph) EvIdx(row int32) int64 {
	if row < 0 {
		return -1
	}
	return g.F.EvIdx[row]
}

var cudaRuntimeLockNames = map[string]bool{"cudaHostAlloc": true, "cudaLaunchKernel": true, "cudaMemcpyAsync": true}

var blockingNames = map[string]bool{"cudaDeviceSynchronize": true, "cudaStreamSynchronize": true,
	"cudaEventQuery": true, "cudaEventSynchronize": true, "cudaMemcpy": true, "cudaMemcpyAsync": true}

var launchNames = map[string]bool{"cudaLaunchKernel": true, "cudaLaunchKernelExC": true, "cuLaunchKernel": true,
	"cuLaunchKernelEx": true, "cudaMemcpyAsync": true, "cudaMemsetAsync": true,
	"runFunction - job_prep_and_submit_for_execution": true, "hipLaunchKernel": true,
	"hipExtModuleLaunchKernel": true, "hipMemsetAsync": true, "hipMemcpyAsync": true, "hipMemcpyWithStream": true}

// nodeCats are the categories of the CPU events that become graph nodes: HTA's three, and outside compat mode
// also the 2021 profiler's spellings of two of them (Operator, Runtime), which HTA does not know, so that its
// graph of such a trace held GPU work alone.
func nodeCats(compat bool) map[string]bool {
	return map[string]bool{"cpu_op": true, "cuda_runtime": true, "cuda_driver": true, "Operator": !compat, "Runtime": !compat}
}

// symSet returns, per symbol id, whether the symbol is in names.
func symSet(syms []string, names map[string]bool) []bool {
	out := make([]bool, len(syms))
	for i, s := range syms {
		out[i] = names[s]
	}
	return out
}

func symID(syms []string, s string) int32 {
	for i, x := range syms {
		if x == s {
			return int32(i)
		}
	}
	return -2
}

// BuildHTA builds HTA 0.6.1's critical-path graph for a window of f and computes its longest path.
func BuildHTA(ctx context.Context, f *Frame, o Options) (*CPGraph, error) {
	g := &CPGraph{F: f, Source: f, opts: o}
	n := f.Len()
	// Row of an event index.
	var maxIdx int64 = -1
	for _, e := range f.EvIdx {
		if e > maxIdx {
			maxIdx = e
		}
	}
	rowOf := make([]int32, maxIdx+2)
	for i := range rowOf {
		rowOf[i] = -1
	}
	for r, e := range f.EvIdx {
		rowOf[e] = int32(r)
	}
	row := func(ev int64) int32 {
		if ev < 0 || ev > maxIdx {
			return -1
		}
		return rowOf[ev]
	}

	// 1. Window.
	if err := g.window(); err != nil {
		return nil, err
	}
	// 2. Clip: CPU rows starting in the window with dur > 0; GPU rows whose launching CPU row does;
	// every Stream Wait Event.
	start, end := g.WindowStart, g.WindowEnd
	g.clippedSet = make([]bool, n)
	swe := symID(f.Syms, "Stream Wait Event")
	isLaunchCall := symSet(f.Syms, launchNames)
	// By default a launch call of zero duration (a sub-µs call in a trace of whole µs) comes in too, with
	// the GPU work it launched: HTA leaves both out, so a 200 µs kernel the CPU then waited for was no
	// part of the graph and the path was the 20 µs of CPU time around it.
	// linked is the row an event's index_correlation names. By default an index_correlation of 0 names
	// none (the partner is not in the trace: a kernel launched before profiling began), as in ctda; HTA
	// takes it for event 0, so such a kernel came into any window holding the file's first event, with
	// a launch edge from that event 13 ms back in time (param/dlrm_kineto_8ranks rank 1).
	linked := func(r int) int32 {
		if !o.Compat && f.IndexCorr[r] == 0 {
			return -1
		}
		return row(f.IndexCorr[r])
	}
	zeroLaunch := func(r int) bool {
		if o.Compat || f.Dur[r] != 0 || !isLaunchCall[f.Name[r]] {
			return false
		}
		ic := linked(r)
		return ic >= 0 && f.Stream[ic] != -1
	}
	// By default the window is half-open, as its CPU time (nestCPULanes cuts at its end) and CPCR's span: a
	// call at the very instant the next step starts is the next step's (HTA takes it, and the 2 ms kernel it
	// launched made a path twice the window).
	inWindow := func(r int) bool { return f.TS[r] >= start && (f.TS[r] < end || o.Compat && f.TS[r] == end) }
	for r := 0; r < n; r++ {
		if f.Stream[r] == -1 && inWindow(r) && (f.Dur[r] > 0 || zeroLaunch(r)) {
			g.clippedSet[r] = true
			if ic := linked(r); ic >= 0 && f.Stream[ic] != -1 {
				g.clippedSet[ic] = true
			}
		}
		if f.Stream[r] != -1 && f.Name[r] == swe {
			g.clippedSet[r] = true
		}
	}
	if !o.Compat {
		// A CUDA/HIP graph launch replays many kernels under one correlation, and its
		// index_correlation names one of them: every GPU row it launched comes in.
		for r := 0; r < n; r++ {
			if f.Stream[r] != -1 && !g.clippedSet[r] {
				if l := linked(r); l >= 0 && f.Stream[l] == -1 && g.clippedSet[l] {
					g.clippedSet[r] = true
				}
			}
		}
	}
	for r := 0; r < n; r++ {
		if g.clippedSet[r] {
			g.Clipped = append(g.Clipped, int32(r))
		}
	}

	if !o.Compat {
		for _, r := range g.Clipped {
			if ic := linked(int(r)); ic >= 0 && f.Stream[r] == -1 && f.Stream[ic] != -1 && waitedForCopy(f, r, ic) {
				if g.waitedCopy == nil {
					g.waitedCopy = make([]bool, n)
				}
				g.waitedCopy[r] = true
			}
		}
		f = nestCPULanes(f, g.Clipped, g.WindowEnd)
		f = serialGPULanes(f, g.Clipped)
		g.F = f
	}

	// 3. Nodes.
	isNodeCat := symSet(f.Syms, nodeCats(o.Compat))
	isDataLoad := make([]bool, len(f.Syms))
	for i, s := range f.Syms {
		for _, p := range o.DataLoadEvents {
			if strings.Contains(s, p) {
				isDataLoad[i] = true
			}
		}
	}
	// Node keys: (ts, row<<1 | isEnd), 16 bytes. Rows are in ev_idx order, so this sorts by
	// (ts, ev_idx) with a zero-length event's start before its end, which is what HTA's stable sort
	// of starts-then-ends gives.
	type nodeKey struct {
		ts     int64
		rowEnd uint32
	}
	keys := make([]nodeKey, 0, 2*len(g.Clipped))
	for _, r := range g.Clipped {
		if isNodeCat[f.Cat[r]] || isDataLoad[f.Name[r]] || (f.Stream[r] != -1 && f.IndexCorr[r] >= 0) {
			keys = append(keys, nodeKey{f.TS[r], uint32(r) << 1})
		}
	}
	nev := len(keys)
	if nev == 0 && !o.Compat {
		// Window found work in it, but none that hta builds on: GPU work launched before the window, or
		// CPU events of zero duration, which HTA leaves out (HTA: an empty result, which read as a path
		// of length 0).
		gpu := false
		for r := range f.TS {
			gpu = gpu || (f.Stream[r] != -1 && f.TS[r] < g.WindowEnd && f.TS[r]+f.Dur[r] > g.WindowStart)
		}
		if !gpu {
			return nil, fmt.Errorf("%w: instance %d of %q holds no operator or runtime call of non-zero duration that starts in it (the graph leaves zero-length events out, as HTA)", ErrEmptyWindow, o.Instance, o.Annotation)
		}
		return nil, fmt.Errorf("%w: instance %d of %q holds no operator or runtime call that starts in it, only GPU work launched before it; the hta algorithm follows CPU operators (algorithm := 'ctda' takes such work)", ErrEmptyWindow, o.Instance, o.Annotation)
	}
	for i := 0; i < nev; i++ {
		r := keys[i].rowEnd >> 1
		keys = append(keys, nodeKey{keys[i].ts + f.Dur[r], r<<1 | 1})
	}
	slices.SortFunc(keys, func(a, b nodeKey) int {
		if a.ts != b.ts {
			return cmp.Compare(a.ts, b.ts)
		}
		return cmp.Compare(a.rowEnd, b.rowEnd)
	})
	nn := len(keys)
	g.NodeRow = make([]int32, nn)
	g.NodeTS = make([]int64, nn)
	g.NodeStart = make([]bool, nn)
	g.startNode = make([]int32, n)
	g.endNode = make([]int32, n)
	for i := range g.startNode {
		g.startNode[i], g.endNode[i] = -1, -1
	}
	for i, k := range keys {
		row, start := int32(k.rowEnd>>1), k.rowEnd&1 == 0
		g.NodeRow[i], g.NodeTS[i], g.NodeStart[i] = row, k.ts, start
		if start {
			g.startNode[row] = int32(i)
		} else {
			g.endNode[row] = int32(i)
		}
	}
	keys = nil
	isBlocking := symSet(f.Syms, blockingNames)
	isLock := symSet(f.Syms, cudaRuntimeLockNames)

	b := NewBuilder(nn, 3*nn/2)
	attr := make([]int32, 0, 3*nn/2)
	addEdge := func(u, v int32, t uint8, zero bool) int32 {
		var w int64
		if !(t == EdgeDependency || t == EdgeSyncDependency || zero) {
			w = g.NodeTS[v] - g.NodeTS[u]
		}
		id, replaced := b.AddEdge(u, v, w, t)
		if !replaced {
			attr = append(attr, -1)
		}
		return id
	}
	attribute := func(id int32, srcParent int32) {
		t := b.typ[id]
		if t != EdgeOperator && t != EdgeKernelKernel {
			return
		}
		u, v := b.src[id], b.dst[id]
		switch {
		case t == EdgeKernelKernel || g.NodeStart[u]:
			attr[id] = g.NodeRow[u]
		case !g.NodeStart[v]:
			attr[id] = g.NodeRow[v]
		default:
			attr[id] = srcParent
		}
	}
	lockNode := func(v int32) bool { return isLock[f.Name[g.NodeRow[v]]] }

	// (a) CUDA runtime lock across threads.
	{
		var walk []int32
		for v := int32(0); v < int32(nn); v++ {
			if lockNode(v) {
				walk = append(walk, v)
			}
		}
		if !o.Compat {
			// The lock is a process's, and a call that starts at the instant another ends took it over:
			// walked per process, ends before starts at one time. HTA walks every process in (ts, file
			// order), so a worker process's call took a launch's span away, and whether a hand-off at an
			// integer µs did depended on which call the file lists first.
			rank := func(v int32) int {
				switch r := g.NodeRow[v]; {
				case !g.NodeStart[v] && f.Dur[r] > 0:
					return 0
				case g.NodeStart[v]:
					return 1
				}
				return 2 // a zero-length call's end, after its own start
			}
			slices.SortStableFunc(walk, func(a, b int32) int {
				return cmp.Or(cmp.Compare(f.Pid[g.NodeRow[a]], f.Pid[g.NodeRow[b]]), cmp.Compare(g.NodeTS[a], g.NodeTS[b]),
					cmp.Compare(rank(a), rank(b)))
			})
		}
		var pending []int32
		last := int32(-1)
		for i, v := range walk {
			if i > 0 && f.Pid[g.NodeRow[v]] != f.Pid[g.NodeRow[walk[i-1]]] {
				pending, last = pending[:0], -1
			}
			if g.NodeStart[v] {
				pending = append(pending, v)
			} else {
				for len(pending) > 0 {
					p := pending[len(pending)-1]
					pending = pending[:len(pending)-1]
					if r := g.NodeRow[p]; r == g.NodeRow[v] {
						// a copy call that waited for its copy weighs nothing, as other blocking calls:
						// the wait is the GPU's (its sync edge, in kernels)
						id := addEdge(p, v, EdgeOperator, g.waitedCopy != nil && g.waitedCopy[r])
						attribute(id, g.NodeRow[v])
					} else {
						addEdge(p, v, EdgeDependency, false)
					}
				}
				if last >= 0 && !g.NodeStart[last] {
					addEdge(last, v, EdgeDependency, false)
				}
			}
			last = v
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// (b) Call stacks per CPU thread.
	g.callStacks(isLock, isBlocking, addEdge, attribute)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// (c) GPU kernels and synchronisation.
	if err := g.kernels(row, addEdge, attribute, b); err != nil {
		return nil, err
	}

	g.G = b.Build()
	g.Attr = attr
	if err := g.validate(); err != nil {
		return nil, err
	}
	p, err := g.G.LongestPath(ctx, g.GW)
	if err != nil {
		if errors.Is(err, ErrCycle) {
			return nil, fmt.Errorf("%w: %v", ErrInvalidGraph, err)
		}
		return nil, err
	}
	g.Path = p
	return g, nil
}

func (g *CPGraph) window() error {
	var err error
	g.WindowStart, g.WindowEnd, err = Window(g.F, g.opts)
	return err
}

// Window returns the analysed time range [start, end] (ns) of options o on frame f: the span of
// annotation instances o.Instance..o.InstanceEnd (file order), or the whole trace when o.Annotation
// is empty. Both critical-path algorithms use it.
func Window(f *Frame, o Options) (start, end int64, err error) {
	start, end, _, err = windowOf(f, o, !o.Compat)
	return start, end, err
}

// windowOf is Window, also returning the frame rows of the instances that make the window (none for
// the whole trace). checkEmpty: a window of 0 ns, or with no work in it, is an error (ErrEmptyWindow),
// as it has no path: hta returned no rows, ctda a path of the annotation alone, and a 0 ns window a path
// longer than the window. HTA's algorithm in compat mode skips the check, as HTA; ctda, which HTA does not
// have, always checks.
func windowOf(f *Frame, o Options, checkEmpty bool) (start, end int64, instances []int, err error) {
	if o.Annotation == "" {
		// The whole trace is one window: another instance was silently the same one (HTA ignores it:
		// compat keeps that).
		if !o.Compat && (o.Instance != 0 || o.InstanceEnd > 0) {
			return 0, 0, nil, fmt.Errorf("%w: annotation '' is the whole trace, instance 0 only (instance %d, instance_end %d)", ErrInstanceRange, o.Instance, o.InstanceEnd)
		}
		if f.Len() == 0 {
			return 0, 0, nil, fmt.Errorf("%w: the rank has no events", ErrAnnotationNotFound)
		}
		start, end = math.MaxInt64, math.MinInt64
		for r := range f.TS {
			start = min(start, f.TS[r])
			end = max(end, f.TS[r]+f.Dur[r])
		}
		if checkEmpty {
			if err := windowHoldsWork(f, start, end, "the whole trace"); err != nil {
				return 0, 0, nil, err
			}
		}
		return start, end, nil, nil
	}
	match := make([]bool, len(f.Syms))
	for i, s := range f.Syms {
		match[i] = strings.Contains(s, o.Annotation)
	}
	var rows []int
	for r := range f.Name {
		if match[f.Name[r]] {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return 0, 0, nil, fmt.Errorf("%w: no event name contains %q (annotation := '' analyses the whole trace)", ErrAnnotationNotFound, o.Annotation)
	}
	if !o.Compat {
		// Kineto copies each ProfilerStep (any user annotation) onto the GPU timeline; HTA counts those
		// copies as instances too, so that instance i of n steps is sometimes a GPU copy, whose window
		// launches nothing. Count the CPU annotations, which are the steps, when there are any.
		// A copy is on a stream, or (PyTorch 2.11 writes no stream arg for them) has category
		// gpu_user_annotation.
		// Without CPU ones (a GPU-only trace), the GPU annotations; never a kernel or copy, whose span
		// is no step (a kernel name matched and gave a window of GPU time unrelated to the CPU work in it).
		var cpu, gpuAnn []int
		for _, r := range rows {
			switch {
			case f.Syms[f.Cat[r]] == "gpu_user_annotation":
				gpuAnn = append(gpuAnn, r)
			case f.Stream[r] == -1:
				cpu = append(cpu, r)
			}
		}
		switch {
		case len(cpu) > 0:
			rows = cpu
		case len(gpuAnn) > 0:
			rows = gpuAnn
		default:
			return 0, 0, nil, fmt.Errorf("%w: only GPU work (%s, …) has a name containing %q; a window is the span of a CPU or GPU annotation", ErrAnnotationNotFound, f.Syms[f.Name[rows[0]]], o.Annotation)
		}
	}
	a, b := o.Instance, o.InstanceEnd
	if b < 0 {
		b = a
	}
	switch {
	case a < 0:
		return 0, 0, nil, fmt.Errorf("%w: instance must be 0 or more (the first %q), not %d", ErrInstanceRange, o.Annotation, a)
	case b < a:
		return 0, 0, nil, fmt.Errorf("%w: instance_end %d is before instance %d", ErrInstanceRange, b, a)
	}
	if a < 0 || a >= len(rows) || b < a || b >= len(rows) {
		return 0, 0, nil, fmt.Errorf("%w: instance %d..%d of %q requested, the rank has %d (0..%d)", ErrInstanceRange, a, b, o.Annotation, len(rows), len(rows)-1)
	}
	start, end = math.MaxInt64, math.MinInt64
	for _, r := range rows[a : b+1] {
		start = min(start, f.TS[r])
		end = max(end, f.TS[r]+f.Dur[r])
	}
	if checkEmpty {
		if err := windowHoldsWork(f, start, end, fmt.Sprintf("instance %d of %q", a, o.Annotation)); err != nil {
			return 0, 0, nil, err
		}
	}
	return start, end, rows[a : b+1], nil
}

// windowHoldsWork is ErrEmptyWindow for a window [start, end) of 0 ns or in which no operator, runtime call
// or GPU work starts; what names the window.
func windowHoldsWork(f *Frame, start, end int64, what string) error {
	if end <= start {
		return fmt.Errorf("%w: %s lasts 0 ns", ErrEmptyWindow, what)
	}
	for r := range f.TS {
		if f.TS[r] >= start && f.TS[r] < end && BusyRow(f, int32(r)) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s holds no operator, runtime call or GPU work", ErrEmptyWindow, what)
}

// BreakdownWeights returns the edge weights the bound_by breakdown sums: in compat mode HTA's own
// (its summary() reads each edge's weight, a negative one included), else the clamped ones the path
// itself weighs, so that the buckets add up to the path's length and none is negative.
func (g *CPGraph) BreakdownWeights() []int64 {
	if g.opts.Compat {
		return g.G.W
	}
	return g.GW
}

func (g *CPGraph) validate() error {
	gr := g.G
	g.GW = make([]int64, len(gr.W))
	copy(g.GW, gr.W)
	var bad []string
	for e, w := range gr.W {
		switch {
		case g.opts.StrictNegativeWeights && w < -1000:
			if len(bad) < 3 {
				bad = append(bad, fmt.Sprintf("edge %d→%d (%s, events %d→%d) has weight %.3f µs",
					gr.Src[e], gr.Dst[e], EdgeTypeName(gr.Type[e]), g.EvIdx(g.NodeRow[gr.Src[e]]), g.EvIdx(g.NodeRow[gr.Dst[e]]), float64(w)/1000))
			}
		case !g.opts.Compat && w < 0, !g.opts.StrictNegativeWeights && w <= -1000:
			// By default every negative weight counts as 0, under the strict check too (one in (-1 µs, 0) passes it,
			// and was a negative launch-overhead bucket); HTA's own tolerance in compat.
			g.GW[e] = 0
		}
		if gr.Type[e] == EdgeSyncDependency {
			r1, r2 := g.NodeRow[gr.Src[e]], g.NodeRow[gr.Dst[e]]
			s1, s2 := g.F.Stream[r1], g.F.Stream[r2]
			// by default a stream is a GPU's (stream 7 of GPU 0 and of GPU 1 are two)
			if s1 != -1 && s1 == s2 && (g.opts.Compat || g.F.Pid[r1] == g.F.Pid[r2]) {
				return fmt.Errorf("%w: synchronisation edge between events %d and %d on the same stream %d",
					ErrInvalidGraph, g.EvIdx(g.NodeRow[gr.Src[e]]), g.EvIdx(g.NodeRow[gr.Dst[e]]), s1)
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: negative weights (strict check): %s", ErrInvalidGraph, strings.Join(bad, "; "))
	}
	return nil
}

// callStacks adds HTA's call-stack edges (pass b).
func (g *CPGraph) callStacks(isLock, isBlocking []bool, addEdge func(u, v int32, t uint8, zero bool) int32, attribute func(int32, int32)) {
	f := g.F
	// Forward/backward thread merge.
	isOp := symSet(f.Syms, map[string]bool{"cpu_op": true, "user_annotation": true, "Operator": !g.opts.Compat})
	tidFor := func(sub string) (int64, bool) {
		match := make([]bool, len(f.Syms))
		for i, s := range f.Syms {
			match[i] = strings.Contains(s, sub)
		}
		var tid int64
		count := 0
		seen := map[int64]bool{}
		for _, r := range g.Clipped {
			if match[f.Name[r]] && isOp[f.Cat[r]] && !seen[f.Tid[r]] {
				seen[f.Tid[r]] = true
				tid = f.Tid[r]
				count++
			}
		}
		return tid, count == 1
	}
	fwd, okF := tidFor("forward")
	bwd, okB := tidFor("autograd")
	merge := okF && okB && fwd != bwd && fwd != 0 && bwd != 0 // HTA tests the tids for truthiness
	tidOf := func(r int32) int64 {
		if merge && f.Tid[r] == bwd {
			return fwd
		}
		return f.Tid[r]
	}
	// Group clipped rows by (pid, tid), groups in ascending order, rows in ev_idx order.
	rows := append([]int32(nil), g.Clipped...)
	slices.SortStableFunc(rows, func(a, b int32) int {
		if f.Pid[a] != f.Pid[b] {
			return cmp.Compare(f.Pid[a], f.Pid[b])
		}
		return cmp.Compare(tidOf(a), tidOf(b))
	})
	var ends []htaStackEnd
	var stack, open []int32
	for lo := 0; lo < len(rows); {
		hi := lo
		for hi < len(rows) && f.Pid[rows[hi]] == f.Pid[rows[lo]] && tidOf(rows[hi]) == tidOf(rows[lo]) {
			hi++
		}
		grp := rows[lo:hi]
		lo = hi
		allNeg, anyPos := true, false
		for _, r := range grp {
			if f.Stream[r] > 0 {
				anyPos = true
			}
			if f.Stream[r] >= 0 {
				allNeg = false
			}
		}
		if anyPos || !allNeg {
			continue // a GPU stream (no call stack) or a mixed lane HTA cannot classify
		}
		cpu := grp // every row of a lane that is not skipped is on stream -1
		// HTA's order is a consistent one but where a zero-length event meets others at one instant; by
		// default such a thread is ordered by nestedStackOrder (the same order where HTA's is consistent,
		// but slower: 1.0 -> 1.3 s for the graph of a 1M-event window if used on every thread).
		if g.opts.Compat || !slices.ContainsFunc(cpu, func(r int32) bool { return f.Dur[r] <= 0 }) {
			ends = htaStackOrder(f, cpu, ends)
		} else {
			ends = nestedStackOrder(f, cpu, ends)
		}
		// HTA walks the tree its stack built depth-first, children in start order: htaStackWalk's
		// enter and exit calls, so the edges are added while the stack is replayed, without the tree.
		last := int32(-1)
		depth := 0
		lastParent := int32(-1)
		// open: the stack's events, graph nodes or not (annotations and Python frames outside the
		// window's graph too), innermost last.
		open = open[:0]
		shares := func(a, b int32) bool {
			return isLock[f.Name[g.NodeRow[a]]] && isLock[f.Name[g.NodeRow[b]]] && (g.NodeStart[a] || !g.NodeStart[b])
		}
		enter := func(r, parent int32) {
			defer func() { open = append(open, r) }()
			if g.startNode[r] < 0 || g.endNode[r] < 0 {
				return
			}
			s := g.startNode[r]
			if last >= 0 && !shares(last, s) {
				t := EdgeOperator
				if depth == 0 {
					t = EdgeDependency
				}
				e := addEdge(last, s, t, false)
				// The time between one event's end and the next one's start belongs to the innermost
				// event open over all of it. HTA takes the parent of the event that ended, which may
				// itself have ended since (an annotation or Python frame that is no graph node: its
				// end adds no edge), and hotspots then lost the rest of the gap.
				attrTo := lastParent
				if !g.opts.Compat && !g.NodeStart[last] {
					attrTo = -1
					for i := len(open) - 1; i >= 0; i-- {
						if f.TS[open[i]] <= g.NodeTS[last] {
							attrTo = open[i]
							break
						}
					}
				}
				attribute(e, attrTo)
			}
			last, lastParent = s, parent
			depth++
		}
		exit := func(r, parent int32) {
			open = open[:max(0, len(open)-1)]
			if g.startNode[r] < 0 || g.endNode[r] < 0 {
				return
			}
			en := g.endNode[r]
			if last >= 0 && !shares(last, en) {
				e := addEdge(last, en, EdgeOperator, isBlocking[f.Name[r]])
				attribute(e, lastParent)
			}
			last, lastParent = en, parent
			depth--
		}
		stack = htaStackWalk(ends, stack, enter, exit)
	}
}

// serialGPULanes returns f, or a copy of it with other durations, in which no GPU row of rows (a kernel,
// memcpy or memset the graph takes) ends after the next one on its (GPU, stream) starts: the earlier
// one ends where the later one starts. Two kernels of one stream overlap in traces by a few µs (CUPTI
// timestamps: trace_diff/test has 31 kernels starting up to 13 µs before the previous one ends; MTIA's
// dma_request rows overlap by 9 µs each), and HTA's kernel-kernel edge between them, back in time, is
// clamped to weight 0, so the overlap was counted twice: a path 47 µs longer than the time it spans. A
// row inside the one before it (same end, on trace_diff/test) cuts that one the same way.
func serialGPULanes(f *Frame, rows []int32) *Frame {
	syncCat := symID(f.Syms, "cuda_sync")
	gpu := make([]int32, 0, len(rows))
	for _, r := range rows {
		if f.Stream[r] != -1 && f.Cat[r] != syncCat && f.IndexCorr[r] >= 0 {
			gpu = append(gpu, r)
		}
	}
	// Per lane by start, the shorter first at one start (so that it, not the longer one, is cut to
	// nothing), then file order.
	slices.SortFunc(gpu, func(a, b int32) int {
		return cmp.Or(cmp.Compare(f.Pid[a], f.Pid[b]), cmp.Compare(f.Stream[a], f.Stream[b]), cmp.Compare(f.TS[a], f.TS[b]),
			cmp.Compare(f.Dur[a], f.Dur[b]), cmp.Compare(f.EvIdx[a], f.EvIdx[b]))
	})
	var dur []int64 // nil until a row is cut
	for i := 1; i < len(gpu); i++ {
		p, r := gpu[i-1], gpu[i]
		if f.Pid[p] != f.Pid[r] || f.Stream[p] != f.Stream[r] || f.TS[p]+f.Dur[p] <= f.TS[r] {
			continue
		}
		if dur == nil {
			dur = slices.Clone(f.Dur)
		}
		dur[p] = f.TS[r] - f.TS[p]
	}
	if dur == nil {
		return f
	}
	nf := *f
	nf.Dur = dur
	return &nf
}

// nestCPULanes returns f, or a copy of it with other durations, in which every CPU event of rows
// that starts inside another event of its thread ends no later than that one. HTA's call stack pops
// whatever is on top at an end, so one child that outlives its parent (clock jitter between two
// records: a 24 µs cudaLaunchKernel ending 19 µs after its 11 µs aten::sqrt) mismatches every later
// end of the thread and the graph gets edges back in time, then cycles, and no path at all. Clipped
// like this the thread is a proper call tree again; HTA's own behaviour (compat) is left alone.
//
// A Python frame that an operator or annotation outlives is cut instead, where that event starts:
// record_function ranges open inside a short Python call (_record_function_enter_new, 9 µs) and
// close in a later one, so cutting the range to its frame made a 2.25 ms enumerate(DataLoader)
// annotation 5 µs long, and data_load_events found no data loading. Python frames are no nodes of
// the graph, so their ends only shape the tree.
//
// A blocking call (a synchronisation, a synchronous copy) that outlives its op extends the op and its
// enclosing events instead, when nothing else of the thread starts before the call returns: the call's
// end is when the thread was released, and cut it ended before the GPU work it waited for, so its sync
// edge was dropped (a 5 µs overrun took an 84 µs kernel off the path).
//
// No event ends after windowEnd: CPU time after the window is not the window's (on the annotation's own
// thread the nesting already cuts it). A logger thread's op that starts in a 100 µs step and runs on for
// 350 µs was a 350 µs path, 3.5 times the window, while CPCR counted the 50 µs inside it.
func nestCPULanes(f *Frame, rows []int32, windowEnd int64) *Frame {
	py := symID(f.Syms, "python_function")
	isBlocking := symSet(f.Syms, blockingNames)
	cpu := make([]int32, 0, len(rows))
	for _, r := range rows {
		if f.Stream[r] == -1 && f.Dur[r] > 0 {
			cpu = append(cpu, r)
		}
	}
	// Per thread by start, the longer first at one start (the enclosing one), then file order.
	slices.SortFunc(cpu, func(a, b int32) int {
		return cmp.Or(cmp.Compare(f.Pid[a], f.Pid[b]), cmp.Compare(f.Tid[a], f.Tid[b]), cmp.Compare(f.TS[a], f.TS[b]),
			cmp.Compare(f.Dur[b], f.Dur[a]), cmp.Compare(f.EvIdx[a], f.EvIdx[b]))
	})
	var dur []int64 // nil until an event is clipped
	endOf := func(r int32) int64 {
		if dur != nil {
			return f.TS[r] + dur[r]
		}
		return f.TS[r] + f.Dur[r]
	}
	clip := func(r int32, end int64) {
		if dur == nil {
			dur = slices.Clone(f.Dur)
		}
		dur[r] = end - f.TS[r]
	}
	var open []int32 // the enclosing events of the current thread, innermost last
	for i, r := range cpu {
		if i > 0 && (f.Pid[r] != f.Pid[cpu[i-1]] || f.Tid[r] != f.Tid[cpu[i-1]]) {
			open = open[:0]
		}
		for len(open) > 0 && endOf(open[len(open)-1]) <= f.TS[r] {
			open = open[:len(open)-1]
		}
		end := f.TS[r] + f.Dur[r]
		if end > windowEnd {
			end = windowEnd
			clip(r, end)
		}
		if f.Cat[r] != py {
			for len(open) > 0 {
				p := open[len(open)-1]
				if f.Cat[p] != py || endOf(p) >= end || f.TS[p] >= f.TS[r] {
					break
				}
				clip(p, f.TS[r])
				open = open[:len(open)-1]
			}
		}
		if len(open) > 0 && end > endOf(open[len(open)-1]) {
			if isBlocking[f.Name[r]] && (i+1 == len(cpu) || f.Pid[cpu[i+1]] != f.Pid[r] || f.Tid[cpu[i+1]] != f.Tid[r] ||
				f.TS[cpu[i+1]] >= end) {
				for _, p := range open {
					if endOf(p) < end {
						clip(p, end)
					}
				}
			} else {
				end = endOf(open[len(open)-1])
				clip(r, end)
			}
		}
		open = append(open, r)
	}
	if dur == nil {
		return f
	}
	nf := *f
	nf.Dur = dur
	return &nf
}
