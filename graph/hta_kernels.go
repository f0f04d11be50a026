package graph

import (
	"cmp"
	"math"
	"slices"
)

// kernels adds HTA's GPU edges (pass c): kernel spans, launch and kernel-kernel delays, and
// synchronisation edges.
func (g *CPGraph) kernels(row func(int64) int32, addEdge func(u, v int32, t uint8, zero bool) int32, attribute func(int32, int32), b *Builder) error {
	f := g.F
	n := f.Len()
	isLaunch := symSet(f.Syms, launchNames)
	isGraphLaunch := make([]bool, len(f.Syms))
	for i, name := range f.Syms {
		isGraphLaunch[i] = graphLaunchName.MatchString(name)
	}
	syncCat, gpuAnnotationCat := symID(f.Syms, "cuda_sync"), symID(f.Syms, "gpu_user_annotation")
	ctxSync, streamSync := symID(f.Syms, "Context Sync"), symID(f.Syms, "Stream Sync")
	eventSync, swe := symID(f.Syms, "Event Sync"), symID(f.Syms, "Stream Wait Event")
	record, swCall := symID(f.Syms, "cudaEventRecord"), symID(f.Syms, "cudaStreamWaitEvent")

	gpuRowsOf := gpuRowsByCorrelation(f)
	// A stream's state (queue length, last kernel) is per stream id in HTA, so that with several GPUs in
	// one process (DataParallel) a kernel on GPU 1 was the previous kernel of one on GPU 0 and a stream
	// sync on GPU 1 waited for GPU 0's work; by default it is per (GPU, stream), as everywhere else.
	type streamKey struct{ gpu, stream int64 }
	keyOf := func(r int32) streamKey {
		if g.opts.Compat {
			return streamKey{0, f.Stream[r]}
		}
		return streamKey{f.Pid[r], f.Stream[r]}
	}
	// Queue lengths on the whole rank (§4.6): +1 at each launch (stream of its GPU row), -1 at the
	// start of each GPU row whose correlation a launch has; per stream, cumulative in ts order.
	// Streams are numbered (streamIndex) so that the running sums are a slice, not a map.
	var streamKeys []streamKey
	streamIdx := map[streamKey]int32{}
	streamIndex := func(k streamKey) int32 {
		for i := len(streamKeys) - 1; i >= 0 && i >= len(streamKeys)-8; i-- {
			if streamKeys[i] == k {
				return int32(i)
			}
		}
		if i, ok := streamIdx[k]; ok {
			return i
		}
		streamIdx[k] = int32(len(streamKeys))
		streamKeys = append(streamKeys, k)
		return int32(len(streamKeys) - 1)
	}
	nLaunch := 0
	for r := 0; r < n; r++ {
		if isLaunch[f.Name[r]] && f.IndexCorr[r] > 0 {
			nLaunch++
		}
	}
	qs := make([]queueChange, 0, 2*nLaunch+16)
	launched := make([]bool, n) // GPU rows whose correlation a launch has
	for r := 0; r < n; r++ {
		if isLaunch[f.Name[r]] && f.IndexCorr[r] > 0 {
			ks := gpuRowsOf(f.Corr[r])
			if !g.opts.Compat && len(ks) > 0 && !slices.ContainsFunc(ks, func(k int32) bool { return f.IndexCorr[k] == f.EvIdx[r] }) {
				// A runtime call and the driver call inside it share one correlation: the GPU work is
				// enqueued once, by the call its rows link to (HTA counts both, so the queue never emptied
				// and no launch-delay edge was ever added on the stream).
				continue
			}
			for _, k := range ks {
				if !g.opts.Compat && (f.Cat[k] == syncCat || f.Cat[k] == gpuAnnotationCat) {
					continue // as queue_length's default series: GPU work only
				}
				qs = append(qs, queueChange{f.TS[r], int32(r), k, streamIndex(keyOf(k)), 1})
				launched[k] = true
			}
			if len(ks) == 0 {
				qs = append(qs, queueChange{f.TS[r], int32(r), -1, -1, 1}) // NaN stream: dropped by groupby
			}
		}
	}
	for r := 0; r < n; r++ {
		if launched[r] {
			qs = append(qs, queueChange{f.TS[r], int32(r), int32(r), streamIndex(keyOf(int32(r))), -1})
		}
	}
	// queueEmptied: the launch call runtimeEv found its stream's queue empty (1 after its +1), and so did GPU row
	// r when it started (0 after its -1): HTA's condition for a launch-delay edge.
	var queueEmptied func(runtimeEv int64, r int32) bool
	if g.opts.Compat {
		// pandas sorts the concatenation (launches, then GPU rows) with numpy's unstable quicksort; equal
		// timestamps keep whatever order that leaves, so the same algorithm is replayed here.
		qts := make([]int64, len(qs))
		for i, q := range qs {
			qts[i] = q.ts
		}
		qorder := ArgsortQuick(qts)
		qlen := make([]int64, n)
		for i := range qlen {
			qlen[i] = math.MinInt64 // NaN
		}
		cum := make([]int64, len(streamKeys))
		for _, qi := range qorder {
			q := qs[qi]
			if q.stream < 0 {
				continue
			}
			cum[q.stream] += int64(q.delta)
			qlen[q.row] = cum[q.stream]
		}
		queueEmptied = func(runtimeEv int64, r int32) bool {
			l := row(runtimeEv)
			return l >= 0 && qlen[l] == 1 && qlen[r] == 0
		}
	} else {
		atLaunch, atStart := defaultLaunchQueues(qs, len(streamKeys), n)
		queueEmptied = func(_ int64, r int32) bool { return atLaunch[r] == 1 && atStart[r] == 0 }
	}

	// Launch table (HTA's runtime calls df): launch rows with index_correlation > 0 whose linked row is a
	// GPU row, sorted by ts, numbered launch_id.
	type launch struct {
		row    int32
		ts     int64
		stream int64 // of the kernel
		gpu    int64 // pid of the kernel
	}
	launches := make([]launch, 0, nLaunch)
	for r := 0; r < n; r++ {
		if isLaunch[f.Name[r]] && f.IndexCorr[r] > 0 {
			k := row(f.IndexCorr[r])
			if k >= 0 && f.Stream[k] != -1 {
				launches = append(launches, launch{int32(r), f.TS[r], f.Stream[k], f.Pid[k]})
			}
		} else if !g.opts.Compat && isGraphLaunch[f.Name[r]] && f.Stream[r] == -1 && f.Corr[r] != -1 {
			// By default a graph launch is a launch on every stream it replays work on: an event recorded
			// after it (or a wait before it) is about its work, not the ordinary launch before (or after) it.
			seen := map[streamKey]bool{}
			for _, k := range gpuRowsOf(f.Corr[r]) {
				if key := (streamKey{f.Pid[k], f.Stream[k]}); f.Cat[k] != syncCat && !seen[key] {
					seen[key] = true
					launches = append(launches, launch{int32(r), f.TS[r], key.stream, key.gpu})
				}
			}
		}
	}
	launches = permute(launches, func(l launch) int64 { return l.ts })
	// launchedOn is the GPU row launch call lr put on (gpu, stream): its linked row, or for a graph launch
	// its first (first) or last-ending row there (-1 none).
	launchedOn := func(lr int32, gpu, stream int64, first bool) int32 {
		if g.opts.Compat || !isGraphLaunch[f.Name[lr]] {
			return row(f.IndexCorr[lr])
		}
		pick := int32(-1)
		for _, k := range gpuRowsOf(f.Corr[lr]) {
			if f.Pid[k] != gpu || f.Stream[k] != stream || f.Cat[k] == syncCat {
				continue
			}
			if pick < 0 || first && f.TS[k] < f.TS[pick] || !first && f.TS[k]+f.Dur[k] > f.TS[pick]+f.Dur[pick] {
				pick = k
			}
		}
		return pick
	}

	// cudaEventRecord → the previous launch on its (gpu, stream) and that gpu: keyed by record correlation.
	type recLaunch struct{ ev, gpu int64 }
	prevLaunchByRecordCorr := map[int64]recLaunch{}
	if record >= 0 {
		// The record's GPU: by default recordedGPU's (HTA: the waiting side's).
		type sk struct{ corr, stream, gpu, waitStream int64 }
		recStream := map[int64]sk{}
		for r := 0; r < n; r++ {
			if f.WaitOnStream[r] > -1 {
				recStream[f.WaitOnCorr[r]] = sk{f.WaitOnCorr[r], f.WaitOnStream[r], f.Pid[r], f.Stream[r]}
			}
		}
		type rec struct {
			ts                      int64
			corr                    int64
			stream, gpu, waitStream int64
		}
		var recs []rec
		for r := 0; r < n; r++ {
			if f.Name[r] == record {
				if s, ok := recStream[f.Corr[r]]; ok {
					recs = append(recs, rec{f.TS[r], f.Corr[r], s.stream, s.gpu, s.waitStream})
				}
			}
		}
		recs = permute(recs, func(r rec) int64 { return r.ts })
		// pandas: concat(launches, records) sorted by ts (quicksort), then per (gpu, stream) the running
		// maximum launch_id; a record's previous launch is that maximum.
		cts := make([]int64, 0, len(launches)+len(recs))
		for _, l := range launches {
			cts = append(cts, l.ts)
		}
		for _, r := range recs {
			cts = append(cts, r.ts)
		}
		type gs struct{ gpu, stream int64 }
		maxLaunch := map[gs]int64{}
		for _, i := range ArgsortQuick(cts) {
			if int(i) < len(launches) {
				l := launches[i]
				k := gs{l.gpu, l.stream}
				if old, ok := maxLaunch[k]; !ok || int64(i) > old {
					maxLaunch[k] = int64(i)
				}
				continue
			}
			rc := recs[int(i)-len(launches)]
			gpu := rc.gpu
			if !g.opts.Compat {
				var gpus []int64
				for k := range maxLaunch {
					if k.stream == rc.stream {
						gpus = append(gpus, k.gpu)
					}
				}
				gpu = recordedGPU(rc.gpu, rc.stream == rc.waitStream, gpus, func(gpu int64) (int64, bool) {
					id, ok := maxLaunch[gs{gpu, rc.stream}]
					return id, ok // launch ids follow the launches' times
				})
			}
			if id, ok := maxLaunch[gs{gpu, rc.stream}]; ok {
				prevLaunchByRecordCorr[rc.corr] = recLaunch{f.EvIdx[launches[id].row], gpu}
			} else {
				prevLaunchByRecordCorr[rc.corr] = recLaunch{-1, gpu}
			}
		}
	}
	// cudaStreamWaitEvent (ev_idx) → index of the next launch on the same pid, tid and waiting stream (by
	// default the waiting GPU's stream: HTA took the next launch onto a stream of that id on any GPU).
	nextLaunchByWait := map[int64]int64{}
	if swCall >= 0 && swe >= 0 {
		type key struct{ pid, tid, gpu, stream int64 }
		gpuKey := func(gpu int64) int64 {
			if g.opts.Compat {
				return 0
			}
			return gpu
		}
		type wait struct {
			ts  int64
			row int32
			key key
		}
		var waits []wait
		for r := 0; r < n; r++ {
			if f.Name[r] == swCall && f.IndexCorr[r] > 0 {
				k := row(f.IndexCorr[r])
				if k >= 0 && f.Stream[k] != -1 {
					waits = append(waits, wait{f.TS[r], int32(r), key{f.Pid[r], f.Tid[r], gpuKey(f.Pid[k]), f.Stream[k]}})
				}
			}
		}
		waits = permute(waits, func(w wait) int64 { return w.ts })
		// pandas: concat(launches, waits) sorted by ts (quicksort); per (pid, tid, stream) the minimum
		// launch_id at or after each wait in that order.
		cts := make([]int64, 0, len(launches)+len(waits))
		for _, l := range launches {
			cts = append(cts, l.ts)
		}
		for _, w := range waits {
			cts = append(cts, w.ts)
		}
		order := ArgsortQuick(cts)
		minLaunch := map[key]int64{}
		for oi := len(order) - 1; oi >= 0; oi-- {
			i := order[oi]
			if int(i) < len(launches) {
				l := launches[i]
				k := key{f.Pid[l.row], f.Tid[l.row], gpuKey(l.gpu), l.stream}
				if old, ok := minLaunch[k]; !ok || int64(i) < old {
					minLaunch[k] = int64(i)
				}
				continue
			}
			w := waits[int(i)-len(launches)]
			if id, ok := minLaunch[w.key]; ok {
				nextLaunchByWait[f.EvIdx[w.row]] = f.EvIdx[launches[id].row]
			} else {
				nextLaunchByWait[f.EvIdx[w.row]] = -1
			}
		}
	}

	// Work list: clipped rows on a stream (or Event/Context Sync) with index_correlation >= 0, by ts
	// (sync rows by their end).
	type work struct {
		row  int32
		sort int64
	}
	var ws []work
	for _, r := range g.Clipped {
		if (f.Stream[r] != -1 || f.Name[r] == eventSync || f.Name[r] == ctxSync) && f.IndexCorr[r] >= 0 {
			s := f.TS[r]
			if f.Cat[r] == syncCat {
				s += f.Dur[r]
			}
			ws = append(ws, work{r, s})
		}
	}
	ws = permute(ws, func(w work) int64 { return w.sort })

	// outside: per (GPU, stream), the GPU work that is not in the graph (launched before the window, or
	// by a launch the trace lacks), by start. By default a kernel that waited behind such work after its
	// launch call gets no launch edge: the wait was the stream's backlog, not launch overhead (on
	// tracelens resnet_act_checkpoint, whose GPU runs two steps behind, a 29 ms "launch delay" made 99.5 %
	// of the path).
	type span struct{ ts, end int64 }
	var outside map[streamKey][]span
	if !g.opts.Compat {
		outside = map[streamKey][]span{}
		// busyOutside looks only at work that began before a kernel of the work list: what began after the
		// last of them is left out (most of the trace, for an early window)
		lastStart := int64(math.MinInt64)
		for _, w := range ws {
			lastStart = max(lastStart, f.TS[w.row])
		}
		isOutside := func(r int) bool {
			return f.Stream[r] != -1 && f.TS[r] < lastStart && f.Cat[r] != syncCat && f.IndexCorr[r] >= 0 && !g.clippedSet[r]
		}
		// counted first, then placed in one array: appending to each stream's slice cost 25 ms of a
		// 300 ms build on the 1 GB inflation
		var count []int
		for r := 0; r < n; r++ {
			if isOutside(r) {
				i := int(streamIndex(keyOf(int32(r))))
				count = append(count, make([]int, max(0, i+1-len(count)))...)
				count[i]++
			}
		}
		total := 0
		for _, c := range count {
			total += c
		}
		all := make([]span, total)
		perStream := make([][]span, len(count))
		at := 0
		for i, c := range count {
			perStream[i] = all[at : at : at+c]
			at += c
		}
		for r := 0; r < n; r++ {
			if isOutside(r) {
				i := streamIndex(keyOf(int32(r)))
				perStream[i] = append(perStream[i], span{f.TS[r], f.TS[r] + g.Source.Dur[r]})
			}
		}
		for i, spans := range perStream {
			if len(spans) > 0 {
				outside[streamKeys[i]] = spans
			}
		}
		for _, spans := range outside {
			slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.ts, b.ts) })
		}
	}
	// busyOutside reports work outside the graph on stream that ran after launchTS and began before start.
	busyOutside := func(stream streamKey, launchTS, start int64) bool {
		spans := outside[stream]
		i, _ := slices.BinarySearchFunc(spans, start, func(sp span, t int64) int { return cmp.Compare(sp.ts, t) })
		for j := i - 1; j >= 0; j-- {
			if spans[j].end > launchTS {
				return true
			}
			if j < i-8 {
				break // spans of one stream follow each other: one that ended long before says enough
			}
		}
		return false
	}
	lastNode := map[streamKey]int32{}
	// ended: by default, each stream's kernel end nodes in the order processed (start order), for waited
	var ended map[streamKey][]int32
	if !g.opts.Compat {
		ended = map[streamKey][]int32{}
	}
	var streamOrder []streamKey
	kernelSync := map[int32]int32{} // dest row → src row (-1 consumed)
	type streamLaunch struct {
		row    int32
		stream streamKey
	}
	graphLaunchSeen := map[streamLaunch]bool{} // (launching CPU row, stream) whose first GPU row was met
	// linkEv: the event a GPU or sync row's index_correlation names; by default 0 names none (linked in build)
	linkEv := func(r int32) int64 {
		if !g.opts.Compat && f.IndexCorr[r] == 0 {
			return -1
		}
		return f.IndexCorr[r]
	}
	tsOfEv := func(ev int64) int64 {
		if r := row(ev); r >= 0 {
			return f.TS[r]
		}
		return math.MinInt64
	}
	syncEdge := func(gpuNode int32, cpuEv int64) {
		r := row(cpuEv)
		if r < 0 || g.endNode[r] < 0 {
			return
		}
		if f.Dur[r] < g.Source.Dur[r] && g.NodeTS[gpuNode] > g.NodeTS[g.endNode[r]] {
			// the call was cut (nestCPULanes) before the GPU work it waited for ended: an edge back in
			// time, which let a path run longer than the time it spans
			return
		}
		addEdge(gpuNode, g.endNode[r], EdgeSyncDependency, false)
	}
	// waited: the kernel end node a stream or device synchronisation of the call cpuEv waited for on stream s
	// (-1 none). HTA's is the stream's last kernel started before the sync ended, which can be one another
	// thread launched while the call was waiting, ending after it returned: a sync edge back in time, and a
	// path longer than its window (295 µs in a 250 µs step). By default it is the last that ended by the
	// call's end.
	waited := func(s streamKey, cpuEv int64) int32 {
		last, ok := lastNode[s]
		if !ok {
			return -1
		}
		r := row(cpuEv)
		if g.opts.Compat || r < 0 || g.endNode[r] < 0 {
			return last
		}
		callEnd := g.NodeTS[g.endNode[r]]
		nodes := ended[s]
		for i := len(nodes) - 1; i >= 0; i-- {
			if g.NodeTS[nodes[i]] <= callEnd {
				return nodes[i]
			}
		}
		return -1
	}
	for _, w := range ws {
		r := w.row
		if g.waitedCopy != nil && g.endNode[r] >= 0 && f.Cat[r] != syncCat {
			// a copy its call waited for (no cuda_sync record is written for it): the call returned after it
			if call := linkEv(r); call >= 0 {
				if cr := row(call); cr >= 0 && g.waitedCopy[cr] {
					syncEdge(g.endNode[r], call)
				}
			}
		}
		if f.Cat[r] == syncCat {
			name := f.Name[r]
			if name == swe || name == eventSync {
				prev, ok := prevLaunchByRecordCorr[f.WaitOnCorr[r]]
				if !ok || prev.ev == -1 || f.WaitOnCorr[r] == -1 {
					continue
				}
				pr := row(prev.ev)
				if pr < 0 {
					continue
				}
				src := launchedOn(pr, prev.gpu, f.WaitOnStream[r], false)
				if name == swe {
					next, ok := nextLaunchByWait[f.IndexCorr[r]]
					if !ok || next < 0 {
						continue
					}
					nr := row(next)
					if nr < 0 {
						continue
					}
					dst := launchedOn(nr, f.Pid[r], f.Stream[r], true)
					if dst >= 0 {
						kernelSync[dst] = src
					}
				} else if src >= 0 && g.endNode[src] >= 0 {
					syncEdge(g.endNode[src], linkEv(r))
				}
				continue
			}
			if name == ctxSync {
				for _, s := range streamOrder {
					// by default a device sync waits for its own GPU's streams only
					if v := waited(s, linkEv(r)); v >= 0 && (g.opts.Compat || s.gpu == f.Pid[r]) {
						syncEdge(v, linkEv(r))
					}
				}
			} else if name == streamSync {
				if v := waited(keyOf(r), linkEv(r)); v >= 0 {
					syncEdge(v, linkEv(r))
				}
			}
			continue
		}
		s, e := g.startNode[r], g.endNode[r]
		if s < 0 || e < 0 {
			continue
		}
		id := addEdge(s, e, EdgeOperator, false)
		attribute(id, -1)
		stream := keyOf(r)
		syncSrc, hasSync := kernelSync[r]
		syncEnd := int32(-1)
		if hasSync && syncSrc >= 0 {
			syncEnd = g.endNode[syncSrc]
			if syncEnd < 0 {
				hasSync = false
			} else {
				addEdge(syncEnd, s, EdgeSyncDependency, false)
			}
		} else {
			hasSync = false
		}
		if _, ok := kernelSync[r]; ok {
			kernelSync[r] = -1
		}
		runtimeEv := linkEv(r)
		runtimeTS := tsOfEv(runtimeEv)
		last, hasLast := lastNode[stream]
		launchAdded, kernelKernelAdded := false, false
		idleAtLaunch := (!hasLast || g.NodeTS[last] < runtimeTS) && (!hasSync || g.NodeTS[syncEnd] < runtimeTS) &&
			(g.opts.Compat || !busyOutside(stream, runtimeTS, f.TS[r]))
		if queueEmptied(runtimeEv, r) && idleAtLaunch {
			if rr := row(runtimeEv); rr >= 0 && g.startNode[rr] >= 0 {
				addEdge(g.startNode[rr], s, EdgeLaunchDelay, false)
				launchAdded = true
			}
		} else if rr := row(runtimeEv); !g.opts.Compat && rr >= 0 && g.endNode[rr] >= 0 && isGraphLaunch[f.Name[rr]] &&
			g.NodeTS[g.endNode[rr]] <= f.TS[r] && (!hasLast || g.NodeTS[last] < g.NodeTS[g.endNode[rr]]) &&
			(!hasSync || g.NodeTS[syncEnd] < g.NodeTS[g.endNode[rr]]) {
			// A CUDA/HIP graph launch submits its graph in pieces while it runs: an event that starts
			// after the call returned, on a stream idle by then, waited for the call's end (graph/ctda.go
			// counts it enqueued there too), so the GPU idle inside the call is the host's time, not
			// launch or kernel-kernel overhead.
			addEdge(g.endNode[rr], s, EdgeLaunchDelay, false)
			launchAdded = true
		} else if rr := row(runtimeEv); !g.opts.Compat && idleAtLaunch && rr >= 0 && g.startNode[rr] >= 0 &&
			!isLaunch[f.Name[rr]] && !graphLaunchSeen[streamLaunch{rr, stream}] {
			// A graph launch is not one of HTA's launch calls, so it has no queue length: the first
			// event it replays on each stream waits for the call, the rest for the event before them.
			addEdge(g.startNode[rr], s, EdgeLaunchDelay, false)
			launchAdded = true
		} else if hasLast && g.NodeTS[s]-g.NodeTS[last] < kernelKernelDelayThreshold &&
			(!hasSync || g.NodeTS[syncEnd] < g.NodeTS[last]) {
			id := addEdge(last, s, EdgeKernelKernel, false)
			attribute(id, -1)
			kernelKernelAdded = true
		}
		if g.opts.StreamOrderEdges && hasLast && !kernelKernelAdded {
			addEdge(last, s, EdgeKernelKernel, true)
		}
		if g.opts.ZeroWeightLaunchEdges && !launchAdded {
			if rr := row(runtimeEv); rr >= 0 && g.startNode[rr] >= 0 {
				addEdge(g.startNode[rr], s, EdgeLaunchDelay, true)
			}
		}
		if rr := row(runtimeEv); rr >= 0 && !isLaunch[f.Name[rr]] {
			graphLaunchSeen[streamLaunch{rr, stream}] = true
		}
		if !hasLast {
			streamOrder = append(streamOrder, stream)
		}
		lastNode[stream] = e
		if ended != nil {
			ended[stream] = append(ended[stream], e)
		}
	}
	_ = b
	return nil
}

