package queries_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracesql/engine"
	"tracesql/internal/htaref"
)

// bdRow is one result row: column name → value (float64, string or nil for NULL).
type bdRow map[string]any

// bdQuery runs q and returns its rows with numbers as float64 and text as string.
func bdQuery(t testing.TB, db *sql.DB, q string, args ...any) []bdRow {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []bdRow
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		r := bdRow{}
		for i, c := range cols {
			r[c] = bdNorm(vals[i])
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func bdNorm(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case float64:
		return x
	case float32:
		return float64(x)
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case int:
		return float64(x)
	case uint64:
		return float64(x)
	case string:
		return x
	case []byte:
		return string(x)
	case fmt.Stringer: // HUGEINT comes back as *big.Int
		var f float64
		fmt.Sscan(x.String(), &f)
		return f
	}
	return fmt.Sprint(v)
}

// bdNum returns a row value as a number (NaN for NULL).
func bdNum(v any) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	return math.NaN()
}

// bdKey joins the row's values of cols into a map key; numbers are printed as integers when whole.
func bdKey(vals ...any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case float64:
			parts[i] = fmt.Sprintf("%g", x)
		case nil:
			parts[i] = "NULL"
		default:
			parts[i] = fmt.Sprint(x)
		}
	}
	return strings.Join(parts, "|")
}

// bdCompare checks that our rows and HTA's CSV rows agree: same keys, and each numeric column pair equal
// (htaref.Close; an empty or nan cell equals NULL). keys and nums map CSV column → our column.
func bdCompare(t *testing.T, got []bdRow, want htaref.CSV, keys, nums [][2]string) {
	t.Helper()
	gotBy := map[string]bdRow{}
	for _, r := range got {
		var kv []any
		for _, k := range keys {
			kv = append(kv, r[k[1]])
		}
		key := bdKey(kv...)
		if _, dup := gotBy[key]; dup {
			t.Errorf("duplicate row %s", key)
		}
		gotBy[key] = r
	}
	seen := map[string]bool{}
	bad := 0
	for _, row := range want.Rows {
		var kv []any
		for _, k := range keys {
			cell := row[want.Col(t, k[0])]
			if f := htaref.Float(cell); !math.IsNaN(f) && k[0] != "name" && k[0] != "kernel_type" && k[0] != "idle_category" {
				kv = append(kv, f)
			} else {
				kv = append(kv, cell)
			}
		}
		key := bdKey(kv...)
		seen[key] = true
		g, ok := gotBy[key]
		if !ok {
			t.Errorf("HTA row %s missing", key)
			bad++
			continue
		}
		for _, n := range nums {
			w := htaref.Float(row[want.Col(t, n[0])])
			gv := bdNum(g[n[1]])
			if !htaref.Close(gv, w) {
				t.Errorf("row %s: %s = %v, HTA %s = %v", key, n[1], gv, n[0], w)
				bad++
			}
		}
		if bad > 20 {
			t.Fatalf("too many differences")
		}
	}
	for k := range gotBy {
		if !seen[k] {
			t.Errorf("extra row %s (not in HTA's output)", k)
		}
	}
}

// bdNoGPU lists the reference dirs where HTA's temporal and idle-time breakdowns raised because the
// traces have no GPU events on a stream (README "What failed"); ours must be empty there.
var bdNoGPU = map[string]bool{"cpu_only": true, "rank_non_gpu": true, "distributed_info_unavailable": true,
	"rank_unavailable": true, "mixed_files": true, "cupti_profiler": true}

