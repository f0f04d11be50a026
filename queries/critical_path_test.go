package queries_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"tracesql/internal/htaref"
)

// cpRefRun is one of HTA's critical-path runs in the reference (cp_<label>_stats.json).
type cpRefRun struct {
	dir   htaref.Dir
	label string // file label, e.g. "ProfilerStep_1" or "alexnet_forward_1_zw"
	stats struct {
		Annotation     string         `json:"annotation"`
		InstanceID     *int           `json:"instance_id"`
		DataLoadEvents []string       `json:"data_load_events"`
		Rank           int            `json:"rank"`
		ZeroWeight     bool           `json:"zero_weight_launch_edges"`
		Success        bool           `json:"success"`
		Nodes          int            `json:"nodes"`
		Edges          int            `json:"edges"`
		EdgesByType    map[string]int `json:"edges_by_type"`
		CPNodes        int            `json:"critical_path_nodes"`
		CPEdges        int            `json:"critical_path_edges"`
		CPLength       float64        `json:"critical_path_length"`
		CPEvents       int            `json:"critical_path_events"`
		WindowStart    float64        `json:"window_start_ts"`
		WindowEnd      float64        `json:"window_end_ts"`
	}
}

func cpRefRuns(t *testing.T) []cpRefRun {
	var out []cpRefRun
	for _, d := range htaref.Dirs(t) {
		matches, _ := filepath.Glob(filepath.Join(d.Path, "cp_*_stats.json"))
		for _, m := range matches {
			base := filepath.Base(m)
			if strings.Contains(base, "_overlay_") {
				continue
			}
			r := cpRefRun{dir: d, label: strings.TrimSuffix(strings.TrimPrefix(base, "cp_"), "_stats.json")}
			b, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &r.stats); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			out = append(out, r)
		}
	}
	return out
}

