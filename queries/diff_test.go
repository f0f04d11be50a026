package queries_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracesql/engine"
	"tracesql/internal/htaref"
)

// sqDiffDB loads two trace sets under two labels.
func sqDiffDB(t testing.TB, l1, p1, l2, p2 string) *engine.DB {
	t.Helper()
	db := sqOpen(t, "")
	for _, s := range [][2]string{{l1, p1}, {l2, p2}} {
		if _, err := db.Load(context.Background(), []string{s[1]}, engine.LoadOptions{Label: s[0]}); err != nil {
			t.Fatalf("load %s: %v", s[1], err)
		}
	}
	return db
}

type sqDiffRow struct {
	name       string
	cn, tn, dn int64
	cd, td, dd float64
	cat        string
}

func sqDiff(t testing.TB, c *sql.Conn, q string, args ...any) []sqDiffRow {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), `SELECT name, control_counts, control_total_duration_us, test_counts,
		test_total_duration_us, diff_counts, diff_duration_us, counts_change_category FROM `+q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []sqDiffRow
	for rows.Next() {
		var r sqDiffRow
		if err := rows.Scan(&r.name, &r.cn, &r.cd, &r.tn, &r.td, &r.dn, &r.dd, &r.cat); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func sqOpsDiff(t testing.TB, c *sql.Conn, q string, args ...any) map[string][]string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), `SELECT category, name FROM `+q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	out := map[string][]string{"added": {}, "deleted": {}, "increased": {}, "decreased": {}, "unchanged": {}}
	for rows.Next() {
		var cat, name string
		if err := rows.Scan(&cat, &name); err != nil {
			t.Fatal(err)
		}
		out[cat] = append(out[cat], name)
	}
	return out
}

// TestSQTraceDiffCompat: compat output equals HTA 0.6.1's TraceDiff on trace_compare (base vs test, rank 1,
// iteration 1010, CPU/GPU/ALL, full and short names: the settings of HTA's tests) and trace_diff (control vs test,
// defaults: each side's first rank and first iteration), rows in HTA's order. The reference outputs are
// testdata/hta/sq_ref_* (../shared/reference/hta lacks trace_diff_results/; see sq_ref_README.md) and, for the two
// PyTorch 2.11 traces recorded for this repository (run also without ../shared),
// testdata/hta/recorded/trace_diff_results (testdata/record/README.md).
func TestSQTraceDiffCompat(t *testing.T) {
	type tc struct {
		ref, opsRef string
		db          *engine.DB
		l1, l2      string
		args        string
		short       bool
		dev         string
	}
	var cases []tc
	rec := htaref.RecordedTraces()
	recDB := sqDiffDB(t, "control", filepath.Join(rec, "control"), "test", filepath.Join(rec, "test"))
	recRef := filepath.Join(filepath.Dir(rec), "..", "hta", "recorded", "trace_diff_results")
	for _, dev := range []string{"cpu", "gpu", "all"} {
		cases = append(cases, tc{filepath.Join(recRef, "trace_diff_"+dev+".csv"), filepath.Join(recRef, "trace_diff_ops_diff_"+dev+".json"),
			recDB, "control", "test", "control_rank := NULL", false, dev})
	}
	if traces, ok := htaref.SharedTraces(); ok {
		cmp := sqDiffDB(t, "base", filepath.Join(traces, "trace_compare", "base"), "test", filepath.Join(traces, "trace_compare", "test"))
		dif := sqDiffDB(t, "control", filepath.Join(traces, "trace_diff", "control"), "test", filepath.Join(traces, "trace_diff", "test"))
		for _, dev := range []string{"cpu", "gpu", "all"} {
			for _, short := range []bool{false, true} {
				n := map[bool]string{false: "full", true: "short"}[short]
				cases = append(cases, tc{sqTestdata(fmt.Sprintf("sq_ref_trace_compare_%s_%s.csv", dev, n)), sqTestdata(fmt.Sprintf("sq_ref_trace_compare_ops_diff_%s.json", dev)),
					cmp, "base", "test", "control_rank := 1, test_rank := 1, control_iteration := 1010, test_iteration := 1010", short, dev})
			}
			cases = append(cases, tc{sqTestdata(fmt.Sprintf("sq_ref_trace_diff_%s.csv", dev)), sqTestdata(fmt.Sprintf("sq_ref_trace_diff_ops_diff_%s.json", dev)),
				dif, "control", "test", "control_rank := NULL", false, dev})
		}
	} else {
		t.Log("../shared/traces not present: checking the recorded traces only")
	}
	for _, c := range cases {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(c.ref)))+"/"+filepath.Base(c.ref), func(t *testing.T) {
			conn := sqConn(t, c.db, true)
			q := fmt.Sprintf(`trace_diff('%s', '%s', %s, device_type := '%s', use_short_name := %v)`, c.l1, c.l2, c.args, c.dev, c.short)
			got := sqDiff(t, conn, q)
			want := htaref.ReadCSV(t, c.ref)
			if len(got) != len(want.Rows) {
				t.Fatalf("%d rows, HTA %d", len(got), len(want.Rows))
			}
			for i, w := range want.Rows {
				g := got[i]
				f := htaref.Float
				if g.name != w[0] || float64(g.cn) != f(w[1]) || !htaref.Close(g.cd, f(w[2])) || float64(g.tn) != f(w[3]) ||
					!htaref.Close(g.td, f(w[4])) || float64(g.dn) != f(w[5]) || !htaref.Close(g.dd, f(w[6])) || g.cat != w[7] {
					t.Errorf("row %d: got %+v, HTA %v", i, g, w)
				}
			}
			if c.short {
				return
			}
			var wantOps map[string][]string
			b, err := os.ReadFile(c.opsRef)
			if err != nil || json.Unmarshal(b, &wantOps) != nil {
				t.Fatalf("read %s: %v", c.opsRef, err)
			}
			gotOps := sqOpsDiff(t, conn, fmt.Sprintf(`ops_diff('%s', '%s', %s, device_type := '%s')`, c.l1, c.l2, c.args, c.dev))
			if fmt.Sprint(gotOps) != fmt.Sprint(wantOps) {
				t.Errorf("ops_diff: got %v\nHTA %v", gotOps, wantOps)
			}
		})
	}
}

