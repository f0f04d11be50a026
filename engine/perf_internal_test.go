package engine

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"time"
)

var perfTraces = []string{"hta/mtia_trace_single_rank/mtia_rank_0.json.gz", "hta/df_index_resolver/df_index_resolver.json.gz"}

// BenchmarkParseFile measures gunzip + split + scan into Arrow (no derive, no DuckDB).
func BenchmarkParseFile(b *testing.B) {
	for _, name := range perfTraces {
		b.Run(filepath.Base(filepath.Dir(name)), func(b *testing.B) {
			path := filepath.Join(sharedTraces(b), name)
			var n int64
			for i := 0; i < b.N; i++ {
				pf, err := parseFile(context.Background(), path, 0, LoadOptions{})
				if err != nil {
					b.Fatal(err)
				}
				n = pf.jsonBytes
				pf.release()
			}
			b.SetBytes(n)
		})
	}
}

// BenchmarkSplit measures gunzip + split only.
func BenchmarkSplit(b *testing.B) {
	for _, name := range perfTraces {
		b.Run(filepath.Base(filepath.Dir(name)), func(b *testing.B) {
			path := filepath.Join(sharedTraces(b), name)
			var n int64
			for i := 0; i < b.N; i++ {
				rd, err := openTrace(path, new(atomic.Int64))
				if err != nil {
					b.Fatal(err)
				}
				sp := newSplitter(rd)
				ch := make(chan *rawBatch, 4)
				done := make(chan int64)
				go func() {
					var t int64
					for rb := range ch {
						t += int64(len(rb.data))
					}
					done <- t
				}()
				if err := sp.Run(ch, nil); err != nil {
					b.Fatal(err)
				}
				n = <-done
				rd.Close()
			}
			b.SetBytes(n)
		})
	}
}

// BenchmarkLoadEnv loads $PERF_TRACE (for RSS measurements of one file).
func BenchmarkLoadEnv(b *testing.B) {
	path := os.Getenv("PERF_TRACE")
	if path == "" {
		b.Skip("PERF_TRACE not set")
	}
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		db, err := Open(ctx, "")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.Load(ctx, []string{path}, LoadOptions{}); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLoadCPU is BenchmarkLoad that also reports process CPU time per load, which the other
// tenants of a shared VM disturb less than wall time.
func BenchmarkLoadCPU(b *testing.B) {
	for _, name := range perfTraces {
		b.Run(filepath.Base(filepath.Dir(name)), func(b *testing.B) {
			path := filepath.Join(sharedTraces(b), name)
			ctx := context.Background()
			var jsonBytes int64
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				jsonBytes = loadFresh(ctx, b, path, false).JSONBytes
			}
			b.SetBytes(jsonBytes)
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// BenchmarkDerive measures derive on an already parsed file.
func BenchmarkDerive(b *testing.B) {
	for _, name := range perfTraces {
		b.Run(filepath.Base(filepath.Dir(name)), func(b *testing.B) {
			path := filepath.Join(sharedTraces(b), name)
			pf, err := parseFile(context.Background(), path, 0, LoadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer pf.release()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, r := range derive(pf.batches, memory.DefaultAllocator) {
					r.Release()
				}
			}
		})
	}
}

// BenchmarkOpenClose measures the fixed cost BenchmarkLoad pays per iteration besides the load.
func BenchmarkOpenClose(b *testing.B) {
	for i := 0; i < b.N; i++ {
		db, err := Open(context.Background(), "")
		if err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}
