package queries_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"tracesql/engine"
	"tracesql/internal/htaref"
)

func cpFindDir(t *testing.T, name string) htaref.Dir {
	for _, d := range htaref.Dirs(t) {
		if d.Name == name {
			return d
		}
	}
	t.Skipf("reference dir %s absent", name)
	return htaref.Dir{}
}

// TestLongestPathHandBuilt: longest_path over hand-built edge tables.
func TestLongestPathHandBuilt(t *testing.T) {
	db, err := engine.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cases := []struct {
		name, rows string
		want       string // path as src>dst,...; length
	}{
		{"diamond", "(0,1,1),(0,2,5),(1,3,1),(2,3,1)", "0>2,2>3;6"},
		// Two equal paths: the first-inserted predecessor of node 3 wins (networkx's rule).
		{"tie", "(0,1,2),(0,2,2),(1,3,1),(2,3,1)", "0>1,1>3;3"},
		{"tie_reversed_insertion", "(0,2,2),(0,1,2),(2,3,1),(1,3,1)", "0>2,2>3;3"},
		// All zero: every node has distance 0 and the first one in topological order ends the path, so
		// the path is the single node 0 with no edge (networkx's rule).
		{"zero_weights", "(0,1,0),(1,2,0)", ";0"},
		{"zero_then_positive", "(0,1,0),(1,2,2)", "0>1,1>2;2"},
		// A negative prefix is dropped: the path restarts where the best distance would be negative.
		{"negative", "(0,1,-5),(1,2,3),(2,3,-1),(0,3,1)", "1>2;3"},
		{"fractional_us", "(0,1,0.5),(1,2,0.25)", "0>1,1>2;0.75"},
		// Node ids are labels, any BIGINT: memory follows the node count (a one-edge table to id 2^31-2
		// took 23 GB), and the ties follow first appearance, not the ids' order.
		{"huge_ids", "(0,2147483646,1),(2147483646,9000000000000000000,2),(0,-5,0.5)", "0>2147483646,2147483646>9000000000000000000;3"},
		{"tie_ids_not_order", "(9,5,2),(9,1,2),(5,0,1),(1,0,1)", "9>5,5>0;3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tbl := "cp_lp_" + c.name
			if _, err := db.SQL.Exec(fmt.Sprintf(`CREATE TABLE %s AS SELECT * FROM (VALUES %s) v(src_node, dst_node, weight_us)`, tbl, c.rows)); err != nil {
				t.Fatal(err)
			}
			rows, err := db.SQL.Query(fmt.Sprintf(`SELECT src_node, dst_node, path_length_us FROM longest_path('%s') ORDER BY seq`, tbl))
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			var length float64
			for rows.Next() {
				var s, d int64
				if err := rows.Scan(&s, &d, &length); err != nil {
					t.Fatal(err)
				}
				parts = append(parts, fmt.Sprintf("%d>%d", s, d))
			}
			rows.Close()
			got := strings.Join(parts, ",") + ";" + fmt.Sprint(length)
			if got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
	// A cycle is a clear error.
	db.SQL.Exec(`CREATE TABLE cp_lp_cycle AS SELECT * FROM (VALUES (0,1,1),(1,0,1)) v(src_node, dst_node, weight_us)`)
	if _, err := db.SQL.Query(`SELECT * FROM longest_path('cp_lp_cycle')`); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("cycle: got %v", err)
	}
	// A TEMP table is not visible to longest_path (it reads on another connection): the error says
	// so before DuckDB's SQL context (LINE 1: ...), which the CLI leaves out.
	conn, err := db.SQL.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), `CREATE TEMP TABLE cp_lp_temp AS SELECT 0 AS src_node, 1 AS dst_node, 1.0 AS weight_us`); err != nil {
		t.Fatal(err)
	}
	_, err = conn.QueryContext(context.Background(), `SELECT * FROM longest_path('cp_lp_temp')`)
	if err == nil {
		t.Fatal("longest_path over a TEMP table: no error")
	}
	msg := err.Error()
	if i := strings.Index(msg, "TEMP table"); i < 0 || (strings.Contains(msg, "LINE ") && i > strings.Index(msg, "LINE ")) {
		t.Errorf("longest_path over a TEMP table: %q, want the TEMP-table hint before DuckDB's SQL context", msg)
	}
}

