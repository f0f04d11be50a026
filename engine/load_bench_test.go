package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// sharedTraces is the workplace's trace collection (../shared/traces); tests that need it skip
// with a message when it is absent.
func sharedTraces(t testing.TB) string {
	dir, _ := filepath.Abs(filepath.Join("..", "..", "shared", "traces"))
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("../shared/traces not present (%v): skipping", err)
	}
	return dir
}

// BenchmarkLoad measures the end-to-end load (gunzip + split + scan + derive + insert) of the two
// reference traces named in the foundation issue. MB/s is of decompressed JSON.
func BenchmarkLoad(b *testing.B) { benchLoads(b, false) }

// BenchmarkLoadPrefetched is BenchmarkLoad in the command line's order: the first file's parse starts
// (StartPrefetch) before the database opens, and runs while the schema installs.
func BenchmarkLoadPrefetched(b *testing.B) { benchLoads(b, true) }

func benchLoads(b *testing.B, prefetch bool) {
	for _, name := range []string{"hta/mtia_trace_single_rank/mtia_rank_0.json.gz", "hta/df_index_resolver/df_index_resolver.json.gz"} {
		b.Run(filepath.Base(filepath.Dir(name)), func(b *testing.B) {
			path := filepath.Join(sharedTraces(b), name)
			ctx := context.Background()
			var jsonBytes, events int64
			for i := 0; i < b.N; i++ {
				res := loadFresh(ctx, b, path, prefetch)
				jsonBytes, events = res.JSONBytes, res.Events
			}
			b.SetBytes(jsonBytes)
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// loadFresh loads path into a new in-memory database, closes it, and returns the load result; with
// prefetch, the parse starts before the database opens, as the command line does it.
func loadFresh(ctx context.Context, b *testing.B, path string, prefetch bool) LoadResult {
	var opts LoadOptions
	if prefetch {
		opts.Prefetch = StartPrefetch(ctx, []string{path}, LoadOptions{})
	}
	db, err := Open(ctx, "")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	res, err := db.Load(ctx, []string{path}, opts)
	if err != nil {
		b.Fatal(err)
	}
	return res[0]
}
