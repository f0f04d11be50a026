// Package graph holds tracesql's critical-path DAGs in compact slices: int32 node ids, edges in
// insertion order with int64 weights (ns) and uint8 types, and CSR adjacency in both directions. The
// longest path is an O(V+E) Kahn topological pass (longest_path.go); HTA's graph construction lives in
// hta_build.go; store.go exposes a graph as a dominikbraun/graph Store for DOT export and small-graph use.
//
// The package is plain Go: no SQL, no I/O.
package graph

import "fmt"

// Builder collects the edges of a graph with a fixed node count. Adding an edge between a pair of
// nodes that already has one overwrites its weight and type but keeps its position (networkx's
// DiGraph.add_edge, which HTA relies on).
//
// Duplicate detection walks the source node's list of outgoing edges (out-degrees are tiny in
// critical-path graphs); a node whose out-degree reaches hashFrom moves to a map, so a hub costs
// O(1) per edge too. (A map of every pair cost half the build time at a million events.)
type Builder struct {
	n      int32
	src    []int32
	dst    []int32
	w      []int64
	typ    []uint8
	head   []int32 // per node: last outgoing edge, -1 none
	next   []int32 // per edge: previous outgoing edge of its source, -1 none
	deg    []uint8 // per node: out-degree, saturating at hashFrom
	hashed map[uint64]int32
}

const hashFrom = 16

// NewBuilder returns a builder for n nodes (ids 0..n-1); edgeHint preallocates.
func NewBuilder(n, edgeHint int) *Builder {
	b := &Builder{
		n:    int32(n),
		src:  make([]int32, 0, edgeHint),
		dst:  make([]int32, 0, edgeHint),
		w:    make([]int64, 0, edgeHint),
		typ:  make([]uint8, 0, edgeHint),
		head: make([]int32, n),
		next: make([]int32, 0, edgeHint),
		deg:  make([]uint8, n),
	}
	for i := range b.head {
		b.head[i] = -1
	}
	return b
}

func pairKey(u, v int32) uint64 { return uint64(uint32(u))<<32 | uint64(uint32(v)) }

// AddEdge adds u→v, or overwrites the existing u→v edge. It returns the edge id and whether an edge
// was replaced.
func (b *Builder) AddEdge(u, v int32, w int64, t uint8) (int32, bool) {
	if u < 0 || v < 0 || u >= b.n || v >= b.n {
		panic(fmt.Sprintf("graph: edge %d→%d outside 0..%d", u, v, b.n-1))
	}
	if id := b.EdgeID(u, v); id >= 0 {
		b.w[id], b.typ[id] = w, t
		return id, true
	}
	id := int32(len(b.src))
	b.src = append(b.src, u)
	b.dst = append(b.dst, v)
	b.w = append(b.w, w)
	b.typ = append(b.typ, t)
	b.next = append(b.next, b.head[u])
	b.head[u] = id
	switch {
	case b.deg[u] == hashFrom:
		b.hashed[pairKey(u, v)] = id
	case b.deg[u] == hashFrom-1:
		if b.hashed == nil {
			b.hashed = map[uint64]int32{}
		}
		for e := id; e >= 0; e = b.next[e] {
			b.hashed[pairKey(u, b.dst[e])] = e
		}
		b.deg[u]++
	default:
		b.deg[u]++
	}
	return id, false
}

// EdgeID returns the id of u→v, or -1.
func (b *Builder) EdgeID(u, v int32) int32 {
	if b.deg[u] == hashFrom {
		if id, ok := b.hashed[pairKey(u, v)]; ok {
			return id
		}
		return -1
	}
	for e := b.head[u]; e >= 0; e = b.next[e] {
		if b.dst[e] == v {
			return e
		}
	}
	return -1
}

// Build freezes the edges into a Graph (the builder must not be used afterwards).
func (b *Builder) Build() *Graph {
	g := &Graph{N: int(b.n), Src: b.src, Dst: b.dst, W: b.w, Type: b.typ}
	g.OutOff, g.OutEdge = csr(int(b.n), b.src)
	g.InOff, g.InEdge = csr(int(b.n), b.dst)
	b.head, b.next, b.deg, b.hashed = nil, nil, nil, nil
	return g
}

// Graph is a directed graph in slices. Edge i goes Src[i]→Dst[i] with weight W[i] and type Type[i];
// edges are numbered in insertion order. OutEdge[OutOff[v]:OutOff[v+1]] are the ids of v's outgoing
// edges and InEdge[InOff[v]:InOff[v+1]] of its incoming ones, both in insertion order.
type Graph struct {
	N       int
	Src     []int32
	Dst     []int32
	W       []int64
	Type    []uint8
	OutOff  []int32
	OutEdge []int32
	InOff   []int32
	InEdge  []int32
}

// NewGraph builds a graph from edge lists (no de-duplication; use Builder for that).
func NewGraph(n int, src, dst []int32, w []int64, typ []uint8) *Graph {
	if typ == nil {
		typ = make([]uint8, len(src))
	}
	g := &Graph{N: n, Src: src, Dst: dst, W: w, Type: typ}
	g.OutOff, g.OutEdge = csr(n, src)
	g.InOff, g.InEdge = csr(n, dst)
	return g
}

// csr groups edge ids by key (a counting sort, stable: insertion order within a node).
func csr(n int, key []int32) (off, ids []int32) {
	off = make([]int32, n+1)
	for _, k := range key {
		off[k+1]++
	}
	for i := 0; i < n; i++ {
		off[i+1] += off[i]
	}
	ids = make([]int32, len(key))
	pos := make([]int32, n)
	copy(pos, off[:n])
	for e, k := range key {
		ids[pos[k]] = int32(e)
		pos[k]++
	}
	return off, ids
}

// Out returns the ids of v's outgoing edges.
func (g *Graph) Out(v int32) []int32 { return g.OutEdge[g.OutOff[v]:g.OutOff[v+1]] }

// In returns the ids of v's incoming edges.
func (g *Graph) In(v int32) []int32 { return g.InEdge[g.InOff[v]:g.InOff[v+1]] }

// Edge returns the id of u→v, or -1 (linear in u's out-degree).
func (g *Graph) Edge(u, v int32) int32 {
	for _, e := range g.Out(u) {
		if g.Dst[e] == v {
			return e
		}
	}
	return -1
}
