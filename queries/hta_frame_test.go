package queries_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"tracesql/internal/htaref"
)

// TestHTAFrameCompat checks hta_frame in compat mode against HTA's loaded dataframe
// (parsed_rank<r>.csv.gz) of every reference directory: same rows, and per row the same ts (aligned µs),
// dur, stream, correlation, index_correlation and iteration.
func TestHTAFrameCompat(t *testing.T) {
	for _, d := range htaref.Dirs(t) {
		d := d
		t.Run(d.Name, func(t *testing.T) {
			db := htaref.Open(t, d)
			htaref.Compat(t, db)
			for _, r := range d.Ranks() {
				name := fmt.Sprintf("parsed_rank%d.csv.gz", r)
				if !d.Has(name) {
					continue
				}
				want := htaref.ReadCSV(t, d.File(name))
				cols := []string{"index", "ts", "dur", "stream", "correlation", "index_correlation", "iteration"}
				idx := make([]int, len(cols))
				for i, c := range cols {
					idx[i] = want.Col(t, c)
				}
				rows, err := db.SQL.Query(`SELECT ev_idx, ts // 1000 - ?, dur // 1000, stream, correlation, index_correlation, coalesce(iteration, -9223372036854775808)
					FROM hta_frame WHERE rank = ?`, d.MinTS, r)
				if err != nil {
					t.Fatal(err)
				}
				got := map[int64][7]int64{}
				for rows.Next() {
					var v [7]int64
					if err := rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]); err != nil {
						t.Fatal(err)
					}
					got[v[0]] = v
				}
				rows.Close()
				if d.DeviceType != "MTIA" && len(got) != len(want.Rows) {
					t.Errorf("rank %d: %d rows, HTA %d", r, len(got), len(want.Rows))
				}
				bad := 0
				for _, row := range want.Rows {
					var w [7]int64
					for i, c := range idx {
						w[i] = int64(htaref.Float(row[c]))
					}
					g, ok := got[w[0]]
					if !ok {
						if d.DeviceType != "MTIA" {
							t.Errorf("rank %d: HTA row %d missing", r, w[0])
						}
						bad++
					} else if d.DeviceType != "MTIA" && g != w {
						if bad < 5 {
							t.Errorf("rank %d row %d: got %v, HTA %v (%v)", r, w[0], g, w, cols)
						}
						bad++
					}
					if bad > 20 {
						t.Fatalf("too many differences")
					}
				}
			}
		})
	}
}

// TestHTAFrameCompatRelinks: where HTA's launch ↔ GPU sides differ from the loader's, the compat frame
// links the trace again instead of taking events.link_idx (each case alone in its trace, as the relinking
// is per trace):
//   - nameless: a correlated CPU row without a name (ev 2) is on neither HTA side, so the kernel links to
//     the named launch (ev 0); the loader's link is the last CPU row of the correlation, ev 2. The
//     gpu_user_annotation (ev 4) gets its step by time containment, as HTA steps CPU rows.
//   - raw stream: a memcpy whose stream arg is 4294967295 has no stream for the loader but that stream for
//     HTA, which links it with its launch (ev 1 ↔ 2); the loader does not.
func TestHTAFrameCompatRelinks(t *testing.T) {
	for _, c := range []struct {
		name, events string
		loader       [][]any // ev_idx, link_idx of the GPU row
		compat       [][]any // ev_idx, stream, index_correlation, iteration
	}{
		{"nameless", `
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":5}},
 {"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":20,"dur":5,"args":{"stream":7,"correlation":5}},
 {"ph":"X","cat":"cuda_runtime","pid":1,"tid":1,"ts":16,"dur":1,"args":{"correlation":5}},
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":0,"dur":100,"args":{}},
 {"ph":"X","cat":"gpu_user_annotation","name":"ann","pid":0,"tid":7,"ts":18,"dur":20,"args":{}}`,
			[][]any{{1, 2}},
			[][]any{{0, -1, 1, 3}, {1, 7, 0, 3}, {3, -1, -1, 3}, {4, -1, -1, 3}}},
		{"raw stream", `
 {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":29,"dur":3,"args":{}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":30,"dur":1,"args":{"correlation":6}},
 {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":7,"ts":40,"dur":2,"args":{"stream":4294967295,"correlation":6}}`,
			[][]any{{2, nil}},
			[][]any{{0, -1, -1, -1}, {1, -1, 2, -1}, {2, 4294967295, 1, -1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "relink.json")
			if err := os.WriteFile(path, []byte(`{"traceEvents":[`+c.events+`]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			db := bdOpenFile(t, path)
			db.SQL.SetMaxOpenConns(1)
			bdExpect(t, db.SQL, `SELECT ev_idx, link_idx FROM events WHERE cat_class IN ('kernel', 'memcpy')`, c.loader)
			if _, err := db.SQL.Exec(`SET VARIABLE hta_compat = true`); err != nil {
				t.Fatal(err)
			}
			bdExpect(t, db.SQL, `SELECT ev_idx, stream, index_correlation, iteration FROM hta_frame ORDER BY ev_idx`, c.compat)
		})
	}
}