// TestBreakdownsCompat checks every breakdown analysis in compat mode against HTA's own output on every
// reference dir that has the file.
func TestBreakdownsCompat(t *testing.T) {
	for _, d := range htaref.Dirs(t) {
		d := d
		t.Run(d.Name, func(t *testing.T) {
			db := htaref.Open(t, d)
			htaref.Compat(t, db)
			q := func(s string) []bdRow { return bdQuery(t, db.SQL, s) }
			checked := 0
			if d.Has("temporal_breakdown.csv") {
				checked++
				t.Run("temporal", func(t *testing.T) {
					bdCompare(t, q(`SELECT * FROM temporal_breakdown`), htaref.ReadCSV(t, d.File("temporal_breakdown.csv")),
						[][2]string{{"rank", "rank"}},
						[][2]string{{"idle_time(us)", "idle_time_us"}, {"compute_time(us)", "compute_time_us"},
							{"non_compute_time(us)", "non_compute_time_us"}, {"kernel_time(us)", "kernel_time_us"},
							{"idle_time_pctg", "idle_time_pct"}, {"compute_time_pctg", "compute_time_pct"},
							{"non_compute_time_pctg", "non_compute_time_pct"}})
				})
			} else if bdNoGPU[d.Name] {
				// HTA raised (no GPU events); ours is correct: no rows.
				if r := q(`SELECT * FROM temporal_breakdown`); len(r) != 0 {
					t.Errorf("temporal_breakdown on a trace without GPU events: %d rows", len(r))
				}
			}
			if d.Has("idle_time_breakdown.csv") {
				checked++
				t.Run("idle", func(t *testing.T) {
					bdCompare(t, q(`SELECT * FROM idle_time_breakdown()`), htaref.ReadCSV(t, d.File("idle_time_breakdown.csv")),
						[][2]string{{"rank", "rank"}, {"stream", "stream"}, {"idle_category", "idle_category"}},
						[][2]string{{"idle_time", "idle_time_us"}, {"idle_time_ratio", "idle_time_ratio"}})
				})
			} else if bdNoGPU[d.Name] {
				if r := q(`SELECT * FROM idle_time_breakdown()`); len(r) != 0 {
					t.Errorf("idle_time_breakdown on a trace without GPU events: %d rows", len(r))
				}
			}
			if d.Has("idle_time_interval_stats.csv") {
				checked++
				t.Run("idle_stats", func(t *testing.T) {
					bdCompare(t, q(`SELECT * FROM idle_interval_stats()`), htaref.ReadCSV(t, d.File("idle_time_interval_stats.csv")),
						[][2]string{{"rank", "rank"}, {"stream", "stream"}, {"idle_category", "idle_category"}},
						[][2]string{{"count", "count"}, {"mean", "mean_us"}, {"std", "std_us"}, {"min", "min_us"},
							{"25%", "p25_us"}, {"50%", "p50_us"}, {"75%", "p75_us"}, {"max", "max_us"}})
				})
			}
			if d.Has("gpu_kernel_breakdown_kernel_type.csv") {
				checked++
				t.Run("kernel_type", func(t *testing.T) {
					bdCompare(t, q(`SELECT * FROM kernel_type_breakdown()`), htaref.ReadCSV(t, d.File("gpu_kernel_breakdown_kernel_type.csv")),
						[][2]string{{"kernel_type", "kernel_type"}},
						[][2]string{{"sum", "sum_us"}, {"percentage", "pct"}})
				})
			}
			kernelCols := [][2]string{{"sum (us)", "sum_us"}, {"max (us)", "max_us"}, {"min (us)", "min_us"},
				{"stddev", "stddev_us"}, {"mean (us)", "mean_us"}}
			for file, sqlq := range map[string]string{
				"gpu_kernel_breakdown_kernels.csv":     `SELECT * FROM kernel_breakdown()`,
				"gpu_kernel_breakdown_kernels_all.csv": `SELECT * FROM kernel_breakdown(num_kernels := 1000, duration_ratio := 1.0)`,
			} {
				if !d.Has(file) {
					continue
				}
				checked++
				t.Run(file, func(t *testing.T) {
					bdCompare(t, q(sqlq), htaref.ReadCSV(t, d.File(file)),
						[][2]string{{"name", "name"}, {"kernel_type", "kernel_type"}, {"rank", "rank"}}, kernelCols)
				})
			}
			if d.Has("comm_comp_overlap.csv") {
				checked++
				t.Run("overlap", func(t *testing.T) {
					bdCompare(t, q(`SELECT * FROM comm_comp_overlap`), htaref.ReadCSV(t, d.File("comm_comp_overlap.csv")),
						[][2]string{{"rank", "rank"}}, [][2]string{{"comp_comm_overlap_pctg", "comp_comm_overlap_pct"}})
				})
			}
			for file, gpu := range map[string]bool{"gpu_user_annotation_breakdown.csv": true, "cpu_user_annotation_breakdown.csv": false} {
				if !d.Has(file) {
					continue
				}
				checked++
				t.Run(file, func(t *testing.T) {
					bdCompare(t, q(fmt.Sprintf(`SELECT * FROM user_annotation_breakdown(use_gpu_annotation := %v)`, gpu)),
						htaref.ReadCSV(t, d.File(file)),
						[][2]string{{"name", "name"}, {"rank", "rank"}}, kernelCols)
				})
			}
			t.Logf("%d reference files checked", checked)
		})
	}
}

