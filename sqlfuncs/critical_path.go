package sqlfuncs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"tracesql/graph"
)

// Critical-path table functions (design.md §5). Every one is internal: the NULL-safe public macros
// are in queries/views/50_critical_path.sql. All work happens at bind time on env.DB (a connection
// other than the one running the query); FillChunk only copies.
//
// Common positional arguments (cpArgs): label, rank, annotation, instance, instance_end, algorithm,
// data_load_events (JSON array of strings), add_zero_weight_launch_edges, strict_negative_weights,
// compat, aggregate (ctda only).

type cpArgs struct {
	label     string
	rank      int64
	opts      graph.Options
	algorithm string
	dataLoad  []string
	aggregate bool // ctda: aggregate events into CDG nodes (false: event-level nodes)
}

const cpArgCount = 11

func cpArgTypes(extra ...duckdb.Type) []duckdb.TypeInfo {
	ts := []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BIGINT, duckdb.TYPE_VARCHAR, duckdb.TYPE_BIGINT,
		duckdb.TYPE_BIGINT, duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR, duckdb.TYPE_BOOLEAN, duckdb.TYPE_BOOLEAN,
		duckdb.TYPE_BOOLEAN, duckdb.TYPE_BOOLEAN}
	return typeInfos(append(ts, extra...)...)
}

