package engine

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestZZDeriveMem(t *testing.T) {
	path := os.Getenv("ZZ_TRACE")
	if path == "" {
		t.Skip()
	}
	pf, err := parseFile(context.Background(), path, 0, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("after parse: heap %d MB", ms.HeapAlloc>>20)
	a0 := ms.TotalAlloc
	t0 := time.Now()
	recs := derive(pf.batches, memory.DefaultAllocator)
	runtime.ReadMemStats(&ms)
	t.Logf("derive: +%d MB %v", (ms.TotalAlloc-a0)>>20, time.Since(t0))
	_ = recs
}
