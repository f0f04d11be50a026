// Package procmem reads memory figures from Linux /proc files, for the loader's phase timing, the
// default memory limit and the benchmarks' RSS columns. Every figure is 0 where /proc is unavailable.
package procmem

import (
	"os"
	"strconv"
	"strings"
)

// Bytes reads a "Key:  N kB" line of a /proc file (e.g. /proc/self/status VmHWM), in bytes.
func Bytes(file, key string) int64 {
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

// Self is a /proc/self/status figure (VmRSS, VmHWM), in bytes.
func Self(key string) int64 { return Bytes("/proc/self/status", key) }

// Total is the machine's memory (MemTotal), in bytes.
func Total() int64 { return Bytes("/proc/meminfo", "MemTotal") }

// ResetPeak makes VmHWM start again from the current RSS (Linux ≥ 4.0), so that one phase's peak is
// measured without an earlier one's.
func ResetPeak() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