// TestCriticalPathNullSafe calls every public function with NULL and omitted arguments (must not crash
// and must behave as the defaults) and checks the error messages of bad calls.
func TestCriticalPathNullSafe(t *testing.T) {
	d := cpFindDir(t, "critical_path/cuda_event_sync")
	db := htaref.Open(t, d).SQL
	for _, fn := range []string{"critical_path", "critical_path_summary", "cp_graph_nodes", "cp_graph_edges", "critical_path_whatif"} {
		var omitted, nulls int
		// what-if's scale is required (a NULL one is an error of its own, below)
		required, extra := "", ""
		if fn == "critical_path_whatif" {
			required, extra = "scale := 'true'", ", scale := 'true', factor := NULL"
		}
		if err := db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %s(%s)`, fn, required)).Scan(&omitted); err != nil {
			t.Fatalf("%s(%s): %v", fn, required, err)
		}
		q := fmt.Sprintf(`SELECT count(*) FROM %s(rank := NULL, annotation := NULL, instance := NULL, instance_end := NULL,
			algorithm := NULL, label := NULL, data_load_events := NULL, add_zero_weight_launch_edges := NULL,
			strict_negative_weights := NULL, compat := NULL%s)`, fn, extra)
		if err := db.QueryRow(q).Scan(&nulls); err != nil {
			t.Fatalf("%s(NULL...): %v", fn, err)
		}
		if omitted == 0 || omitted != nulls {
			t.Errorf("%s: %d rows with omitted args, %d with NULLs", fn, omitted, nulls)
		}
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM longest_path(NULL)`).Scan(&n); err == nil || !strings.Contains(err.Error(), "pass the name") {
		t.Errorf("longest_path(NULL): %v", err)
	}
	for _, stmt := range []string{
		`CREATE TABLE cp_lp_huge AS SELECT * FROM (VALUES (0, 1, 1e300)) v(src_node, dst_node, weight_us)`,
		`CREATE TABLE cp_lp_nan AS SELECT * FROM (VALUES (0, 1, 'nan'::DOUBLE)) v(src_node, dst_node, weight_us)`,
		`CREATE TABLE cp_lp_frac AS SELECT * FROM (VALUES (1, 2.0, 1.0), (1.5, 2, 1.0)) v(src_node, dst_node, weight_us)`,
		`CREATE TABLE cp_lp_null AS SELECT * FROM (VALUES (0, 1, NULL::DOUBLE), (1, 2, 1.0)) v(src_node, dst_node, weight_us)`,
		`CREATE TABLE cp_lp_sum AS SELECT * FROM (VALUES (0, 1, 4e15), (1, 2, 4e15)) v(src_node, dst_node, weight_us)`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ q, want string }{
		// A NULL entry is refused as in every list parameter (it was dropped unseen; never "every event"),
		// and so is a bare string where the list goes.
		{`SELECT * FROM critical_path_summary(data_load_events := [NULL])`, "data_load_events must not hold NULL: [NULL]"},
		{`SELECT * FROM hotspots(data_load_events := ['x', NULL])`, "data_load_events must not hold NULL: [x, NULL]"},
		{`SELECT * FROM critical_path(data_load_events := 'x')`, "data_load_events must be a list of strings such as ['forward'], not VARCHAR"},
		{`SELECT * FROM critical_path_whatif(scale := 'true', factor := true)`, "factor must be a number, not true (BOOLEAN)"},
		{`SELECT * FROM critical_path(rank := 99999999999999999999)`, "rank is out of range: 99999999999999999999"},
		{`SELECT * FROM critical_path(annotation := 'NoSuchAnnotation')`, "annotation not found"},
		{`SELECT * FROM critical_path(instance := 99)`, "instance out of range"},
		{`SELECT * FROM critical_path(rank := 0.7)`, "rank must be an integer, not 0.7 (DECIMAL(2,1))"},
		{`SELECT * FROM critical_path(rank := 7.0)`, "no trace with rank 7 is loaded"}, // a whole 7.0 is rank 7
		{`SELECT * FROM hotspots(top := 'x')`, "top must be an integer, not x (VARCHAR)"},
		{`SELECT * FROM frequent_kernel_sequences('aten::mm', top_k := 1.5)`, "top_k must be an integer, not 1.5"},
		{`SELECT * FROM critical_path(instance_end := -5)`, "instance_end must be -1 (= instance) or an instance number ≥ instance, not -5"},
		{`SELECT * FROM critical_path(rank := 7)`, "no trace with rank 7 is loaded (ranks loaded: "},
		// a negative rank read as "any rank" gave rank 0's path
		{`SELECT * FROM critical_path(rank := -1)`, "rank must be a rank number ≥ 0, not -1"},
		{`SELECT * FROM hotspots(rank := -9223372036854775808)`, "rank must be a rank number ≥ 0, not -9223372036854775808"},
		{`SELECT * FROM critical_path(label := 'nope')`, `no trace with label "nope"`},
		// The Go functions get C strings: a NUL cut 'trace\0zzz' to the label trace, chr(0) to the whole trace.
		{`SELECT * FROM critical_path(label := 'nope' || chr(0) || 'zzz')`, "label must not contain a NUL character (chr(0))"},
		{`SELECT * FROM critical_path_summary(annotation := chr(0))`, "annotation must not contain a NUL character (chr(0))"},
		{`SELECT * FROM critical_path_whatif(scale := 'false' || chr(0) || ' OR true', factor := 2)`, "scale must not contain a NUL character"},
		{`SELECT * FROM export_kernel_sequences_overlay('aten::mm', '/tmp/a' || chr(0) || 'b')`, "output_dir must not contain a NUL character"},
		{`SELECT * FROM critical_path_whatif(algorithm := 'ctda')`, "supports algorithm := 'hta' only"},
		{`SELECT * FROM cdg_nodes(annotation := 'NoSuchAnnotation')`, "annotation not found"},
		{`SELECT * FROM hotspots(instance := 99)`, "instance out of range"},
		{`SELECT * FROM cp_graph_nodes(algorithm := 'ctda')`, "cdg_nodes"},
		{`SELECT * FROM critical_path(algorithm := 'x')`, "unknown algorithm"},
		// the other algorithm's options were silently ignored
		{`SELECT * FROM critical_path(aggregate := false)`, "aggregate := false is an option of algorithm := 'ctda'"},
		{`SELECT * FROM critical_path_summary(algorithm := 'ctda', add_zero_weight_launch_edges := true)`, "add_zero_weight_launch_edges is an option of algorithm := 'hta'"},
		{`SELECT * FROM critical_path(algorithm := 'ctda', strict_negative_weights := true)`, "strict_negative_weights is an option of algorithm := 'hta'"},
		{`SELECT * FROM critical_path_whatif(scale := 'no_such_column = 1')`, "scale predicate"},
		{`SELECT * FROM critical_path_whatif(scale := '1=1); DROP TABLE traces; --')`, `scale "1=1); DROP TABLE traces; --" must be one SQL predicate over events' columns, without ';'`},
		// Re-weighting nothing is an error, not the unchanged path (which reads as "no gain").
		{`SELECT * FROM critical_path_whatif()`, "scale is required"},
		{`SELECT * FROM critical_path_whatif(scale := 'name = ''no such kernel''')`, "matches no event of the trace"},
		{`SELECT * FROM critical_path_whatif(scale := 'ts < 0 OR ev_idx = 0')`, "none with a span of own time in this window's graph"},
		{`SELECT * FROM longest_path('no_such_table')`, "no_such_table"},
		{`SELECT * FROM critical_path_whatif(scale := 'true', factor := 1e300)`, "longer than int64 nanoseconds"},
		{`SELECT * FROM longest_path('cp_lp_huge')`, "not a number within"},
		{`SELECT * FROM longest_path('cp_lp_nan')`, "not a number within"},
		{`SELECT * FROM longest_path('cp_lp_null')`, "NULL weight_us on 0→1"},
		{`SELECT * FROM longest_path('cp_lp_frac')`, "node ids (src_node, dst_node) must be integers, not 1.5"},
		{`SELECT * FROM longest_path('cp_lp_sum')`, "more than int64 nanoseconds"},
		// Wrong types name the parameter (they were binder errors naming the internal function, a cast
		// error, or for output_dir a directory named after the value).
		{`SELECT * FROM critical_path(label := 1)`, "label must be a string, not 1 (INTEGER)"},
		{`SELECT * FROM critical_path_summary(annotation := 1)`, "annotation must be a string, not 1 (INTEGER)"},
		{`SELECT * FROM hotspots(algorithm := 1)`, "algorithm must be a string, not 1 (INTEGER)"},
		{`SELECT * FROM cdg_nodes(aggregate := 5)`, "aggregate must be true or false, not 5 (INTEGER)"},
		{`SELECT * FROM cdg_edges(compat := 'x')`, "compat must be true or false, not x (VARCHAR)"},
		{`SELECT * FROM critical_path_whatif(scale := 1)`, "scale must be a string, not 1 (INTEGER)"},
		{`SELECT * FROM export_critical_path_overlay(output_dir := ['x'])`, "output_dir must be a string, not [x] (VARCHAR[])"},
		{`SELECT * FROM critical_path(instance := 1e30)`, "instance must be an integer, not 1e+30 (DOUBLE)"},
		// A kernel's name is no window (it matched, and gave a span of GPU time); a reversed range says so.
		{`SELECT * FROM critical_path(annotation := 'FillFunctor')`, "only GPU work (void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor"},
		{`SELECT * FROM critical_path(annotation := 'FillFunctor', algorithm := 'ctda')`, "only GPU work ("},
		// the whole trace is one window: instance 99 was silently the same one
		{`SELECT * FROM critical_path(annotation := '', instance := 99)`, "annotation '' is the whole trace, instance 0 only"},
		{`SELECT * FROM hotspots(annotation := '', instance_end := 3)`, "instance 0 only"},
		{`SELECT * FROM critical_path(annotation := '', instance := 1, compat := false)`, "instance 0 only"},
		// '' is found in every name: all CPU time was data_loading
		{`SELECT * FROM critical_path(data_load_events := [''])`, "data_load_events: an empty pattern matches every event"},
		{`SELECT * FROM critical_path_summary(data_load_events := ['DataLoader', ''])`, "an empty pattern"},
		{`SELECT * FROM export_counters_trace(rank := 0.7, output_dir := 'x')`, "export_counters_trace: rank must be an integer, not 0.7"},
		{`SELECT * FROM export_counters_trace(rank := 0, output_dir := ['x'])`, "export_counters_trace: output_dir must be a string"},
	} {
		_, err := db.Query(c.q)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want error containing %q", c.q, err, c.want)
		}
	}
	// HTA ignores the instance of the whole-trace window: compat does too.
	var whole, compat1 int
	if err := db.QueryRow(`SELECT count(*) FROM critical_path(annotation := '', compat := true)`).Scan(&whole); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM critical_path(annotation := '', instance := 1, compat := true)`).Scan(&compat1); err != nil || compat1 != whole || whole == 0 {
		t.Errorf("compat, annotation '', instance 1: %d rows (%v), want the whole trace's %d", compat1, err, whole)
	}
	// A volatile argument is read once: checked non-NULL with one value, it reached the Go table function as
	// another, NULL, which aborts the whole process (duckdb-go). random() < 0.5 is NULL half the time.
	for _, q := range []string{
		`SELECT count(*) FROM critical_path(rank := CASE WHEN random() < 0.5 THEN NULL ELSE 0 END)`,
		`SELECT count(*) FROM hotspots(top := CASE WHEN random() < 0.5 THEN NULL ELSE 3 END)`,
		`SELECT count(*) FROM cdg_nodes(aggregate := CASE WHEN random() < 0.5 THEN NULL ELSE true END)`,
		`SELECT count(*) FROM critical_path_summary(annotation := CASE WHEN random() < 0.5 THEN NULL ELSE 'ProfilerStep' END)`,
	} {
		for i := 0; i < 12; i++ {
			if err := db.QueryRow(q).Scan(&n); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
}

// TestCriticalPathWhatIf: halving the longest kernel on the alexnet path shortens the path by at
// most half that kernel, and longest_path over a saved, updated cp_graph_edges table agrees.
func TestCriticalPathWhatIf(t *testing.T) {
	d := cpFindDir(t, "critical_path/alexnet")
	db := htaref.Open(t, d).SQL
	args := `annotation := '[param|pytorch.model.alex_net|0|0|0|measure|forward]', instance := 1, compat := true`
	var top int64
	var topW, length float64
	if err := db.QueryRow(fmt.Sprintf(`SELECT ev_idx, weight_us FROM critical_path(%s) WHERE stream <> -1 AND edge_type = 'critical_path_operator' ORDER BY weight_us DESC LIMIT 1`, args)).Scan(&top, &topW); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(fmt.Sprintf(`SELECT sum(weight_us) FROM critical_path(%s)`, args)).Scan(&length); err != nil {
		t.Fatal(err)
	}
	var newLen float64
	var stillOn bool
	q := fmt.Sprintf(`SELECT sum(weight_us), bool_or(ev_idx = %d AND edge_type = 'critical_path_operator') FROM critical_path_whatif(%s, scale := 'ev_idx = %d', factor := 0.5)`, top, args, top)
	if err := db.QueryRow(q).Scan(&newLen, &stillOn); err != nil {
		t.Fatal(err)
	}
	if !(newLen < length && newLen >= length-topW/2-1e-9) {
		t.Errorf("what-if length %v: want in [%v, %v)", newLen, length-topW/2, length)
	}
	t.Logf("top kernel ev %d %.0f µs; path %.0f → %.0f µs; kernel still on path: %t", top, topW, length, newLen, stillOn)
	// The same through a saved graph table.
	if _, err := db.Exec(fmt.Sprintf(`CREATE TABLE cp_g AS SELECT * FROM cp_graph_edges(%s)`, args)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf(`UPDATE cp_g SET weight_us = weight_us * 0.5 WHERE ev_idx = %d AND edge_type = 'critical_path_operator'`, top)); err != nil {
		t.Fatal(err)
	}
	var viaTable float64
	if err := db.QueryRow(`SELECT max(path_length_us) FROM longest_path('cp_g')`).Scan(&viaTable); err != nil {
		t.Fatal(err)
	}
	if !htaref.Close(viaTable, newLen) {
		t.Errorf("longest_path on the updated table: %v, whatif %v", viaTable, newLen)
	}
}

// TestCriticalPathChildOutlivesParent: one runtime call that ends after the op that encloses it
// (clock jitter: dlrm worker0's cudaLaunchKernel of correlation 43772 made 24 µs long, ending 19 µs
// after its aten::sqrt) broke HTA's call stack for the rest of the thread and the graph got a cycle.
// Default mode clips the call to its parent and gets the unmodified trace's path; compat mode keeps
// HTA 0.6.1's failure.
func TestCriticalPathChildOutlivesParent(t *testing.T) {
	const trace = "../testdata/traces/dlrm_8ranks/worker0_step_12.1694128201545.pt.trace.json.gz"
	const q = `SELECT * FROM critical_path_summary(instance := 0) ORDER BY bound_by`
	want := ctRows(t, ctOpen(t, trace).SQL, q)
	db := ctOpen(t, trace)
	res, err := db.SQL.Exec(`UPDATE _hta_frame_default SET dur = 24000, end_ts = ts + 24000
		WHERE correlation = 43772 AND cat_class = 'runtime' AND dur < 24000`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d runtime rows of correlation 43772 lengthened, want 1", n)
	}
	var outlives bool
	if err := db.SQL.QueryRow(`SELECT c.end_ts > p.ts + p.dur FROM _hta_frame_default c JOIN events e USING (trace_id, ev_idx)
		JOIN events p ON p.trace_id = e.trace_id AND p.ev_idx = e.parent_idx
		WHERE c.correlation = 43772 AND c.cat_class = 'runtime'`).Scan(&outlives); err != nil || !outlives {
		t.Fatalf("the lengthened call does not outlive its parent (%v)", err)
	}
	ctWantRows(t, db.SQL, q, want)
	if _, err := db.SQL.Exec(`SELECT * FROM critical_path_summary(instance := 0, hta_compat := true)`); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("compat mode: %v, want HTA's cycle", err)
	}
}

// TestCPLegacyCategories: the 2021 profiler spells its CPU categories Operator and Runtime. HTA 0.6.1 knows
// only cpu_op / cuda_runtime, so its graph of such a trace (compat) holds GPU work alone; the default mode
// makes them nodes, with launch edges, and the path covers the step.
func TestCPLegacyCategories(t *testing.T) {
	db := sqOpen(t, "trace", "../testdata/traces/legacy_resnet50")
	for _, c := range []struct {
		compat      bool
		cpuNodes    bool
		minCoverage float64
	}{{false, true, 0.9}, {true, false, 0}} {
		var cpu, launches int
		var cpcr float64
		if err := db.SQL.QueryRow(`SELECT (SELECT count(*) FROM cp_graph_nodes(annotation := '', compat := $1) WHERE cat IN ('Operator', 'Runtime')),
			(SELECT count(*) FROM cp_graph_edges(annotation := '', compat := $1) WHERE edge_type = 'critical_path_kernel_launch_delay'),
			(SELECT max(cpcr) FROM critical_path_summary(annotation := '', compat := $1))`, c.compat).Scan(&cpu, &launches, &cpcr); err != nil {
			t.Fatal(err)
		}
		if (cpu > 0) != c.cpuNodes || (launches > 0) != c.cpuNodes || cpcr < c.minCoverage {
			t.Errorf("compat %v: %d Operator/Runtime nodes, %d launch edges, CPCR %.3f; want CPU nodes %v, CPCR ≥ %.1f",
				c.compat, cpu, launches, cpcr, c.cpuNodes, c.minCoverage)
		}
	}
}

// TestLegacyProfilerSteps: in 2021 traces ProfilerStep#N has category Operator (a cpu_op), not
// user_annotation; it still marks the steps, as HTA finds them by name: profiler_steps lists them, CPU events
// and the kernels they launch get their step, and trace_diff can pick an iteration.
func TestLegacyProfilerSteps(t *testing.T) {
	db := sqOpen(t, "trace", "../testdata/traces/legacy_resnet50")
	var steps, stepped, launched, frameIters int
	if err := db.SQL.QueryRow(`SELECT (SELECT count(*) FROM profiler_steps),
		(SELECT count(*) FROM events WHERE cat_class = 'cpu_op' AND step IS NOT NULL),
		(SELECT count(*) FROM kernel_launches WHERE step IS NOT NULL),
		(SELECT count(DISTINCT iteration) FILTER (WHERE iteration >= 0) FROM hta_frame)`).Scan(&steps, &stepped, &launched, &frameIters); err != nil {
		t.Fatal(err)
	}
	if steps != 6 || stepped == 0 || launched == 0 || frameIters != 6 {
		t.Errorf("%d profiler steps, %d stepped cpu_ops, %d stepped launches, %d frame iterations; want 6, >0, >0, 6", steps, stepped, launched, frameIters)
	}
}

// TestCriticalPathBoundByKernelClasses: outside compat mode bound_by names GPU work as kernel_classes does, so a
// row a user adds moves the path's kernels to gpu_communication_bound in both algorithms; compat mode keeps
// HTA's own rule (names starting nccl, hip or hccl, or containing ncclKernel).
func TestCriticalPathBoundByKernelClasses(t *testing.T) {
	db := ctOpen(t, filepath.Join("..", "testdata", "traces", "alexnet")).SQL
	const args = `annotation := '[param|pytorch.model.alex_net|0|0|0|measure|forward]', instance := 1`
	bound := func(extra, b string) float64 {
		t.Helper()
		var us float64
		q := fmt.Sprintf(`SELECT coalesce(sum(duration_us), 0) FROM critical_path_summary(%s%s) WHERE bound_by = '%s'`, args, extra, b)
		if err := db.QueryRow(q).Scan(&us); err != nil {
			t.Fatal(err)
		}
		return us
	}
	type sums struct{ compute, comm float64 }
	get := func(extra string) sums {
		return sums{bound(extra, "gpu_compute_bound"), bound(extra, "gpu_communication_bound")}
	}
	modes := []string{"", ", algorithm := 'ctda'", ", compat := true"}
	before := map[string]sums{}
	for _, m := range modes {
		before[m] = get(m)
		if before[m].compute <= 0 || before[m].comm != 0 {
			t.Fatalf("%q before: %+v, want GPU compute time and no communication", m, before[m])
		}
	}
	if _, err := db.Exec(`INSERT INTO kernel_classes VALUES (-1, '.*', 'COMMUNICATION', 'default')`); err != nil {
		t.Fatal(err)
	}
	for _, m := range modes {
		got := get(m)
		want := sums{0, before[m].compute}
		if m == ", compat := true" {
			want = before[m]
		}
		if got != want {
			t.Errorf("%q after the kernel_classes row: %+v, want %+v", m, got, want)
		}
	}
}

// TestCPWindowOfEarlierLaunches: a window whose only work is GPU work launched before it (an optimizer
// annotation that runs while the step's last kernels drain) has no graph under hta, which starts from the CPU
// rows that start in the window: an error saying so and naming ctda in default mode (it was an empty path,
// which read as 0 µs), HTA's empty result in compat mode; ctda's path stays inside the window.
func TestCPWindowOfEarlierLaunches(t *testing.T) {
	trace := `{"traceEvents":[
	{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
	{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":20},
	{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":5,"args":{"correlation":1}},
	{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":105,"dur":20,"args":{"correlation":1,"stream":7,"device":0}},
	{"ph":"X","cat":"user_annotation","name":"Optimizer.step#SGD.step","pid":1,"tid":1,"ts":100,"dur":30}
	]}`
	db := ctOpenJSON(t, "t.json", trace).SQL
	const q = `SELECT count(*) FROM critical_path(annotation := 'Optimizer.step', algorithm := '%s', compat := %t)`
	var n int
	err := db.QueryRow(fmt.Sprintf(q, "hta", false)).Scan(&n)
	if err == nil || !strings.Contains(err.Error(), `empty window: instance 0 of "Optimizer.step" holds no operator or runtime call that starts in it, only GPU work launched before it`) ||
		!strings.Contains(err.Error(), "algorithm := 'ctda'") {
		t.Errorf("hta, default mode: %d rows, %v; want the empty-window error", n, err)
	}
	if err := db.QueryRow(fmt.Sprintf(q, "hta", true)).Scan(&n); err != nil || n != 0 {
		t.Errorf("hta, compat: %d rows, %v; want HTA's empty result", n, err)
	}
	var first, last int64
	if err := db.QueryRow(`SELECT count(*), min(ts), max(end_ts) FROM critical_path(annotation := 'Optimizer.step', algorithm := 'ctda')`).Scan(&n, &first, &last); err != nil || n == 0 || first < 100_000 || last > 130_000 {
		t.Errorf("ctda: %d rows over [%d, %d] ns, %v; want a path inside the window [100000, 130000]", n, first, last, err)
	}
}

// TestCPOverlappingKernelsSummary: k2 starts 0.5 µs before k1 (same stream) ends, so the
// kernel-kernel edge between them weighs -0.5 µs. In default mode the path weighs it 0, and so must
// the summary: no negative bucket, the buckets add up to the path length, and CPCR counts the
// overlap once (the kernels' union, 200–799.5 µs, of a 1000 µs step).
func TestCPOverlappingKernelsSummary(t *testing.T) {
	trace := `{"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#0","pid":1,"tid":1,"ts":0,"dur":1000},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":100,"dur":50},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":110,"dur":10,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":130,"dur":10,"args":{"correlation":2}},
  {"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":200,"dur":300,"args":{"correlation":1,"stream":7,"device":0}},
  {"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":499.5,"dur":300,"args":{"correlation":2,"stream":7,"device":0}}
]}`
	db := ctOpenJSON(t, "overlap.json", trace).SQL
	var minBucket, sum, length, maxPct, cpcr float64
	if err := db.QueryRow(`SELECT min(duration_us), sum(duration_us), max(path_length_us), max(pct), max(cpcr)
		FROM critical_path_summary()`).Scan(&minBucket, &sum, &length, &maxPct, &cpcr); err != nil {
		t.Fatal(err)
	}
	if minBucket < 0 || math.Abs(sum-length) > 1e-9 || maxPct > 100+1e-9 {
		t.Errorf("buckets: smallest %v µs, sum %v µs, path %v µs, largest pct %v; want none negative, the sum the path, pct ≤ 100", minBucket, sum, length, maxPct)
	}
	if math.Abs(cpcr-0.5995) > 1e-9 {
		t.Errorf("cpcr %v, want 0.5995 (the kernels' union 599.5 µs of 1000)", cpcr)
	}
}

// TestCPWindowOfZeroLengthOps: a step whose operators all last 0 µs has nothing the hta graph builds on, and
// no GPU work either: the error says so instead of blaming GPU work launched before the window.
func TestCPWindowOfZeroLengthOps(t *testing.T) {
	db := ctOpenJSON(t, "z.json", `{"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#0","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"cpu_op","name":"aten::a","pid":1,"tid":1,"ts":10,"dur":0}]}`).SQL
	var n int
	err := db.QueryRow(`SELECT count(*) FROM critical_path()`).Scan(&n)
	if want := `holds no operator or runtime call of non-zero duration that starts in it`; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "GPU work") {
		t.Errorf("got %v (%d rows), want an error containing %q", err, n, want)
	}
}

// TestCriticalPathWhatIfKeepsCausality (r38 #1): HTA's graph links a kernel to its launch call or to the
// kernel before it on the stream, whichever held it back in the trace. A what-if that changes a kernel's
// time must respect the other link too. By hand (µs, whatif_cases in SOURCES.md):
//   - shortened_kernel, K1 × 0: K2 cannot start before its launch at 320, so it runs 320–460, the stream
//     sync returns at 460 and C runs 180: A 290 + B up to the launch 10 + K2 140 + C 180 = 620 (without the
//     launch edge K2 "ran" at 60, before its launch call: 560);
//   - lengthened_kernel, K1 × 5: K1 runs 50–550, so K2 (launched at 320 onto the then idle stream) waits
//     for it: launch 10 + launch delay 30 + K1 500 + K2 140 + C 180 = 860 (without the stream-order edge
//     K2 overlapped K1: 640, the unchanged length).
//
// The unchanged graph's length is the trace's path (870 and 640): baseline_path_us.
func TestCriticalPathWhatIfKeepsCausality(t *testing.T) {
	for _, c := range []struct {
		file           string
		factor         float64
		whatif, base   float64
		withoutOptions float64 // add_zero_weight_launch_edges := false: HTA's edges only
	}{
		{"shortened_kernel.json", 0, 620, 870, 560},
		{"lengthened_kernel.json", 5, 860, 640, 640},
	} {
		t.Run(c.file, func(t *testing.T) {
			db := ctOpen(t, "../testdata/traces/whatif_cases/"+c.file).SQL
			// (a comment at the end of scale swallowed the parenthesis put around it: r72 #9)
			q := `SELECT sum(weight_us), any_value(path_length_us), any_value(baseline_path_us) FROM critical_path_whatif(instance := 0, scale := 'name = ''K1'' -- the kernel', factor := %v%s)`
			var got, length, base float64
			if err := db.QueryRow(fmt.Sprintf(q, c.factor, "")).Scan(&got, &length, &base); err != nil {
				t.Fatal(err)
			}
			if got != c.whatif || length != c.whatif || base != c.base {
				t.Errorf("what-if %v µs (path_length_us %v), baseline %v µs; want %v and %v", got, length, base, c.whatif, c.base)
			}
			var cp float64
			if err := db.QueryRow(`SELECT sum(weight_us) FROM critical_path(instance := 0)`).Scan(&cp); err != nil || cp != c.base {
				t.Errorf("critical_path: %v µs (%v), want %v", cp, err, c.base)
			}
			if err := db.QueryRow(fmt.Sprintf(q, c.factor, ", add_zero_weight_launch_edges := false")).Scan(&got, &length, &base); err != nil {
				t.Fatal(err)
			}
			if got != c.withoutOptions {
				t.Errorf("HTA's edges only: what-if %v µs, want %v", got, c.withoutOptions)
			}
		})
	}
	// A blocking call's own span weighs 0 (its wait is the sync edge's): re-weighting it is an error, not
	// the unchanged path (r38 #2).
	db := ctOpen(t, "../testdata/traces/whatif_cases/shortened_kernel.json").SQL
	_, err := db.Exec(`SELECT * FROM critical_path_whatif(instance := 0, scale := 'name = ''cudaStreamSynchronize''', factor := 0)`)
	if err == nil || !strings.Contains(err.Error(), "none with a span of own time") {
		t.Errorf("scaling a blocking call: %v, want the no-span error", err)
	}
	// scale runs on a connection of its own: a session variable or a TEMP table is not there, and the
	// error says so (it read "matches no event" for a predicate that matches)
	for _, s := range []string{"SET VARIABLE k = 'K1'", "CREATE TEMP TABLE sel AS SELECT 'K1' AS name"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, scale := range []string{"name = getvariable(''k'')", "name IN (SELECT name FROM sel)"} {
		_, err := db.Exec(`SELECT * FROM critical_path_whatif(instance := 0, scale := '` + scale + `')`)
		if err == nil || !strings.Contains(err.Error(), "scale runs on a connection of its own") {
			t.Errorf("scale %s: %v, want the own-connection hint", scale, err)
		}
	}
}

// TestDataLoadFullName: a data_load_events pattern found in the full name makes the path's time in that
// event data_loading, as it makes the event a node. It was looked for in HTA's shortened name only, which
// drops "(…)": ['enumerate(DataLoader)'] added the DataLoader to the path (2.2 ms in step 1 of the
// recorded test trace) but none of it was data_loading. Compat keeps HTA's rule.
func TestDataLoadFullName(t *testing.T) {
	db := ctOpen(t, "../testdata/traces/recorded/test")
	q := `SELECT round(duration_us, 2) FROM critical_path_summary(instance := 1, data_load_events := %s) WHERE bound_by = 'data_loading'`
	// the annotation's own time; the operators inside it keep cpu_bound
	ctWantRows(t, db.SQL, fmt.Sprintf(q, `['enumerate(DataLoader)']`), [][]string{{"105.97"}})
	ctWantRows(t, db.SQL, fmt.Sprintf(q, `['DataLoader']`), [][]string{{"105.97"}})
	if _, err := db.SQL.Exec(`SET VARIABLE hta_compat = true`); err != nil {
		t.Fatal(err)
	}
	ctWantRows(t, db.SQL, fmt.Sprintf(q, `['enumerate(DataLoader)']`), nil)
}

// TestHTAHotspotsInsideEvents: hotspots(algorithm := 'hta') counts an edge's time inside the event it is
// attributed to, as cpcr does. HTA attributes the 20 µs gap between K1 (70–400) and K2 (420–600) of one
// stream to K1, which was listed with 350 µs, more than it ran; the rows added up to 0.57 of the window
// against a cpcr of 0.55.
func TestHTAHotspotsInsideEvents(t *testing.T) {
	db := ctOpen(t, "../testdata/traces/hta_cases/hotspots_kernel_gap.json")
	ctWantRows(t, db.SQL, `SELECT name, duration_us FROM hotspots(algorithm := 'hta', top := 0)`,
		[][]string{{"K1", "330"}, {"K2", "180"}, {"aten::conv", "20"}, {"aten::empty", "20"}})
	ctWantRows(t, db.SQL, `SELECT (SELECT round(sum(prop_in_total), 6) FROM hotspots(algorithm := 'hta', top := 0)),
		(SELECT round(max(cpcr), 6) FROM critical_path_summary(algorithm := 'hta'))`,
		[][]string{{"0.55", "0.55"}})
}

// TestCriticalPathReviewR63: review r63's contract cases of the default hta path.
//   - strict_negative_weights checks for weights below -1 µs; one in (-1 µs, 0) (a graph launch whose kernel's
//     record starts 0.5 µs before the call, clock skew) still counts as 0 by default: it was a -0.5 µs
//     launch-overhead bucket and a 64.5 µs path.
//   - a stream or device synchronisation waits for the work on the stream when it began.
//   - data_load_events patterns are substrings of the full name by default; the regular expression on HTA's
//     shortened name is compat's: '.' marked every event data_loading (75 µs), and 'B|copy' both B and aten::copy_.
func TestCriticalPathReviewR63(t *testing.T) {
	skew := ctOpenJSON(t, "skew.json", `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
{"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":10,"dur":30},
{"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":1,"tid":1,"ts":15,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":14.5,"dur":60,"args":{"correlation":1,"stream":7,"device":0}}]}`)
	ctWantRows(t, skew.SQL, `SELECT bound_by, duration_us, path_length_us FROM critical_path_summary(strict_negative_weights := true) WHERE bound_by <> '' ORDER BY 1`,
		[][]string{{"cpu_bound", "5", "65"}, {"gpu_compute_bound", "60", "65"}, {"gpu_kernel_launch_overhead", "0", "65"}})
	ctWantRows(t, skew.SQL, `SELECT count(*) FROM critical_path(strict_negative_weights := true) WHERE weight_us < 0`, [][]string{{"0"}})

	// A Stream Sync (and, on another stream, a Context Sync) waited for K1, the work on the stream when the call
	// began, not for K2, which another thread launched while it waited and which ended after it returned: the
	// sync edge went back in time from K2's end (200) to the call's end (150), and the path was 295 µs in a
	// 250 µs step. The path: C 100, launch delay 35, K2 60 = 195 (against A, K1, the sync and B: 170).
	for name, trace := range map[string]string{"stream_sync": `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":250},
{"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":10,"dur":20},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":3,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":20,"dur":60,"args":{"correlation":1,"stream":7,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":100,"dur":50,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":7,"ts":100,"dur":50,"args":{"correlation":2,"stream":7,"device":0,"cuda_sync_kind":"Stream Sync"}},
{"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":150,"dur":100},
{"ph":"X","cat":"cpu_op","name":"C","pid":1,"tid":2,"ts":5,"dur":100},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":105,"dur":5,"args":{"correlation":3}},
{"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":140,"dur":60,"args":{"correlation":3,"stream":7,"device":0}}
]}`, "device_sync": `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":250},
{"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":10,"dur":20},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":3,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":20,"dur":60,"args":{"correlation":1,"stream":7,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":100,"dur":50,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_sync","name":"Context Sync","pid":0,"tid":-1,"ts":100,"dur":50,"args":{"correlation":2,"stream":-1,"device":0,"cuda_sync_kind":"Context Sync"}},
{"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":150,"dur":100},
{"ph":"X","cat":"cpu_op","name":"C","pid":1,"tid":2,"ts":5,"dur":100},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":105,"dur":5,"args":{"correlation":3}},
{"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":8,"ts":140,"dur":60,"args":{"correlation":3,"stream":8,"device":0}}
]}`} {
		db := ctOpenJSON(t, name+".json", trace)
		ctWantRows(t, db.SQL, `SELECT DISTINCT path_length_us, window_us FROM critical_path_summary()`, [][]string{{"195", "250"}})
		ctWantRows(t, db.SQL, `SELECT count(*) FROM cp_graph_edges() WHERE edge_type = 'critical_path_sync_dependency' AND end_ts < ts`, [][]string{{"0"}})
	}

	loader := ctOpenJSON(t, "loader.json", `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
{"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__","pid":1,"tid":1,"ts":5,"dur":45},
{"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":10,"dur":10},
{"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":60,"dur":30}]}`)
	for _, c := range []struct {
		patterns string
		want     [][]string
	}{
		{`['.']`, [][]string{{"cpu_bound", "40"}, {"data_loading", "35"}}},
		{`['B|copy']`, [][]string{{"cpu_bound", "40"}}},
		{`['enumerate(DataLoader)']`, [][]string{{"cpu_bound", "40"}, {"data_loading", "35"}}},
	} {
		ctWantRows(t, loader.SQL, `SELECT bound_by, duration_us FROM critical_path_summary(data_load_events := `+c.patterns+`) WHERE duration_us > 0 ORDER BY 1`, c.want)
	}
}

// Review r63's findings 1, 3, 4 and 5 (hta algorithm, default mode), each worked out by hand.
func TestCriticalPathReviewR63Leftovers(t *testing.T) {
	cases := []struct {
		name, trace string
		summary     [][]string // bound_by, duration_us, path_length_us
		syncEdges   [][]string // src_ev_idx, dst_ev_idx of the sync edges
	}{{
		// A cudaStreamSynchronize that outlives its op A by 5 µs (clock jitter) extends A rather than being cut
		// to A's end, before the 84 µs kernel it waited for ended, which dropped its sync edge: the path was
		// 205 µs of CPU. A 2, launch delay 8, K 84, the sync, B 195 = 289 (HTA's too).
		"blocking_call_outlives_op", `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":400},
{"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":10,"dur":90},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":3,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":20,"dur":84,"args":{"correlation":1,"stream":7,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":20,"dur":85,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":0,"tid":7,"ts":20,"dur":85,"args":{"correlation":2,"stream":7,"device":0,"cuda_sync_kind":"Stream Sync"}},
{"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":105,"dur":195}]}`,
		[][]string{{"cpu_bound", "197", "289"}, {"gpu_compute_bound", "84", "289"}, {"gpu_kernel_launch_overhead", "8", "289"}},
		[][]string{{"3", "4"}},
	}, {
		// A runtime and a driver call share each correlation. Counted twice, the queue never emptied, so no
		// launch-delay edge ever came and each gap was kernel-kernel overhead (220 µs). The kernel links to the
		// driver call: op1 20, op2 20, op3 4 to the driver call, launch delay 26, K3 20 = 90.
		"runtime_and_driver_call", `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":400},
{"ph":"X","cat":"cpu_op","name":"op1","pid":1,"tid":1,"ts":10,"dur":20},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":10,"args":{"correlation":1}},
{"ph":"X","cat":"cuda_driver","name":"cuLaunchKernel","pid":1,"tid":1,"ts":14,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":40,"dur":20,"args":{"correlation":1,"stream":7,"device":0}},
{"ph":"X","cat":"cpu_op","name":"op2","pid":1,"tid":1,"ts":110,"dur":20},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":112,"dur":10,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_driver","name":"cuLaunchKernel","pid":1,"tid":1,"ts":114,"dur":5,"args":{"correlation":2}},
{"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":140,"dur":20,"args":{"correlation":2,"stream":7,"device":0}},
{"ph":"X","cat":"cpu_op","name":"op3","pid":1,"tid":1,"ts":210,"dur":20},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":212,"dur":10,"args":{"correlation":3}},
{"ph":"X","cat":"cuda_driver","name":"cuLaunchKernel","pid":1,"tid":1,"ts":214,"dur":5,"args":{"correlation":3}},
{"ph":"X","cat":"kernel","name":"K3","pid":0,"tid":7,"ts":240,"dur":20,"args":{"correlation":3,"stream":7,"device":0}}]}`,
		[][]string{{"cpu_bound", "44", "90"}, {"gpu_compute_bound", "20", "90"}, {"gpu_kernel_launch_overhead", "26", "90"}},
		nil,
	}, {
		// An Event Sync on an event recorded after a cudaGraphLaunch waits for the graph's work G1, not for K0
		// before it: the path was 195 µs and ended at G1's end, without the CPU work after the sync.
		// A 5, launch call 5, A 25, graph launch 10, launch delay 10, G1 140, sync, A 5, B 20, A 5 = 225.
		"event_sync_after_graph_launch", `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":300},
{"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":5,"dur":230},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"K0","pid":0,"tid":7,"ts":20,"dur":10,"args":{"correlation":1,"stream":7,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":1,"tid":1,"ts":40,"dur":10,"args":{"correlation":2}},
{"ph":"X","cat":"kernel","name":"G1","pid":0,"tid":7,"ts":60,"dur":140,"args":{"correlation":2,"stream":7,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaEventRecord","pid":1,"tid":1,"ts":52,"dur":2,"args":{"correlation":3}},
{"ph":"X","cat":"cuda_runtime","name":"cudaEventSynchronize","pid":1,"tid":1,"ts":60,"dur":145,"args":{"correlation":4}},
{"ph":"X","cat":"cuda_sync","name":"Event Sync","pid":0,"tid":-1,"ts":60,"dur":145,"args":{"correlation":4,"stream":-1,"device":0,"cuda_sync_kind":"Event Sync","wait_on_stream":7,"wait_on_cuda_event_record_corr_id":3}},
{"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":210,"dur":20}]}`,
		[][]string{{"cpu_bound", "75", "225"}, {"gpu_compute_bound", "140", "225"}, {"gpu_kernel_launch_overhead", "10", "225"}},
		[][]string{{"5", "7"}},
	}, {
		// A cudaStreamWaitEvent before a cudaGraphLaunch makes the graph's work G on stream 8 wait for K1 on
		// stream 7 (the next ordinary launch after the wait, of which there is none, took the edge). A 5,
		// launch delay 10, K1 60, the wait, G 200 = 275 (without the edge: a 55 µs launch delay, 285).
		"stream_wait_before_graph_launch", `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":300},
{"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":5,"dur":195},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":3,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":20,"dur":60,"args":{"correlation":1,"stream":7,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaEventRecord","pid":1,"tid":1,"ts":15,"dur":2,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","pid":1,"tid":1,"ts":18,"dur":2,"args":{"correlation":3}},
{"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","pid":0,"tid":8,"ts":18,"dur":0,"args":{"correlation":3,"stream":8,"device":0,"cuda_sync_kind":"Stream Wait Event","wait_on_stream":7,"wait_on_cuda_event_record_corr_id":2}},
{"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":1,"tid":1,"ts":25,"dur":5,"args":{"correlation":4}},
{"ph":"X","cat":"kernel","name":"G","pid":0,"tid":8,"ts":85,"dur":200,"args":{"correlation":4,"stream":8,"device":0}}]}`,
		[][]string{{"cpu_bound", "5", "275"}, {"gpu_compute_bound", "260", "275"}, {"gpu_kernel_launch_overhead", "10", "275"}},
		[][]string{{"3", "8"}},
	}, {
		// A zero-length launch call at 30, where A ends and its sibling B starts: HTA's stack order (not a
		// consistent order there) popped the wrong event, an edge from B's end back to A's, and 170 µs of
		// path on a thread whose work is P's 150. P 5, A 20, the launch, B 20, C 10, P 95 = 150 (the kernel's
		// branch: 5 + 20 + launch delay 10 + K 30 = 65).
		"zero_length_launch_at_op_boundary", `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":200},
{"ph":"X","cat":"cpu_op","name":"P","pid":1,"tid":1,"ts":5,"dur":150},
{"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":10,"dur":20},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":30,"dur":0,"args":{"correlation":1}},
{"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":30,"dur":20},
{"ph":"X","cat":"cpu_op","name":"C","pid":1,"tid":1,"ts":50,"dur":10},
{"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":40,"dur":30,"args":{"correlation":1,"stream":7,"device":0}}]}`,
		[][]string{{"cpu_bound", "150", "150"}},
		nil,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := ctOpenJSON(t, c.name+".json", c.trace)
			ctWantRows(t, db.SQL, `SELECT bound_by, duration_us, path_length_us FROM critical_path_summary() WHERE bound_by <> '' ORDER BY 1`, c.summary)
			ctWantRows(t, db.SQL, `SELECT count(*) FROM cp_graph_edges() WHERE end_ts < ts`, [][]string{{"0"}})
			if c.syncEdges != nil {
				ctWantRows(t, db.SQL, `SELECT src_ev_idx, dst_ev_idx FROM cp_graph_edges() WHERE edge_type = 'critical_path_sync_dependency' ORDER BY 1`, c.syncEdges)
			}
		})
	}
}

// Review r65: a stream wait between two GPUs of one process (testdata/traces/multi_gpu_cases). The wait's
// record names the stream the event was recorded on but not its GPU; taking the waiting GPU's made a copy
// between GPUs (an event on each GPU's stream 7, the other's stream 7 waiting for it) an invalid graph
// ("synchronisation edge ... on the same stream 7") in the hta algorithm, and in ctda a 148 µs launch
// overhead where the second GPU waited for the first GPU's gemm and the copy.
func TestCriticalPathReviewR65(t *testing.T) {
	for _, c := range []struct {
		trace, algorithm string
		want             [][]string // bound_by, duration_us, path_length_us
	}{
		// linear 2, launch delay 8, gemm_dev0 200, copy 20, the wait, gemm_dev1 100, the sync, relu 20
		{"copy_between_gpus", "hta", [][]string{{"cpu_bound", "22", "350"}, {"gpu_compute_bound", "320", "350"},
			{"gpu_kernel_kernel_overhead", "0", "350"}, {"gpu_kernel_launch_overhead", "8", "350"}}},
		// linear 17 to its launch call's end, 3, gemm_dev0 200, copy 20, gemm_dev1 100, sync 5, relu 25
		{"copy_between_gpus", "ctda", [][]string{{"cpu_bound", "47", "370"}, {"gpu_compute_bound", "320", "370"},
			{"gpu_kernel_kernel_overhead", "0", "370"}, {"gpu_kernel_launch_overhead", "3", "370"}}},
		// no wait records: ctda infers the copy on GPU 0, which ended as gemm_dev1 started, as the dependency
		{"copy_between_gpus_no_wait_records", "ctda", [][]string{{"cpu_bound", "47", "370"}, {"gpu_compute_bound", "320", "370"},
			{"gpu_kernel_kernel_overhead", "0", "370"}, {"gpu_kernel_launch_overhead", "3", "370"}}},
		// kB on GPU 1 waits for kA on GPU 0: a 2, launch delay 8, kA 200, the wait, kB 100, the sync, relu 20
		// (it was kX's 160 µs kernel-kernel overhead)
		{"wait_for_other_gpu", "hta", [][]string{{"cpu_bound", "22", "330"}, {"gpu_compute_bound", "300", "330"},
			{"gpu_kernel_launch_overhead", "8", "330"}}},
		{"wait_for_other_gpu", "ctda", [][]string{{"cpu_bound", "47", "350"}, {"gpu_compute_bound", "300", "350"},
			{"gpu_kernel_kernel_overhead", "0", "350"}, {"gpu_kernel_launch_overhead", "3", "350"}}},
		// the wait on GPU 0 holds back the next launch onto GPU 0's stream 7 (kB), not kD on GPU 1's
		{"wait_then_launch_on_other_gpu", "hta", [][]string{{"cpu_bound", "22", "330"}, {"gpu_compute_bound", "300", "330"},
			{"gpu_kernel_launch_overhead", "8", "330"}}},
	} {
		t.Run(c.trace+"/"+c.algorithm, func(t *testing.T) {
			db := ctOpen(t, "../testdata/traces/multi_gpu_cases/"+c.trace+".json")
			ctWantRows(t, db.SQL, `SELECT bound_by, duration_us, path_length_us FROM critical_path_summary(algorithm := '`+c.algorithm+
				`') WHERE bound_by <> '' ORDER BY 1`, c.want)
			if c.algorithm == "hta" {
				ctWantRows(t, db.SQL, `SELECT count(*) FROM cp_graph_edges() WHERE end_ts < ts`, [][]string{{"0"}})
			}
		})
	}
	// HTA's own graph of the copy is invalid (compat keeps that)
	db := ctOpen(t, "../testdata/traces/multi_gpu_cases/copy_between_gpus.json")
	if _, err := db.SQL.Exec(`SELECT * FROM critical_path_summary(compat := true)`); err == nil || !strings.Contains(err.Error(), "on the same stream 7") {
		t.Errorf("compat: %v, want HTA's invalid graph", err)
	}
}

// Review r66 #1: a cudaMemcpyAsync to pageable memory returns only after its copy ended (115-1045 µs,
// the copy 1030-1035 behind the 1000 µs k1), and no cuda_sync record says so. Both algorithms counted the
// call as CPU work: the 930 µs call was the top hotspot, k1 off the path. Now it is a synchronous copy, as a
// cudaMemcpy: hta: work 5, launch delay 15, k1 1000, kernel-kernel 5, the copy 5, its sync edge, then
// _local_scalar_dense 5 and after 45 = 1080; ctda: work 5 + launch call 10, 5, k1, 5, copy, then 45 + 25.
func TestCriticalPathReviewR66(t *testing.T) {
	db := ctOpenJSON(t, "memcpyasync_pageable.json", `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":100,"tid":100,"ts":0,"dur":1200},
{"ph":"X","cat":"cpu_op","name":"aten::work","pid":100,"tid":100,"ts":5,"dur":95},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":10,"dur":10,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":25,"dur":1000,"args":{"stream":7,"device":0,"correlation":1}},
{"ph":"X","cat":"cpu_op","name":"aten::_local_scalar_dense","pid":100,"tid":100,"ts":110,"dur":940},
{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":100,"tid":100,"ts":115,"dur":930,"args":{"correlation":2}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":7,"ts":1030,"dur":5,"args":{"stream":7,"device":0,"correlation":2}},
{"ph":"X","cat":"cpu_op","name":"aten::after","pid":100,"tid":100,"ts":1055,"dur":45}]}`)
	ctWantRows(t, db.SQL, `SELECT bound_by, duration_us, path_length_us FROM critical_path_summary() WHERE bound_by <> '' ORDER BY 1`,
		[][]string{{"cpu_bound", "55", "1080"}, {"gpu_compute_bound", "1005", "1080"}, {"gpu_kernel_kernel_overhead", "5", "1080"},
			{"gpu_kernel_launch_overhead", "15", "1080"}})
	ctWantRows(t, db.SQL, `SELECT bound_by, duration_us, path_length_us FROM critical_path_summary(compat := true) WHERE bound_by <> ''`,
		[][]string{{"cpu_bound", "1080", "1080"}}) // HTA's
	for _, agg := range []string{"true", "false"} {
		ctWantRows(t, db.SQL, `SELECT bound_by, duration_us, path_length_us FROM critical_path_summary(algorithm := 'ctda', aggregate := `+agg+`) ORDER BY 1`,
			[][]string{{"cpu_bound", "85", "1100"}, {"gpu_compute_bound", "1005", "1100"}, {"gpu_kernel_kernel_overhead", "5", "1100"},
				{"gpu_kernel_launch_overhead", "5", "1100"}})
		ctWantRows(t, db.SQL, `SELECT name, duration_us FROM hotspots(top := 2, aggregate := `+agg+`)`, [][]string{{"k1", "1000"}, {"aten::after", "45"}})
	}
}

// TestCriticalPathReviewR66EmptyCompatWindow: testdata's out_of_order traces span 0.13 µs; HTA's whole-µs
// times (start rounded up, end down) make compat's whole-trace window end 1 µs before it starts. Its
// summary reported window_us -1; the window is empty: 0 µs, with no CPCR or busy bound (0 / 0). Default
// mode keeps the ns window.
func TestCriticalPathReviewR66EmptyCompatWindow(t *testing.T) {
	for _, name := range []string{"before_fix_trace.json", "after_fix_trace.json"} {
		db := ctOpen(t, filepath.Join("..", "testdata", "traces", "out_of_order", name))
		ctWantRows(t, db.SQL, `SELECT coalesce(bound_by, 'NULL'), path_length_us, window_us, coalesce(cpcr::VARCHAR, 'NULL'), coalesce(busy_bound::VARCHAR, 'NULL')
			FROM critical_path_summary(annotation := '', compat := true)`, [][]string{{"NULL", "0", "0", "NULL", "NULL"}})
		ctWantRows(t, db.SQL, `SELECT window_us FROM critical_path_summary(annotation := '') LIMIT 1`, [][]string{{"0.13"}})
	}
}

// TestCTDAAggregatedWaitForLaunch (review r66 #2): a stream that waited for its next launch waited for the
// host for the whole of that time, whether the launching thread was in a traced call or not (a Python frame
// with no operator under it: the time between two launches). In one Python frame (0-26 µs) the thread launched
// k1 (call 1-5, kernel 6-9) and k2 (call 20-25, kernel 26-30). The event-level path (aggregate := false) is
// the frame, launch 1, the frame's 15 µs, launch 2 (25 µs cpu_bound), 1 µs of launch overhead and k2. The
// aggregated GPU node spans 6-30 µs; the stream waited 9-25 µs for k2's launch. Only the 5 µs of launch 2
// counted as the launcher's time, the 11 µs before it as kernel-kernel overhead (cpu_bound 10,
// kernel-kernel 12); now the wait is the host's: cpu_bound 21, kernel-kernel 1 (k2 started 1 µs after its
// enqueue), GPU 7 (the node's own time, k1 included).
func TestCTDAAggregatedWaitForLaunch(t *testing.T) {
	db := ctOpenJSON(t, "wait_for_launch.json", `{"traceEvents":[
{"ph":"X","cat":"python_function","name":"train.py(10): step","pid":100,"tid":100,"ts":0,"dur":26},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":1,"dur":4,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":6,"dur":3,"args":{"stream":7,"device":0,"correlation":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":20,"dur":5,"args":{"correlation":2}},
{"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":26,"dur":4,"args":{"stream":7,"device":0,"correlation":2}}]}`)
	q := func(agg string) string {
		return `SELECT bound_by, duration_us, path_length_us FROM critical_path_summary(annotation := '', algorithm := 'ctda', aggregate := ` + agg + `) ORDER BY 1`
	}
	ctWantRows(t, db.SQL, q("false"), [][]string{{"cpu_bound", "25", "30"}, {"gpu_compute_bound", "4", "30"},
		{"gpu_kernel_launch_overhead", "1", "30"}})
	ctWantRows(t, db.SQL, q("true"), [][]string{{"cpu_bound", "21", "30"}, {"gpu_compute_bound", "7", "30"},
		{"gpu_kernel_kernel_overhead", "1", "30"}, {"gpu_kernel_launch_overhead", "1", "30"}})
	ctWantRows(t, db.SQL, `SELECT src_node = dst_node, weight_us FROM critical_path(annotation := '', algorithm := 'ctda') WHERE bound_by = 'cpu_bound' ORDER BY seq`,
		[][]string{{"true", "5"}, {"true", "16"}})
}