// bdOpenFile loads one trace file into a fresh database (default mode).
func bdOpenFile(t testing.TB, path string) *engine.DB {
	t.Helper()
	db, err := engine.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Load(context.Background(), []string{path}, engine.LoadOptions{}); err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return db
}

// bdTestdata returns the path of testdata/hta/<name> in the repository.
func bdTestdata(name string) string { return filepath.Join("..", "testdata", "hta", name) }

// bdExpect runs q and checks its rows, in order, against want (numbers within 1e-9, nil = NULL).
func bdExpect(t *testing.T, db *sql.DB, q string, want [][]any) {
	t.Helper()
	got := bdQuery(t, db, q)
	rows, _ := db.Query(q)
	cols, _ := rows.Columns()
	rows.Close()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, want %d: %v", q, len(got), len(want), got)
		return
	}
	for i, w := range want {
		if len(w) != len(cols) {
			t.Fatalf("%s: want row %d has %d values for %d columns %v", q, i, len(w), len(cols), cols)
		}
		for j, wv := range w {
			gv := got[i][cols[j]]
			var ok bool
			switch x := wv.(type) {
			case nil:
				ok = gv == nil
			case string:
				ok = gv == x
			case int:
				ok = htaref.Close(bdNum(gv), float64(x))
			case float64:
				ok = htaref.Close(bdNum(gv), x)
			}
			if !ok {
				t.Errorf("%s: row %d %s = %v, want %v", q, i, cols[j], gv, wv)
			}
		}
	}
}

// bdModes runs check in default mode and then in compat mode on a one-file database.
func bdModes(t *testing.T, file string, check func(t *testing.T, db *sql.DB, compat bool)) {
	db := bdOpenFile(t, bdTestdata(file))
	db.SQL.SetMaxOpenConns(1)
	for _, compat := range []bool{false, true} {
		if _, err := db.SQL.Exec(fmt.Sprintf(`SET VARIABLE hta_compat = %v`, compat)); err != nil {
			t.Fatal(err)
		}
		t.Run(map[bool]string{false: "default", true: "compat"}[compat], func(t *testing.T) { check(t, db.SQL, compat) })
	}
}