// recordedGPU is the GPU of the stream an awaited event was recorded on: a wait's record names that
// stream's id but not its GPU, and a copy between GPUs records an event on one GPU's current stream and
// makes the other's wait on it, both usually stream 7 (HTA takes the waiting GPU's: an invalid graph, a
// wait on its own stream). It is the waiting GPU's stream of that id when that is not the waiting stream
// itself (no wait) and had work launched by the record (last reports the latest launch time on a GPU's
// stream of the id, and whether there is one), else the other GPU among gpus whose stream launched last
// (-1 none).
func recordedGPU(waitGPU int64, onWaitingStream bool, gpus []int64, last func(gpu int64) (int64, bool)) int64 {
	if _, ok := last(waitGPU); ok && !onWaitingStream {
		return waitGPU
	}
	best, bestAt := int64(-1), int64(math.MinInt64)
	for _, gpu := range gpus {
		if at, ok := last(gpu); ok && gpu != waitGPU && at > bestAt {
			best, bestAt = gpu, at
		}
	}
	return best
}

// permute returns xs sorted by key with numpy's quicksort (ArgsortQuick), as pandas' sort_values does.
func permute[T any](xs []T, key func(T) int64) []T {
	keys := make([]int64, len(xs))
	for i, x := range xs {
		keys[i] = key(x)
	}
	out := make([]T, len(xs))
	for i, j := range ArgsortQuick(keys) {
		out[i] = xs[j]
	}
	return out
}

