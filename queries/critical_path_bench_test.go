package queries_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"tracesql/engine"
	"tracesql/internal/procmem"
	"tracesql/sqlfuncs"
)

// BenchmarkCriticalPath times critical_path (read the frame, build the DAG, longest path, output) on
// the large HTA traces, without the graph cache. HTA 0.6.1: 2.47 s (df_index_resolver, ProfilerStep 1),
// 0.78 s (trace_diff/control).
func BenchmarkCriticalPath(b *testing.B) {
	for _, c := range []struct{ name, dir string }{
		{"df_index_resolver", "df_index_resolver"},
		{"trace_diff_control", "trace_diff/control"},
	} {
		b.Run(c.name, func(b *testing.B) {
			matches, _ := filepath.Glob(filepath.Join("..", "..", "shared", "traces", "hta", c.dir, "*.json*"))
			if len(matches) == 0 {
				b.Skip("trace absent")
			}
			if _, err := os.Stat(matches[0]); err != nil {
				b.Skip("trace absent")
			}
			db, err := engine.Open(context.Background(), "")
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Load(context.Background(), matches[:1], engine.LoadOptions{RankFrom: engine.RankIndex}); err != nil {
				b.Fatal(err)
			}
			for _, mode := range []string{"compat", "default"} {
				b.Run(mode, func(b *testing.B) {
					q := `SELECT count(*) FROM critical_path(annotation := 'ProfilerStep', instance := 1, compat := ` + map[string]string{"compat": "true", "default": "false"}[mode] + `)`
					for i := 0; i < b.N; i++ {
						sqlfuncs.ResetCriticalPathCache()
						var n int
						if err := db.SQL.QueryRow(q).Scan(&n); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			b.Run("cached_summary", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					var n int
					if err := db.SQL.QueryRow(`SELECT count(*) FROM critical_path_summary(annotation := 'ProfilerStep', instance := 1, compat := true)`).Scan(&n); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkCriticalPath1M times critical_path over a window of more than a million events: the
// ProfilerSteps of df_index_resolver (or trace_diff/control) replicated by engine.Inflate until the
// trace holds ≥ 1M events, analysed whole (an empty annotation). Inflating and loading happen before the
// timer. Reported: ms per call (graph cache reset each time), the window's events and graph nodes,
// and peak RSS during the calls (VmHWM after resetting it through /proc/self/clear_refs) next to
// the RSS before them (DuckDB holding the loaded trace, after returning freed Go memory to the OS)
// and the difference. Modes: hta (default, compat) and ctda (aggregated, event-level). Target:
// < 2 s and < 2 GB.
func BenchmarkCriticalPath1M(b *testing.B) {
	var src string
	for _, d := range []string{"df_index_resolver", "trace_diff/control"} {
		m, _ := filepath.Glob(filepath.Join("..", "..", "shared", "traces", "hta", d, "*.json*"))
		if len(m) > 0 {
			src = m[0]
			break
		}
	}
	if src == "" {
		b.Skip("no source trace")
	}
	ctx := context.Background()
	dir := b.TempDir()
	// Steps: the source's step count scaled up to ≥ 1M events (one probe inflation of 1 step first).
	probe, err := engine.Inflate(ctx, src, engine.InflateOptions{Ranks: 1, Steps: 1, Seed: 1, Gzip: true, OutDir: filepath.Join(dir, "probe")})
	if err != nil {
		b.Fatal(err)
	}
	one := ovCountEvents(b, probe[0])
	steps := int(1_100_000/one) + 1
	paths, err := engine.Inflate(ctx, src, engine.InflateOptions{Ranks: 1, Steps: steps, Seed: 1, Gzip: true, OutDir: filepath.Join(dir, "big")})
	if err != nil {
		b.Fatal(err)
	}
	db, err := engine.Open(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Load(ctx, paths, engine.LoadOptions{RankFrom: engine.RankIndex}); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct{ name, args, frame, nodes string }{
		{"default", "compat := false", "_hta_frame_default", "cp_graph_nodes(annotation := '', compat := false)"},
		{"compat", "compat := true", "_hta_frame_compat", "cp_graph_nodes(annotation := '', compat := true)"},
		{"ctda", "algorithm := 'ctda'", "_hta_frame_default", "cdg_nodes(annotation := '')"},
		{"ctda_events", "algorithm := 'ctda', aggregate := false", "_hta_frame_default", "cdg_nodes(annotation := '', aggregate := false)"},
	} {
		b.Run(mode.name, func(b *testing.B) {
			args := `annotation := '', ` + mode.args
			var window int64
			if err := db.SQL.QueryRow(`SELECT count(*) FROM ` + mode.frame).Scan(&window); err != nil {
				b.Fatal(err)
			}
			if window < 1_000_000 {
				b.Fatalf("window has %d events, want ≥ 1M", window)
			}
			debug.FreeOSMemory() // return the inflater's and loader's garbage: RSS = DuckDB + live heap
			before := procmem.Self("VmRSS")
			procmem.ResetPeak()
			b.ResetTimer()
			var nodes int64
			for i := 0; i < b.N; i++ {
				sqlfuncs.ResetCriticalPathCache()
				var n int
				if err := db.SQL.QueryRow(`SELECT count(*) FROM critical_path(` + args + `)`).Scan(&n); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			peak := procmem.Self("VmHWM")
			if err := db.SQL.QueryRow(`SELECT count(*) FROM ` + mode.nodes).Scan(&nodes); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(window), "events")
			b.ReportMetric(float64(nodes), "nodes")
			b.ReportMetric(float64(before)/(1<<20), "MB-RSS-before")
			b.ReportMetric(float64(peak)/(1<<20), "MB-RSS-peak")
			b.ReportMetric(float64(peak-before)/(1<<20), "MB-RSS-added")
		})
	}
}

// ovCountEvents counts the traceEvents of a trace file (gzip or not).
func ovCountEvents(b *testing.B, path string) int64 {
	db, err := engine.Open(context.Background(), "")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Load(context.Background(), []string{path}, engine.LoadOptions{RankFrom: engine.RankIndex}); err != nil {
		b.Fatal(err)
	}
	var n int64
	if err := db.SQL.QueryRow(`SELECT count(*) FROM _hta_frame_default`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}