// TestBreakdownsDefaultMode checks the quirks that default mode fixes, on hand-built traces whose answers
// are worked out in the comments; compat mode must still give HTA's answer on the same trace.
func TestBreakdownsDefaultMode(t *testing.T) {
	// gemm [0,10], Stream Sync [10,30] (cuda_sync), nccl [40,50] on stream 7: the sync is not GPU work, so
	// idle = 50 − 20 = 30, compute 10, non-compute 10. HTA (quirk §7.2) counts the sync: idle 10, non-compute 30.
	t.Run("temporal_sync", func(t *testing.T) {
		bdModes(t, "bd_temporal_sync.json", func(t *testing.T, db *sql.DB, compat bool) {
			want := []any{"trace", 0, 30, 10, 10, 50, 60, 20, 20}
			if compat {
				want = []any{"trace", 0, 10, 10, 30, 50, 20, 20, 60}
			}
			bdExpect(t, db, `SELECT * FROM temporal_breakdown`, [][]any{want})
		})
	})
	// Stream 7: k1 [1000,1100] launched 990; k2 [1010,1020] (inside k1) launched 995; k3 [1150,1160]
	// launched 1005; k4 [1210,1220] launched 1200; k5 [1230,1235] has no runtime call (correlation 99);
	// event #0 is a CPU op at 5000.
	// Default: k2 leaves no gap (k1 still runs); k3 waits 1150 − 1100 = 50 ≥ 30 → other; k4: launch 1200 >
	// 1160 → host_wait 50; k5: gap 10, no launch → kernel_wait 10.
	// HTA (quirk §7.4): k2's gap is 1010 − 1100 = −90 → kernel_wait; k3's is 1150 − 1020 = 130 → other;
	// k5's "runtime" is event #0 (index_correlation 0) at 5000 > 1220 → host_wait 10.
	t.Run("idle", func(t *testing.T) {
		bdModes(t, "bd_idle.json", func(t *testing.T, db *sql.DB, compat bool) {
			if !compat {
				bdExpect(t, db, `SELECT * FROM idle_time_breakdown()`, [][]any{
					{"trace", 0, 0, 7, "host_wait", 50, 50.0 / 110},
					{"trace", 0, 0, 7, "kernel_wait", 10, 10.0 / 110},
					{"trace", 0, 0, 7, "other", 50, 50.0 / 110}})
				bdExpect(t, db, `SELECT idle_category, count, mean_us, std_us, min_us, max_us FROM idle_interval_stats()`, [][]any{
					{"host_wait", 1, 50, nil, 50, 50}, {"kernel_wait", 1, 10, nil, 10, 10}, {"other", 1, 50, nil, 50, 50}})
				bdExpect(t, db, `SELECT idle_category, idle_time_us FROM idle_time_breakdown(consecutive_kernel_delay := 5)`, [][]any{
					{"host_wait", 50}, {"other", 60}})
				// a stream without GPU work is an error, as an unknown rank is (it was an empty result)
				if _, err := db.Exec(`SELECT count(*) FROM idle_time_breakdown(streams := [8])`); err == nil ||
					!strings.Contains(err.Error(), "idle_time_breakdown: streams: no GPU work on stream 8 in the loaded traces (streams: 7)") {
					t.Errorf("streams := [8]: %v, want the no-GPU-work error", err)
				}
				bdExpect(t, db, `SELECT count(*) FROM idle_time_breakdown(ranks := [0], streams := [7])`, [][]any{{3}})
				return
			}
			bdExpect(t, db, `SELECT * FROM idle_time_breakdown()`, [][]any{
				{"trace", 0, 0, 7, "host_wait", 60, 0.6},
				{"trace", 0, 0, 7, "kernel_wait", -90, -0.9},
				{"trace", 0, 0, 7, "other", 130, 1.3}})
			bdExpect(t, db, `SELECT idle_category, count, mean_us, std_us, min_us, max_us FROM idle_interval_stats()`, [][]any{
				{"host_wait", 2, 30, 28.28, 10, 50}, {"kernel_wait", 1, -90, nil, -90, -90}, {"other", 1, 130, nil, 130, 130}})
		})
	})
	// Kernels kb, ka, kd, kc of 10 µs and ke of 5 µs (in that file order), each inside a GPU annotation of its
	// name without the k: with num_kernels 2 the two kept are the first by name among the tied, in both
	// modes. HTA 0.6.1 keeps ka and kb, a and b too (run on this file; compat kept kc and kd: r41 #1).
	t.Run("fold_ties", func(t *testing.T) {
		bdModes(t, "bd_fold_ties.json", func(t *testing.T, db *sql.DB, compat bool) {
			bdExpect(t, db, `SELECT name, sum_us FROM kernel_breakdown(num_kernels := 2)`, [][]any{{"ka", 10}, {"kb", 10}, {"others", 25}})
			bdExpect(t, db, `SELECT name, sum_us FROM user_annotation_breakdown(num_kernels := 2)`, [][]any{{"a", 10}, {"b", 10}, {"others", 25}})
		})
	})
	// 30 kernels of 4, 5, 6, 4, … µs, each inside GPU annotations outerI and innerI of its span (60 names;
	// 20 of them at 6 µs): by default the first three tied names by name are kept; HTA 0.6.1 (run on this
	// file) keeps inner29, outer20 and outer5, numpy's quicksort order of the 60 totals, which compat follows.
	t.Run("fold_ties_beyond_16_names", func(t *testing.T) {
		bdModes(t, "bd_fold_ties_60.json", func(t *testing.T, db *sql.DB, compat bool) {
			want := [][]any{{"inner11", 6}, {"inner14", 6}, {"inner17", 6}, {"others", 282}}
			if compat {
				want = [][]any{{"inner29", 6}, {"others", 282}, {"outer20", 6}, {"outer5", 6}}
			}
			bdExpect(t, db, `SELECT name, sum_us FROM user_annotation_breakdown(num_kernels := 3)`, want)
		})
	})
	// COMPUTATION kernels on one stream: kA 10+20+30 = 60, kB 15+15 = 30, kC 6, kD 4 (total 100);
	// num_kernels 3, duration_ratio 0.8.
	// Default: kA and kB already cover 90 ≥ 80 µs, so kC and kD fold; kept kernels keep per-launch stats
	// (kA max 30, min 10, mean 20, stddev 10) and others is over kC's and kD's launches (6, 4).
	// HTA (quirk §7.3): the 0.8 quantile of the cumsums [60, 90, 96, 100] is 97.6, so only kD folds; kept
	// kernels collapse to their totals (max = min = mean = sum, stddev 0).
	t.Run("kernel_fold", func(t *testing.T) {
		bdModes(t, "bd_kernel_fold.json", func(t *testing.T, db *sql.DB, compat bool) {
			q := `SELECT name, sum_us, max_us, min_us, stddev_us, mean_us, count FROM kernel_breakdown(num_kernels := 3)`
			if !compat {
				bdExpect(t, db, q, [][]any{
					{"kA", 60, 30, 10, 10, 20, 3}, {"kB", 30, 15, 15, 0, 15, 2}, {"others", 10, 6, 4, math.Sqrt2, 5, 2}})
				bdExpect(t, db, `SELECT name, count, min_us, mean_us, max_us FROM kernel_duration_distribution(num_kernels := 3)`,
					[][]any{{"kA", 3, 10, 20, 30}, {"kB", 2, 15, 15, 15}})
			} else {
				bdExpect(t, db, q, [][]any{
					{"kA", 60, 60, 60, 0, 60, 3}, {"kB", 30, 30, 30, 0, 30, 2}, {"kC", 6, 6, 6, 0, 6, 1},
					{"others", 4, 4, 4, 0, 4, 1}})
			}
			// Not more names than num_kernels: nothing folds, real statistics in both modes.
			bdExpect(t, db, `SELECT name, max_us, mean_us FROM kernel_breakdown()`, [][]any{
				{"kA", 30, 20}, {"kB", 15, 15}, {"kC", 6, 6}, {"kD", 4, 4}})
			bdExpect(t, db, `SELECT name, sum_us FROM kernel_breakdown(num_kernels := NULL, duration_ratio := NULL, include_memory_kernels := NULL)`,
				[][]any{{"kA", 60}, {"kB", 30}, {"kC", 6}, {"kD", 4}})
		})
	})
	// gemm_a [0,100] and gemm_b [100,120] on stream 7 (touching: one merged interval), nccl [50,150] on
	// stream 8, Memcpy [140,160] on stream 9. Exclusive labels: COMPUTATION [0,50) 50, COMPUTATION
	// overlapping COMMUNICATION [50,120) 70, COMMUNICATION [120,140) 20, COMMUNICATION overlapping MEMORY
	// [140,150) 10, MEMORY [150,160) 10. Overlap 70 / 100. Same in both modes (no quirk here).
	t.Run("overlap", func(t *testing.T) {
		bdModes(t, "bd_overlap.json", func(t *testing.T, db *sql.DB, compat bool) {
			pct := func(x float64) float64 {
				if compat {
					return math.RoundToEven(1000*x/160) / 10 // numpy rounds half to even: 31.25 → 31.2
				}
				return 100 * x / 160
			}
			bdExpect(t, db, `SELECT kernel_type, sum_us, pct FROM kernel_type_breakdown()`, [][]any{
				{"COMPUTATION overlapping COMMUNICATION", 70, pct(70)},
				{"COMPUTATION", 50, pct(50)},
				{"COMMUNICATION", 20, pct(20)},
				{"COMMUNICATION overlapping MEMORY", 10, pct(10)},
				{"MEMORY", 10, pct(10)}})
			bdExpect(t, db, `SELECT kernel_type, sum_us FROM kernel_type_breakdown(include_memory_kernels := false)`, [][]any{
				{"COMPUTATION overlapping COMMUNICATION", 70}, {"COMPUTATION", 50}, {"COMMUNICATION", 30}})
			bdExpect(t, db, `SELECT rank, kernel_type, sum_us FROM kernel_type_breakdown_by_rank() WHERE kernel_type = 'MEMORY'`,
				[][]any{{0, "MEMORY", 10}})
			bdExpect(t, db, `SELECT * FROM comm_comp_overlap`, [][]any{{"trace", 0, 70}})
			bdExpect(t, db, `SELECT idle_time_us, compute_time_us, non_compute_time_us, kernel_time_us FROM temporal_breakdown`,
				[][]any{{0, 120, 40, 160}})
		})
	})
	// gpu_user_annotation "outer" [1000,1100] and "inner" [1010,1030] on the kernels' lane; k1 [1012,1017] and
	// k4 [1025,1035] overlap both → inner (the leaf); k2 [1050,1055] → outer; k3 [1200,1205] → none.
	t.Run("annotations", func(t *testing.T) {
		bdModes(t, "bd_annotations.json", func(t *testing.T, db *sql.DB, compat bool) {
			bdExpect(t, db, `SELECT name, annotation_ev_idx, annotation_name FROM gpu_kernels_with_annotations ORDER BY ev_idx`,
				[][]any{{"k1", 1, "inner"}, {"k2", 0, "outer"}, {"k3", nil, nil}, {"k4", 1, "inner"}})
			bdExpect(t, db, `SELECT name, sum_us, count FROM user_annotation_breakdown()`,
				[][]any{{"inner", 20, 1}, {"outer", 100, 1}})
			bdExpect(t, db, `SELECT name, sum_us FROM user_annotation_breakdown(num_kernels := 1)`,
				[][]any{{"others", 20}, {"outer", 100}})
			bdExpect(t, db, `SELECT name, sum_us FROM user_annotation_breakdown(num_kernels := 1, allowlist_patterns := ['inn'])`,
				[][]any{{"inner", 20}, {"outer", 100}})
			// An empty allowlist: HTA's regex of no alternatives matches every name (compat); by
			// default it allows nothing.
			emptyAllow := [][]any{{"others", 20}, {"outer", 100}}
			if compat {
				emptyAllow = [][]any{{"inner", 20}, {"outer", 100}}
			}
			bdExpect(t, db, `SELECT name, sum_us FROM user_annotation_breakdown(num_kernels := 1, allowlist_patterns := [])`, emptyAllow)
			bdExpect(t, db, `SELECT count(*) FROM user_annotation_breakdown(use_gpu_annotation := false)`, [][]any{{0}})
		})
	})
}

