package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// TestInflate replicates the alexnet trace's step window and checks, through the loader, what a user
// of the inflated job relies on: the number of steps and ranks, every copy's kernels linked to their
// launches, events scaled by the copies, and byte-identical output for the same seed.
func TestInflate(t *testing.T) {
	src := filepath.Join("..", "testdata", "traces", "ns_resolution", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
	if _, err := os.Stat(src); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	paths, err := Inflate(context.Background(), src, InflateOptions{Ranks: 3, Steps: 7, Seed: 7, Gzip: true, OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 3 {
		t.Fatalf("%d files", len(paths))
	}
	db := openTestDB(t)
	srcDB := openTestDB(t)
	mustLoad(t, srcDB, src)
	mustLoad(t, db, dir)
	srcSteps := queryInt(t, srcDB, `SELECT count(*) FROM profiler_steps`)
	if got := queryInt(t, db, `SELECT count(DISTINCT rank) FROM traces`); got != 3 {
		t.Errorf("%d ranks, want 3", got)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM profiler_steps WHERE rank = 1`); got != 7 {
		t.Errorf("rank 1 has %d steps, want 7 (source has %d)", got, srcSteps)
	}
	if got := queryInt(t, db, `SELECT count(DISTINCT name) FROM profiler_steps WHERE rank = 2`); got != 7 {
		t.Errorf("rank 2 has %d distinct step names, want 7", got)
	}
	// Every launch of the inflated rank finds its own kernel, as in the source.
	srcLinked := queryInt(t, srcDB, `SELECT count(*) FROM kernel_launches`)
	srcKernels := queryInt(t, srcDB, `SELECT count(*) FROM gpu_events`)
	linked := queryInt(t, db, `SELECT count(*) FROM kernel_launches WHERE rank = 0`)
	kernels := queryInt(t, db, `SELECT count(*) FROM gpu_events WHERE rank = 0`)
	if srcLinked == 0 || linked*srcKernels != kernels*srcLinked {
		t.Errorf("rank 0: %d of %d GPU events linked; source %d of %d", linked, kernels, srcLinked, srcKernels)
	}
	if dup := queryInt(t, db, `SELECT count(*) FROM (SELECT correlation FROM runtime_calls WHERE rank = 0 AND correlation IS NOT NULL
		GROUP BY correlation HAVING count(*) > 1)`); dup != 0 {
		t.Errorf("%d correlation ids reused across copies", dup)
	}
	// Steps of one rank do not overlap.
	if bad := queryInt(t, db, `SELECT count(*) FROM (SELECT ts, lag(end_ts) OVER (ORDER BY ts) AS prev_end FROM profiler_steps WHERE rank = 0) WHERE ts < prev_end`); bad != 0 {
		t.Errorf("%d overlapping steps", bad)
	}
	// Deterministic: the same seed writes the same bytes.
	dir2 := t.TempDir()
	paths2, err := Inflate(context.Background(), src, InflateOptions{Ranks: 3, Steps: 7, Seed: 7, Gzip: true, OutDir: dir2})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(paths[1])
	b, _ := os.ReadFile(paths2[1])
	if !bytes.Equal(a, b) {
		t.Error("same seed, different output")
	}
	// HTA reads a file's rank with `"rank":\s+(\d+)` (hta-spec.md §1.1): compact JSON made it rank 0.
	head := string(gunzipFile(t, paths[2])[:4096])
	if m := regexp.MustCompile(`"rank":\s+(\d+)`).FindStringSubmatch(head); m == nil || m[1] != "2" {
		t.Errorf("rank 2's distributedInfo as HTA reads it: %v\n%.300s", m, head)
	}
}

func TestInflateErrors(t *testing.T) {
	src := filepath.Join("..", "testdata", "traces", "ns_resolution", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
	noSteps := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(noSteps, []byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}`), 0o644)
	// What the loader refuses, the inflator refuses in the loader's words (it read trailing text as nothing,
	// and named no event or byte).
	bad := func(name, body string) string {
		p := filepath.Join(t.TempDir(), name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	garbage := bad("garbage.json", inflateSource+"garbage")
	nan := bad("nan.json", strings.Replace(inflateSource, `"ts": 100,`, `"ts": NaN,`, 1))
	truncated := bad("trunc.json", inflateSource[:500])
	for _, c := range []struct {
		src  string
		opts InflateOptions
		want string
	}{
		{garbage, InflateOptions{Ranks: 1, Steps: 1, OutDir: t.TempDir()}, "unexpected 'g' after the end of the top-level value at byte"},
		{nan, InflateOptions{Ranks: 1, Steps: 1, OutDir: t.TempDir()}, "event 3 (byte 342): ts is not a number: NaN"},
		{truncated, InflateOptions{Ranks: 1, Steps: 1, OutDir: t.TempDir()}, "truncated JSON: input ends inside event 4 inside a string at byte 500"},
		{src, InflateOptions{Ranks: 0, Steps: 1}, "must be >= 1"},
		{noSteps, InflateOptions{Ranks: 1, Steps: 1, OutDir: t.TempDir()}, "no ProfilerStep"},
		{filepath.Join(t.TempDir(), "missing.json"), InflateOptions{Ranks: 1, Steps: 1, OutDir: t.TempDir()}, "no such file"},
		{noSteps, InflateOptions{Ranks: 1, Steps: 1}, "no output directory"},
		// A directory holding files of an earlier job (more ranks, or .json beside .json.gz) would be
		// loaded together with this one.
		{noSteps, InflateOptions{Ranks: 1, Steps: 1, OutDir: filepath.Dir(noSteps)}, "is not empty"},
		{noSteps, InflateOptions{Ranks: 1, Steps: 1, OutDir: noSteps}, "not a directory"},
		// copies past int64 ns: they overflowed into negative times (exit 0), or into a file the loader refused
		{bad("late.json", `{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":9223372036000000,"dur":100}]}`),
			InflateOptions{Ranks: 1, Steps: 3, OutDir: filepath.Join(t.TempDir(), "o")}, "3 steps would end past the times a trace can hold"},
		// (copies overflowed int64 here, and the message said the copies add a negative time: r39 #4)
		{bad("many.json", inflateSource), InflateOptions{Ranks: 1, Steps: math.MaxInt, OutDir: filepath.Join(t.TempDir(), "o")},
			"9223372036854775807 steps (4611686018427387904 copies of the source's 2 steps, 420µs apart)"}, // (a period under 1 ms read "0 ms apart")
		{bad("be.json", `{"traceEvents":[{"ph":"B","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":9}]}`),
			InflateOptions{Ranks: 1, Steps: 3, OutDir: filepath.Join(t.TempDir(), "o")}, "written as B/E pairs"},
		// a step of negative dur is no step to the loader (other_events)
		{bad("neg.json", `{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":10,"dur":-5}]}`),
			InflateOptions{Ranks: 1, Steps: 3, OutDir: filepath.Join(t.TempDir(), "o")}, "no ProfilerStep"},
	} {
		_, err := Inflate(context.Background(), c.src, c.opts)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%s %+v: error %v, want %q", c.src, c.opts, err, c.want)
		}
	}
}

// TestInflateKeepsWholeMicroseconds: copies of a trace timed in whole µs are timed in whole µs (their
// offsets and jitter were drawn in ns, and HTA reads a trace with ns times by other rules: r39 #1).
func TestInflateKeepsWholeMicroseconds(t *testing.T) {
	src := filepath.Join(t.TempDir(), "us.json")
	if err := os.WriteFile(src, []byte(inflateSource), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Inflate(context.Background(), src, InflateOptions{Ranks: 3, Steps: 6, Seed: 3, OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	db := openTestDB(t)
	mustLoad(t, db, dir)
	if n := queryInt(t, db, `SELECT count(*) FROM events`); n == 0 {
		t.Fatal("no events")
	}
	if n := queryInt(t, db, `SELECT count(*) FROM events WHERE ts % 1000 <> 0 OR coalesce(dur, 0) % 1000 <> 0`); n != 0 {
		t.Errorf("%d events of the copies have sub-µs times", n)
	}
	if n := queryInt(t, db, `SELECT count(DISTINCT ts % 1000000) FROM events WHERE name LIKE 'ProfilerStep#%'`); n < 3 {
		t.Errorf("the copies' steps start at %d distinct µs offsets: want jitter still there", n)
	}
}

// TestInflateStringTimes: a ts or dur written as a string, which the loader takes, is a time to the
// inflator too (its steps were not found: "no ProfilerStep#N events to replicate").
func TestInflateStringTimes(t *testing.T) {
	src := filepath.Join(t.TempDir(), "s.json")
	body := regexp.MustCompile(`"(ts|dur)": (\d+)`).ReplaceAllString(inflateSource, `"$1": "$2"`)
	os.WriteFile(src, []byte(body), 0o644)
	out := t.TempDir()
	files, err := Inflate(context.Background(), src, InflateOptions{Ranks: 1, Steps: 4, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	db := openTestDB(t)
	mustLoad(t, db, files...)
	if n := queryInt(t, db, `SELECT count(*) FROM profiler_steps`); n != 4 {
		t.Errorf("%d steps, want 4", n)
	}
}

// inflateSource is a two-step trace built to exercise what a real one has: step numbers with a gap
// (#1, #3), a GPU that runs behind the CPU (the second step's kernel and its gpu_user_annotation start
// after the last step has ended, and the first kernel takes longer than a step), ac2g flows, and
// events before and after the steps.
const inflateSource = `{"schemaVersion": 1, "traceEvents": [
{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}},
{"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": 1, "tid": 0, "ts": 40, "dur": 300},
{"ph": "X", "cat": "cpu_op", "name": "setup", "pid": 1, "tid": 1, "ts": 50, "dur": 10, "args": {"External id": 1}},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 100, "dur": 100, "args": {"External id": 2}},
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 110, "dur": 20, "args": {"External id": 3}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 115, "dur": 5, "args": {"External id": 3, "correlation": 10}},
{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 10, "pid": 1, "tid": 1, "ts": 115},
{"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 150, "dur": 140, "args": {"External id": 3, "correlation": 10, "stream": 7, "device": 0}},
{"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 10, "pid": 0, "tid": 7, "ts": 150, "bp": "e"},
{"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7, "ts": 150, "dur": 140, "args": {"External id": 2}},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 200, "dur": 100, "args": {"External id": 4}},
{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 210, "dur": 20, "args": {"External id": 5}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 215, "dur": 5, "args": {"External id": 5, "correlation": 11}},
{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 11, "pid": 1, "tid": 1, "ts": 215},
{"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 310, "dur": 190, "args": {"External id": 5, "correlation": 11, "stream": 7, "device": 0}},
{"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 11, "pid": 0, "tid": 7, "ts": 310, "bp": "e"},
{"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#3", "pid": 0, "tid": 7, "ts": 310, "dur": 190, "args": {"External id": 4}},
{"ph": "X", "cat": "cpu_op", "name": "teardown", "pid": 1, "tid": 1, "ts": 320, "dur": 10, "args": {"External id": 6}}
]}`

// legacyInflateSource is inflateSource as a 2021 Kineto trace writes it: categories Operator, Runtime and
// Kernel, launch flows of category async named launch, and the runtime calls' and kernels' external id
// spelled in lowercase.
func legacyInflateSource() string {
	s := regexp.MustCompile(`"External id": (\d+), "correlation"`).ReplaceAllString(inflateSource, `"external id": $1, "correlation"`)
	return strings.NewReplacer(
		`"cat": "user_annotation"`, `"cat": "Operator"`,
		`"cat": "cpu_op"`, `"cat": "Operator"`,
		`"cat": "cuda_runtime"`, `"cat": "Runtime"`,
		`"cat": "kernel"`, `"cat": "Kernel"`,
		`"cat": "ac2g", "name": "ac2g"`, `"cat": "async", "name": "launch"`,
	).Replace(s)
}

// TestInflateInvariants inflates inflateSource, and its 2021 spelling, and checks each rank file
// directly (no database: the test is fast): steps numbered without repeats and each with its GPU range,
// no stream running two kernels at once, every kernel launched by a call of its own copy, every
// runtime call and kernel pointing at the op of its own copy by external id, every flow one start and
// one end, the events outside the steps written once, those after the steps as far after the last step
// as in the source (also when the last copy is cut short: 5 steps of a 2-step source), and the
// profiler's span around them all.
func TestInflateInvariants(t *testing.T) {
	for _, source := range []struct{ name, text string }{{"kineto", inflateSource}, {"legacy", legacyInflateSource()}} {
		src := filepath.Join(t.TempDir(), "syn_rank0.json")
		if err := os.WriteFile(src, []byte(source.text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			ranks, steps int
			gzip         bool
		}{{1, 2, false}, {2, 4, false}, {1, 5, true}, {3, 1, false}} {
			t.Run(fmt.Sprintf("%s/ranks%d_steps%d_gzip%t", source.name, c.ranks, c.steps, c.gzip), func(t *testing.T) {
				paths, err := Inflate(context.Background(), src, InflateOptions{Ranks: c.ranks, Steps: c.steps, Seed: 3, Gzip: c.gzip, OutDir: filepath.Join(t.TempDir(), "out")})
				if err != nil {
					t.Fatal(err)
				}
				if len(paths) != c.ranks {
					t.Fatalf("%d files, want %d", len(paths), c.ranks)
				}
				for _, p := range paths {
					checkInflated(t, p, c.steps)
				}
				// The same seed writes the same bytes.
				again, err := Inflate(context.Background(), src, InflateOptions{Ranks: c.ranks, Steps: c.steps, Seed: 3, Gzip: c.gzip, OutDir: filepath.Join(t.TempDir(), "again")})
				if err != nil {
					t.Fatal(err)
				}
				for i := range paths {
					a, _ := os.ReadFile(paths[i])
					b, _ := os.ReadFile(again[i])
					if len(a) == 0 || !bytes.Equal(a, b) {
						t.Errorf("%s: same seed, different output", filepath.Base(paths[i]))
					}
				}
			})
		}
	}
}

// checkInflated checks an inflated rank file of inflateSource (in either spelling: events are told
// apart by the loader's category classes, and the external id is read in both spellings).
func checkInflated(t *testing.T, path string, steps int) {
	t.Helper()
	events, _ := readJSONTrace(t, path)
	type span struct{ ts, end float64 }
	cpuSteps, gpuSteps := map[string]int{}, map[string]int{}
	byStream := map[string][]span{}
	launches, kernels := map[string]int{}, map[string]int{}
	flows := map[string]string{} // phases by cat/id
	flowIDs := map[string]string{}
	names := map[string]int{}
	ops := map[string][]span{}             // CPU ops and annotations by External id
	launchExt := map[string]string{}       // external id of the launch, by correlation
	type extUse struct{ ext, corr string } // a runtime call's or kernel's external id
	var runtimeExt, kernelExt []extUse
	var runtimeAt []span
	var lastStepEnd, teardownTs, teardownEnd, profilerEnd float64
	for _, raw := range events {
		var ev struct {
			Ph, Cat, Name string
			Pid, Tid, ID  json.Number
			Ts, Dur       float64
			Args          struct {
				Correlation json.Number `json:"correlation"`
				ExternalID  json.Number `json:"External id"`
				LegacyExtID json.Number `json:"external id"`
			}
		}
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		names[ev.Name]++
		switch ev.Name {
		case "teardown":
			teardownTs, teardownEnd = ev.Ts, ev.Ts+ev.Dur
		case "PyTorch Profiler (0)":
			profilerEnd = ev.Ts + ev.Dur
		}
		ext := ev.Args.ExternalID.String()
		if ext == "" {
			ext = ev.Args.LegacyExtID.String()
		}
		cls := classify([]byte(ev.Cat))
		switch {
		case ev.Ph == "X" && (cls == classUserAnnotation || cls == classCPUOp):
			if strings.HasPrefix(ev.Name, "ProfilerStep#") {
				cpuSteps[ev.Name]++
				lastStepEnd = max(lastStepEnd, ev.Ts+ev.Dur)
			}
			if ext != "" {
				ops[ext] = append(ops[ext], span{ev.Ts, ev.Ts + ev.Dur})
			}
		case cls == classGPUUserAnnotation:
			gpuSteps[ev.Name]++
		case cls == classRuntime:
			launches[ev.Args.Correlation.String()]++
			launchExt[ev.Args.Correlation.String()] = ext
			runtimeExt = append(runtimeExt, extUse{ext, ev.Args.Correlation.String()})
			runtimeAt = append(runtimeAt, span{ev.Ts, ev.Ts + ev.Dur})
		case cls == classKernel:
			kernels[ev.Args.Correlation.String()]++
			kernelExt = append(kernelExt, extUse{ext, ev.Args.Correlation.String()})
			k := ev.Pid.String() + "/" + ev.Tid.String()
			byStream[k] = append(byStream[k], span{ev.Ts, ev.Ts + ev.Dur})
		case ev.Ph == "s" || ev.Ph == "f":
			flows[ev.Cat+"/"+ev.ID.String()] += ev.Ph
			flowIDs[ev.Cat+"/"+ev.ID.String()] = ev.ID.String()
		}
	}
	if len(cpuSteps) != steps {
		t.Errorf("%s: %d distinct steps, want %d: %v", path, len(cpuSteps), steps, cpuSteps)
	}
	for name, n := range cpuSteps {
		if n != 1 || gpuSteps[name] != 1 {
			t.Errorf("%s: step %s %d times, its GPU range %d times; want 1 and 1", path, name, n, gpuSteps[name])
		}
	}
	if len(gpuSteps) != len(cpuSteps) {
		t.Errorf("%s: GPU ranges %v for the steps %v", path, gpuSteps, cpuSteps)
	}
	for k, l := range byStream {
		sort.Slice(l, func(a, b int) bool { return l[a].ts < l[b].ts })
		for i := 1; i < len(l); i++ {
			if l[i].ts < l[i-1].end {
				t.Errorf("%s: stream %s runs two kernels at once: %v and %v", path, k, l[i-1], l[i])
			}
		}
	}
	for c, n := range kernels {
		if n != 1 || launches[c] != 1 {
			t.Errorf("%s: correlation %s: %d kernels, %d launches", path, c, n, launches[c])
		}
	}
	if len(kernels) != steps {
		t.Errorf("%s: %d kernels, want one a step (%d)", path, len(kernels), steps)
	}
	// A copy's runtime call points at the one op of its own copy that encloses it, and its kernel
	// at the same op.
	for i, u := range runtimeExt {
		at := runtimeAt[i]
		if o := ops[u.ext]; len(o) != 1 || at.ts < o[0].ts || at.end > o[0].end {
			t.Errorf("%s: launch of correlation %s has external id %q, which names the ops %v, want one around %v", path, u.corr, u.ext, o, at)
		}
	}
	for _, u := range kernelExt {
		if u.ext != launchExt[u.corr] {
			t.Errorf("%s: kernel of correlation %s has external id %q, its launch %q", path, u.corr, u.ext, launchExt[u.corr])
		}
	}
	for id, phs := range flows {
		if phs != "sf" {
			t.Errorf("%s: flow %s has %q, want one start and one end", path, id, phs)
		}
		if kernels[flowIDs[id]] != 1 { // a launch flow's id is its launch's correlation id
			t.Errorf("%s: flow %s links no kernel of its copy", path, id)
		}
	}
	if len(flows) != steps {
		t.Errorf("%s: %d flows, want one a kernel (%d)", path, len(flows), steps)
	}
	// The source's teardown starts 20 µs after the last step's end and ends 10 µs before the profiler's span.
	if math.Abs(teardownTs-lastStepEnd-20) > 1e-6 || math.Abs(profilerEnd-teardownEnd-10) > 1e-6 {
		t.Errorf("%s: teardown starts %.3f µs after the last step and ends %.3f µs before the profiler span, want 20 and 10",
			path, teardownTs-lastStepEnd, profilerEnd-teardownEnd)
	}
	if names["setup"] != 1 || names["teardown"] != 1 || names["process_name"] != 1 || names["PyTorch Profiler (0)"] != 1 {
		t.Errorf("%s: events outside the steps: setup %d, teardown %d, metadata %d; want each once", path, names["setup"], names["teardown"], names["process_name"])
	}
}

// TestInflateArrayForm: a trace in the plain array form (events only, which the loader accepts)
// inflates like the object form; its copies are written in the object form with a distributedInfo. So
// does one whose writer stopped inside an event after them (which the loader leaves out).
func TestInflateArrayForm(t *testing.T) {
	var obj struct{ TraceEvents []json.RawMessage }
	if err := json.Unmarshal([]byte(inflateSource), &obj); err != nil {
		t.Fatal(err)
	}
	arr, _ := json.Marshal(obj.TraceEvents)
	cut := append(bytes.Clone(arr[:len(arr)-1]), `,{"ph":"X","name":"cut]`...)
	for name, text := range map[string][]byte{"whole": arr, "cut": cut} {
		src := filepath.Join(t.TempDir(), "bare.json")
		if err := os.WriteFile(src, append([]byte("\xef\xbb\xbf"), text...), 0o644); err != nil { // with a BOM
			t.Fatal(err)
		}
		paths, err := Inflate(context.Background(), src, InflateOptions{Ranks: 2, Steps: 3, Seed: 1, OutDir: filepath.Join(t.TempDir(), "out")})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkArrayCopies(t, paths)
	}
}

func checkArrayCopies(t *testing.T, paths []string) {
	t.Helper()
	for r, p := range paths {
		checkInflated(t, p, 3)
		var top struct {
			DistributedInfo struct{ Rank, WorldSize int } `json:"distributedInfo"`
		}
		b, _ := os.ReadFile(p)
		if err := json.Unmarshal(b, &top); err != nil || top.DistributedInfo.Rank != r {
			t.Errorf("%s: distributedInfo %+v (%v), want rank %d", p, top.DistributedInfo, err, r)
		}
	}
}

// TestInflateDiskSpace: the size estimate is close to what is written, and a job that cannot fit
// on the disk is refused before anything is written.
func TestInflateDiskSpace(t *testing.T) {
	src := filepath.Join(t.TempDir(), "syn_rank0.json")
	if err := os.WriteFile(src, []byte(inflateSource), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := readWholeTrace(src)
	if err != nil {
		t.Fatal(err)
	}
	opts := InflateOptions{Ranks: 3, Steps: 40, Seed: 1, OutDir: filepath.Join(t.TempDir(), "out")}
	paths, err := Inflate(context.Background(), src, opts)
	if err != nil {
		t.Fatal(err)
	}
	var written int64
	for _, p := range paths {
		st, _ := os.Stat(p)
		written += st.Size()
	}
	if est := tr.estimateBytes(opts); est < 0.5*float64(written) || est > 2*float64(written) {
		t.Errorf("estimate %.0f bytes, written %d", est, written)
	}

	defer func(f func(string) int64) { freeBytes = f }(freeBytes)
	freeBytes = func(string) int64 { return written / 2 }
	out := filepath.Join(t.TempDir(), "full")
	_, err = Inflate(context.Background(), src, InflateOptions{Ranks: 3, Steps: 40, OutDir: out})
	if err == nil || !regexp.MustCompile(`\d MB free`).MatchString(err.Error()) {
		t.Fatalf("error %v, want one about free space", err)
	}
	if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
		t.Errorf("the refused job created %s", out)
	}
}

// TestInflateOutputNotWritable: an output directory that cannot be created or written is reported
// as such, naming it and the OS's reason, before the source is read or the free space looked at
// (read-only and virtual file systems report 0 bytes free), and leaves no directory behind.
func TestInflateOutputNotWritable(t *testing.T) {
	src := filepath.Join(t.TempDir(), "syn_rank0.json")
	if err := os.WriteFile(src, []byte(inflateSource), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	regular := filepath.Join(tmp, "a-file")
	if err := os.WriteFile(regular, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(tmp, "read-only")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(readOnly, 0o755) })

	defer func(f func(string) int64) { freeBytes = f }(freeBytes)
	freeBytes = func(string) int64 { return 0 } // what a read-only mount reports

	cases := []struct {
		name     string
		out      string
		want     string
		rootToo  bool   // root writes through permission bits, not through a regular file
		noCreate string // a directory the refused job must not leave behind
	}{
		{"under a regular file", filepath.Join(regular, "out"),
			"cannot create output directory " + filepath.Join(regular, "out") + ": mkdir " + regular + ": not a directory", true, ""},
		{"deeper under a regular file", filepath.Join(regular, "a", "b"),
			"cannot create output directory " + filepath.Join(regular, "a", "b") + ": mkdir " + regular + ": not a directory", true, ""},
		{"a read-only directory", readOnly,
			"output directory " + readOnly + " is not writable: permission denied", false, ""},
		{"below a read-only directory", filepath.Join(readOnly, "out"),
			"cannot create output directory " + filepath.Join(readOnly, "out") + ": mkdir " + filepath.Join(readOnly, "out") + ": permission denied", false, filepath.Join(readOnly, "out")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !c.rootToo && os.Geteuid() == 0 {
				t.Skip("root writes to a directory of mode 0555")
			}
			_, err := Inflate(context.Background(), src, InflateOptions{Ranks: 1, Steps: 2, OutDir: c.out})
			if want := "inflate " + src + ": " + c.want; err == nil || err.Error() != want {
				t.Fatalf("error %v, want %q", err, want)
			}
			if c.noCreate != "" {
				if _, err := os.Stat(c.noCreate); !os.IsNotExist(err) {
					t.Errorf("the refused job left %s", c.noCreate)
				}
			}
		})
	}

	// A refused job removes the directories it made, parents included, and the probe file.
	missing := filepath.Join(tmp, "new", "deeper", "out")
	if _, err := Inflate(context.Background(), src, InflateOptions{Ranks: 1, Steps: 2, OutDir: missing}); err == nil || !regexp.MustCompile(`\d MB free`).MatchString(err.Error()) {
		t.Fatalf("error %v, want one about free space", err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "new")); !os.IsNotExist(err) {
		t.Errorf("the refused job left %s", filepath.Join(tmp, "new"))
	}
	// An existing directory it could write to stays, empty.
	empty := filepath.Join(tmp, "empty")
	os.Mkdir(empty, 0o755)
	if _, err := Inflate(context.Background(), src, InflateOptions{Ranks: 1, Steps: 2, OutDir: empty}); err == nil {
		t.Fatal("no error with 0 bytes free")
	}
	if ents, err := os.ReadDir(empty); err != nil || len(ents) != 0 {
		t.Errorf("%s after a refused job: %v, %v", empty, ents, err)
	}
}

// TestDiskFree: a real file system reports its free space; one without blocks (procfs) cannot tell,
// rather than reporting 0 bytes free.
func TestDiskFree(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("procfs is Linux's")
	}
	if free := diskFree(t.TempDir()); free <= 0 {
		t.Errorf("diskFree(TempDir) = %d", free)
	}
	if free := diskFree(filepath.Join(t.TempDir(), "not", "yet")); free <= 0 {
		t.Errorf("diskFree of a directory to be made = %d", free)
	}
	if free := diskFree("/proc/self"); free != -1 {
		t.Errorf("diskFree(/proc/self) = %d, want -1", free)
	}
}

// TestInflateCancelled: a job cancelled at any point (Ctrl-C) leaves no file, not even the ranks it had
// finished, and no directory it created.
func TestInflateCancelled(t *testing.T) {
	src := filepath.Join(t.TempDir(), "syn_rank0.json")
	if err := os.WriteFile(src, []byte(inflateSource), 0o644); err != nil {
		t.Fatal(err)
	}
	finished := false
	for looks := int64(0); looks < 100 && !finished; looks++ {
		out := filepath.Join(t.TempDir(), "a", "out")
		paths, err := Inflate(newCountdownCtx(looks), src, InflateOptions{Ranks: 3, Steps: 4, OutDir: out})
		if err == nil {
			finished = len(paths) == 3
			continue
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled after %d looks: %v", looks, err)
		}
		if _, serr := os.Stat(filepath.Dir(out)); !errors.Is(serr, os.ErrNotExist) {
			ents, _ := os.ReadDir(out)
			t.Errorf("cancelled after %d looks: %s left behind (%d files)", looks, filepath.Dir(out), len(ents))
		}
	}
	if !finished {
		t.Error("the job never finished within 100 looks at its context")
	}
}

// TestInflateLegacyCopies inflates the 2021 trace (categories Operator/Runtime/Kernel, launch flows of
// category async, the runtime calls' and kernels' external id spelled in lowercase; its steps, of
// category Operator, were once refused with "no ProfilerStep#N events to replicate") and checks through
// the loader that each rank is exactly the source's steps times the copies: the events of each step,
// the launches linked to their kernels and to the op around them by external id, and every launch flow
// one start on its launch and one end on its kernel.
func TestInflateLegacyCopies(t *testing.T) {
	src, err := filepath.Glob(filepath.Join("..", "testdata", "traces", "legacy_resnet50", "*.json.gz"))
	if err != nil || len(src) != 1 {
		t.Fatalf("legacy_resnet50: %v %v", src, err)
	}
	const ranks, steps = 2, 12
	paths, err := Inflate(context.Background(), src[0], InflateOptions{Ranks: ranks, Steps: steps, Seed: 5, OutDir: t.TempDir()})
	if err != nil || len(paths) != ranks {
		t.Fatalf("inflate: %v %v", paths, err)
	}
	srcDB, db := openTestDB(t), openTestDB(t)
	mustLoad(t, srcDB, src[0])
	mustLoad(t, db, paths...)
	srcSteps := queryInt(t, srcDB, `SELECT count(*) FROM profiler_steps`)
	lo := queryInt(t, srcDB, `SELECT min(step) FROM profiler_steps`)
	span := queryInt(t, srcDB, `SELECT max(step) - min(step) + 1 FROM profiler_steps`)
	if srcSteps == 0 || steps%srcSteps != 0 {
		t.Fatalf("source has %d steps; the test wants whole copies of %d", srcSteps, steps)
	}
	copies := int64(steps) / srcSteps
	perStep := func(db *DB, rank int) map[int64]int64 {
		rows, err := db.SQL.Query(`SELECT step, count(*) FROM events WHERE rank = ? AND step IS NOT NULL GROUP BY step`, rank)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[int64]int64{}
		for rows.Next() {
			var s, n int64
			if err := rows.Scan(&s, &n); err != nil {
				t.Fatal(err)
			}
			m[s] = n
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	srcPerStep := perStep(srcDB, 0)
	// Counted over the steps: an op whose runtime call it encloses with the same external id, a launch
	// with its kernel, and (below) flows whose start or end sits on a call or kernel of their correlation.
	const opOfLaunch = `SELECT count(*) FROM runtime_calls r JOIN events o ON o.trace_id = r.trace_id
		AND o.cat_class = 'cpu_op' AND o.external_id = r.external_id AND r.ts >= o.ts AND r.ts + r.dur <= o.ts + o.dur
		WHERE r.rank = ? AND r.step IS NOT NULL`
	const linked = `SELECT count(*) FROM kernel_launches WHERE rank = ? AND step IS NOT NULL`
	srcOps, srcLinked := queryInt(t, srcDB, opOfLaunch, 0), queryInt(t, srcDB, linked, 0)
	if srcOps == 0 || srcLinked == 0 {
		t.Fatalf("source: %d launches in their op by external id, %d kernels linked", srcOps, srcLinked)
	}
	// A flow is paired when its (cat, id) has one start and one end, and on its launch or kernel when
	// that event has its id as correlation and its ts.
	const unpaired = `SELECT count(*) FROM (SELECT f.trace_id, f.cat, f.id FROM flows f JOIN traces t USING (trace_id)
		WHERE t.rank = ? GROUP BY ALL HAVING count(*) FILTER (ph = 's') <> 1 OR count(*) FILTER (ph = 'f') <> 1)`
	const offLaunch = `SELECT count(*) FROM flows f JOIN traces t USING (trace_id) WHERE t.rank = ? AND NOT EXISTS (
		SELECT 1 FROM events e WHERE e.trace_id = f.trace_id AND e.correlation::VARCHAR = f.id AND e.ts = f.ts
		AND e.cat_class IN ('runtime', 'kernel', 'memcpy', 'memset'))`
	srcUnpaired, srcOff := queryInt(t, srcDB, unpaired, 0), queryInt(t, srcDB, offLaunch, 0)

	for r := range ranks {
		if got := queryInt(t, db, `SELECT count(*) FROM profiler_steps WHERE rank = ?`, r); got != steps {
			t.Errorf("rank %d: %d steps, want %d", r, got, steps)
		}
		got := perStep(db, r)
		if len(got) != steps {
			t.Errorf("rank %d: events in %d steps, want %d", r, len(got), steps)
		}
		for s, n := range got {
			if want := srcPerStep[lo+(s-lo)%span]; n != want {
				t.Errorf("rank %d step %d: %d events, the source's step %d has %d", r, s, n, lo+(s-lo)%span, want)
			}
		}
		if got := queryInt(t, db, opOfLaunch, r); got != copies*srcOps {
			t.Errorf("rank %d: %d launches in the op of their external id, want %d×%d", r, got, copies, srcOps)
		}
		if got := queryInt(t, db, linked, r); got != copies*srcLinked {
			t.Errorf("rank %d: %d kernels linked to their launch, want %d×%d", r, got, copies, srcLinked)
		}
		if dup := queryInt(t, db, `SELECT count(*) FROM (SELECT correlation FROM runtime_calls WHERE rank = ? AND correlation IS NOT NULL
			GROUP BY correlation HAVING count(*) > 1)`, r); dup != 0 {
			t.Errorf("rank %d: %d correlation ids reused across copies", r, dup)
		}
		if dup := queryInt(t, db, `SELECT count(*) FROM (SELECT external_id FROM events WHERE rank = ? AND step IS NOT NULL
			AND external_id IS NOT NULL GROUP BY external_id HAVING count(DISTINCT step) > 1)`, r); dup != 0 {
			t.Errorf("rank %d: %d external ids shared by steps", r, dup)
		}
		if got := queryInt(t, db, unpaired, r); got != srcUnpaired {
			t.Errorf("rank %d: %d flows without one start and one end, the source %d", r, got, srcUnpaired)
		}
		if got := queryInt(t, db, offLaunch, r); got != srcOff {
			t.Errorf("rank %d: %d flow events on no launch or kernel of their id, the source %d", r, got, srcOff)
		}
		if bad := queryInt(t, db, `SELECT count(*) FROM (SELECT ts, lag(end_ts) OVER (ORDER BY ts) AS prev_end FROM profiler_steps WHERE rank = ?) WHERE ts < prev_end`, r); bad != 0 {
			t.Errorf("rank %d: %d overlapping steps", r, bad)
		}
	}
}

// TestInflateStepRule: the inflator replicates the steps the loader finds, whatever the step event's
// category or the spelling of its name: each source below is loaded, and either the loader finds no
// step and the inflator refuses it, or the inflated trace has the steps asked for, each with the events
// of its source step.
func TestInflateStepRule(t *testing.T) {
	const tmpl = `{"traceEvents": [
{"ph": "X", %[1]s"name": "%[2]s", "pid": 1, "tid": 1, "ts": 100, "dur": 100},
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 110, "dur": 20},
{"ph": "X", %[1]s"name": "%[3]s", "pid": 1, "tid": 1, "ts": 200, "dur": 100},
{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 210, "dur": 20}
]}`
	for _, c := range []struct{ name, cat, step1, step2 string }{
		{"user_annotation", `"cat": "user_annotation", `, "ProfilerStep#1", "ProfilerStep#2"},
		{"cpu_op", `"cat": "cpu_op", `, "ProfilerStep#1", "ProfilerStep#2"},
		{"Operator", `"cat": "Operator", `, "ProfilerStep#1", "ProfilerStep#2"},
		{"no cat", ``, "ProfilerStep#1", "ProfilerStep#2"},
		{"python_function", `"cat": "python_function", `, "ProfilerStep#1", "ProfilerStep#2"},
		{"spaced", `"cat": "user_annotation", `, "ProfilerStep # 1", "ProfilerStep\t#2"},
		{"suffixed", `"cat": "user_annotation", `, "ProfilerStep#1 fwd", "ProfilerStep#2 fwd"},
		{"no number", `"cat": "user_annotation", `, "ProfilerStep#", "ProfilerStep#x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			step1, _ := json.Marshal(c.step1)
			step2, _ := json.Marshal(c.step2)
			src := filepath.Join(t.TempDir(), "steps.json")
			text := fmt.Sprintf(tmpl, c.cat, step1[1:len(step1)-1], step2[1:len(step2)-1])
			if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			srcDB := openTestDB(t)
			mustLoad(t, srcDB, src)
			loaderSteps := queryInt(t, srcDB, `SELECT count(*) FROM profiler_steps`)
			srcInSteps := queryInt(t, srcDB, `SELECT count(*) FROM events WHERE step IS NOT NULL`)
			paths, err := Inflate(context.Background(), src, InflateOptions{Ranks: 1, Steps: 4, Seed: 1, OutDir: filepath.Join(t.TempDir(), "out")})
			if loaderSteps == 0 {
				if err == nil || !strings.Contains(err.Error(), "no ProfilerStep") {
					t.Fatalf("the loader finds no step; inflate: %v %v, want it refused", paths, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("the loader finds %d steps; inflate: %v", loaderSteps, err)
			}
			db := openTestDB(t)
			mustLoad(t, db, paths...)
			if got := queryInt(t, db, `SELECT count(DISTINCT step) FROM profiler_steps`); got != 4 {
				t.Errorf("%d distinct steps, want 4", got)
			}
			if got := queryInt(t, db, `SELECT count(*) FROM profiler_steps`); got != 4 {
				t.Errorf("%d steps, want 4", got)
			}
			if got := queryInt(t, db, `SELECT count(*) FROM events WHERE step IS NOT NULL`); got != 2*srcInSteps {
				t.Errorf("%d events in steps, want 2×%d", got, srcInSteps)
			}
		})
	}
}

// TestInflateTopKeys: the keys of the source's top-level object are written as JSON strings, whatever
// they hold (Go's %q writes \x7f, \x01 and non-printable runes as escapes that JSON does not have).
func TestInflateTopKeys(t *testing.T) {
	const steps = `[{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 100, "dur": 100}]`
	src := filepath.Join(t.TempDir(), "keys.json")
	text := "{\"schemaVersion\": 1, \"del\x7f\": 1, \"ctl\\u0001\": 2, \"tag\\udb40\\udc01\": 3, \"bad\xffutf8\": 4, " +
		"\"quote\\\"back\\\\slash\": 5, \"<html>&\": 6, \"traceEvents\": " + steps + "}"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &want); err != nil {
		t.Fatal(err)
	}
	paths, err := Inflate(context.Background(), src, InflateOptions{Ranks: 1, Steps: 2, Seed: 1, OutDir: filepath.Join(t.TempDir(), "out")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("the inflated trace is not JSON: %v\n%s", err, b[:min(len(b), 300)])
	}
	for k, v := range want {
		if k != "traceEvents" && string(got[k]) != string(v) {
			t.Errorf("key %q: %s, want %s", k, got[k], v)
		}
	}
	if len(got) != len(want)+1 { // and distributedInfo
		t.Errorf("%d top-level keys, want %d", len(got), len(want)+1)
	}
}

// TestInflateStepsOnTwoThreads: a source that annotates each step on two threads (ProfilerStep#10–#12 on
// each) has three steps, not six: --steps 4 writes steps 10–13 on both threads (it wrote 10–11).
func TestInflateStepsOnTwoThreads(t *testing.T) {
	var evs []string
	for _, tid := range []int{1, 2} {
		for i := range 3 {
			ts := i*1000 + tid
			evs = append(evs,
				fmt.Sprintf(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":%d,"ts":%d,"dur":900}`, 10+i, tid, ts),
				fmt.Sprintf(`{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":%d,"ts":%d,"dur":100}`, tid, ts+10))
		}
	}
	src := filepath.Join(t.TempDir(), "two.json")
	if err := os.WriteFile(src, []byte(`{"traceEvents":[`+strings.Join(evs, ",\n")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, err := Inflate(context.Background(), src, InflateOptions{Ranks: 1, Steps: 4, Seed: 1, OutDir: filepath.Join(t.TempDir(), "out")})
	if err != nil {
		t.Fatal(err)
	}
	db := openTestDB(t)
	mustLoad(t, db, paths...)
	var got string
	if err := db.SQL.QueryRow(`SELECT string_agg(s, ' ' ORDER BY tid) FROM (SELECT tid, tid || ':' || string_agg(step::VARCHAR, ',' ORDER BY ts) AS s FROM profiler_steps GROUP BY tid)`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "1:10,11,12,13 2:10,11,12,13"; got != want {
		t.Errorf("steps per thread %q, want %q", got, want)
	}
}

// TestInflateLoaderStrings: names the loader takes as written (a backslash that starts no escape, a raw
// tab) are copied, not refused ("invalid character 'U' in string escape code"), and invalid UTF-8 reads as
// in the source: one U+FFFD per run, with or without an escape in the same string (r71 #10: the loader made
// one per byte where the string had an escape).
func TestInflateLoaderStrings(t *testing.T) {
	orig, inf := inflatedPair(t, `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
{"ph":"X","cat":"cpu_op","name":"C:\Users\op","pid":1,"tid":1,"ts":10,"dur":5},
{"ph":"X","cat":"cpu_op","name":"tab`+"\t"+`here \u00e9","pid":1,"tid":1,"ts":20,"dur":5},
{"ph":"X","cat":"cpu_op","name":"bad`+"\xff\xfe"+`bytes","pid":1,"tid":1,"ts":30,"dur":5},
{"ph":"X","cat":"cpu_op","name":"c`+"\xff\xfe"+`d \q","pid":1,"tid":1,"ts":40,"dur":5},
{"ph":"X","cat":"cpu_op","name":"e`+"\xff\xfe"+`f \u00e9","pid":1,"tid":1,"ts":50,"dur":5}]}`)
	names := func(db *DB) string {
		var s string
		if err := db.SQL.QueryRow(`SELECT string_agg(hex(name), ' ' ORDER BY ts) FROM events WHERE cat = 'cpu_op' AND step = 1`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	if a, b := names(orig), names(inf); a != b || a == "" {
		t.Errorf("names of step 1: source %s, copy %s", a, b)
	}
	if got := queryText(t, orig, `SELECT string_agg(name, '|' ORDER BY ts) FROM events WHERE ts >= 30000 AND cat = 'cpu_op'`); got != "bad\uFFFDbytes|c\uFFFDd \\q|e\uFFFDf \u00e9\t\n" {
		t.Errorf("names with invalid UTF-8: %q", got)
	}
	if n := queryInt(t, inf, "SELECT count(*) FROM events WHERE cat = 'cpu_op'"); n != 10 {
		t.Errorf("%d cpu_ops in 2 copies, want 10", n)
	}
}

// inflatedPair loads the trace text and its inflation to 1 rank × 2 steps into two databases.
func inflatedPair(t *testing.T, text string) (orig, inf *DB) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src.json")
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, err := Inflate(context.Background(), src, InflateOptions{Ranks: 1, Steps: 2, OutDir: filepath.Join(t.TempDir(), "out")})
	if err != nil {
		t.Fatal(err)
	}
	orig, inf = openTestDB(t), openTestDB(t)
	mustLoad(t, orig, src)
	mustLoad(t, inf, paths...)
	return orig, inf
}

// TestInflateBareNumbers: the NaN and ±Infinity that Python's json writes (args, metadata) and the loader takes are
// copied as they are, outside strings, and left alone inside them (r71 #4: encoding/json refused the source); an
// NCCL profiler-plugin file is named as such.
func TestInflateBareNumbers(t *testing.T) {
	orig, inf := inflatedPair(t, `{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100},
{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":10,"dur":5,"args":{"alpha":NaN,"s":"NaN \" -Infinity"}},
{"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":20,"dur":5,"args":{"x":-Infinity,"y":[Infinity]}}],
"meta":{"v":NaN}}`)
	const q = `SELECT string_agg(name || ' ' || args::VARCHAR, '; ' ORDER BY ts) FROM events WHERE cat = 'cpu_op' AND step = 1`
	if a, b := queryText(t, orig, q), queryText(t, inf, q); a != b || !strings.Contains(a, `"alpha":NaN`) || !strings.Contains(a, `NaN \" -Infinity`) {
		t.Errorf("args of step 1: source %s, copy %s", a, b)
	}
	if got := queryText(t, inf, `SELECT (metadata->'meta')::VARCHAR FROM traces`); !strings.Contains(got, "NaN") {
		t.Errorf("metadata of the copy: %s", got)
	}
	_, err := Inflate(context.Background(), "../testdata/nccl/quirks/nccl_4242_0.json", InflateOptions{Ranks: 1, Steps: 2, OutDir: filepath.Join(t.TempDir(), "o")})
	if err == nil || !strings.Contains(err.Error(), "an NCCL profiler-plugin file, not a Kineto trace") {
		t.Errorf("inflate of an NCCL file: %v", err)
	}
}

// TestInflateLeadingFrames: CPU events that start before the step and end inside it (the Python frames of
// the profiler.step() call that opened it) are copied with each step, so that every copy nests as the
// source does (written once, the copies' events sat as many levels shallower). No .part file is left.
func TestInflateLeadingFrames(t *testing.T) {
	src := filepath.Join(t.TempDir(), "lead.json")
	text := `{"traceEvents":[
{"ph":"X","cat":"python_function","name":"profiler.py: step","pid":1,"tid":1,"ts":90,"dur":30},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":100,"dur":100},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":105,"dur":10},
{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":150,"dur":10}]}`
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	paths, err := Inflate(context.Background(), src, InflateOptions{Ranks: 2, Steps: 3, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*.part")); len(m) > 0 {
		t.Errorf("left %v", m)
	}
	db := openTestDB(t)
	mustLoad(t, db, paths...)
	var got string
	if err := db.SQL.QueryRow(`SELECT string_agg(s, ' ' ORDER BY step) FROM (
		SELECT step, step || ':' || string_agg(name || '@' || depth, ',' ORDER BY ts) AS s FROM events
		WHERE rank = 1 AND cat = 'cpu_op' GROUP BY step)`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	// as in the source: both ops under the step, which the frame does not hold (it ends inside it)
	if want := "1:aten::mm@1,aten::add@1 2:aten::mm@1,aten::add@1 3:aten::mm@1,aten::add@1"; got != want {
		t.Errorf("cpu_ops by step, name@depth: %s, want %s", got, want)
	}
	orig := openTestDB(t)
	mustLoad(t, orig, src)
	if err := orig.SQL.QueryRow(`SELECT string_agg(name || '@' || depth, ',' ORDER BY ts) FROM events WHERE cat = 'cpu_op'`).Scan(&got); err != nil || got != "aten::mm@1,aten::add@1" {
		t.Errorf("source: %s, %v", got, err)
	}
	if n := queryInt(t, db, "SELECT count(*) FROM events WHERE rank = 1 AND name = 'profiler.py: step'"); n != 3 {
		t.Errorf("%d copies of the leading frame, want 3", n)
	}
}
