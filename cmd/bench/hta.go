package main

// The HTA side of the bench: with HTA_SRC pointing at a HolisticTraceAnalysis checkout and a python3
// that imports pandas and networkx, the same inputs are analysed by HTA in the same run and each row
// gets HTA's time and the tracesql/HTA ratio.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

type htaRunner struct {
	src    string
	reason string // why HTA cannot run; "" when it can
}

func findHTA() htaRunner {
	src := os.Getenv("HTA_SRC")
	if src == "" {
		return htaRunner{reason: "HTA_SRC is not set (point it at a HolisticTraceAnalysis checkout; python3 needs pandas and networkx)"}
	}
	if _, err := exec.LookPath("python3"); err != nil {
		return htaRunner{reason: "python3 not found"}
	}
	// An import that never returns (a broken site-packages, a network file system) must not hang the bench
	// before it has done anything: -hta-timeout bounds the runs, this the probe.
	ctx, cancel := context.WithTimeout(context.Background(), htaProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "-c", "import pandas, networkx, hta")
	cmd.Env = pythonEnv(os.Environ(), src)
	cmd.WaitDelay = time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return htaRunner{reason: fmt.Sprintf("python3 did not import pandas, networkx and hta from %s within %v", src, htaProbeTimeout)}
		}
		return htaRunner{reason: "python3 cannot import pandas, networkx and hta from " + src + ": " + pythonError(string(out))}
	}
	return htaRunner{src: src}
}

// htaProbeTimeout bounds findHTA's import of HTA and its libraries (a few seconds when they are there).
const htaProbeTimeout = 2 * time.Minute

// pythonEnv is env with src put first on PYTHONPATH: a PYTHONPATH already set (where pandas may be
// found) is kept behind it, not replaced.
func pythonEnv(env []string, src string) []string {
	out := make([]string, 0, len(env)+1)
	path := src
	for _, kv := range env {
		if old, ok := strings.CutPrefix(kv, "PYTHONPATH="); ok {
			if old != "" {
				path = src + string(os.PathListSeparator) + old
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PYTHONPATH="+path)
}

// htaScript times HTA 0.6's load and the analyses that have a tracesql row, one JSON line each: a step
// whose first run took under repeatBelow runs again up to runs times in all (argv 2 and 3), and its median
// is printed, as the tracesql side does.
const htaScript = `
import json, sys, time
from hta.trace_analysis import TraceAnalysis
runs, repeat_below = int(sys.argv[2]), float(sys.argv[3])
def emit(step, ms, err=None):
    print(json.dumps({"step": step, "ms": ms, "error": err}), flush=True)
t0 = time.perf_counter()
ta = TraceAnalysis(trace_dir=sys.argv[1])
emit("load", (time.perf_counter() - t0) * 1000)
# every rank, as tracesql's rows: HTA's default for these is rank 0 alone
ranks = sorted(ta.t.traces.keys())
calls = [
    ("temporal_breakdown", lambda: ta.get_temporal_breakdown(visualize=False)),
    ("idle_time_breakdown", lambda: ta.get_idle_time_breakdown(ranks=ranks, visualize=False)),
    ("kernel_breakdown", lambda: ta.get_gpu_kernel_breakdown(visualize=False)),
    ("comm_comp_overlap", lambda: ta.get_comm_comp_overlap(visualize=False)),
    ("kernel_launch_stats", lambda: ta.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)),
    ("queue_length_summary", lambda: ta.get_queue_length_summary(ranks=ranks)),
    ("memory_bw_summary", lambda: ta.get_memory_bw_summary(ranks=ranks)),
    ("potential_stragglers", lambda: ta.get_potential_stragglers()),
    ("critical_path hta", lambda: ta.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=0)),
]
for step, f in calls:
    times = []
    try:
        while len(times) < runs:
            t0 = time.perf_counter()
            f()
            times.append((time.perf_counter() - t0) * 1000)
            if times[-1] >= repeat_below * 1000:
                break
        emit(step, sorted(times)[len(times) // 2])
    except Exception as e:
        emit(step, 0, repr(e)[:80])
`

// run analyses the directory of paths with HTA and fills rows' htaMS where HTA has the same step (a step
// HTA failed gets a note). It returns why HTA stopped early, or "".
func (h htaRunner) run(ctx context.Context, paths []string, runs int, rows []row, errOut io.Writer) string {
	fmt.Fprintf(errOut, "bench: running HTA on %s\n", filepath.Dir(paths[0]))
	cmd := exec.CommandContext(ctx, "python3", "-c", htaScript, filepath.Dir(paths[0]), strconv.Itoa(runs),
		strconv.FormatFloat(repeatBelow.Seconds(), 'f', -1, 64))
	cmd.Env = pythonEnv(os.Environ(), h.src)
	// HTA's multiprocessing workers inherit stdout; after a kill, do not wait for them to close it.
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	byStep := map[string]float64{}
	failed := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r struct {
			Step  string  `json:"step"`
			MS    float64 `json:"ms"`
			Error *string `json:"error"`
		}
		switch {
		case json.Unmarshal(sc.Bytes(), &r) != nil:
		case r.Error == nil:
			byStep[r.Step] = r.MS
		default:
			failed[r.Step] = *r.Error
		}
	}
	stopped := ""
	switch {
	case err != nil && ctx.Err() != nil:
		stopped = "HTA stopped at -hta-timeout; the steps it finished keep their times"
	case err != nil:
		stopped = fmt.Sprintf("HTA failed (%v): %s", err, pythonError(stderr.String()))
	}
	if stopped != "" {
		fmt.Fprintf(errOut, "bench: %s\n", stopped)
	}
	for i := range rows {
		rows[i].htaMS = byStep[rows[i].name]
		if e, ok := failed[rows[i].name]; ok {
			rows[i].note = strings.TrimSpace(rows[i].note + " HTA: " + strings.ReplaceAll(e, "|", `\|`))
		}
	}
	return stopped
}

// pythonError is the exception line of a Python traceback in out (its first line, for a message of
// several), else out's last line.
func pythonError(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if !strings.HasPrefix(lines[i], "Traceback (most recent call last):") {
			continue
		}
		for _, l := range lines[i+1:] {
			if l != "" && l[0] != ' ' && l[0] != '\t' {
				return l
			}
		}
	}
	return lines[len(lines)-1]
}