// queueChange is one change of a stream's launch queue: +1 at a launch call (row) for the GPU row gpu it
// enqueued, -1 when GPU row gpu (= row) starts. stream: its index; -1 none (a launch with no GPU row).
type queueChange struct {
	ts       int64
	row, gpu int32
	stream   int32
	delta    int32
}

// defaultLaunchQueues returns, per GPU row, its stream's launch queue after its launch's +1 (atLaunch) and after
// its own start's -1 (atStart), math.MinInt32 where it has none. At one time a start counts before a launch, then
// by event index (rows are in event-index order): the queue a GPU row finds when it starts holds no call made at
// that instant. HTA's order there is numpy's unstable quicksort, mostly the launch first, which took a memset's
// launch-delay edge away when the next launch call began as it started (it had waited 15 µs for its own call on an
// idle stream).
// streams is the number of stream indexes in qs; n the frame's row count.
func defaultLaunchQueues(qs []queueChange, streams, n int) (atLaunch, atStart []int32) {
	atLaunch, atStart = make([]int32, n), make([]int32, n)
	for i := range atLaunch {
		atLaunch[i], atStart[i] = math.MinInt32, math.MinInt32
	}
	// By time, then each run of one time in the order above.
	ts := make([]int64, len(qs))
	for i, q := range qs {
		ts[i] = q.ts
	}
	order := argsortStable(ts)
	tieOrder := func(a, b int32) int {
		x, y := qs[a], qs[b]
		return cmp.Or(cmp.Compare(x.delta, y.delta), cmp.Compare(x.row, y.row), cmp.Compare(x.gpu, y.gpu))
	}
	for lo := 0; lo < len(order); {
		hi := lo + 1
		for hi < len(order) && ts[order[hi]] == ts[order[lo]] {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(order[lo:hi], tieOrder)
		}
		lo = hi
	}
	queue := make([]int32, streams)
	for _, i := range order {
		q := qs[i]
		if q.stream < 0 {
			continue
		}
		queue[q.stream] += q.delta
		if q.delta > 0 {
			atLaunch[q.gpu] = queue[q.stream]
		} else {
			atStart[q.gpu] = queue[q.stream]
		}
	}
	return atLaunch, atStart
}

