package sqlfuncs

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"tracesql/graph"
)

// The cross-thread critical path (algorithm := 'ctda', graph/ctda.go): critical_path and
// critical_path_summary rows, hotspots, and the CDG's nodes and edges. The phase rules are read from
// the phase_rules table at each call, so an edited rule takes effect at once.

// ctdaPhaseRules reads phase_rules in priority order and compiles the patterns.
func ctdaPhaseRules(ctx context.Context, env *Env) ([]graph.PhaseRule, string, error) {
	rows, err := env.DB.QueryContext(ctx, `SELECT priority, pattern, phase FROM phase_rules
		WHERE pattern IS NOT NULL AND phase IS NOT NULL ORDER BY priority NULLS LAST, pattern, phase`)
	if err != nil {
		return nil, "", fmt.Errorf("read phase_rules: %w", err)
	}
	defer rows.Close()
	var out []graph.PhaseRule
	var key strings.Builder
	for rows.Next() {
		var prio *int64
		var pat, phase string
		if err := rows.Scan(&prio, &pat, &phase); err != nil {
			return nil, "", fmt.Errorf("read phase_rules: %w", err)
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, "", fmt.Errorf("phase_rules: pattern %q (phase %s) is not a valid regular expression: %v", pat, phase, err)
		}
		out = append(out, graph.PhaseRule{Pattern: re, Phase: phase})
		fmt.Fprintf(&key, "%s\x00%s\x00", pat, phase)
	}
	return out, key.String(), rows.Err()
}

// ctdaCache is keyed by database, trace, options and the phase rules' text.
var ctdaCache graphCache[string, *graph.CDG]

// ctdaGraph returns the CDG of a call's window (built, or from the cache).
func ctdaGraph(ctx context.Context, env *Env, a cpArgs) (*graph.CDG, cpTrace, error) {
	tr, err := resolveTrace(ctx, env.DB, a.label, a.rank)
	if err != nil {
		return nil, tr, err
	}
	rules, rulesKey, err := ctdaPhaseRules(ctx, env)
	if err != nil {
		return nil, tr, err
	}
	key := fmt.Sprintf("%p|%d|%d|%+v|%v|%s", env, tr.id, tr.events, a.opts, a.aggregate, rulesKey)
	if c, ok := ctdaCache.get(key); ok {
		return c, tr, nil
	}
	t0 := time.Now()
	f, err := cachedFrame(ctx, env, tr, a.opts.Compat)
	if err != nil {
		return nil, tr, err
	}
	t1 := time.Now()
	c, err := graph.BuildCTDA(ctx, f, graph.CTDAOptions{Options: a.opts, Phases: rules, Aggregate: a.aggregate})
	if cpTiming {
		fmt.Fprintf(os.Stderr, "ctda: read %d rows %v, build %v (%v)\n", f.Len(), t1.Sub(t0), time.Since(t1), c)
	}
	if err != nil {
		return nil, tr, fmt.Errorf("critical path (ctda) of label %q rank %d: %w", tr.label, tr.rank, err)
	}
	ctdaCache.put(key, c)
	return c, tr, nil
}

// ctdaRow is one critical_path row of the ctda path: the dependency edge into a step (edge >= 0)
// or a part of the step's own counted span (edge < 0; part: which, below).
type ctdaRow struct {
	step     int
	edge     int32
	src      int32
	dst      int32
	weight   int64
	from, to int64
	part     spanPart
}

// spanPart: a GPU node's span is its events' time, then two more rows over the same ts..end_ts: the
// time its launcher works while the stream waits (the launcher's CPU work, as aggregate=false's path
// through the CPU nodes counts it) and the time neither runs (a kernel gap, as between the nodes of
// aggregate=false). Labelling the whole span GPU work put a 109 ms node with 23 ms of kernels into
// gpu_compute_bound (hta/negative_queue_length_values_check step 1).
type spanPart uint8

const (
	partOwn spanPart = iota
	partLauncher
	partIdle
)