// bdAnalyses is every breakdown query, for the "runs everywhere" test and the benchmark.
var bdAnalyses = []struct{ name, sql string }{
	{"temporal", `SELECT * FROM temporal_breakdown`},
	{"idle", `SELECT * FROM idle_time_breakdown()`},
	{"idle_stats", `SELECT * FROM idle_interval_stats()`},
	{"kernel_type", `SELECT * FROM kernel_type_breakdown()`},
	{"kernel_type_by_rank", `SELECT * FROM kernel_type_breakdown_by_rank()`},
	{"kernel", `SELECT * FROM kernel_breakdown()`},
	{"kernel_distribution", `SELECT * FROM kernel_duration_distribution()`},
	{"overlap", `SELECT * FROM comm_comp_overlap`},
	{"gpu_annotation", `SELECT * FROM user_annotation_breakdown()`},
	{"cpu_annotation", `SELECT * FROM user_annotation_breakdown(use_gpu_annotation := false)`},
	{"kernels_with_annotations", `SELECT * FROM gpu_kernels_with_annotations`},
}

// TestBreakdownsEveryTrace runs every breakdown analysis, in both modes, on every trace file under
// ../shared/traces and testdata/traces/recorded (empty results are fine; errors are not).
func TestBreakdownsEveryTrace(t *testing.T) {
	for _, tf := range htaref.EveryTrace(t) {
		f := tf.Path
		t.Run(tf.Name, func(t *testing.T) {
			db, err := engine.Open(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Load(context.Background(), []string{f}, engine.LoadOptions{}); err != nil {
				t.Skipf("not loadable as a trace (engine's concern): %v", err)
			}
			db.SQL.SetMaxOpenConns(1)
			for _, mode := range []bool{false, true} {
				if _, err := db.SQL.Exec(fmt.Sprintf(`SET VARIABLE hta_compat = %v`, mode)); err != nil {
					t.Fatal(err)
				}
				for _, a := range bdAnalyses {
					bdQuery(t, db.SQL, a.sql)
				}
				// Default mode works in integer ns: no time is negative, not even by a rounding error.
				var negative int
				if err := db.SQL.QueryRow(`SELECT count(*) FROM temporal_breakdown WHERE NOT $1 AND
					(idle_time_us < 0 OR compute_time_us < 0 OR non_compute_time_us < 0)`, mode).Scan(&negative); err != nil {
					t.Fatal(err)
				} else if negative > 0 {
					t.Errorf("temporal_breakdown: %d ranks with a negative time", negative)
				}
			}
		})
	}
}

// BenchmarkBreakdowns times each analysis (default mode) on df_index_resolver (216 k events), loaded once.
// HTA 0.6.1 on the same trace: temporal 0.14 s, idle 0.04 s, kernel breakdown 0.21 s, overlap 0.15 s.
func BenchmarkBreakdowns(b *testing.B) {
	path := filepath.Join("..", "..", "shared", "traces", "hta", "df_index_resolver", "df_index_resolver.json.gz")
	if _, err := os.Stat(path); err != nil {
		b.Skip("df_index_resolver not present")
	}
	db := bdOpenFile(b, path)
	db.SQL.SetMaxOpenConns(1)
	for _, mode := range []string{"default", "compat"} {
		if _, err := db.SQL.Exec(fmt.Sprintf(`SET VARIABLE hta_compat = %v`, mode == "compat")); err != nil {
			b.Fatal(err)
		}
		for _, a := range bdAnalyses {
			b.Run(mode+"/"+a.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					bdQuery(b, db.SQL, a.sql)
				}
			})
		}
	}
}

