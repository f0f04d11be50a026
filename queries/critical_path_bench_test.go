package queries_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"tracesql/engine"
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