func ctdaRows(c *graph.CDG) []ctdaRow {
	out := make([]ctdaRow, 0, 2*len(c.Path))
	prevEnd := int64(0)
	for i, s := range c.Path {
		if i > 0 {
			prev := c.Path[i-1].Node
			out = append(out, ctdaRow{step: i, edge: s.Edge, src: prev, dst: s.Node, weight: s.Gap, from: prevEnd, to: s.Lo})
		}
		span := ctdaRow{step: i, edge: -1, src: s.Node, dst: s.Node, weight: s.Hi - s.Lo - s.Launcher - s.Idle, from: s.Lo, to: s.Hi}
		out = append(out, span)
		for _, p := range []struct {
			part spanPart
			w    int64
		}{{partLauncher, s.Launcher}, {partIdle, s.Idle}} {
			if p.w > 0 {
				span.part, span.weight = p.part, p.w
				out = append(out, span)
			}
		}
		prevEnd = s.Hi
	}
	return out
}

// ctdaEventNode: the node whose naming event a row is attributed to (-1: none).
func ctdaEventNode(c *graph.CDG, r ctdaRow) int32 {
	switch {
	case r.edge >= 0 || r.part == partIdle:
		return -1
	case r.part == partLauncher:
		return c.Nodes[r.dst].Launcher
	}
	return r.dst
}

func ctdaEdgeType(c *graph.CDG, r ctdaRow) string {
	switch {
	case r.part == partIdle:
		return graph.EdgeTypeName(graph.EdgeKernelKernel)
	case r.edge < 0:
		return graph.EdgeTypeName(graph.EdgeOperator)
	}
	return graph.EdgeTypeName(c.G.Type[r.edge])
}

func ctdaBound(c *graph.CDG, r ctdaRow, spans *graph.SpanBounder) string {
	switch {
	case r.part == partIdle:
		return graph.BoundKernelKernel
	case r.part == partLauncher:
		return spans.BoundByNamed(c.Nodes[r.dst].Launcher, c.Path[r.step].LauncherNamed)
	case r.edge < 0:
		return spans.BoundByNamed(r.dst, c.Path[r.step].Named)
	}
	return c.EdgeBoundBy(r.edge)
}

// ctdaPathTable is critical_path for algorithm 'ctda': per path step, the edge into it (weight:
// the time only the dependency explains) and its counted span (weight: its length; the attributed
// event is the node's naming event). Columns are lazy, as pathTable's: an event-level path
// (aggregate := false) has millions of rows.
func ctdaPathTable(c *graph.CDG, tr cpTrace, rules graph.BoundRules) *cpTable {
	rows := ctdaRows(c)
	f := c.F
	spans := c.NewSpanBounder(rules)
	t := &cpTable{n: len(rows)}
	// attributed: the row of the event a path row is attributed to (ok=false: none).
	attributed := func(i int) (int32, bool) {
		r := rows[i]
		if r.edge < 0 && r.part == partOwn {
			return c.Path[r.step].Named, true
		}
		if r.part == partLauncher {
			return c.Path[r.step].LauncherNamed, true
		}
		if en := ctdaEventNode(c, r); en >= 0 {
			return c.Nodes[en].MainRow, true
		}
		return 0, false
	}
	mainEv := func(n int32) int64 { return f.EvIdx[c.Nodes[n].MainRow] }
	t.lazyString("label", func(int) (string, bool) { return tr.label, true })
	t.lazyInt("rank", func(int) (int64, bool) { return tr.rank, true })
	t.lazyInt("seq", func(i int) (int64, bool) { return int64(i), true })
	t.lazyInt("src_node", func(i int) (int64, bool) { return int64(rows[i].src), true })
	t.lazyInt("dst_node", func(i int) (int64, bool) { return int64(rows[i].dst), true })
	t.lazyInt("src_ev_idx", func(i int) (int64, bool) { return mainEv(rows[i].src), true })
	t.lazyInt("dst_ev_idx", func(i int) (int64, bool) { return mainEv(rows[i].dst), true })
	t.lazyInt("ev_idx", func(i int) (int64, bool) { m, ok := attributed(i); return f.EvIdx[m], ok })
	for _, col := range []struct {
		name string
		syms []int32
	}{{"name", f.Name}, {"cat", f.Cat}} {
		syms := col.syms
		t.lazyString(col.name, func(i int) (string, bool) {
			m, ok := attributed(i)
			if !ok {
				return "", false
			}
			return f.Syms[syms[m]], true
		})
	}
	for _, col := range []struct {
		name string
		vals []int64
	}{{"pid", f.Pid}, {"tid", f.Tid}, {"stream", f.Stream}} {
		vals := col.vals
		t.lazyInt(col.name, func(i int) (int64, bool) { m, ok := attributed(i); return vals[m], ok })
	}
	t.lazyString("edge_type", func(i int) (string, bool) { return ctdaEdgeType(c, rows[i]), true })
	t.lazyFloat("weight_us", func(i int) (float64, bool) { return usOf(rows[i].weight), true })
	t.lazyString("bound_by", func(i int) (string, bool) { return ctdaBound(c, rows[i], spans), true })
	t.lazyInt("ts", func(i int) (int64, bool) { return c.Time(rows[i].from), true })
	t.lazyInt("end_ts", func(i int) (int64, bool) { return c.Time(rows[i].to), true })
	return t
}

