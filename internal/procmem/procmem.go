// Package procmem reads memory figures from Linux /proc files, for the loader's phase timing, the
// default memory limit and the benchmarks' RSS columns. Every figure is 0 where /proc is unavailable.
package procmem

import (
	"os"
	"path"
	"path/filepath"
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

// Usable is the memory this process may use: the machine's, or less where a cgroup (a container, a
// systemd slice, a batch job) limits it, in bytes; 0 when unknown.
func Usable() int64 {
	total := Total()
	if limit := cgroupLimit("/proc/self/cgroup", "/sys/fs/cgroup"); limit > 0 && (total == 0 || limit < total) {
		return limit
	}
	return total
}

// cgroupLimit returns the tightest memory limit of the process's cgroup and its ancestors, read from
// cgroupFile (/proc/self/cgroup) and the hierarchy mounted at root: cgroup v2's memory.max, v1's
// memory.limit_in_bytes. 0: none. Inside a container the process's path may not exist under root
// (the container sees its own cgroup as the root), so root's own files count too.
func cgroupLimit(cgroupFile, root string) int64 {
	b, err := os.ReadFile(cgroupFile)
	if err != nil {
		return 0
	}
	var best int64
	take := func(file string) {
		v, err := os.ReadFile(file)
		if err != nil {
			return
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 { // "max", or v1's "unlimited" (2^63 rounded to a page)
			return
		}
		if best == 0 || n < best {
			best = n
		}
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		dir, file := root, "memory.max" // v2: "0::/path"
		if f[0] != "0" || f[1] != "" {
			if !strings.Contains(","+f[1]+",", ",memory,") {
				continue
			}
			dir, file = filepath.Join(root, "memory"), "memory.limit_in_bytes"
		}
		for p := path.Clean("/" + f[2]); ; p = path.Dir(p) {
			take(filepath.Join(dir, p, file))
			if p == "/" {
				break
			}
		}
	}
	return best
}

// ResetPeak makes VmHWM start again from the current RSS (Linux ≥ 4.0), so that one phase's peak is
// measured without an earlier one's.
func ResetPeak() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
