package graph

import (
	"io"
	"sort"

	dg "github.com/dominikbraun/graph"
	"github.com/dominikbraun/graph/draw"
)

// Store is a slice-backed dominikbraun/graph Store for dense int32 vertex ids: vertices are
// positions in a slice, edges a slice plus a (source, target) index. It lets the library's
// construction API, algorithms (on small graphs only: its TopologicalSort is O(V²)) and draw.DOT
// work on tracesql's graphs without the default store's maps of maps.
type Store struct {
	present []bool
	props   []dg.VertexProperties
	nverts  int
	edges   []dg.Edge[int32]
	alive   []bool
	index   map[uint64]int32
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{index: map[uint64]int32{}} }

var _ dg.Store[int32, int32] = (*Store)(nil)

func (s *Store) grow(v int32) {
	for int(v) >= len(s.present) {
		s.present = append(s.present, false)
		s.props = append(s.props, dg.VertexProperties{})
	}
}

// AddVertex implements dg.Store.
func (s *Store) AddVertex(hash int32, _ int32, p dg.VertexProperties) error {
	if hash < 0 {
		return dg.ErrVertexNotFound
	}
	s.grow(hash)
	if s.present[hash] {
		return dg.ErrVertexAlreadyExists
	}
	s.present[hash], s.props[hash] = true, p
	s.nverts++
	return nil
}

func (s *Store) has(v int32) bool { return v >= 0 && int(v) < len(s.present) && s.present[v] }

// Vertex implements dg.Store (the vertex value is its id).
func (s *Store) Vertex(hash int32) (int32, dg.VertexProperties, error) {
	if !s.has(hash) {
		return 0, dg.VertexProperties{}, dg.ErrVertexNotFound
	}
	return hash, s.props[hash], nil
}

// RemoveVertex implements dg.Store.
func (s *Store) RemoveVertex(hash int32) error {
	if !s.has(hash) {
		return dg.ErrVertexNotFound
	}
	for i, e := range s.edges {
		if s.alive[i] && (e.Source == hash || e.Target == hash) {
			return dg.ErrVertexHasEdges
		}
	}
	s.present[hash] = false
	s.nverts--
	return nil
}

// ListVertices implements dg.Store (ascending ids).
func (s *Store) ListVertices() ([]int32, error) {
	out := make([]int32, 0, s.nverts)
	for v, ok := range s.present {
		if ok {
			out = append(out, int32(v))
		}
	}
	return out, nil
}

// VertexCount implements dg.Store.
func (s *Store) VertexCount() (int, error) { return s.nverts, nil }

// AddEdge implements dg.Store.
func (s *Store) AddEdge(src, dst int32, e dg.Edge[int32]) error {
	k := pairKey(src, dst)
	if id, ok := s.index[k]; ok && s.alive[id] {
		return dg.ErrEdgeAlreadyExists
	}
	s.index[k] = int32(len(s.edges))
	s.edges = append(s.edges, e)
	s.alive = append(s.alive, true)
	return nil
}

// UpdateEdge implements dg.Store.
func (s *Store) UpdateEdge(src, dst int32, e dg.Edge[int32]) error {
	id, ok := s.index[pairKey(src, dst)]
	if !ok || !s.alive[id] {
		return dg.ErrEdgeNotFound
	}
	s.edges[id] = e
	return nil
}

// RemoveEdge implements dg.Store.
func (s *Store) RemoveEdge(src, dst int32) error {
	id, ok := s.index[pairKey(src, dst)]
	if !ok || !s.alive[id] {
		return dg.ErrEdgeNotFound
	}
	s.alive[id] = false
	delete(s.index, pairKey(src, dst))
	return nil
}

// Edge implements dg.Store.
func (s *Store) Edge(src, dst int32) (dg.Edge[int32], error) {
	id, ok := s.index[pairKey(src, dst)]
	if !ok || !s.alive[id] {
		return dg.Edge[int32]{}, dg.ErrEdgeNotFound
	}
	return s.edges[id], nil
}

// ListEdges implements dg.Store (insertion order).
func (s *Store) ListEdges() ([]dg.Edge[int32], error) {
	out := make([]dg.Edge[int32], 0, len(s.edges))
	for i, e := range s.edges {
		if s.alive[i] {
			out = append(out, e)
		}
	}
	return out, nil
}

func idHash(v int32) int32 { return v }

// Library wraps g (or the subgraph of the given nodes, when nodes is non-nil) as a directed,
// weighted dominikbraun/graph over a slice Store. Edge weights are g's (int64 narrowed to int);
// label, when non-nil, gives each vertex and edge a "label" attribute for DOT output.
func (g *Graph) Library(nodes []int32, vertexLabel func(v int32) string, edgeLabel func(e int32) string) (dg.Graph[int32, int32], error) {
	lg := dg.NewWithStore(idHash, dg.Store[int32, int32](NewStore()), dg.Directed(), dg.Weighted())
	keep := make(map[int32]bool, len(nodes))
	if nodes == nil {
		for v := 0; v < g.N; v++ {
			keep[int32(v)] = true
		}
	} else {
		for _, v := range nodes {
			keep[v] = true
		}
	}
	vs := make([]int32, 0, len(keep))
	for v := range keep {
		vs = append(vs, v)
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i] < vs[j] })
	for _, v := range vs {
		var opts []func(*dg.VertexProperties)
		if vertexLabel != nil {
			opts = append(opts, dg.VertexAttribute("label", vertexLabel(v)))
		}
		if err := lg.AddVertex(v, opts...); err != nil {
			return nil, err
		}
	}
	for e := range g.Src {
		u, v := g.Src[e], g.Dst[e]
		if !keep[u] || !keep[v] {
			continue
		}
		opts := []func(*dg.EdgeProperties){dg.EdgeWeight(int(g.W[e]))}
		if edgeLabel != nil {
			opts = append(opts, dg.EdgeAttribute("label", edgeLabel(int32(e))))
		}
		if err := lg.AddEdge(u, v, opts...); err != nil {
			return nil, err
		}
	}
	return lg, nil
}

// WriteDOT writes the subgraph of nodes (nil: all) in Graphviz DOT through the library's draw package.
func (g *Graph) WriteDOT(w io.Writer, nodes []int32, vertexLabel func(v int32) string, edgeLabel func(e int32) string) error {
	lg, err := g.Library(nodes, vertexLabel, edgeLabel)
	if err != nil {
		return err
	}
	return draw.DOT(lg, w)
}