// typeInfos returns the TypeInfo of each primitive type, for a table function's arguments (a primitive
// type always has one: an error is a bug).
func typeInfos(ts ...duckdb.Type) []duckdb.TypeInfo {
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

// argReader reads an internal table function's positional arguments, keeping the first error. The internal
// functions are called only through the project's macros (RefuseInternalCall refuses a user's call), which pass the
// declared types; a wrong type is still an error here, not a panic.
type argReader struct {
	args []any
	err  error
}

// readArg returns argument i (from 0; name for the message) as a T, or T's zero value after recording the error
// "argument N (name): want VARCHAR, got BIGINT" when it is missing, NULL or of another type.
func readArg[T any](r *argReader, i int, name string) T {
	v, err := argAs[T](r.args, i, name)
	if err != nil && r.err == nil {
		r.err = err
	}
	return v
}

// argAs returns args[i] (i from 0; name for the message) as a T, or an error "argument N (name): want VARCHAR, got
// BIGINT" when it is missing, NULL or of another type.
func argAs[T any](args []any, i int, name string) (T, error) {
	var zero T
	if i >= len(args) {
		return zero, fmt.Errorf("argument %d (%s): missing (%d arguments given)", i+1, name, len(args))
	}
	if args[i] == nil {
		return zero, fmt.Errorf("argument %d (%s) is NULL", i+1, name)
	}
	v, ok := args[i].(T)
	if !ok {
		return zero, fmt.Errorf("argument %d (%s): want %s, got %s", i+1, name, argTypeName(zero), argTypeName(args[i]))
	}
	return v, nil
}

// argTypeName is the SQL name of the type of an argument's Go value (the Go type when it has none here).
func argTypeName(v any) string {
	switch v.(type) {
	case string:
		return "VARCHAR"
	case int64:
		return "BIGINT"
	case int32:
		return "INTEGER"
	case bool:
		return "BOOLEAN"
	case float64:
		return "DOUBLE"
	case float32:
		return "FLOAT"
	}
	return fmt.Sprintf("%T", v)
}

func parseCPArgs(args []any) (cpArgs, error) {
	var a cpArgs
	if len(args) < cpArgCount {
		return a, fmt.Errorf("expected %d arguments, got %d", cpArgCount, len(args))
	}
	for i, v := range args[:cpArgCount] {
		if v == nil {
			return a, fmt.Errorf("argument %d is NULL", i+1)
		}
	}
	r := &argReader{args: args}
	a.label = readArg[string](r, 0, "label")
	a.rank = readArg[int64](r, 1, "rank")
	a.opts.Annotation = readArg[string](r, 2, "annotation")
	instance := readArg[int64](r, 3, "instance")
	instanceEnd := readArg[int64](r, 4, "instance_end")
	algorithm := readArg[string](r, 5, "algorithm")
	dataLoad := readArg[string](r, 6, "data_load_events")
	a.opts.ZeroWeightLaunchEdges = readArg[bool](r, 7, "add_zero_weight_launch_edges")
	a.opts.StrictNegativeWeights = readArg[bool](r, 8, "strict_negative_weights")
	a.opts.Compat = readArg[bool](r, 9, "compat")
	a.aggregate = readArg[bool](r, 10, "aggregate")
	if r.err != nil {
		return a, r.err
	}
	if a.rank < 0 {
		// tracesOf reads a negative rank as "every rank" (its internal callers' wildcard)
		return a, fmt.Errorf("rank must be a rank number ≥ 0, not %d", a.rank)
	}
	a.opts.Instance = int(instance)
	a.opts.InstanceEnd = int(instanceEnd)
	if a.opts.InstanceEnd < -1 {
		return a, fmt.Errorf("instance_end must be -1 (= instance) or an instance number ≥ instance, not %d", a.opts.InstanceEnd)
	}
	a.algorithm = strings.ToLower(algorithm)
	dl := strings.TrimSpace(dataLoad)
	if dl != "" && dl != "null" {
		var list []*string // NULL entries are left out (a NULL pattern would otherwise match every event)
		if err := json.Unmarshal([]byte(dl), &list); err != nil {
			var one string
			if err2 := json.Unmarshal([]byte(dl), &one); err2 != nil {
				return a, fmt.Errorf("data_load_events: want a list of strings, got %s", dl)
			}
			list = []*string{&one}
		}
		for _, p := range list {
			if p != nil {
				if *p == "" {
					// a search for "" finds every name: all CPU time would become data_loading
					return a, fmt.Errorf("data_load_events: an empty pattern matches every event; give the names to look for, e.g. ['DataLoader']")
				}
				a.dataLoad = append(a.dataLoad, *p)
			}
		}
	}
	a.opts.DataLoadEvents = a.dataLoad
	switch a.algorithm {
	case "hta", "ctda":
	default:
		return a, fmt.Errorf("unknown algorithm %q (want 'hta' or 'ctda')", a.algorithm)
	}
	// options of the other algorithm would be silently ignored
	switch {
	case a.algorithm == "hta" && !a.aggregate:
		return a, fmt.Errorf("aggregate := false is an option of algorithm := 'ctda' (the hta graph is always event-level)")
	case a.algorithm == "ctda" && a.opts.ZeroWeightLaunchEdges:
		return a, fmt.Errorf("add_zero_weight_launch_edges is an option of algorithm := 'hta'")
	case a.algorithm == "ctda" && a.opts.StrictNegativeWeights:
		return a, fmt.Errorf("strict_negative_weights is an option of algorithm := 'hta'")
	}
	return a, nil
}

// cpTrace is the trace a call refers to.
type cpTrace struct {
	id     int64
	label  string
	rank   int64
	file   loadedFile
	events int64
}

// querier is what reads the traces table: a *sql.DB, or a *sql.Conn of one.
type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

// loadedRanks says which ranks are loaded (under label, unless it is ""), for an error about a rank
// that is not: the critical-path family defaults to rank 0, which a one-rank job may not have. It is ""
// when the query fails: the error then says nothing of what is loaded rather than something false.
func loadedRanks(ctx context.Context, db querier, label string) string {
	var ranks sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT string_agg(r::VARCHAR, ', ' ORDER BY r) FROM
		(SELECT DISTINCT rank AS r FROM traces WHERE ? = '' OR label = ?)`, label, label).Scan(&ranks); err != nil {
		return ""
	}
	if !ranks.Valid {
		if label != "" {
			return fmt.Sprintf("none under label %q", label)
		}
		return "no trace is loaded"
	}
	return "ranks loaded: " + ranks.String
}

// tracesOf lists the traces of rank (rank < 0: every rank) under label ("" = every label), by trace_id.
func tracesOf(ctx context.Context, db querier, label string, rank int64) ([]cpTrace, error) {
	rows, err := db.QueryContext(ctx, `SELECT trace_id, label, rank, path, file_bytes, file_mtime, coalesce(events, 0), `+nameSharedSQL+` FROM traces
		WHERE (rank = ? OR ? < 0) AND (? = '' OR label = ?) ORDER BY trace_id`, rank, rank, label, label)
	if err != nil {
		return nil, fmt.Errorf("find trace: %w", err)
	}
	defer rows.Close()
	var found []cpTrace
	for rows.Next() {
		var t cpTrace
		if err := rows.Scan(&t.id, &t.label, &t.rank, &t.file.path, &t.file.bytes, &t.file.mtime, &t.events, &t.file.nameShared); err != nil {
			return nil, err
		}
		t.file.label, t.file.rank = t.label, t.rank
		found = append(found, t)
	}
	return found, rows.Err()
}

// resolveTrace finds the one trace of rank (≥ 0) under label ("" = any label): an error names what is
// loaded when there is none, and asks for a label when there are several. Every function that works on one
// trace resolves it here, so that these errors read the same whichever reports them (the caller prefixes
// its own name).
func resolveTrace(ctx context.Context, db querier, label string, rank int64) (cpTrace, error) {
	if rank < 0 {
		// (tracesOf would read it as every rank)
		return cpTrace{}, fmt.Errorf("rank must be a rank number ≥ 0, not %d", rank)
	}
	found, err := tracesOf(ctx, db, label, rank)
	if err != nil {
		return cpTrace{}, err
	}
	loaded := func() string {
		if s := loadedRanks(ctx, db, label); s != "" {
			return " (" + s + ")"
		}
		return ""
	}
	switch {
	case len(found) == 0 && label == "":
		return cpTrace{}, fmt.Errorf("no trace with rank %d is loaded%s", rank, loaded())
	case len(found) == 0:
		return cpTrace{}, fmt.Errorf("no trace with label %q and rank %d is loaded%s", label, rank, loaded())
	case len(found) > 1:
		var ls []string
		for _, t := range found {
			ls = append(ls, fmt.Sprintf("%q", t.label))
		}
		return cpTrace{}, fmt.Errorf("rank %d is loaded under several labels (%s): pass label := ...", rank, strings.Join(ls, ", "))
	}
	return found[0], nil
}

// cpCacheKey identifies an HTA graph: the database, the trace (and its event count, which changes
// when a trace is reloaded) and the options.
type cpCacheKey struct {
	env    *Env
	trace  int64
	events int64
	opts   string
}

var cpCache graphCache[cpCacheKey, *graph.CPGraph]

// cpGraph returns the graph of a call's window (built, or from the cache).
func cpGraph(ctx context.Context, env *Env, a cpArgs) (*graph.CPGraph, cpTrace, error) {
	if a.algorithm != "hta" {
		return nil, cpTrace{}, fmt.Errorf("algorithm %q: this function supports algorithm := 'hta' only (ctda: critical_path, critical_path_summary, hotspots, cdg_nodes, cdg_edges)", a.algorithm)
	}
	tResolve := time.Now()
	tr, err := resolveTrace(ctx, env.DB, a.label, a.rank)
	if err != nil {
		return nil, tr, err
	}
	key := cpCacheKey{env, tr.id, tr.events, fmt.Sprintf("%+v", a.opts)}
	if g, ok := cpCache.get(key); ok {
		return g, tr, nil
	}
	t0 := time.Now()
	if cpTiming {
		fmt.Fprintf(os.Stderr, "cp: resolve %v\n", time.Since(tResolve))
	}
	f, err := cachedFrame(ctx, env, tr, a.opts.Compat)
	if err != nil {
		return nil, tr, err
	}
	t1 := time.Now()
	g, err := graph.BuildHTA(ctx, f, a.opts)
	if cpTiming {
		fmt.Fprintf(os.Stderr, "cp: read %d rows %v, build %v\n", f.Len(), t1.Sub(t0), time.Since(t1))
	}
	if err != nil {
		return nil, tr, fmt.Errorf("critical path of label %q rank %d: %w", tr.label, tr.rank, err)
	}
	cpCache.put(key, g)
	return g, tr, nil
}

// cpPublic names the public macro (queries/views/5*.sql) behind each internal table function, so that an
// error says which call of a statement failed: "rank must be an integer" alone was ambiguous where a
// statement joins critical_path with hotspots.
var cpPublic = map[string]string{
	"_cp_path": "critical_path", "_cp_summary": "critical_path_summary", "_cp_nodes": "cp_graph_nodes",
	"_cp_edges": "cp_graph_edges", "_cp_whatif": "critical_path_whatif", "_cp_overlay": "export_critical_path_overlay",
	"_hotspots": "hotspots", "_cdg_nodes": "cdg_nodes", "_cdg_edges": "cdg_edges",
}

// cpRegister registers one internal table function whose bind builds a cpTable.
func cpRegister(name string, argTypes []duckdb.TypeInfo, bind func(ctx context.Context, env *Env, args []any) (*cpTable, error)) {
	addTable(name, func(conn *sql.Conn, env *Env) error {
		return duckdb.RegisterTableUDF(conn, name, duckdb.ChunkTableFunction{
			Config: duckdb.TableFunctionConfig{Arguments: argTypes},
			BindArgumentsContext: func(ctx context.Context, _ map[string]any, args ...any) (duckdb.ChunkTableSource, error) {
				for i, v := range args {
					// duckdb-go v2.10503.1 aborts on a NULL before this runs (the CLI refuses direct
					// calls, TableFunctions); a driver that passes it on gives nil here.
					if v == nil {
						return nil, fmt.Errorf("%s: argument %d is NULL (call the public macro instead)", name, i+1)
					}
				}
				ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
				defer cancel()
				t0 := time.Now()
				t, err := bind(ctx, env, args)
				if cpTiming {
					fmt.Fprintf(os.Stderr, "cp: %s bind %v\n", name, time.Since(t0))
				}
				if public := cpPublic[name]; err != nil && public != "" && !strings.HasPrefix(err.Error(), public+": ") {
					return nil, fmt.Errorf("%s: %w", public, err)
				}
				if err != nil {
					return nil, err
				}
				for _, c := range t.cols {
					if c.isLazy() {
						continue
					}
					if l := max(len(c.i64), len(c.f64), len(c.str), len(c.b)); l != t.n {
						return nil, fmt.Errorf("%s: internal error: column %s has %d rows, table %d", name, c.name, l, t.n)
					}
				}
				return t, nil
			},
		})
	})
}

func usOf(ns int64) float64 { return float64(ns) / 1000 }

// boundRules are bound_by's rules for a call on trace tr: its data-load patterns and, outside compat mode,
// the trace's GPU event names that kernel_classes makes COMMUNICATION (read on every call, so that a row a
// user inserts counts at once; compat keeps HTA's own rule on the shortened name).
func boundRules(ctx context.Context, env *Env, a cpArgs, tr cpTrace) (graph.BoundRules, error) {
	if a.opts.Compat {
		return graph.BoundRules{DataLoad: graph.DataLoadRegexps(a.dataLoad)}, nil
	}
	// By default a pattern is a substring of the full name only: its regular-expression search on HTA's
	// shortened name, compat's rule, marked names without it ('.' every one, 'B|copy' both B and aten::copy_).
	rules := graph.BoundRules{DataLoadNames: a.dataLoad}
	rows, err := env.DB.QueryContext(ctx, fmt.Sprintf(`SELECT name FROM _kernel_types_in(false, %d, %d) WHERE kernel_type = 'COMMUNICATION'`, tr.id, tr.id))
	if err != nil {
		return rules, fmt.Errorf("kernel types: %w", err)
	}
	defer rows.Close()
	rules.Comm = map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return rules, fmt.Errorf("kernel types: %w", err)
		}
		rules.Comm[name] = true
	}
	return rules, rows.Err()
}

// pathTable is critical_path's output: one row per path edge in path order. Its columns are lazy:
// computed in FillChunk for the columns the query reads.
func pathTable(g *graph.CPGraph, tr cpTrace, edges []int32, weights []int64, rules graph.BoundRules) *cpTable {
	t := &cpTable{n: len(edges)}
	f := g.F
	bd := g.NewBounder(rules)
	attr := func(i int) (int32, bool) {
		r := g.Attr[edges[i]]
		return r, r >= 0
	}
	t.lazyString("label", func(int) (string, bool) { return tr.label, true })
	t.lazyInt("rank", func(int) (int64, bool) { return tr.rank, true })
	t.lazyInt("seq", func(i int) (int64, bool) { return int64(i), true })
	t.lazyInt("src_node", func(i int) (int64, bool) { return int64(g.G.Src[edges[i]]), true })
	t.lazyInt("dst_node", func(i int) (int64, bool) { return int64(g.G.Dst[edges[i]]), true })
	t.lazyInt("src_ev_idx", func(i int) (int64, bool) { return g.EvIdx(g.NodeRow[g.G.Src[edges[i]]]), true })
	t.lazyInt("dst_ev_idx", func(i int) (int64, bool) { return g.EvIdx(g.NodeRow[g.G.Dst[edges[i]]]), true })
	t.lazyInt("ev_idx", func(i int) (int64, bool) { r, ok := attr(i); return g.EvIdx(r), ok })
	t.lazyString("name", func(i int) (string, bool) {
		r, ok := attr(i)
		if !ok {
			return "", false
		}
		return f.Syms[f.Name[r]], true
	})
	t.lazyString("cat", func(i int) (string, bool) {
		r, ok := attr(i)
		if !ok {
			return "", false
		}
		return f.Syms[f.Cat[r]], true
	})
	for _, c := range []struct {
		name string
		col  []int64
	}{{"pid", f.Pid}, {"tid", f.Tid}, {"stream", f.Stream}} {
		col := c.col
		t.lazyInt(c.name, func(i int) (int64, bool) {
			r, ok := attr(i)
			if !ok {
				return 0, false
			}
			return col[r], true
		})
	}
	t.lazyString("edge_type", func(i int) (string, bool) { return graph.EdgeTypeName(g.G.Type[edges[i]]), true })
	t.lazyFloat("weight_us", func(i int) (float64, bool) { return usOf(weights[edges[i]]), true })
	t.lazyString("bound_by", func(i int) (string, bool) { return bd.BoundBy(edges[i]), true })
	t.lazyInt("ts", func(i int) (int64, bool) { return g.NodeTS[g.G.Src[edges[i]]], true })
	t.lazyInt("end_ts", func(i int) (int64, bool) { return g.NodeTS[g.G.Dst[edges[i]]], true })
	return t
}

// withBoundRules is the bind function of a critical-path table that both algorithms answer: it builds
// the window's graph for the algorithm asked for (ctda's CDG or HTA's graph), reads the bound_by rules
// and makes the table with ctda or hta.
func withBoundRules(ctda func(*graph.CDG, cpTrace, graph.BoundRules) *cpTable,
	hta func(*graph.CPGraph, cpTrace, graph.BoundRules) *cpTable) func(context.Context, *Env, []any) (*cpTable, error) {
	return func(ctx context.Context, env *Env, args []any) (*cpTable, error) {
		a, err := parseCPArgs(args)
		if err != nil {
			return nil, err
		}
		if a.algorithm == "ctda" {
			c, tr, err := ctdaGraph(ctx, env, a)
			if err != nil {
				return nil, err
			}
			rules, err := boundRules(ctx, env, a, tr)
			if err != nil {
				return nil, err
			}
			return ctda(c, tr, rules), nil
		}
		g, tr, err := cpGraph(ctx, env, a)
		if err != nil {
			return nil, err
		}
		rules, err := boundRules(ctx, env, a, tr)
		if err != nil {
			return nil, err
		}
		return hta(g, tr, rules), nil
	}
}

func init() {
	cpRegister("_cp_path", cpArgTypes(), withBoundRules(
		ctdaPathTable,
		func(g *graph.CPGraph, tr cpTrace, rules graph.BoundRules) *cpTable {
			return pathTable(g, tr, g.Path.Edges, g.GW, rules)
		}))
	cpRegister("_cp_summary", cpArgTypes(), withBoundRules(
		ctdaSummaryTable,
		func(g *graph.CPGraph, tr cpTrace, rules graph.BoundRules) *cpTable {
			return summaryTable(g, tr, g.Path.Edges, g.BreakdownWeights(), g.Path.Length, rules)
		}))

	cpRegister("_cp_nodes", cpArgTypes(), func(ctx context.Context, env *Env, args []any) (*cpTable, error) {
		a, err := parseCPArgs(args)
		if err != nil {
			return nil, err
		}
		g, tr, err := cpGraph(ctx, env, a)
		if err != nil {
			return nil, err
		}
		onPath := make([]bool, len(g.NodeRow))
		for _, v := range g.Path.Nodes {
			onPath[v] = true
		}
		f := g.F
		blocking := map[string]bool{"cudaDeviceSynchronize": true, "cudaStreamSynchronize": true,
			"cudaEventQuery": true, "cudaEventSynchronize": true, "cudaMemcpy": true, "cudaMemcpyAsync": true}
		t := &cpTable{n: len(g.NodeRow)}
		label, rank, node, ev := t.col("label", cpString), t.col("rank", cpInt), t.col("node", cpInt), t.col("ev_idx", cpInt)
		ts, isStart, isBlocking := t.col("ts", cpInt), t.col("is_start", cpBool), t.col("is_blocking", cpBool)
		name, cat, pid, tid, stream := t.col("name", cpString), t.col("cat", cpString), t.col("pid", cpInt), t.col("tid", cpInt), t.col("stream", cpInt)
		crit, hasEdges := t.col("on_critical_path", cpBool), t.col("has_edges", cpBool)
		gr := g.G
		for v, r := range g.NodeRow {
			hasEdges.addBool(gr.OutOff[v+1] > gr.OutOff[v] || gr.InOff[v+1] > gr.InOff[v], true)
			label.addString(tr.label, true)
			rank.addInt(tr.rank, true)
			node.addInt(int64(v), true)
			ev.addInt(f.EvIdx[r], true)
			ts.addInt(g.NodeTS[v], true)
			isStart.addBool(g.NodeStart[v], true)
			isBlocking.addBool(blocking[f.Syms[f.Name[r]]], true)
			name.addString(f.Syms[f.Name[r]], true)
			cat.addString(f.Syms[f.Cat[r]], true)
			pid.addInt(f.Pid[r], true)
			tid.addInt(f.Tid[r], true)
			stream.addInt(f.Stream[r], true)
			crit.addBool(onPath[v], true)
		}
		return t, nil
	})

	cpRegister("_cp_edges", cpArgTypes(), func(ctx context.Context, env *Env, args []any) (*cpTable, error) {
		a, err := parseCPArgs(args)
		if err != nil {
			return nil, err
		}
		g, tr, err := cpGraph(ctx, env, a)
		if err != nil {
			return nil, err
		}
		rules, err := boundRules(ctx, env, a, tr)
		if err != nil {
			return nil, err
		}
		return edgesTable(g, tr, rules), nil
	})
}

// summaryTable is HTA's summary() over the path edges with the given weights (HTA: the edges' own
// weights), plus the path length (pathLen, ns), the window, CPCR and the busy bound.
func summaryTable(g *graph.CPGraph, tr cpTrace, edges []int32, weights []int64, pathLen int64, rules graph.BoundRules) *cpTable {
	var s cpSummary
	bd := g.NewBounder(rules)
	end := g.SpanEnd()
	reached := int64(math.MinInt64)
	for _, e := range edges {
		w := weights[e]
		s.add(bd.BoundBy(e), w)
		// CPCR counts what the busy bound counts: the part of an edge's time inside the span and
		// inside the event it is attributed to, when that is a cpu_op, runtime/driver call or GPU
		// work (an annotation on the path is not work; the delay before a kernel is not the kernel).
		// Path edges follow each other in time, except where two kernels of one stream overlap in compat
		// mode (an edge back in time from the first one's end to the second one's start): counting from the
		// furthest point reached so far, the sum is their union.
		if r := g.Attr[e]; r >= 0 && graph.BusyRow(g.F, r) {
			s.attributed += inAttributedEvent(g, e, w, end, reached)
		}
		reached = max(reached, g.NodeTS[g.G.Dst[e]])
	}
	s.pathLen, s.edges = pathLen, len(edges)
	// HTA's whole-µs times round each event inward (compat), so a window shorter than a µs can end before
	// it starts: it is empty, not -1 µs long
	s.window = max(0, end-g.WindowStart)
	s.busy = graph.BusyBoundOf(g.Source, g.WindowStart, g.WindowEnd, end)
	return s.table(tr)
}

// inAttributedEvent is the part of path edge e's weight w inside the analysed span (up to end), inside the
// event it is attributed to (the delay before a kernel is not the kernel's), and after reached, the
// furthest point the path reached before it.
func inAttributedEvent(g *graph.CPGraph, e int32, w, end, reached int64) int64 {
	r := g.Attr[e]
	lo := max(g.NodeTS[g.G.Src[e]], g.WindowStart, g.F.TS[r], reached)
	hi := min(g.NodeTS[g.G.Dst[e]], end, g.F.TS[r]+g.F.Dur[r])
	return max(0, min(w, hi-lo))
}

// cpSummary accumulates a summary: time per bound_by bucket and the path's totals (ns).
type cpSummary struct {
	sums                       map[string]int64
	order                      []string
	total, attributed, pathLen int64
	edges                      int
	window, busy               int64
}

func (s *cpSummary) add(bound string, w int64) {
	if s.sums == nil {
		s.sums = map[string]int64{}
	}
	if _, ok := s.sums[bound]; !ok {
		s.order = append(s.order, bound)
	}
	s.sums[bound] += w
	s.total += w
}

func (s *cpSummary) table(tr cpTrace) *cpTable {
	sortStrings(s.order)
	// A path of no edges (the window holds only blocking calls, whose spans weigh 0) still has a window,
	// a CPCR and a busy bound: one row with no bucket says so, where no row read like a filter that
	// matched nothing.
	buckets, noPath := s.order, len(s.order) == 0
	if noPath {
		buckets = []string{""} // ("" is a bucket of its own: HTA's edges of no kind)
	}
	t := &cpTable{n: len(buckets)}
	label, rank, bound := t.col("label", cpString), t.col("rank", cpInt), t.col("bound_by", cpString)
	dur, pct := t.col("duration_us", cpFloat), t.col("pct", cpFloat)
	plen, nedges, win, cpcr := t.col("path_length_us", cpFloat), t.col("path_edges", cpInt), t.col("window_us", cpFloat), t.col("cpcr", cpFloat)
	busy := t.col("busy_bound", cpFloat)
	ratio := func(a, b int64) (float64, bool) {
		if b <= 0 {
			return 0, false
		}
		return float64(a) / float64(b), true
	}
	for _, b := range buckets {
		label.addString(tr.label, true)
		rank.addInt(tr.rank, true)
		bound.addString(b, !noPath)
		dur.addFloat(usOf(s.sums[b]), true)
		p, ok := ratio(s.sums[b]*100, s.total)
		pct.addFloat(p, ok)
		plen.addFloat(usOf(s.pathLen), true)
		nedges.addInt(int64(s.edges), true)
		win.addFloat(usOf(s.window), true)
		cpcr.addFloat(ratio(s.attributed, s.window))
		busy.addFloat(ratio(s.busy, s.window))
	}
	return t
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func edgesTable(g *graph.CPGraph, tr cpTrace, rules graph.BoundRules) *cpTable {
	onPath := make([]bool, len(g.G.Src))
	for _, e := range g.Path.Edges {
		onPath[e] = true
	}
	f := g.F
	t := &cpTable{n: len(g.G.Src)}
	label, rank := t.col("label", cpString), t.col("rank", cpInt)
	src, dst := t.col("src_node", cpInt), t.col("dst_node", cpInt)
	srcEv, dstEv, ev := t.col("src_ev_idx", cpInt), t.col("dst_ev_idx", cpInt), t.col("ev_idx", cpInt)
	typ, w, gw := t.col("edge_type", cpString), t.col("weight_us", cpFloat), t.col("edge_weight_us", cpFloat)
	name, stream, bound := t.col("name", cpString), t.col("stream", cpInt), t.col("bound_by", cpString)
	ts, endTS, crit := t.col("ts", cpInt), t.col("end_ts", cpInt), t.col("on_critical_path", cpBool)
	bd := g.NewBounder(rules)
	for e := range g.G.Src {
		u, v := g.G.Src[e], g.G.Dst[e]
		label.addString(tr.label, true)
		rank.addInt(tr.rank, true)
		src.addInt(int64(u), true)
		dst.addInt(int64(v), true)
		srcEv.addInt(g.EvIdx(g.NodeRow[u]), true)
		dstEv.addInt(g.EvIdx(g.NodeRow[v]), true)
		r := g.Attr[e]
		ok := r >= 0
		if !ok {
			r = 0
		}
		ev.addInt(g.EvIdx(r), ok)
		typ.addString(graph.EdgeTypeName(g.G.Type[e]), true)
		w.addFloat(usOf(g.GW[e]), true)
		gw.addFloat(usOf(g.G.W[e]), true)
		name.addString(f.Syms[f.Name[r]], ok)
		stream.addInt(f.Stream[r], ok)
		bound.addString(bd.BoundBy(int32(e)), true)
		ts.addInt(g.NodeTS[u], true)
		endTS.addInt(g.NodeTS[v], true)
		crit.addBool(onPath[e], true)
	}
	return t
}

// ResetCriticalPathCache forgets every cached critical-path graph (benchmarks use it to time full builds).
func ResetCriticalPathCache() {
	cpCache.reset()
	ctdaCache.reset()
	cpFrameCache.reset()
}

// cpTiming (TRACESQL_CP_TIMING set) prints the read and build times of each graph to stderr.
var cpTiming = os.Getenv("TRACESQL_CP_TIMING") != ""
