package queries_test

import (
	"path/filepath"
	"testing"
)

// TestTraceStats: a made trace with one event in each odd state the loader keeps: an X without dur, an X
// with a negative dur (in other_events, so that no analysis counts it), events without ts (an X, in other_events
// too but not counted as of a negative dur, an instant and a counter of two series), a B without its E, a child that ends after its parent, a kernel whose launch call is missing and a
// launch whose kernel is missing (a launch and kernel that pair, a child that nests, a memset call without its
// GPU record, which normal traces have, and a kernel of correlation -1, none, count nowhere).
func TestTraceStats(t *testing.T) {
	trace := `{"traceEvents":[
  {"ph":"X","cat":"cpu_op","name":"parent","pid":1,"tid":1,"ts":0,"dur":10},
  {"ph":"X","cat":"cpu_op","name":"late_child","pid":1,"tid":1,"ts":5,"dur":10},
  {"ph":"X","cat":"cpu_op","name":"nested","pid":1,"tid":1,"ts":6,"dur":2},
  {"ph":"X","cat":"cpu_op","name":"no_dur","pid":1,"tid":1,"ts":20},
  {"ph":"B","cat":"cpu_op","name":"open","pid":1,"tid":2,"ts":30},
  {"ph":"X","cat":"kernel","name":"negative","pid":0,"tid":7,"ts":35,"dur":-1.5,"args":{"correlation":9,"stream":7,"device":0}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":40,"dur":2,"args":{"correlation":1}},
  {"ph":"X","cat":"kernel","name":"orphan","pid":0,"tid":7,"ts":50,"dur":5,"args":{"correlation":2,"stream":7,"device":0}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":60,"dur":2,"args":{"correlation":3}},
  {"ph":"X","cat":"kernel","name":"paired","pid":0,"tid":7,"ts":70,"dur":5,"args":{"correlation":3,"stream":7,"device":0}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaMemsetAsync","pid":1,"tid":1,"ts":80,"dur":2,"args":{"correlation":4}},
  {"ph":"X","cat":"kernel","name":"uncorrelated","pid":0,"tid":7,"ts":90,"dur":5,"args":{"correlation":-1,"stream":7,"device":0}},
  {"ph":"X","cat":"cpu_op","name":"no_ts","pid":1,"tid":1,"dur":3},
  {"ph":"i","name":"no_ts_instant","pid":1,"tid":1},
  {"ph":"C","name":"no_ts_counter","pid":1,"args":{"a":1,"b":2}}
]}`
	db := ctOpenJSON(t, "stats.json", trace)
	ctWantRows(t, db.SQL, `SELECT rank, name, value FROM trace_stats`, [][]string{
		{"0", "x_without_dur", "1"},
		{"0", "x_negative_dur", "1"},
		{"0", "without_ts", "3"},
		{"0", "unpaired_begin_end", "1"},
		{"0", "cpu_not_nested", "1"},
		{"0", "gpu_without_launch", "1"},
		{"0", "launch_without_gpu", "1"},
		{"0", "gpu_graph_replayed", "0"},
	})
	ctWantRows(t, db.SQL, `SELECT ph, name, ts, dur FROM other_events WHERE ph = 'X' ORDER BY name`, [][]string{{"X", "negative", "35000", "-1500"}, {"X", "no_ts", "NULL", "3000"}})
	ctWantRows(t, db.SQL, `SELECT count(*) FROM events WHERE name = 'negative'`, [][]string{{"0"}})
	// A real Kineto trace has none of these but its record_function ranges that outlive the Python call
	// opening them (36 annotations in _record_function_enter_new, and the Python frames in them).
	rec := ctOpen(t, filepath.Join("..", "testdata", "traces", "recorded", "control"))
	ctWantRows(t, rec.SQL, `SELECT name, value FROM trace_stats WHERE value > 0`, [][]string{{"cpu_not_nested", "72"}})
}
