package queries_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"tracesql/engine"
	"tracesql/internal/htaref"
	"tracesql/sqlfuncs"
)

// aokRow is one row of aten_op_kernels_and_delay.
type aokRow struct {
	name, seq  string
	count      int64
	opUS, rtUS float64
}

func (r aokRow) String() string {
	return fmt.Sprintf("%s | %.60s | %d | %v | %v", r.name, r.seq, r.count, r.opUS, r.rtUS)
}

// aokQuery runs aten_op_kernels_and_delay(args) on c and returns its rows per rank, in order.
func aokQuery(t testing.TB, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, args string) map[int][]aokRow {
	t.Helper()
	q := `SELECT rank, aten_op_name, kernel_sequence, occurrence_count, avg_aten_op_launch_delay_us, avg_runtime_delay_us
		FROM aten_op_kernels_and_delay(` + args + `)`
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	out := map[int][]aokRow{}
	for rows.Next() {
		var rank int
		var r aokRow
		if err := rows.Scan(&rank, &r.name, &r.seq, &r.count, &r.opUS, &r.rtUS); err != nil {
			t.Fatal(err)
		}
		out[rank] = append(out[rank], r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// aokHTAFailed lists the reference dirs where HTA 0.6.1 raised in get_aten_op_kernels_and_delay (they have no
// aten_op_kernels_and_delay_rank0.csv; reference README, "What failed"): KeyError 'thread_id' where no launch call of
// HTA's names sits inside an aten:: op (CPU-only traces, AMD's hipLaunchKernel, Triton's lone cuLaunchKernel outside
// any aten:: op, the small trace_compare / trace_file_list traces), ValueError where a launch inside an op has no
// GPU event (cupti_profiler: kernels only as cuda_profiler_range rows on stream -1). Compat returns no rows for all
// of them: a launch call without exactly one GPU event is left out, and nothing is left. Default mode differs only
// on amd_trace, where hipLaunchKernel counts as a launch (TestAtenOpKernelsHolderSearch).
var aokHTAFailed = map[string]bool{
	"amd_trace": true, "cpu_only": true, "cupti_profiler": true, "distributed_info_unavailable": true,
	"mixed_files": true, "rank_non_gpu": true, "rank_unavailable": true, "trace_compare/base": true,
	"trace_compare/test": true, "trace_file_list": true, "triton_example": true,
}

// TestAtenOpKernelsCompat: in compat mode aten_op_kernels_and_delay(ranks := [first rank]) equals HTA's
// aten_op_kernels_and_delay_rank<r>.csv in every reference dir that has one: the same rows in the same order, the
// same names and sequences, and the same float64 means after HTA's rounding (compared with ==: pandas writes the
// shortest repr, which parses back to the same double). Where HTA raised (aokHTAFailed) compat has no rows.
func TestAtenOpKernelsCompat(t *testing.T) {
	checked, failed := 0, 0
	for _, d := range htaref.Dirs(t) {
		rank := d.Ranks()[0]
		file := fmt.Sprintf("aten_op_kernels_and_delay_rank%d.csv", rank)
		has := d.Has(file)
		if !has && !aokHTAFailed[d.Name] {
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			db := htaref.Open(t, d)
			c := sqConn(t, db, true)
			got := aokQuery(t, c, fmt.Sprintf("ranks := [%d]", rank))
			if !has {
				failed++
				if len(got) != 0 {
					t.Errorf("HTA raised here; compat gave %d rows: %v", len(got[rank]), got[rank])
				}
				return
			}
			checked++
			want := htaref.ReadCSV(t, d.File(file))
			cols := []int{want.Col(t, "aten_op_name"), want.Col(t, "kernel_sequence"), want.Col(t, "occurrence_count"),
				want.Col(t, "avg_aten_op_launch_delay"), want.Col(t, "avg_runtime_delay")}
			if len(got) > 1 {
				t.Errorf("rows of ranks other than %d: %v", rank, got)
			}
			rows := got[rank]
			if len(rows) != len(want.Rows) {
				t.Errorf("%d rows, HTA %d", len(rows), len(want.Rows))
			}
			bad := 0
			for i := 0; i < len(rows) && i < len(want.Rows); i++ {
				w := want.Rows[i]
				n, err := strconv.ParseInt(w[cols[2]], 10, 64)
				if err != nil {
					t.Fatalf("row %d: occurrence_count %q", i, w[cols[2]])
				}
				wr := aokRow{w[cols[0]], w[cols[1]], n, htaref.Float(w[cols[3]]), htaref.Float(w[cols[4]])}
				if rows[i] != wr {
					t.Errorf("row %d:\n got %v\n HTA %v", i, rows[i], wr)
					if bad++; bad > 10 {
						t.FailNow()
					}
				}
			}
		})
	}
	if checked == 0 {
		t.Fatal("no reference aten_op_kernels_and_delay file found")
	}
	t.Logf("%d reference files equal, %d dirs where HTA raised", checked, failed)
}

// aokCase returns the path of testdata/traces/hta_cases/<name>.
func aokCase(name string) string { return filepath.Join("..", "testdata", "traces", "hta_cases", name) }

// aokRowsStr renders rows as "name | sequence | count | op delay | runtime delay" (ctFloat numbers).
func aokRowsStr(rows []aokRow) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s | %s | %d | %s | %s", r.name, r.seq, r.count, ctFloat(r.opUS), ctFloat(r.rtUS)))
	}
	return out
}