// args renders the run's settings as critical_path macro arguments (compat mode).
func (r cpRefRun) args() string {
	inst := 0
	if r.stats.InstanceID != nil {
		inst = *r.stats.InstanceID
	}
	dl := "NULL"
	if len(r.stats.DataLoadEvents) > 0 {
		var q []string
		for _, p := range r.stats.DataLoadEvents {
			q = append(q, "'"+p+"'")
		}
		dl = "[" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprintf("rank := %d, annotation := '%s', instance := %d, data_load_events := %s, add_zero_weight_launch_edges := %t, compat := true",
		r.stats.Rank, r.stats.Annotation, inst, dl, r.stats.ZeroWeight)
}

func (r cpRefRun) file(suffix string) string {
	return r.dir.File("cp_" + r.label + suffix)
}

func cpQueryInts(t *testing.T, db *sql.DB, q string, args ...any) [][]int64 {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]int64
	for rows.Next() {
		v := make([]int64, len(cols))
		p := make([]any, len(cols))
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// TestCriticalPathHTAParity compares every critical-path run of the HTA reference, in compat mode:
// node and edge sets (ids, events, times, types, weights), path length, path edges, summary.
func TestCriticalPathHTAParity(t *testing.T) {
	runs := cpRefRuns(t)
	if len(runs) == 0 {
		t.Skip("no critical-path reference runs")
	}
	for _, r := range runs {
		r := r
		t.Run(r.dir.Name+"/"+r.label, func(t *testing.T) {
			db := htaref.Open(t, r.dir).SQL
			args := r.args()
			st := r.stats
			minTS := r.dir.MinTS

			// Nodes: node, ev_idx, ts (aligned µs), is_start.
			got := cpQueryInts(t, db, fmt.Sprintf(`SELECT node, ev_idx, ts // 1000 - %d, is_start::INT FROM cp_graph_nodes(%s) ORDER BY node`, minTS, args))
			inGraph := cpQueryInts(t, db, fmt.Sprintf(`SELECT count(*) FILTER (has_edges), count(*) FILTER (on_critical_path) FROM cp_graph_nodes(%s)`, args))
			if inGraph[0][0] != int64(st.Nodes) || inGraph[0][1] != int64(st.CPNodes) {
				t.Errorf("nodes in graph, on path: %v, HTA %d, %d", inGraph[0], st.Nodes, st.CPNodes)
			}
			want := htaref.ReadCSV(t, r.file("_nodes.csv.gz"))
			ci := []int{want.Col(t, "node"), want.Col(t, "ev_idx"), want.Col(t, "ts"), want.Col(t, "is_start")}
			bad := 0
			for i, row := range want.Rows {
				w := []int64{int64(htaref.Float(row[ci[0]])), int64(htaref.Float(row[ci[1]])), int64(htaref.Float(row[ci[2]])), b2i(row[ci[3]] == "True")}
				if i >= len(got) || fmt.Sprint(got[i]) != fmt.Sprint(w) {
					if bad < 5 {
						g := []int64(nil)
						if i < len(got) {
							g = got[i]
						}
						t.Errorf("node row %d: got %v, HTA %v", i, g, w)
					}
					bad++
				}
			}

			// Edges: the same set of (src, dst, type, weight µs, graph weight µs, on path).
			type edge struct {
				src, dst int64
				typ      string
				w, gw    int64
				crit     bool
			}
			erows, err := db.Query(fmt.Sprintf(`SELECT src_node, dst_node, edge_type, edge_weight_us::BIGINT, weight_us::BIGINT, on_critical_path FROM cp_graph_edges(%s)`, args))
			if err != nil {
				t.Fatal(err)
			}
			gotE := map[[2]int64]edge{}
			byType := map[string]int{}
			for erows.Next() {
				var e edge
				if err := erows.Scan(&e.src, &e.dst, &e.typ, &e.w, &e.gw, &e.crit); err != nil {
					t.Fatal(err)
				}
				gotE[[2]int64{e.src, e.dst}] = e
				byType[e.typ]++
			}
			erows.Close()
			if len(gotE) != st.Edges {
				t.Errorf("edges: %d, HTA %d", len(gotE), st.Edges)
			}
			if fmt.Sprint(byType) != fmt.Sprint(st.EdgesByType) {
				t.Errorf("edges by type: %v, HTA %v", byType, st.EdgesByType)
			}
			wantE := htaref.ReadCSV(t, r.file("_all_edges.csv.gz"))
			ec := []int{wantE.Col(t, "begin_node"), wantE.Col(t, "end_node"), wantE.Col(t, "type"), wantE.Col(t, "weight"), wantE.Col(t, "graph_weight")}
			bad = 0
			for _, row := range wantE.Rows {
				w := edge{int64(htaref.Float(row[ec[0]])), int64(htaref.Float(row[ec[1]])), row[ec[2]], int64(htaref.Float(row[ec[3]])), int64(htaref.Float(row[ec[4]])), false}
				g, ok := gotE[[2]int64{w.src, w.dst}]
				if !ok || g.typ != w.typ || g.w != w.w || g.gw != w.gw {
					if bad < 8 {
						t.Errorf("edge %d→%d: got %+v (present %t), HTA %+v", w.src, w.dst, g, ok, w)
					}
					bad++
				}
			}

			// Path.
			path := cpQueryInts(t, db, fmt.Sprintf(`SELECT src_node, dst_node, (weight_us * 1000)::BIGINT FROM critical_path(%s) ORDER BY seq`, args))
			var length int64
			for _, p := range path {
				length += p[2]
			}
			if len(path) != st.CPEdges {
				t.Errorf("path edges: %d, HTA %d", len(path), st.CPEdges)
			}
			if float64(length)/1000 != st.CPLength {
				t.Errorf("path length: %v µs, HTA %v", float64(length)/1000, st.CPLength)
			}
			wantP := htaref.ReadCSV(t, r.file("_path_edges.csv"))
			pc := []int{wantP.Col(t, "begin_node"), wantP.Col(t, "end_node")}
			same := len(wantP.Rows) == len(path)
			for i := 0; same && i < len(path); i++ {
				same = path[i][0] == int64(htaref.Float(wantP.Rows[i][pc[0]])) && path[i][1] == int64(htaref.Float(wantP.Rows[i][pc[1]]))
			}
			if !same {
				// Equal-length paths: allowed only when the lengths agree (ties).
				t.Logf("path differs from HTA's (length %d µs vs %v)", length/1000, st.CPLength)
				if float64(length)/1000 != st.CPLength {
					t.Errorf("path differs and is not a tie")
				}
			}

			// Summary.
			srows, err := db.Query(fmt.Sprintf(`SELECT bound_by, pct FROM critical_path_summary(%s) ORDER BY bound_by`, args))
			if err != nil {
				t.Fatal(err)
			}
			gotS := map[string]float64{}
			for srows.Next() {
				var b string
				var p float64
				if err := srows.Scan(&b, &p); err != nil {
					t.Fatal(err)
				}
				gotS[b] = p
			}
			srows.Close()
			wantS := htaref.ReadCSV(t, r.file("_summary.csv"))
			if len(wantS.Rows) != len(gotS) {
				t.Errorf("summary: %v, HTA %v", gotS, wantS.Rows)
			}
			for _, row := range wantS.Rows {
				g, ok := gotS[row[0]]
				w := htaref.Float(row[1])
				if !ok || !htaref.Close(g, w) {
					t.Errorf("summary %q: got %v (%t), HTA %v", row[0], g, ok, w)
				}
			}
		})
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

var _ = context.Background
var _ = math.Abs
var _ = sort.Strings
