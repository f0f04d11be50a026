package main

// Machine facts and memory measurements for the bench's header and RSS columns (Linux /proc; zero or
// "unknown" elsewhere).

import (
	"os"
	"strings"

	"tracesql/engine"
	"tracesql/internal/procmem"
)

func resetPeakRSS()   { procmem.ResetPeak() }
func peakRSS() int64  { return procmem.Self("VmHWM") }
func memTotal() int64 { return procmem.Total() }

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
		}
	}
	return "unknown CPU"
}

// memoryLimit is the memory_limit engine.Open gives DuckDB, and where it comes from.
func memoryLimit() string {
	limit, source := engine.MemoryLimit()
	if limit == "" {
		return "DuckDB's default"
	}
	return limit + " (" + source + ")"
}