// ctdaSummaryTable is critical_path_summary for 'ctda': CPCR is the time the path's events cover
// inside their counted spans over the window.
func ctdaSummaryTable(c *graph.CDG, tr cpTrace, rules graph.BoundRules) *cpTable {
	var s cpSummary
	rows := ctdaRows(c)
	spans := c.NewSpanBounder(rules)
	for _, r := range rows {
		s.add(ctdaBound(c, r, spans), r.weight)
		s.pathLen += r.weight
	}
	s.attributed, s.edges = c.Counted, len(rows)
	s.window, s.busy = c.SpanEnd-c.WindowStart, c.BusyBound
	return s.table(tr)
}

// hotspotTable groups a path's counted time by event name (ctda: graph.CDG.Hotspots; hta: the
// weights of the path's attributed edges).
func hotspotTable(tr cpTrace, hs []graph.Hotspot, top int, window int64) *cpTable {
	var total int64
	for _, h := range hs {
		total += h.Dur
	}
	if top > 0 && len(hs) > top {
		hs = hs[:top]
	}
	t := &cpTable{n: len(hs)}
	label, rank, name, cat := t.col("label", cpString), t.col("rank", cpInt), t.col("name", cpString), t.col("category", cpString)
	dur, prop, inTotal := t.col("duration_us", cpFloat), t.col("proportion", cpFloat), t.col("prop_in_total", cpFloat)
	for _, h := range hs {
		label.addString(tr.label, true)
		rank.addInt(tr.rank, true)
		name.addString(h.Name, true)
		cat.addString(h.Cat, true)
		dur.addFloat(usOf(h.Dur), true)
		prop.addFloat(float64(h.Dur)/float64(max(total, 1)), total > 0)
		inTotal.addFloat(float64(h.Dur)/float64(max(window, 1)), window > 0)
	}
	return t
}

func htaHotspots(g *graph.CPGraph) []graph.Hotspot {
	type key struct{ name, cat int32 }
	sums := map[key]int64{}
	end := g.SpanEnd()
	reached := int64(math.MinInt64)
	for _, e := range g.Path.Edges {
		// Only the edge's time inside the analysed span and inside its event, as CPCR counts it: HTA's
		// path may follow another thread's event that outlives the window, and it attributes the gap
		// between two kernels of a stream to the first one.
		// The profiler's step marker is no hotspot, as in ctda's list: in 2021-era traces it is an
		// Operator, and its self time (the step's unprofiled gaps) led hta's list.
		if r := g.Attr[e]; r >= 0 && g.GW[e] > 0 && !graph.StepMarker(g.F.Syms[g.F.Name[r]]) {
			if w := inAttributedEvent(g, e, g.GW[e], end, reached); w > 0 {
				sums[key{g.F.Name[r], g.F.Cat[r]}] += w
			}
		}
		reached = max(reached, g.NodeTS[g.G.Dst[e]])
	}
	out := make([]graph.Hotspot, 0, len(sums))
	for k, d := range sums {
		out = append(out, graph.Hotspot{Name: g.F.Syms[k.name], Cat: g.F.Syms[k.cat], Dur: d})
	}
	graph.SortHotspots(out)
	return out
}

