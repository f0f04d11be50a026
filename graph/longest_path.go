package graph

import (
	"context"
	"errors"
	"fmt"
)

// ErrCycle is returned when the graph is not a DAG.
var ErrCycle = errors.New("graph has a cycle")

// Path is a longest path: its nodes, the edges between consecutive nodes, and its length
// (sum of the weights used).
type Path struct {
	Nodes  []int32
	Edges  []int32
	Length int64
}

// TopoOrder returns Kahn's topological order of the nodes that have at least one edge: first the
// nodes without incoming edges, in order of their first appearance in the edge list (source before
// target), then every node as soon as its last incoming edge is consumed, visiting successors in
// edge-insertion order (a FIFO queue). This is networkx's topological_sort order for a DiGraph
// built by add_edge calls in edge order (nodes enter a networkx graph with their first edge).
// Nodes without edges are not part of the graph's order. ErrCycle when some node is never freed.
func (g *Graph) TopoOrder(ctx context.Context) ([]int32, error) {
	indeg := make([]int32, g.N)
	for v := 0; v < g.N; v++ {
		indeg[v] = g.InOff[v+1] - g.InOff[v]
	}
	seen := make([]bool, g.N)
	order := make([]int32, 0, g.N)
	inGraph := 0
	for e := range g.Src {
		for _, v := range [2]int32{g.Src[e], g.Dst[e]} {
			if !seen[v] {
				seen[v] = true
				inGraph++
				if indeg[v] == 0 {
					order = append(order, v)
				}
			}
		}
	}
	for head := 0; head < len(order); head++ {
		if head&0xffff == 0 && ctx != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		u := order[head]
		for _, e := range g.Out(u) {
			v := g.Dst[e]
			indeg[v]--
			if indeg[v] == 0 {
				order = append(order, v)
			}
		}
	}
	if len(order) != inGraph {
		return nil, fmt.Errorf("%w (%d of %d nodes are on or after a cycle)", ErrCycle, inGraph-len(order), inGraph)
	}
	return order, nil
}

// NodesWithEdges counts the nodes that have at least one edge (networkx's number_of_nodes for a graph
// built from edges).
func (g *Graph) NodesWithEdges() int {
	n := 0
	for v := 0; v < g.N; v++ {
		if g.OutOff[v+1] > g.OutOff[v] || g.InOff[v+1] > g.InOff[v] {
			n++
		}
	}
	return n
}

// LongestPath computes a longest path with weights w (nil: g.W) in O(V+E).
//
// Tie rule (deterministic, and the same as networkx.dag_longest_path, which HTA uses): nodes are
// visited in TopoOrder; a node's best predecessor is the first incoming edge, in insertion order,
// with the largest distance+weight; a node whose best is negative (or that has no predecessor)
// starts a new path with distance 0; the path ends at the first node in topological order with the
// largest distance.
func (g *Graph) LongestPath(ctx context.Context, w []int64) (Path, error) {
	if w == nil {
		w = g.W
	}
	order, err := g.TopoOrder(ctx)
	if err != nil {
		return Path{}, err
	}
	if len(order) == 0 {
		return Path{}, nil
	}
	dist := make([]int64, g.N)
	via := make([]int32, g.N) // edge id into the node on its best path, -1 = starts here
	bestEnd, bestDist := int32(-1), int64(0)
	for i, v := range order {
		if i&0xffff == 0 && ctx != nil && ctx.Err() != nil {
			return Path{}, ctx.Err()
		}
		d, from := int64(0), int32(-1)
		first := true
		for _, e := range g.In(v) {
			c := dist[g.Src[e]] + w[e]
			if first || c > d {
				d, from, first = c, e, false
			}
		}
		if from < 0 || d < 0 {
			d, from = 0, -1
		}
		dist[v], via[v] = d, from
		if bestEnd < 0 || d > bestDist {
			bestEnd, bestDist = v, d
		}
	}
	var p Path
	p.Length = bestDist
	for v := bestEnd; ; {
		p.Nodes = append(p.Nodes, v)
		e := via[v]
		if e < 0 {
			break
		}
		p.Edges = append(p.Edges, e)
		v = g.Src[e]
	}
	reverse32(p.Nodes)
	reverse32(p.Edges)
	return p, nil
}

func reverse32(s []int32) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}