// TestSQTraceDiffDefault: hand-built sets a (one aten::add) and b (two), each with a kernel and a
// gpu_user_annotation "fwd" on the GPU lane (no stream arg). HTA counts "fwd" as a CPU op (stream -1); by default it is
// a GPU event. Durations in µs from the trace.
func TestSQTraceDiffDefault(t *testing.T) {
	db := sqDiffDB(t, "a", sqTestdata("sq_diff_a.json"), "b", sqTestdata("sq_diff_b.json"))
	def, compat := sqConn(t, db, false), sqConn(t, db, true)
	names := func(rows []sqDiffRow) string {
		s := ""
		for _, r := range rows {
			s += fmt.Sprintf("%s:%d>%d(%s) ", r.name, r.cn, r.tn, r.cat)
		}
		return s
	}
	for _, x := range []struct {
		c    *sql.Conn
		dev  string
		want string
	}{
		{def, "CPU", "ProfilerStep#1:1>1(=) aten::add:1>2(+) cudaLaunchKernel:1>1(=) "},
		{def, "GPU", "fwd:1>1(=) k:1>1(=) "},
		{compat, "CPU", "ProfilerStep#1:1>1(=) aten::add:1>2(+) cudaLaunchKernel:1>1(=) fwd:1>1(=) "},
		{compat, "GPU", "k:1>1(=) "},
		{def, sqNULL, "ProfilerStep#1:1>1(=) aten::add:1>2(+) cudaLaunchKernel:1>1(=) fwd:1>1(=) k:1>1(=) "},
	} {
		dev := "'" + x.dev + "'"
		if x.dev == sqNULL {
			dev = "NULL"
		}
		got := names(sqDiff(t, x.c, `trace_diff('a', 'b', device_type := `+dev+`)`))
		if got != x.want {
			t.Errorf("%s: got %s, want %s", x.dev, got, x.want)
		}
	}
	rows := sqDiff(t, def, `trace_diff('a', 'b', device_type := 'CPU')`)
	if rows[1].name != "aten::add" || rows[1].cd != 10 || rows[1].td != 20 || rows[1].dd != 10 {
		t.Errorf("aten::add durations: %+v", rows[1])
	}
	ops := sqOpsDiff(t, def, `ops_diff('a', 'b')`)
	if fmt.Sprint(ops["increased"]) != "[aten::add]" || len(ops["unchanged"]) != 4 {
		t.Errorf("ops_diff: %v", ops)
	}
}