func init() {
	cpRegister("_hotspots", cpArgTypes(duckdb.TYPE_BIGINT), func(ctx context.Context, env *Env, args []any) (*cpTable, error) {
		a, err := parseCPArgs(args)
		if err != nil {
			return nil, err
		}
		top := args[cpArgCount].(int64)
		if a.algorithm == "ctda" {
			c, tr, err := ctdaGraph(ctx, env, a)
			if err != nil {
				return nil, err
			}
			return hotspotTable(tr, c.Hotspots(), int(top), c.SpanEnd-c.WindowStart), nil
		}
		g, tr, err := cpGraph(ctx, env, a)
		if err != nil {
			return nil, err
		}
		return hotspotTable(tr, htaHotspots(g), int(top), g.SpanEnd()-g.WindowStart), nil
	})

	ctdaOnly := func(fn string, a cpArgs) error {
		if a.algorithm != "ctda" {
			return fmt.Errorf("%s: the CDG exists for algorithm := 'ctda' only (HTA's graph: cp_graph_nodes / cp_graph_edges)", fn)
		}
		return nil
	}
	cpRegister("_cdg_nodes", cpArgTypes(), func(ctx context.Context, env *Env, args []any) (*cpTable, error) {
		a, err := parseCPArgs(args)
		if err == nil {
			err = ctdaOnly("cdg_nodes", a)
		}
		if err != nil {
			return nil, err
		}
		c, tr, err := ctdaGraph(ctx, env, a)
		if err != nil {
			return nil, err
		}
		step := make([]int, len(c.Nodes))
		for i := range step {
			step[i] = -1
		}
		for i, s := range c.Path {
			step[s.Node] = i
		}
		f := c.F
		t := &cpTable{n: len(c.Nodes)}
		label, rank, node, kind := t.col("label", cpString), t.col("rank", cpInt), t.col("node", cpInt), t.col("kind", cpString)
		pid, tid, stream, phase := t.col("pid", cpInt), t.col("tid", cpInt), t.col("stream", cpInt), t.col("phase", cpString)
		ts, endTS, durUS, launchEnd := t.col("ts", cpInt), t.col("end_ts", cpInt), t.col("dur_us", cpFloat), t.col("first_launch_end_ts", cpInt)
		events, name, ev := t.col("events", cpInt), t.col("name", cpString), t.col("ev_idx", cpInt)
		crit, counted := t.col("on_critical_path", cpBool), t.col("counted_us", cpFloat)
		for v, nd := range c.Nodes {
			label.addString(tr.label, true)
			rank.addInt(tr.rank, true)
			node.addInt(int64(v), true)
			k := "cpu"
			if nd.GPU {
				k = "gpu"
			}
			kind.addString(k, true)
			pid.addInt(nd.Pid, true)
			tid.addInt(nd.Tid, !nd.GPU)
			stream.addInt(nd.Stream, true)
			phase.addString(nd.Phase, nd.Phase != "")
			ts.addInt(c.Time(nd.Start), true)
			endTS.addInt(c.Time(nd.End), true)
			durUS.addFloat(usOf(nd.End-nd.Start), true)
			launchEnd.addInt(c.Time(nd.FirstLaunchEnd), !nd.GPU && nd.Stream >= 0)
			events.addInt(int64(nd.Events), true)
			name.addString(f.Syms[f.Name[nd.MainRow]], true)
			ev.addInt(f.EvIdx[nd.MainRow], true)
			crit.addBool(step[v] >= 0, true)
			if step[v] >= 0 {
				counted.addFloat(usOf(c.Path[step[v]].Counted), true)
			} else {
				counted.addFloat(0, false)
			}
		}
		return t, nil
	})
	cpRegister("_cdg_edges", cpArgTypes(), func(ctx context.Context, env *Env, args []any) (*cpTable, error) {
		a, err := parseCPArgs(args)
		if err == nil {
			err = ctdaOnly("cdg_edges", a)
		}
		if err != nil {
			return nil, err
		}
		c, tr, err := ctdaGraph(ctx, env, a)
		if err != nil {
			return nil, err
		}
		onPath := make([]bool, len(c.G.Src))
		for _, s := range c.Path {
			if s.Edge >= 0 {
				onPath[s.Edge] = true
			}
		}
		t := &cpTable{n: len(c.G.Src)}
		label, rank, src, dst := t.col("label", cpString), t.col("rank", cpInt), t.col("src_node", cpInt), t.col("dst_node", cpInt)
		dep, typ, gap, crit := t.col("dependency", cpString), t.col("edge_type", cpString), t.col("gap_us", cpFloat), t.col("on_critical_path", cpBool)
		for e := range c.G.Src {
			label.addString(tr.label, true)
			rank.addInt(tr.rank, true)
			src.addInt(int64(c.G.Src[e]), true)
			dst.addInt(int64(c.G.Dst[e]), true)
			dep.addString(graph.CDGEdgeKind(c.G.Type[e]), true)
			typ.addString(graph.EdgeTypeName(c.G.Type[e]), true)
			gap.addFloat(usOf(c.G.W[e]), true)
			crit.addBool(onPath[e], true)
		}
		return t, nil
	})
}
