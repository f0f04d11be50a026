package queries_test

import (
	"fmt"
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
