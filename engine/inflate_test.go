package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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
}

func TestInflateErrors(t *testing.T) {
	src := filepath.Join("..", "testdata", "traces", "ns_resolution", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
	noSteps := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(noSteps, []byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}`), 0o644)
	for _, c := range []struct {
		src  string
		opts InflateOptions
		want string
	}{
		{src, InflateOptions{Ranks: 0, Steps: 1}, "must be >= 1"},
		{noSteps, InflateOptions{Ranks: 1, Steps: 1, OutDir: t.TempDir()}, "no ProfilerStep"},
		{filepath.Join(t.TempDir(), "missing.json"), InflateOptions{Ranks: 1, Steps: 1}, "no such file"},
	} {
		_, err := Inflate(context.Background(), c.src, c.opts)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%s %+v: error %v, want %q", c.src, c.opts, err, c.want)
		}
	}
}
