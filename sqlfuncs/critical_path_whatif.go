package sqlfuncs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"tracesql/graph"
	"tracesql/queries"
)

var identPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}$`)

// quoteTable renders a table name for SQL: dotted plain identifiers as written, anything else quoted.
func quoteTable(name string) string {
	if identPath.MatchString(name) {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func init() {
	// _cp_whatif(common args..., scale, factor): the critical path after multiplying by factor the
	// weights of the operator edges attributed to events matching the SQL predicate scale (on events).
	cpRegister("_cp_whatif", cpArgTypes(duckdb.TYPE_VARCHAR, duckdb.TYPE_DOUBLE), func(ctx context.Context, env *Env, args []any) (*cpTable, error) {
		a, err := parseCPArgs(args)
		if err != nil {
			return nil, err
		}
		r := &argReader{args: args}
		scale, factor := strings.TrimSpace(readArg[string](r, cpArgCount, "scale")), readArg[float64](r, cpArgCount+1, "factor")
		if r.err != nil {
			return nil, r.err
		}
		if math.IsNaN(factor) || math.IsInf(factor, 0) || factor < 0 {
			return nil, fmt.Errorf("critical_path_whatif: factor must be a finite number >= 0, got %v", factor)
		}
		// A kernel made shorter must still start after its launch call, and one made longer must still end
		// before the next kernel on its stream starts: HTA's graph has only the edge that held each kernel
		// back in the trace, so zero-weight edges stand for the other (r38 #1).
		a.opts.StreamOrderEdges = a.opts.ZeroWeightLaunchEdges
		g, tr, err := cpGraph(ctx, env, a)
		if err != nil {
			return nil, err
		}
		if scale == "" {
			return nil, errors.New("critical_path_whatif: scale is required: a SQL predicate on events naming what to re-weight (e.g. scale := 'name LIKE ''%gemm%''')")
		}
		if semi, _ := queries.StatementEnd(scale, 0); semi >= 0 {
			return nil, fmt.Errorf("critical_path_whatif: scale %q must be one SQL predicate over events' columns, without ';'", scale)
		}
		if err := RefuseInternalCall(scale); err != nil {
			return nil, fmt.Errorf("critical_path_whatif: scale %q: %w", scale, err)
		}
		match := map[int64]bool{}
		// The trace's events first: a predicate such as "true) OR (true" cannot reach past its parentheses
		// to other traces' rows.
		// (on a connection of its own, as every Go function's query: the session's variables and TEMP
		// tables are not there, which the errors below say where they may be why)
		const ownConnection = " (scale runs on a connection of its own: the session's variables and TEMP tables are not visible there; use literals and regular tables)"
		rows, err := env.DB.QueryContext(ctx, `SELECT trace_id, ev_idx FROM (SELECT * FROM events WHERE trace_id = ?) events WHERE (`+scale+"\n)", tr.id) // (the newline ends a -- comment in scale, which swallowed the ')')
		if err != nil {
			hint := ""
			if strings.Contains(err.Error(), "does not exist") {
				hint = ownConnection
			}
			return nil, fmt.Errorf("critical_path_whatif: scale predicate %q%s: %w", scale, hint, err)
		}
		for rows.Next() {
			var trace, ev int64
			if err := rows.Scan(&trace, &ev); err != nil {
				rows.Close()
				return nil, err
			}
			// (a UNION inside the predicate can still bring in rows of other traces: r38 #4)
			if trace == tr.id {
				match[ev] = true
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("critical_path_whatif: scale predicate %q: %w", scale, err)
		}
		w := make([]int64, len(g.GW))
		copy(w, g.GW)
		var total float64
		scaledEdges := 0
		for e := range w {
			if r := g.Attr[e]; r >= 0 && g.G.Type[e] == graph.EdgeOperator && match[g.EvIdx(r)] {
				if w[e] != 0 {
					// (a blocking call's span weighs 0: its wait is on the sync edge; re-weighting it changes nothing)
					scaledEdges++
				}
				scaled := math.Round(float64(w[e]) * factor)
				total += math.Abs(scaled)
				if total < 1<<62 {
					w[e] = int64(scaled)
				}
				continue
			}
			total += math.Abs(float64(w[e]))
		}
		// A predicate that re-weights nothing (a typo, 'kernel' for a 2021 trace's 'Kernel') would return the
		// unchanged path, which reads as "this change gains nothing".
		if len(match) == 0 {
			hint := ""
			if strings.Contains(strings.ToLower(scale), "getvariable") {
				hint = ownConnection
			}
			return nil, fmt.Errorf("critical_path_whatif: scale predicate %q matches no event of the trace%s", scale, hint)
		}
		if scaledEdges == 0 {
			return nil, fmt.Errorf("critical_path_whatif: scale predicate %q matches %d event(s) of the trace, none with a span of own time in this window's graph (a blocking call's wait is its sync edge's, not its own)", scale, len(match))
		}
		if total >= 1<<62 {
			return nil, fmt.Errorf("critical_path_whatif: factor %v makes the path longer than int64 nanoseconds can hold", factor)
		}
		p, err := g.G.LongestPath(ctx, w)
		if err != nil {
			return nil, fmt.Errorf("critical_path_whatif: %w", err)
		}
		// The baseline to compare with is this graph's path before re-weighting: the edges added above can
		// make it longer than critical_path's.
		base, err := g.G.LongestPath(ctx, g.GW)
		if err != nil {
			return nil, fmt.Errorf("critical_path_whatif: %w", err)
		}
		rules, err := boundRules(ctx, env, a, tr)
		if err != nil {
			return nil, err
		}
		t := pathTable(g, tr, p.Edges, w, rules)
		// (the sum of the rows' weight_us in float64 leaves residues: 7335.499999999999 for 7335.5)
		t.lazyFloat("path_length_us", func(int) (float64, bool) { return usOf(p.Length), true })
		t.lazyFloat("baseline_path_us", func(int) (float64, bool) { return usOf(base.Length), true })
		return t, nil
	})

	// _longest_path(table): the longest path over any table with src_node, dst_node, weight_us.
	cpRegister("_longest_path", cpTypeInfos(duckdb.TYPE_VARCHAR), func(ctx context.Context, env *Env, args []any) (*cpTable, error) {
		name, err := argAs[string](args, 0, "edges_table")
		if err != nil {
			return nil, fmt.Errorf("longest_path: %w", err)
		}
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("longest_path: pass the name of a table with src_node, dst_node, weight_us")
		}
		// non_integer: a node id the BIGINT cast would round (1.5 became 2, and an edge 1.5→2 a cycle)
		rows, err := env.DB.QueryContext(ctx, `SELECT src_node::BIGINT, dst_node::BIGINT, weight_us::DOUBLE,
			CASE WHEN src_node::BIGINT <> src_node THEN src_node::VARCHAR WHEN dst_node::BIGINT <> dst_node THEN dst_node::VARCHAR END
			FROM `+quoteTable(name))
		if err != nil {
			// The hint goes before DuckDB's message, which ends in its SQL context (LINE 1: ...) that
			// the CLI leaves out.
			hint := ""
			if strings.Contains(err.Error(), "does not exist") {
				hint = " (if it is a TEMP table: the session's are not visible here, use a regular table)"
			}
			return nil, fmt.Errorf("longest_path(%q)%s: %w", name, hint, err)
		}
		defer rows.Close()
		// Node ids are renumbered densely in order of first appearance (the order the tie rules go by
		// anyway), so that memory follows the number of nodes, not the largest id: a single edge to id
		// 2^31 used to allocate per-node arrays of 2^31 entries.
		var src, dst []int32
		var wus []float64
		index := map[int64]int32{}
		var ids []int64
		node := func(id int64) int32 {
			k, ok := index[id]
			if !ok {
				k = int32(len(ids))
				index[id] = k
				ids = append(ids, id)
			}
			return k
		}
		for rows.Next() {
			var s, d *int64
			var w *float64
			var nonInteger *string
			if err := rows.Scan(&s, &d, &w, &nonInteger); err != nil {
				return nil, fmt.Errorf("longest_path(%q): %w", name, err)
			}
			if nonInteger != nil {
				return nil, fmt.Errorf("longest_path(%q): node ids (src_node, dst_node) must be integers, not %s", name, *nonInteger)
			}
			if s == nil || d == nil {
				return nil, fmt.Errorf("longest_path(%q): NULL src_node or dst_node", name)
			}
			if len(ids) >= math.MaxInt32-2 {
				return nil, fmt.Errorf("longest_path(%q): more than 2^31-3 nodes", name)
			}
			if w == nil {
				// (an UPDATE whose expression gave NULL, say: 0 would be a silent answer to another question)
				return nil, fmt.Errorf("longest_path(%q): NULL weight_us on %d→%d", name, *s, *d)
			}
			wv := *w
			if math.IsNaN(wv) || math.Abs(wv) > maxWeightUS {
				return nil, fmt.Errorf("longest_path(%q): weight_us %v on %d→%d is not a number within ±%g", name, wv, *s, *d, maxWeightUS)
			}
			sk := node(*s)
			src, dst, wus = append(src, sk), append(dst, node(*d)), append(wus, wv)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("longest_path(%q): %w", name, err)
		}
		if sum := sumAbs(wus); sum*1000 >= 1<<62 {
			return nil, fmt.Errorf("longest_path(%q): the weights add up to %g µs, more than int64 nanoseconds can hold", name, sum)
		}
		// Weights in ns (integers) so that the path arithmetic is exact; duplicate pairs: the last row wins.
		b := graph.NewBuilder(len(ids), len(src))
		for i := range src {
			b.AddEdge(src[i], dst[i], int64(math.Round(wus[i]*1000)), 0)
		}
		gr := b.Build()
		p, err := gr.LongestPath(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("longest_path(%q): %w", name, err)
		}
		t := &cpTable{n: len(p.Edges)}
		seq, s, d, w, total := t.col("seq", cpInt), t.col("src_node", cpInt), t.col("dst_node", cpInt), t.col("weight_us", cpFloat), t.col("path_length_us", cpFloat)
		for i, e := range p.Edges {
			seq.addInt(int64(i), true)
			s.addInt(ids[gr.Src[e]], true)
			d.addInt(ids[gr.Dst[e]], true)
			w.addFloat(usOf(gr.W[e]), true)
			total.addFloat(usOf(p.Length), true)
		}
		return t, nil
	})
}

func cpTypeInfos(ts ...duckdb.Type) []duckdb.TypeInfo {
	out := make([]duckdb.TypeInfo, len(ts))
	for i, t := range ts {
		ti, err := duckdb.NewTypeInfo(t)
		if err != nil {
			panic(err)
		}
		out[i] = ti
	}
	return out
}

// maxWeightUS bounds one longest_path weight (µs): ~146 years, far beyond any trace, well inside int64 ns.
const maxWeightUS float64 = 1 << 52

func sumAbs(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += math.Abs(x)
	}
	return s
}
