package queries_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
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
// ../shared/traces (empty results are fine; errors are not).
func TestBreakdownsEveryTrace(t *testing.T) {
	root := filepath.Join("..", "..", "shared", "traces")
	if _, err := os.Stat(root); err != nil {
		t.Skip("../shared/traces not present")
	}
	var files []string
	filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
		if err == nil && !de.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".json.gz")) {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	for _, f := range files {
		f := f
		rel, _ := filepath.Rel(root, f)
		t.Run(rel, func(t *testing.T) {
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
