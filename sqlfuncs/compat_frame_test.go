package sqlfuncs_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"tracesql/engine"
	"tracesql/graph"
	"tracesql/sqlfuncs"
)

// TestCompatFrameFromDefault: the compat frame the critical path derives from the default frame (dropped
// rows removed, times rounded to whole µs) equals the one read from _hta_frame_compat, on every testdata
// trace and on hand-made traces for each case: a last step HTA drops, a nameless CPU row (neither HTA side),
// and the two that make it read the view instead (a raw stream, a relinked nameless correlated row).
func TestCompatFrameFromDefault(t *testing.T) {
	dir := t.TempDir()
	made := map[string]string{
		// two ProfilerStep names: HTA drops the last step's CPU rows and the kernel they launched
		"steps.json": `
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0.5,"dur":50,"args":{}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10.2,"dur":5.7,"args":{"correlation":5}},
 {"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":20.001,"dur":5.999,"args":{"stream":7,"correlation":5}},
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":60,"dur":50,"args":{}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":61,"dur":5,"args":{"correlation":6}},
 {"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":70.4,"dur":5,"args":{"stream":7,"correlation":6}},
 {"ph":"X","cat":"cpu_op","pid":1,"tid":1,"ts":30,"dur":1,"args":{}}`,
		"raw_stream.json": `
 {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":29,"dur":3,"args":{}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":30,"dur":1,"args":{"correlation":6}},
 {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":7,"ts":40,"dur":2,"args":{"stream":4294967295,"correlation":6}}`,
		"nameless_launch.json": `
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":5}},
 {"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":20,"dur":5,"args":{"stream":7,"correlation":5}},
 {"ph":"X","cat":"cuda_runtime","pid":1,"tid":1,"ts":16,"dur":1,"args":{"correlation":5}}`,
	}
	var paths []string
	for name, events := range made {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(`{"traceEvents":[`+events+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	ctx := context.Background()
	db, paths := loadWithTestdata(t, paths)
	rows, err := db.SQL.Query(`SELECT trace_id, path, events FROM traces ORDER BY trace_id`)
	if err != nil {
		t.Fatal(err)
	}
	type trace struct {
		id, events int64
		path       string
	}
	var traces []trace
	for rows.Next() {
		var tr trace
		if err := rows.Scan(&tr.id, &tr.path, &tr.events); err != nil {
			t.Fatal(err)
		}
		traces = append(traces, tr)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(traces) != len(paths) {
		t.Fatalf("%d traces loaded from %d files", len(traces), len(paths))
	}
	wantDerived := map[string]bool{"raw_stream.json": false, "nameless_launch.json": false}
	derivedWithDrops := 0
	for _, tr := range traces {
		got, want, derived, err := sqlfuncs.CompatFramesForTest(ctx, db.SQL, tr.id, tr.events)
		if err != nil {
			t.Fatalf("%s: %v", tr.path, err)
		}
		if w, ok := wantDerived[filepath.Base(tr.path)]; ok && derived != w {
			t.Errorf("%s: derived %v, want %v", tr.path, derived, w)
		}
		if derived && got.Len() < countDefaultRows(t, db, tr.id) {
			derivedWithDrops++
		}
		if msg := frameDiff(got, want); msg != "" {
			t.Errorf("%s (derived %v): %s", tr.path, derived, msg)
		}
	}
	if derivedWithDrops < 2 {
		t.Errorf("only %d derived frames drop rows; the test needs the last-step and nameless cases", derivedWithDrops)
	}
}

func countDefaultRows(t *testing.T, db *engine.DB, traceID int64) int {
	t.Helper()
	var n int
	if err := db.SQL.QueryRow(`SELECT count(*) FROM _hta_frame_default WHERE trace_id = $1`, traceID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// frameDiff describes the first difference between two frames ("" when equal), comparing names by value.
func frameDiff(a, b *graph.Frame) string {
	if a.Len() != b.Len() {
		return "rows " + strconv.Itoa(a.Len()) + " vs " + strconv.Itoa(b.Len())
	}
	cols := []struct {
		name string
		x, y []int64
	}{{"ev_idx", a.EvIdx, b.EvIdx}, {"pid", a.Pid, b.Pid}, {"tid", a.Tid, b.Tid}, {"ts", a.TS, b.TS},
		{"dur", a.Dur, b.Dur}, {"stream", a.Stream, b.Stream}, {"correlation", a.Corr, b.Corr},
		{"index_correlation", a.IndexCorr, b.IndexCorr}, {"wait_on_stream", a.WaitOnStream, b.WaitOnStream},
		{"wait_on_corr", a.WaitOnCorr, b.WaitOnCorr}}
	for _, c := range cols {
		if !reflect.DeepEqual(c.x, c.y) {
			for i := range c.x {
				if c.x[i] != c.y[i] {
					return c.name + " at row " + strconv.Itoa(i) + ": " + strconv.FormatInt(c.x[i], 10) + " vs " + strconv.FormatInt(c.y[i], 10)
				}
			}
		}
	}
	for i := range a.Len() {
		if a.Syms[a.Cat[i]] != b.Syms[b.Cat[i]] || a.Syms[a.Name[i]] != b.Syms[b.Name[i]] {
			return "cat/name at row " + strconv.Itoa(i)
		}
	}
	return ""
}

// loadWithTestdata returns an in-memory database (closed when the test ends) holding the traces of paths and every
// testdata trace, ranked in file order, and the paths loaded.
func loadWithTestdata(t *testing.T, paths []string) (*engine.DB, []string) {
	t.Helper()
	for _, pattern := range []string{"*/*.json", "*/*.json.gz"} {
		m, err := filepath.Glob(filepath.Join("..", "testdata", "traces", pattern))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	db, err := engine.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Load(context.Background(), paths, engine.LoadOptions{RankFrom: engine.RankIndex}); err != nil {
		t.Fatal(err)
	}
	return db, paths
}
