//go:build duckdb_arrow

package sqlfuncs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"tracesql/sqlfuncs"
)

// TestHashedFrameRead: the critical path reads a frame's categories and names as their hash(), decoded through
// the trace's distinct strings; the frame equals the one read with the strings themselves, in both frame tables,
// on every testdata trace and on a hand-made one with a name that is also a category (one symbol for both),
// nameless rows, and names that differ only in case, in Unicode or by a trailing space.
func TestHashedFrameRead(t *testing.T) {
	dir := t.TempDir()
	made := filepath.Join(dir, "names.json")
	events := `{"traceEvents":[
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100,"args":{}},
 {"ph":"X","cat":"cpu_op","name":"cpu_op","pid":1,"tid":1,"ts":1,"dur":10,"args":{}},
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":12,"dur":10,"args":{}},
 {"ph":"X","cat":"cpu_op","name":"aten::MM","pid":1,"tid":1,"ts":23,"dur":10,"args":{}},
 {"ph":"X","cat":"cpu_op","name":"aten::mm ","pid":1,"tid":1,"ts":34,"dur":10,"args":{}},
 {"ph":"X","cat":"cpu_op","name":"推理 🚀","pid":1,"tid":1,"ts":45,"dur":10,"args":{}},
 {"ph":"X","cat":"cpu_op","pid":1,"tid":1,"ts":56,"dur":1,"args":{}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":60,"dur":5,"args":{"correlation":5}},
 {"ph":"X","cat":"cuda_runtime","pid":1,"tid":1,"ts":66,"dur":1,"args":{"correlation":5}},
 {"ph":"X","cat":"kernel","name":"kernel","pid":0,"tid":7,"ts":70,"dur":5,"args":{"stream":7,"correlation":5}}]}`
	if err := os.WriteFile(made, []byte(events), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, paths := loadWithTestdata(t, []string{made})
	rows, err := db.SQL.Query(`SELECT trace_id, path FROM traces ORDER BY trace_id`)
	if err != nil {
		t.Fatal(err)
	}
	traces := map[int64]string{}
	for rows.Next() {
		var id int64
		var path string
		if err := rows.Scan(&id, &path); err != nil {
			t.Fatal(err)
		}
		traces[id] = path
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(traces) != len(paths) {
		t.Fatalf("%d traces loaded from %d files", len(traces), len(paths))
	}
	for id, path := range traces {
		for _, table := range []string{"_hta_frame_default", "_hta_frame_compat"} {
			hashed, strs, err := sqlfuncs.FrameReadsForTest(ctx, db.SQL, table, id)
			if err != nil {
				t.Fatalf("%s %s: %v", path, table, err)
			}
			if msg := frameDiff(hashed, strs); msg != "" {
				t.Errorf("%s %s: hashed vs strings: %s", path, table, msg)
			}
			seen := map[string]bool{}
			for _, s := range hashed.Syms {
				if seen[s] {
					t.Errorf("%s %s: symbol %q twice", path, table, s)
				}
				seen[s] = true
			}
			if path == made && table == "_hta_frame_default" {
				names := map[string]bool{}
				for r := range hashed.Len() {
					names[hashed.Syms[hashed.Name[r]]] = true
				}
				for _, want := range []string{"cpu_op", "aten::mm", "aten::MM", "aten::mm ", "推理 🚀", ""} {
					if !names[want] {
						t.Errorf("%s: name %q not read", path, want)
					}
				}
			}
		}
	}
}