// TestSQTraceDiffGPULag: the GPU runs behind the CPU. Step 1's kernel and its GPU annotation "fwd" run
// inside CPU step 2's range, step 2's after the last step; each annotation is in the iteration of the
// kernel it covers, so comparing step 1 with step 2 finds no difference (by the annotation's start,
// step 1 had no "fwd" and step 2's was dropped).
func TestSQTraceDiffGPULag(t *testing.T) {
	step := func(n, ts int) string {
		return fmt.Sprintf(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%d,"dur":100},
			{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%d,"dur":2,"args":{"correlation":%d}},
			{"ph":"X","cat":"gpu_user_annotation","name":"fwd","pid":0,"tid":7,"ts":%d,"dur":20},
			{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":%d,"dur":10,"args":{"stream":7,"correlation":%d}}`,
			n, ts, ts+10, n, ts+145, ts+150, n)
	}
	p := filepath.Join(t.TempDir(), "lag.json")
	if err := os.WriteFile(p, []byte(`{"traceEvents":[`+step(1, 0)+",\n"+step(2, 100)+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := sqDiffDB(t, "a", p, "b", p)
	def, compat := sqConn(t, db, false), sqConn(t, db, true)
	got := ""
	for _, r := range sqDiff(t, def, `trace_diff('a', 'b', control_iteration := 1, test_iteration := 2, device_type := 'GPU')`) {
		got += fmt.Sprintf("%s:%d>%d ", r.name, r.cn, r.tn)
	}
	if want := "fwd:1>1 k:1>1 "; got != want {
		t.Errorf("default: got %s, want %s", got, want)
	}
	// HTA counts the annotation as a CPU op of the CPU step its start falls in.
	got = ""
	for _, r := range sqDiff(t, compat, `trace_diff('a', 'b', control_iteration := 1, test_iteration := 2, device_type := 'CPU')`) {
		if r.name == "fwd" {
			got += fmt.Sprintf("%s:%d>%d ", r.name, r.cn, r.tn)
		}
	}
	if want := "fwd:0>1 "; got != want {
		t.Errorf("compat: got %s, want %s", got, want)
	}
}

// TestSQTraceDiffCompatGPUSteps: HTA's steps are every event named ProfilerStep#N, Kineto's GPU-lane copies too;
// where the GPU copy of step 3 runs into CPU step 4, the CPU op under it, later in the file, is in step 3, and so is
// the copy itself (review r70; HTA 0.6.1 run on this trace: iteration 3 holds ProfilerStep#3 twice, 130 µs, the op,
// the launch and the kernel; iteration 4 only ProfilerStep#4). Default mode counts CPU steps only.
func TestSQTraceDiffCompatGPUSteps(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.json")
	trace := `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":100,"tid":100,"ts":0,"dur":100},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#4","pid":100,"tid":100,"ts":100,"dur":100},
{"ph":"X","cat":"cpu_op","name":"aten::cpu_in_gpu_step3","pid":100,"tid":100,"ts":160,"dur":5},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":60,"dur":5,"args":{"correlation":1001}},
{"ph":"X","cat":"kernel","name":"k_late","pid":0,"tid":7,"ts":150,"dur":10,"args":{"device":0,"stream":7,"correlation":1001}},
{"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#3","pid":0,"tid":7,"ts":150,"dur":30}]}`
	if err := os.WriteFile(p, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	db := sqDiffDB(t, "control", p, "test", p)
	for _, c := range []struct {
		compat bool
		iter   int
		want   string
	}{
		{true, 3, "ProfilerStep#3:2/130 aten::cpu_in_gpu_step3:1/5 cudaLaunchKernel:1/5 k_late:1/10 "},
		{true, 4, "ProfilerStep#4:1/100 "},
		{false, 3, "ProfilerStep#3:2/130 cudaLaunchKernel:1/5 k_late:1/10 "},
		{false, 4, "ProfilerStep#4:1/100 aten::cpu_in_gpu_step3:1/5 "},
	} {
		got := ""
		rows := sqDiff(t, sqConn(t, db, c.compat), fmt.Sprintf(`trace_diff('control', 'test', control_iteration := %d, test_iteration := %d)`, c.iter, c.iter))
		for _, r := range rows {
			got += fmt.Sprintf("%s:%d/%g ", r.name, r.cn, r.cd)
		}
		if got != c.want {
			t.Errorf("compat %v, iteration %d: %s, want %s", c.compat, c.iter, got, c.want)
		}
	}
}

// sqNULL marks a NULL device_type in TestSQTraceDiffDefault.
const sqNULL = "\x00NULL"

// TestSQTraceDiffBadArguments: an unknown label, rank, iteration or device type, or one of the wrong type, is an
// error naming it, not an empty side (which ops_diff would report as everything added or deleted).
func TestSQTraceDiffBadArguments(t *testing.T) {
	db := sqDiffDB(t, "a", sqTestdata("sq_diff_a.json"), "b", sqTestdata("sq_diff_b.json"))
	for _, c := range []struct{ q, want string }{
		{`trace_diff('a', 'nosuch')`, "no trace set labelled 'nosuch' (test_label)"},
		{`ops_diff('nosuch', 'b')`, "ops_diff: no trace set labelled 'nosuch' (control_label)"},
		{`trace_diff('a', 'b', control_rank := 7)`, "trace set 'a' has no rank 7"},
		{`trace_diff('a', 'b', test_rank := 3)`, "trace set 'b' has no rank 3"},
		{`trace_diff('a', 'b', control_iteration := 999)`, "trace set 'a' has no ProfilerStep#999"},
		{`ops_diff('a', 'b', test_iteration := 999)`, "ops_diff: rank 0 of trace set 'b' has no ProfilerStep#999"},
		{`trace_diff('a', 'b', device_type := 'XPU')`, "device_type must be CPU, GPU or ALL, not 'XPU'"},
		// error(format(..., NULL)) raises nothing: these were empty results
		{`trace_diff(NULL, 'b')`, "trace_diff: control_label is required"},
		{`ops_diff('a', NULL)`, "ops_diff: test_label is required"},
		// wrong types, named (they were DuckDB's conversion and CASE type errors)
		{`trace_diff(1, 'b')`, "trace_diff: control_label must be a string, not 1 (INTEGER)"},
		{`ops_diff('a', 'b', control_rank := [3])`, "ops_diff: control_rank must be an integer, not [3] (INTEGER[])"},
		{`trace_diff('a', 'b', test_iteration := 0.5)`, "trace_diff: test_iteration must be an integer, not 0.5"},
		{`trace_diff('a', 'b', use_short_name := 'maybe')`, "trace_diff: use_short_name must be true or false, not maybe (VARCHAR)"},
	} {
		var n int
		err := db.SQL.QueryRow(`SELECT count(*) FROM ` + c.q).Scan(&n)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v (%d rows), want an error containing %q", c.q, err, n, c.want)
		}
	}
	var n int
	if err := db.SQL.QueryRow(`SELECT count(*) FROM ops_diff('a', 'b', device_type := 'gpu', control_iteration := 1)`).Scan(&n); err != nil || n == 0 {
		t.Errorf("valid arguments (lower-case device type): %d rows, %v", n, err)
	}
}

// TestSQTraceDiffWithoutSteps: a trace with no ProfilerStep is compared as a whole (it gave no rows at all): the
// alexnet test trace against itself lists each of its op and kernel names once, every one unchanged.
func TestSQTraceDiffWithoutSteps(t *testing.T) {
	alexnet := filepath.Join("..", "testdata", "traces", "alexnet", "benchmark_result_2869224_1695835535_trace.json.gz")
	db := sqDiffDB(t, "x", alexnet, "y", alexnet)
	var steps, names, rows, unchanged, ops int
	if err := db.SQL.QueryRow(`SELECT (SELECT count(*) FROM profiler_steps),
		(SELECT count(DISTINCT name) FROM events WHERE trace_id = 0 AND cat IS NOT NULL AND cat <> 'Trace'),
		(SELECT count(*) FROM trace_diff('x', 'y')),
		(SELECT count(*) FROM trace_diff('x', 'y') WHERE counts_change_category = '=' AND control_counts = test_counts AND control_counts > 0),
		(SELECT count(*) FROM ops_diff('x', 'y') WHERE category = 'unchanged')`).Scan(&steps, &names, &rows, &unchanged, &ops); err != nil {
		t.Fatal(err)
	}
	if steps != 0 || names == 0 || rows != names || unchanged != names || ops != names {
		t.Errorf("%d steps, %d names: trace_diff %d rows (%d unchanged), ops_diff %d unchanged; want every name once, unchanged",
			steps, names, rows, unchanged, ops)
	}
}

// TestSQTraceDiffRanks: with ranks left NULL the two sides compare the same rank (the lowest both sets have),
// not each set's lowest: a test run that lost ranks 0-2 of dlrm_8ranks is unchanged, not a regression of rank 3
// against rank 0. A rank given on one side is the other side's too; sets sharing no rank are an error. Compat
// keeps HTA's each-set's-lowest.
func TestSQTraceDiffRanks(t *testing.T) {
	dir := t.TempDir()
	part, other := filepath.Join(dir, "part"), filepath.Join(dir, "other")
	for _, d := range []string{part, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src, _ := filepath.Glob("../testdata/traces/dlrm_8ranks/worker*.json.gz")
	for _, p := range src {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d := part
		if n := filepath.Base(p)[len("worker")]; n < '3' {
			if n > '1' {
				continue
			}
			d = other
		}
		if err := os.WriteFile(filepath.Join(d, filepath.Base(p)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := sqOpen(t, "")
	for _, s := range [][2]string{{"control", "../testdata/traces/dlrm_8ranks"}, {"test", part}, {"other", other}} {
		if _, err := db.Load(context.Background(), []string{s[1]}, engine.LoadOptions{Label: s[0]}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ q, want string }{
		{`SELECT string_agg(DISTINCT category, ',') FROM ops_diff('control', 'test')`, "unchanged"},
		{`SELECT string_agg(DISTINCT category, ',') FROM ops_diff('control', 'test', control_rank := 5)`, "unchanged"},
		{`SELECT string_agg(category, ',' ORDER BY category) FROM (SELECT DISTINCT category FROM ops_diff('control', 'test', hta_compat := true))`, "added,decreased,increased,unchanged"},
		{`SELECT count(*)::VARCHAR FROM trace_diff('control', 'test', control_rank := 1)`, "trace_diff: trace set 'test' has no rank 1 (test_rank, which defaults to control_rank)"},
		{`SELECT count(*)::VARCHAR FROM trace_diff('other', 'test')`, "trace_diff: trace sets 'other' and 'test' have no rank in common"},
	} {
		var got string
		if err := db.SQL.QueryRow(c.q).Scan(&got); err != nil {
			got = "error: " + err.Error()
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: %s, want %s", c.q, got, c.want)
		}
	}
}

// TestSQTraceDiffRankSteps: the iteration asked for must be one of the rank compared. Rank 1 of set x has
// ProfilerStep#5 but rank 0, the one compared, has not: that was an empty control side and every op of
// the test side "added". Events without a name are one group, unchanged when a set is compared with itself
// (NULL never equals NULL in the join: they were one row deleted and one added).
func TestSQTraceDiffRankSteps(t *testing.T) {
	dir := t.TempDir()
	step := func(rank, n int) string {
		return fmt.Sprintf(`{"distributedInfo":{"rank":%d},"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":5},
  {"ph":"X","cat":"cpu_op","pid":1,"tid":1,"ts":20,"dur":5},
  {"ph":"X","cat":"cpu_op","name":null,"pid":1,"tid":1,"ts":30,"dur":5}]}`, rank, n)
	}
	for name, body := range map[string]string{"x/r0.json": step(0, 1), "x/r1.json": step(1, 5), "y/r0.json": step(0, 5)} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := sqDiffDB(t, "x", filepath.Join(dir, "x"), "y", filepath.Join(dir, "y"))
	var n int
	err := db.SQL.QueryRow(`SELECT count(*) FROM ops_diff('x', 'y', control_iteration := 5)`).Scan(&n)
	if want := "ops_diff: rank 0 of trace set 'x' has no ProfilerStep#5 (control_iteration)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("control_iteration := 5: %v (%d rows), want an error containing %q", err, n, want)
	}
	for _, c := range []struct {
		q    string
		want string
	}{
		{`SELECT string_agg(coalesce(name, '(none)') || ' ' || counts_change_category || ' ' || control_counts, ', ' ORDER BY name)
			FROM trace_diff('x', 'x')`, "ProfilerStep#1 = 1, aten::mm = 1, (none) = 2"},
		{`SELECT string_agg(coalesce(name, '(none)') || ' ' || category, ', ' ORDER BY name) FROM ops_diff('x', 'y', test_iteration := 5)`,
			"ProfilerStep#1 deleted, ProfilerStep#5 added, aten::mm unchanged, (none) unchanged"},
		// compat: pandas' groupby in HTA leaves events without a name out
		{`SELECT string_agg(coalesce(name, '(none)'), ', ' ORDER BY name) FROM trace_diff('x', 'x', hta_compat := true)`, "ProfilerStep#1, aten::mm"},
	} {
		var got string
		if err := db.SQL.QueryRow(c.q).Scan(&got); err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.q, got, err, c.want)
		}
	}
}

// TestSQTraceDiffPythonAddresses: a Python op named with its object's address (`… object at 0x7f3d…>`)
// is one row by default, whatever address each run had; compat keeps HTA's names, one deleted and one
// added row.
func TestSQTraceDiffPythonAddresses(t *testing.T) {
	db := sqDiffDB(t, "control", filepath.Join("..", "testdata", "traces", "recorded", "control"),
		"test", filepath.Join("..", "testdata", "traces", "recorded", "test"))
	ctWantRows(t, db.SQL, `SELECT name, control_counts, test_counts FROM trace_diff('control', 'test')
		WHERE name LIKE '%method acquire of%'`, [][]string{{"<built-in method acquire of _thread.lock object at 0x…>", "12", "12"}})
	ctWantRows(t, db.SQL, `SELECT count(*) FROM trace_diff('control', 'test') WHERE regexp_matches(name, ' at 0x[0-9a-f]')`,
		[][]string{{"0"}})
	ctWantRows(t, db.SQL, `SELECT control_counts, test_counts FROM trace_diff('control', 'test', hta_compat := true)
		WHERE name LIKE '%method acquire of%' ORDER BY control_counts`, [][]string{{"0", "12"}, {"12", "0"}})
	// Short names (r39 #3): HTA's drop every <…> group, so Python ops named <…> all become one '' row; by
	// default such a name keeps its own (address-free) row.
	ctWantRows(t, db.SQL, `SELECT count(*) FILTER (name = ''), count(*) FILTER (name = '<built-in method acquire of _thread.lock object at 0x…>')
		FROM trace_diff('control', 'test', use_short_name := true)`, [][]string{{"0", "1"}})
	ctWantRows(t, db.SQL, `SELECT count(*) FILTER (name = ''), count(*) FILTER (name LIKE '%method acquire of%')
		FROM trace_diff('control', 'test', use_short_name := true, hta_compat := true)`, [][]string{{"1", "0"}})
}