// TestIdleCauseFromLaunchCall: the host_wait test reads the kernel's launch call, the runtime call where a
// runtime and a driver call share its correlation (as kernel_launch_stats pairs them), whatever their order in
// the file: HTA's link partner is the last one written, so the driver call that started after the stream went
// idle made the 170 µs gap host_wait in one order and other in the other.
func TestIdleCauseFromLaunchCall(t *testing.T) {
	runtime := `{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":20,"dur":100,"args":{"correlation":2}}`
	driver := `{"ph":"X","cat":"cuda_driver","name":"cuLaunchKernel","pid":100,"tid":100,"ts":50,"dur":20,"args":{"correlation":2}}`
	for name, pair := range map[string]string{"runtime first": runtime + ",\n" + driver, "driver first": driver + ",\n" + runtime} {
		t.Run(name, func(t *testing.T) {
			db := ctOpenJSON(t, "t.json", `{"traceEvents":[
				{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":0,"dur":10,"args":{"correlation":1}},
				{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":10,"dur":20,"args":{"stream":7,"correlation":1}},
				`+pair+`,
				{"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":200,"dur":20,"args":{"stream":7,"correlation":2}}]}`)
			ctWantRows(t, db.SQL, `SELECT idle_category, idle_time_us FROM idle_time_breakdown()`, [][]string{{"other", "170"}})
		})
	}
}

// TestTemporalZeroSpan: a rank whose only GPU work lasts 0 µs has no shares of its span: NULL (0 / 0 was NaN),
// while compat keeps HTA's NaN.
func TestTemporalZeroSpan(t *testing.T) {
	db := ctOpenJSON(t, "t.json", `{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":0,"args":{"stream":7,"correlation":1}}]}`)
	q := `SELECT kernel_time_us, idle_time_pct, compute_time_pct, non_compute_time_pct FROM temporal_breakdown`
	ctWantRows(t, db.SQL, q, [][]string{{"0", "NULL", "NULL", "NULL"}})
	if _, err := db.SQL.Exec(`SET VARIABLE hta_compat = true`); err != nil {
		t.Fatal(err)
	}
	ctWantRows(t, db.SQL, q, [][]string{{"0", "NaN", "NaN", "NaN"}})
}