// gpuRowsByCorrelation returns a lookup of the GPU rows (stream != -1) of each correlation id, in row order.
// Correlation ids are small and not far apart in practice (every runtime call takes one: the 1 GB inflation's
// 508k GPU rows span 7.8M ids), so the rows are placed by counting and a lookup is an index; ids spread over more
// than 32 times the rows, or 16M, fall back to a sorted list and binary search.
func gpuRowsByCorrelation(f *Frame) func(corr int64) []int32 {
	n := f.Len()
	count := 0
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for r := range n {
		if f.Stream[r] != -1 && f.Corr[r] != -1 {
			count++
			lo, hi = min(lo, f.Corr[r]), max(hi, f.Corr[r])
		}
	}
	if count == 0 {
		return func(int64) []int32 { return nil }
	}
	if span := uint64(hi - lo); span < uint64(32*count+1024) && span < 1<<24 {
		off := make([]int32, span+2) // rows of correlation lo+c: rows[off[c]:off[c+1]]
		for r := range n {
			if f.Stream[r] != -1 && f.Corr[r] != -1 {
				off[f.Corr[r]-lo+1]++
			}
		}
		for c := 1; c < len(off); c++ {
			off[c] += off[c-1]
		}
		rows := make([]int32, count)
		next := slices.Clone(off[:len(off)-1])
		for r := range n {
			if f.Stream[r] != -1 && f.Corr[r] != -1 {
				c := f.Corr[r] - lo
				rows[next[c]] = int32(r)
				next[c]++
			}
		}
		return func(corr int64) []int32 {
			if corr < lo || corr > hi {
				return nil
			}
			c := corr - lo
			return rows[off[c]:off[c+1]]
		}
	}
	rows := make([]int32, 0, count)
	for r := range n {
		if f.Stream[r] != -1 && f.Corr[r] != -1 {
			rows = append(rows, int32(r))
		}
	}
	slices.SortStableFunc(rows, func(a, b int32) int { return cmp.Compare(f.Corr[a], f.Corr[b]) })
	corrs := make([]int64, len(rows))
	for i, r := range rows {
		corrs[i] = f.Corr[r]
	}
	return func(corr int64) []int32 {
		i, _ := slices.BinarySearch(corrs, corr)
		j := i
		for j < len(corrs) && corrs[j] == corr {
			j++
		}
		return rows[i:j]
	}
}
