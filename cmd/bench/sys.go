package main

// Machine facts and memory measurements for the bench's header and RSS columns (Linux /proc; zero or
// "unknown" elsewhere).

import (
	"os"
	"strconv"
	"strings"

	"tracesql/engine"
)

// procKB reads a "Key:  N kB" line of a /proc file, in bytes.
func procKB(file, key string) int64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

// resetPeakRSS makes VmHWM start again from the current RSS (Linux ≥ 4.0), so that one phase's peak
// is measured without the generator's or an earlier phase's.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is the process's peak resident set since the last reset, bytes.
func peakRSS() int64 { return procKB("/proc/self/status", "VmHWM") }

func memTotal() int64 { return procKB("/proc/meminfo", "MemTotal") }

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
		}
	}
	return "unknown CPU"
}

// memoryLimit is the memory_limit engine.Open gives DuckDB (the environment override or half of RAM).
func memoryLimit() string {
	if v := os.Getenv(engine.MemoryLimitEnv); v != "" {
		return v
	}
	return strconv.FormatInt(memTotal()/2>>20, 10) + "MB (half of RAM)"
}