// TestAtenOpKernelsHandBuilt: aten_op_kernels_and_delay on two hand-built traces (testdata/traces/hta_cases), in
// both modes, worked out by hand (µs; the main thread is tid 100, a side thread tid 101, kernels on stream 7):
//
// aten_op_kernels_threads.json (whole µs):
//   - aten::linear 100-200 > aten::addmm 110-190 > aten::empty 112-114, launches 120 (gemm at 150) and 140 (bias at
//     171): the deepest op holding both launches is aten::addmm (aten::empty ended before them): op delay 120−110 =
//     10, runtime delay 150−120 = 30; again at 300 / 305, launches 311 (gemm 330) and 320: 6 and 19. One row,
//     "gemm -> bias" × 2, means 8 and 24.5.
//   - aten::relu 450-480 and aten::clamp_min 450-480 (same span, clamp_min later in the file, so nested in relu),
//     launch 455, relu_k at 470: default picks the inner aten::clamp_min; HTA's sort on the start alone keeps the
//     first in the frame, aten::relu. Delays 5 and 15.
//   - a launch at 650 on the main thread outside its aten:: ops, held by the side thread's aten::copy_ 600-900:
//     HTA attributes it to aten::copy_ (delays 50, 10); default leaves it out.
//   - a launch at 740 inside the main thread's aten::add 700-760 and the side thread's aten::fill_ 730-800
//     (add_k at 750): default aten::add (40, 10); HTA the later-starting aten::fill_ of the other thread (10, 10).
//   - aten::zero_ with a launch that has no GPU event, aten::cat with one whose correlation has two kernels: HTA
//     raises (ValueError), both modes leave the call out; aten::mm replays a CUDA graph (cudaGraphLaunch, two kernels):
//     not a kernel launch call in either mode. None of the three ops has a row.
//   - order: default by count, then name (aten::add < aten::clamp_min); compat HTA's sort of the groupby order
//     (addmm, copy_, fill_, relu) by count, ties kept (4 rows: numpy's insertion sort).
//
// aten_op_kernels_ns.json (ns timestamps; compat rounds each start up and each end down to a whole µs):
//   - aten::mul 100.200-110.800, launch 102.700-105.800, mul_k 107.900; aten::mul 200-210, launch 201.333, mul_k
//     205.001: default op delays 2.5 and 1.333 (mean 1.9165), runtime delays 5.2 and 3.668 (mean 4.434); compat
//     on 101-110 / 103 / 108 and 200-210 / 202 / 206: op delays 2 and 2, runtime delays 5 and 4 (4.5).
//   - aten::neg 300.100-300.800, launch 300.200-300.700, neg_k 301.500: default 0.1 and 1.3; compat rounds both
//     the op and the call to 301-300 (a -1 µs span) and the op still holds the call: 0 and 1.
//   - aten::sub 400-405, launch 405.400-405.700, sub_k 407: the call starts after the op ended, so default leaves
//     it out; compat's call is 406-405, inside 400-405: delays 6 and 1.
func TestAtenOpKernelsHandBuilt(t *testing.T) {
	for _, c := range []struct {
		file   string
		compat bool
		want   []string
	}{
		{"aten_op_kernels_threads.json", false, []string{
			"aten::addmm | gemm -> bias | 2 | 8 | 24.5",
			"aten::add | add_k | 1 | 40 | 10",
			"aten::clamp_min | relu_k | 1 | 5 | 15"}},
		{"aten_op_kernels_threads.json", true, []string{
			"aten::addmm | gemm -> bias | 2 | 8 | 24.5",
			"aten::copy_ | side_k | 1 | 50 | 10",
			"aten::fill_ | add_k | 1 | 10 | 10",
			"aten::relu | relu_k | 1 | 5 | 15"}},
		{"aten_op_kernels_ns.json", false, []string{
			"aten::mul | mul_k | 2 | 1.9165 | 4.434",
			"aten::neg | neg_k | 1 | 0.1 | 1.3"}},
		{"aten_op_kernels_ns.json", true, []string{
			"aten::mul | mul_k | 2 | 2 | 4.5",
			"aten::neg | neg_k | 1 | 0 | 1",
			"aten::sub | sub_k | 1 | 6 | 1"}},
		// the launch at 650 µs is written before the one at 610 µs: by time, kB is first (HTA: file order)
		{"aten_op_kernels_order.json", false, []string{"aten::cat | kB -> kA | 1 | 10 | 10"}},
		{"aten_op_kernels_order.json", true, []string{"aten::cat | kA -> kB | 1 | 50 | 10"}},
	} {
		t.Run(fmt.Sprintf("%s/compat=%v", c.file, c.compat), func(t *testing.T) {
			db := ctOpen(t, aokCase(c.file))
			got := aokQuery(t, sqConn(t, db, c.compat), "")
			if len(got) != 1 && len(c.want) > 0 {
				t.Fatalf("ranks %v, want rank 0 only", got)
			}
			if g := aokRowsStr(got[0]); !reflect.DeepEqual(g, c.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(g, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}

// aokTwoRanks loads aten_op_kernels_threads.json twice (copies, ranks 0 and 1 by file order) as label "trace",
// and aten_op_kernels_ns.json as label "b" (rank 0).
func aokTwoRanks(t *testing.T) *engine.DB {
	t.Helper()
	b, err := os.ReadFile(aokCase("aten_op_kernels_threads.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	for _, n := range []string{"r0.json", "r1.json"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	db := sqOpen(t, "trace", paths...)
	if _, err := db.Load(context.Background(), []string{aokCase("aten_op_kernels_ns.json")}, engine.LoadOptions{Label: "b"}); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestAtenOpKernelsRanksAndLabels: ranks and label select the rows, in (label, rank) order. In compat mode HTA's
// list of launches outlives its loop over the ranks, so a rank's rows count the launches of every rank before it in
// the list as well; here both ranks are the same trace, whose op instances (thread id, name, start) coincide, so
// the later rank's instances hold both ranks' kernels ("gemm -> bias -> gemm -> bias") while the counts and the
// first launch's delays stay. Default mode: each rank its own rows. A rank listed twice feeds twice in compat.
func TestAtenOpKernelsRanksAndLabels(t *testing.T) {
	db := aokTwoRanks(t)
	own := map[bool][]string{
		false: {"aten::addmm | gemm -> bias | 2 | 8 | 24.5", "aten::add | add_k | 1 | 40 | 10", "aten::clamp_min | relu_k | 1 | 5 | 15"},
		true: {"aten::addmm | gemm -> bias | 2 | 8 | 24.5", "aten::copy_ | side_k | 1 | 50 | 10",
			"aten::fill_ | add_k | 1 | 10 | 10", "aten::relu | relu_k | 1 | 5 | 15"},
	}
	doubled := []string{"aten::addmm | gemm -> bias -> gemm -> bias | 2 | 8 | 24.5", "aten::copy_ | side_k -> side_k | 1 | 50 | 10",
		"aten::fill_ | add_k -> add_k | 1 | 10 | 10", "aten::relu | relu_k -> relu_k | 1 | 5 | 15"}
	for _, compat := range []bool{false, true} {
		c := sqConn(t, db, compat)
		later := own[compat]
		if compat {
			later = doubled
		}
		for _, x := range []struct {
			args string
			want map[int][]string
		}{
			{"label := 'trace'", map[int][]string{0: own[compat], 1: later}},
			{"label := 'trace', ranks := [0, 1]", map[int][]string{0: own[compat], 1: later}},
			{"label := 'trace', ranks := []", map[int][]string{0: own[compat], 1: later}},
			{"label := 'trace', ranks := [1, 0]", map[int][]string{1: own[compat], 0: later}},
			{"label := 'trace', ranks := [1]", map[int][]string{1: own[compat]}},
			{"label := 'trace', ranks := [0, 0]", map[int][]string{0: later}},
		} {
			got := map[int][]string{}
			for r, rows := range aokQuery(t, c, x.args) {
				got[r] = aokRowsStr(rows)
			}
			if !reflect.DeepEqual(got, x.want) {
				t.Errorf("compat=%v (%s):\n got %v\nwant %v", compat, x.args, got, x.want)
			}
		}
		// every label, label by label: "b" (the ns trace, rank 0) first, then "trace"'s ranks 0 and 1
		var seen []string
		for _, r := range ctRows(t, c, `SELECT label || '/' || rank FROM aten_op_kernels_and_delay()`) {
			if len(seen) == 0 || seen[len(seen)-1] != r[0] {
				seen = append(seen, r[0])
			}
		}
		if want := []string{"b/0", "trace/0", "trace/1"}; !reflect.DeepEqual(seen, want) {
			t.Errorf("compat=%v: groups in order %v, want %v", compat, seen, want)
		}
		if got := aokQuery(t, c, "label := 'b', ranks := [0]"); len(got) != 1 || len(got[0]) == 0 || got[0][0].name != "aten::mul" {
			t.Errorf("compat=%v: label b: %v", compat, got)
		}
	}
}

// TestAtenOpKernelsSortBy: sort_by orders each (label, rank)'s rows by the named columns, descending (HTA's
// sort_values(sort_by, ascending=False)); a single name is a one-element list and HTA's column names stand for the
// _us ones. Default mode breaks ties by occurrence_count, aten_op_name, kernel_sequence. Compat keeps HTA's order:
// one column, numpy's quicksort of the reversed groupby order (insertion sort here, 4 rows: ties keep the groupby's
// name order, so copy_ before fill_ at 10 µs); several columns, a stable sort of the groupby order.
func TestAtenOpKernelsSortBy(t *testing.T) {
	db := ctOpen(t, aokCase("aten_op_kernels_threads.json"))
	for _, x := range []struct {
		compat bool
		sortBy string
		want   string // names in order
	}{
		{false, "NULL", "aten::addmm aten::add aten::clamp_min"},
		{false, "[]", "aten::addmm aten::add aten::clamp_min"},
		{false, "'avg_runtime_delay_us'", "aten::addmm aten::clamp_min aten::add"},
		{false, "['avg_aten_op_launch_delay']", "aten::add aten::addmm aten::clamp_min"},
		{false, "['occurrence_count', 'avg_runtime_delay']", "aten::addmm aten::clamp_min aten::add"},
		{false, "['aten_op_name']", "aten::clamp_min aten::addmm aten::add"},
		{false, "['kernel_sequence']", "aten::clamp_min aten::addmm aten::add"},
		{true, "NULL", "aten::addmm aten::copy_ aten::fill_ aten::relu"},
		{true, "['avg_runtime_delay_us']", "aten::addmm aten::relu aten::copy_ aten::fill_"},
		{true, "'avg_aten_op_launch_delay'", "aten::copy_ aten::fill_ aten::addmm aten::relu"},
		{true, "['occurrence_count', 'avg_aten_op_launch_delay_us']", "aten::addmm aten::copy_ aten::fill_ aten::relu"},
		{true, "['occurrence_count', 'avg_runtime_delay_us']", "aten::addmm aten::relu aten::copy_ aten::fill_"},
		{true, "['aten_op_name']", "aten::relu aten::fill_ aten::copy_ aten::addmm"},
	} {
		var names []string
		for _, r := range aokQuery(t, sqConn(t, db, x.compat), "sort_by := "+x.sortBy)[0] {
			names = append(names, r.name)
		}
		if got := strings.Join(names, " "); got != x.want {
			t.Errorf("compat=%v sort_by := %s: %s, want %s", x.compat, x.sortBy, got, x.want)
		}
	}
}

// TestAtenOpKernelsArguments: a label or a listed rank that is not loaded, an unknown sort_by column and arguments of
// the wrong type are errors naming the macro and the parameter, in both modes, even where there would be no rows;
// hta_compat := sets the mode of one call whatever the session's variable.
func TestAtenOpKernelsArguments(t *testing.T) {
	db := aokTwoRanks(t)
	apErrors(t, db, []struct{ q, msg string }{
		{`SELECT * FROM aten_op_kernels_and_delay(ranks := [5])`, "aten_op_kernels_and_delay: ranks: no trace with rank 5 is loaded (ranks loaded: 0, 1)"},
		{`SELECT * FROM aten_op_kernels_and_delay(ranks := [1], label := 'b')`, `aten_op_kernels_and_delay: ranks: no trace with label "b" and rank 1 is loaded (ranks loaded: 0)`},
		{`SELECT * FROM aten_op_kernels_and_delay(label := 'nope')`, `aten_op_kernels_and_delay: no trace with label "nope" is loaded (labels loaded: b, trace)`},
		{`SELECT * FROM aten_op_kernels_and_delay(label := 3)`, "aten_op_kernels_and_delay: label must be a string"},
		{`SELECT * FROM aten_op_kernels_and_delay(ranks := 0)`, "aten_op_kernels_and_delay: ranks must be a list of integers"},
		{`SELECT * FROM aten_op_kernels_and_delay(sort_by := ['count'])`, "aten_op_kernels_and_delay: sort_by: no column 'count' (columns: aten_op_name, kernel_sequence, occurrence_count, avg_aten_op_launch_delay_us, avg_runtime_delay_us)"},
		{`SELECT * FROM aten_op_kernels_and_delay(sort_by := [NULL])`, "aten_op_kernels_and_delay: sort_by: no column NULL"},
		{`SELECT * FROM aten_op_kernels_and_delay(sort_by := 1)`, "aten_op_kernels_and_delay: sort_by must be a column name or a list of them"},
		{`SELECT * FROM aten_op_kernels_and_delay(hta_compat := 'maybe')`, "aten_op_kernels_and_delay: hta_compat must be true or false"},
	})
	// no trace loaded, so no rows: the arguments are checked all the same
	apErrors(t, sqOpen(t, ""), []struct{ q, msg string }{
		{`SELECT * FROM aten_op_kernels_and_delay(sort_by := 'x')`, "aten_op_kernels_and_delay: sort_by: no column 'x'"},
		{`SELECT * FROM aten_op_kernels_and_delay(ranks := [0])`, "aten_op_kernels_and_delay: ranks: no trace with rank 0 is loaded (no trace is loaded)"},
		{`SELECT * FROM aten_op_kernels_and_delay(label := 'a')`, `aten_op_kernels_and_delay: no trace with label "a" is loaded (no trace is loaded)`},
	})
	if rows := ctRows(t, sqOpen(t, "").SQL, `SELECT * FROM aten_op_kernels_and_delay()`); len(rows) != 0 {
		t.Errorf("no trace loaded: %v", rows)
	}
	c, err := db.SQL.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q := func(hc string) string {
		return strings.Join(aokRowsStr(aokQuery(t, c, "label := 'trace', ranks := [1, 0]"+hc)[0]), "\n")
	}
	cpExec(t, c, `RESET VARIABLE hta_compat`)
	compatArg, defaultVar := q(", hta_compat := true"), q("")
	cpExec(t, c, `SET VARIABLE hta_compat = true`)
	compatVar, defaultArg := q(""), q(", hta_compat := false")
	if compatVar == defaultVar {
		t.Fatal("the modes give the same rows: the test tests nothing")
	}
	if compatArg != compatVar || defaultArg != defaultVar {
		t.Errorf("hta_compat := overridden by the variable:\ncompat %q / %q\ndefault %q / %q", compatArg, compatVar, defaultArg, defaultVar)
	}
}

// TestAtenOpKernelsHolderSearch: the bucketed hash join that finds the ops holding each launch call
// (_aok_launches_default / _aok_launches_compat) attributes every call as a plain range join does, on every trace
// of the reference dirs and the hand-built ones: default, the deepest aten:: op holding the call on its thread
// (latest start, earliest end, later ev_idx); compat, the latest start on any thread, the first in the file among
// equal starts (no call here has more than 16 holders, where numpy's quicksort takes over). The calls kept are
// those with exactly one GPU event. Also: default mode has rows on amd_trace (hipLaunchKernel), where HTA raised.
func TestAtenOpKernelsHolderSearch(t *testing.T) {
	naive := map[bool]string{
		false: `WITH calls AS (SELECT f.* FROM _hta_frame_default f JOIN _ct_launch_names() n ON n.name = f.name AND NOT n.is_memory WHERE f.stream = -1),
			ops AS (SELECT * FROM _hta_frame_default WHERE (stream = -1 OR cat_class = 'cpu_op') AND starts_with(name, 'aten::')),
			one AS (SELECT trace_id, launch_idx FROM _gpu_frame_default WHERE gpu_work GROUP BY ALL HAVING count(*) = 1)
			SELECT c.trace_id, c.ev_idx, arg_max(o.name, (o.ts, -o.end_ts, o.ev_idx)), arg_max(o.ev_idx, (o.ts, -o.end_ts, o.ev_idx))
			FROM calls c JOIN ops o ON o.trace_id = c.trace_id AND o.pid = c.pid AND o.tid = c.tid AND o.ts <= c.ts AND o.end_ts >= c.end_ts
			SEMI JOIN one ON one.trace_id = c.trace_id AND one.launch_idx = c.ev_idx
			GROUP BY ALL ORDER BY ALL`,
		true: `WITH f AS (SELECT * FROM _hta_frame_compat),
			calls AS (SELECT * FROM f WHERE regexp_matches(name, '^(cuda.*LaunchKernel|cuLaunchKernel|runFunction)')),
			ops AS (SELECT * FROM f WHERE starts_with(name, 'aten::')),
			one AS (SELECT trace_id, index_correlation FROM f WHERE stream <> -1 GROUP BY ALL HAVING count(*) = 1)
			SELECT c.trace_id, c.ev_idx, arg_max(o.name, (o.ts, -o.ev_idx)), arg_max(o.ts, (o.ts, -o.ev_idx))
			FROM calls c JOIN ops o ON o.trace_id = c.trace_id AND o.ts <= c.ts AND o.end_ts >= c.end_ts
			SEMI JOIN one ON one.trace_id = c.trace_id AND one.index_correlation = c.ev_idx
			GROUP BY ALL HAVING count(*) <= 16 ORDER BY ALL`,
	}
	macro := map[bool]string{
		false: `SELECT trace_id, call_idx, op_name, inst_key FROM _aok_launches_default(NULL, NULL) ORDER BY ALL`,
		true:  `SELECT trace_id, call_idx, op_name, inst_key FROM _aok_launches_compat(NULL, NULL) ORDER BY ALL`,
	}
	check := func(t *testing.T, db *engine.DB) int {
		n := 0
		for _, compat := range []bool{false, true} {
			c := sqConn(t, db, compat)
			want, got := ctRows(t, c, naive[compat]), ctRows(t, c, macro[compat])
			if !reflect.DeepEqual(got, want) {
				t.Errorf("compat=%v: %d calls attributed, a range join %d; first %v / %v", compat, len(got), len(want),
					got[:min(len(got), 3)], want[:min(len(want), 3)])
			}
			n += len(got)
		}
		return n
	}
	total := 0
	for _, name := range []string{"aten_op_kernels_threads.json", "aten_op_kernels_ns.json"} {
		t.Run(name, func(t *testing.T) { total += check(t, ctOpen(t, aokCase(name))) })
	}
	for _, d := range htaref.Dirs(t) {
		t.Run(d.Name, func(t *testing.T) {
			db := htaref.Open(t, d)
			total += check(t, db)
			if d.Name == "amd_trace" {
				if got := aokQuery(t, sqConn(t, db, false), ""); len(got[0]) == 0 {
					t.Error("amd_trace: no rows in default mode (hipLaunchKernel)")
				}
			}
		})
	}
	if total == 0 {
		t.Fatal("no call attributed anywhere")
	}
}

// TestAtenOpKernelsManyHolders: a launch held by more than 16 aten:: ops. HTA takes the first row of
// sort_values('ts', ascending=False), which pandas computes as numpy's quicksort of the reversed starts (the holders
// in frame order), reversed back: beyond 16 elements numpy partitions, so among equal starts the pick is not the
// first in the frame. Here 20 ops nest on one thread (aten::op_00 … aten::op_19, each inside the one before): op_00 to
// op_07 start at 100 µs, op_08 to op_19 at 120 µs, all holding the launch at 150; compat's pick must be the holder
// that sqlfuncs.NPArgsort (numpy 1.24's argsort, checked against numpy in graph) puts last, default's the deepest,
// aten::op_19 (latest start, earliest end).
func TestAtenOpKernelsManyHolders(t *testing.T) {
	var evs []string
	var starts []int64
	for i := 0; i < 20; i++ {
		ts := int64(100)
		if i >= 8 {
			ts = 120
		}
		starts = append(starts, ts)
		evs = append(evs, fmt.Sprintf(`{"ph": "X", "cat": "cpu_op", "name": "aten::op_%02d", "pid": 1, "tid": 1, "ts": %d, "dur": %d}`, i, ts, 300-ts-int64(i)))
	}
	evs = append(evs,
		`{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 150, "dur": 5, "args": {"correlation": 1}}`,
		`{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 170, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 1}}`)
	db := ctOpenJSON(t, "many_holders.json", `{"traceEvents": [`+strings.Join(evs, ",\n")+`]}`)
	rev := make([]int64, len(starts))
	for i, s := range starts {
		rev[len(starts)-1-i] = s
	}
	perm := sqlfuncs.NPArgsort(rev)
	pick := len(starts) - 1 - int(perm[len(perm)-1])
	want := map[bool]string{false: "aten::op_19", true: fmt.Sprintf("aten::op_%02d", pick)}
	if pick == 8 {
		t.Fatalf("numpy's pick is the first of the latest starts in the frame (%d): the case tests nothing", pick)
	}
	t.Logf("HTA's pick: %s", want[true])
	for _, compat := range []bool{false, true} {
		got := aokQuery(t, sqConn(t, db, compat), "")
		if len(got[0]) != 1 || got[0][0].name != want[compat] || got[0][0].seq != "k" {
			t.Errorf("compat=%v: %v, want %s", compat, got, want[compat])
		}
	}
}
