package queries_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"tracesql/engine"
	"tracesql/internal/htaref"
)

// ovClearErrors are the critical-path failures a trace may legitimately end in (graph.Err* and the
// window errors): anything else (or a crash) fails the test.
var ovClearErrors = []string{
	"critical path graph is invalid", // cycle, or a sync edge between two kernels of one stream
	"annotation not found",           // e.g. the rank has no events the frame keeps
	"instance out of range",
	"empty window", // hta/cpu_only: its one ProfilerStep holds only annotations
}

// TestCPAllTraces: critical_path (default and compat) on every trace file under ../shared/traces
// and testdata/traces/recorded,
// one file at a time (rank 0), with annotation 'ProfilerStep' when the trace has one, else "" (the
// whole trace): either rows (then critical_path_summary agrees on the path's edge count and the
// overlay export writes a valid file with paired flows) or one of the clear errors above. Files
// the loader rejects (CSVs, non-trace JSON) are skipped.
func TestCPAllTraces(t *testing.T) {
	files := htaref.EveryTrace(t)
	if len(files) == 0 {
		t.Skip("no traces")
	}
	ran := 0
	for _, tf := range files {
		file := tf.Path
		t.Run(tf.Name, func(t *testing.T) {
			ctx := context.Background()
			db, err := engine.Open(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Load(ctx, []string{file}, engine.LoadOptions{RankFrom: engine.RankIndex}); err != nil {
				t.Skipf("not loadable (not a trace): %v", err)
			}
			var rank int64
			var steps int64
			if err := db.SQL.QueryRow(`SELECT min(rank) FROM traces`).Scan(&rank); err != nil {
				t.Fatal(err)
			}
			if err := db.SQL.QueryRow(`SELECT count(*) FROM events WHERE name LIKE '%ProfilerStep%'`).Scan(&steps); err != nil {
				t.Fatal(err)
			}
			annotation := ""
			if steps > 0 {
				annotation = "ProfilerStep"
			}
			ran++
			for _, compat := range []bool{false, true} {
				args := fmt.Sprintf(`rank := %d, annotation := '%s', compat := %t`, rank, annotation, compat)
				var edges, sumEdges int64
				err := db.SQL.QueryRow(`SELECT count(*) FROM critical_path(` + args + `)`).Scan(&edges)
				if err != nil {
					clear := false
					for _, c := range ovClearErrors {
						clear = clear || strings.Contains(err.Error(), c)
					}
					if !clear {
						t.Errorf("compat=%t: unexpected error: %v", compat, err)
					} else {
						t.Logf("compat=%t: %v", compat, err)
					}
					continue
				}
				if err := db.SQL.QueryRow(`SELECT coalesce(max(path_edges), 0) FROM critical_path_summary(` + args + `)`).Scan(&sumEdges); err != nil {
					t.Fatalf("compat=%t summary: %v", compat, err)
				}
				if sumEdges != edges {
					t.Errorf("compat=%t: critical_path has %d edges, summary says %d", compat, edges, sumEdges)
				}
				// A synchronisation waits for work that ended before what it releases starts.
				if !compat {
					var backwards int64
					q := `WITH n AS (SELECT node, ts, end_ts FROM cdg_nodes(` + args + `))
						SELECT count(*) FROM cdg_edges(` + args + `) e JOIN n s ON s.node = e.src_node JOIN n d ON d.node = e.dst_node
						WHERE e.dependency = 'sync' AND s.end_ts > d.ts`
					if err := db.SQL.QueryRow(q).Scan(&backwards); err != nil {
						t.Errorf("cdg edges: %v", err)
					} else if backwards > 0 {
						t.Errorf("%d sync edges from a GPU node that ended after its destination started", backwards)
					}
				}
				// No path covers time no event covers: CPCR never exceeds the busy bound.
				for _, algo := range []string{"hta", "ctda"} {
					if compat && algo == "ctda" {
						continue
					}
					var cpcr, busy sql.NullFloat64
					q := `SELECT max(cpcr), max(busy_bound) FROM critical_path_summary(` + args + `, algorithm := '` + algo + `')`
					if err := db.SQL.QueryRow(q).Scan(&cpcr, &busy); err != nil {
						t.Errorf("compat=%t %s summary: %v", compat, algo, err)
					} else if cpcr.Float64 > busy.Float64+1e-12 {
						t.Errorf("compat=%t %s: CPCR %.6f above the busy bound %.6f", compat, algo, cpcr.Float64, busy.Float64)
					}
				}
				var path string
				var flows int64
				if err := db.SQL.QueryRow(`SELECT path, flow_pairs FROM export_critical_path_overlay(`+args+`, output_dir := ?)`,
					t.TempDir()).Scan(&path, &flows); err != nil {
					t.Errorf("compat=%t overlay: %v", compat, err)
					continue
				}
				tr := ovRead(t, path)
				if got := int64(len(ovFlowPairs(t, tr.events))); got != flows {
					t.Errorf("compat=%t overlay: %d flow pairs in the file, %d reported", compat, got, flows)
				}
				t.Logf("compat=%t: %d path edges, %d flow pairs", compat, edges, flows)
			}
		})
	}
	if ran == 0 {
		t.Skip("no loadable trace")
	}
}
