package graph

import (
	"cmp"
	"slices"
)

// streamNodes indexes the GPU nodes of one stream for the searches the CDG's synchronisation
// edges make (once per synchronisation call). Ties go as a scan of the stream's order (by start)
// would break them.
type streamNodes struct {
	nodes    []CDGNode
	launchAt []int64
	byLaunch []int32 // by launch time, then the stream's order
	byEnd    []int32 // by end, then the stream's order
}

// newStreamNodes indexes ids, the stream's nodes in the stream's order; launchAt[g] is when node g
// was enqueued.
func newStreamNodes(nodes []CDGNode, ids []int32, launchAt []int64) *streamNodes {
	sn := &streamNodes{nodes: nodes, launchAt: launchAt, byLaunch: slices.Clone(ids), byEnd: slices.Clone(ids)}
	slices.SortStableFunc(sn.byLaunch, func(a, b int32) int { return cmp.Compare(launchAt[a], launchAt[b]) })
	slices.SortStableFunc(sn.byEnd, func(a, b int32) int { return cmp.Compare(nodes[a].End, nodes[b].End) })
	return sn
}

// launchedFrom is the index in byLaunch of the first node enqueued at or after t.
func (sn *streamNodes) launchedFrom(t int64) int {
	i, _ := slices.BinarySearchFunc(sn.byLaunch, t, func(g int32, t int64) int { return cmp.Compare(sn.launchAt[g], t) })
	return i
}

// lastLaunched: the node enqueued last before t, the later in stream order on a tie (-1 none).
func (sn *streamNodes) lastLaunched(t int64) int32 {
	if i := sn.launchedFrom(t); i > 0 {
		return sn.byLaunch[i-1]
	}
	return -1
}

// firstLaunchedAfter: the node enqueued first at or after t, the earlier in stream order on a tie
// (-1 none).
func (sn *streamNodes) firstLaunchedAfter(t int64) int32 {
	if i := sn.launchedFrom(t); i < len(sn.byLaunch) {
		return sn.byLaunch[i]
	}
	return -1
}

// latestEnded: the latest-ending node that ended by t and was enqueued before launchedBefore (at
// or before it when orAt), the earliest in stream order on a tie (-1 none). The scan back from the
// last node ended by t passes only nodes enqueued after launchedBefore, which is few: work
// enqueued after a synchronisation call that ended before what waited on it started.
func (sn *streamNodes) latestEnded(t, launchedBefore int64, orAt bool) int32 {
	j, _ := slices.BinarySearchFunc(sn.byEnd, t+1, func(g int32, t int64) int { return cmp.Compare(sn.nodes[g].End, t) })
	best := int32(-1)
	for j--; j >= 0; j-- {
		g := sn.byEnd[j]
		if best >= 0 && sn.nodes[g].End < sn.nodes[best].End {
			break
		}
		if lt := sn.launchAt[g]; lt < launchedBefore || (orAt && lt == launchedBefore) {
			best = g // a tie on the end: an earlier one in stream order comes later in this scan
		}
	}
	return best
}
