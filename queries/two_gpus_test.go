package queries_test

import (
	"database/sql"
	"testing"

	"tracesql/queries"
)

// TestStreamsPerDevice: one rank's trace with two GPUs that both have a stream 7 (testdata/hta/bd_idle_two_gpus.json,
// times in µs, every launch call 2 µs on CPU thread 100/1):
//
//	GPU 0, stream 7: kA [1000,1100] launched at 990, kB [1150,1200] launched at 995
//	GPU 1, stream 7: kC [1120,1140] launched at 1005, kD [1300,1310] launched at 1250
//
// By default each GPU's stream 7 is its own timeline:
//   - idle: GPU 0 waits 1150 − 1100 = 50 before kB, whose launch (995) came before the stream went idle and the
//     gap is ≥ 30 µs: other 50. GPU 1 waits 1300 − 1140 = 160 before kD, launched at 1250 > 1140: host_wait 160.
//   - queue (launch +1, GPU start −1): GPU 0 990→1, 995→2, 1000→1, 1150→0; GPU 1 1005→1, 1120→0, 1250→1, 1300→0.
//     At max_queue_length 1, GPU 0 is blocked 5 + 5 + 150 = 160 µs and GPU 1 115 + 50 = 165 µs, of the rank's
//     1310 − 990 = 320 µs.
//
// Merged into one stream 7 (what HTA does, so compat mode keeps it), kC follows kA (gap 20, kernel_wait), kB
// follows kC (10, kernel_wait) and kD follows kB (100, launched after 1200: host_wait): host_wait 100,
// kernel_wait 30 and "other" 0 for kA, the stream's first event; the queue series of the stream is
// 990→1, 995→2, 1000→1, 1005→2, 1120→1, 1150→0, 1250→1, 1300→0, blocked at 1 for 5+5+5+115+30+50 = 210 µs of
// the frame's last start − first start, 1300 − 990 = 310 µs.
func TestStreamsPerDevice(t *testing.T) {
	bdModes(t, "bd_idle_two_gpus.json", func(t *testing.T, db *sql.DB, compat bool) {
		if !compat {
			bdExpect(t, db, `SELECT * FROM idle_time_breakdown()`, [][]any{
				{"trace", 0, 0, 7, "other", 50, 1},
				{"trace", 0, 1, 7, "host_wait", 160, 1}})
			bdExpect(t, db, `SELECT device, stream, idle_category, count, mean_us, max_us FROM idle_interval_stats()`, [][]any{
				{0, 7, "other", 1, 50, 50},
				{1, 7, "host_wait", 1, 160, 160}})
			bdExpect(t, db, `SELECT device, stream, count, mean, min, max FROM queue_length_summary`, [][]any{
				{0, 7, 4, 1, 0, 2},
				{1, 7, 4, 0.5, 0, 1}})
			bdExpect(t, db, `SELECT * FROM time_blocked_on_full_queue(max_queue_length := 1)`, [][]any{
				{"trace", 0, 0, 7, 160, 160.0 / 320},
				{"trace", 0, 1, 7, 165, 165.0 / 320}})
			bdExpect(t, db, `SELECT pid, stream, ts, queue_length FROM queue_length ORDER BY pid, seq`, [][]any{
				{0, 7, 990000, 1}, {0, 7, 995000, 2}, {0, 7, 1000000, 1}, {0, 7, 1150000, 0},
				{1, 7, 1005000, 1}, {1, 7, 1120000, 0}, {1, 7, 1250000, 1}, {1, 7, 1300000, 0}})
			// The view's own order is the series' (no ORDER BY needed to read it as a step function).
			bdExpect(t, db, `SELECT pid, ts FROM queue_length`, [][]any{
				{0, 990000}, {0, 995000}, {0, 1000000}, {0, 1150000}, {1, 1005000}, {1, 1120000}, {1, 1250000}, {1, 1300000}})
			// The report's queue chart: one series per GPU's stream 7 (merged, GPU 1's queue hid under GPU 0's).
			secs, err := queries.Report("60_queue_length")
			if err != nil || len(secs) != 1 {
				t.Fatalf("report 60_queue_length: %d sections, %v", len(secs), err)
			}
			bdExpect(t, db, `SELECT device, stream, max(queue_length) FROM (`+secs[0].SQL+`) GROUP BY ALL ORDER BY ALL`, [][]any{
				{0, 7, 2}, {1, 7, 1}})
			return
		}
		bdExpect(t, db, `SELECT * FROM idle_time_breakdown()`, [][]any{
			{"trace", 0, nil, 7, "host_wait", 100, 0.77},
			{"trace", 0, nil, 7, "kernel_wait", 30, 0.23},
			{"trace", 0, nil, 7, "other", 0, 0}})
		bdExpect(t, db, `SELECT device, idle_category, count, mean_us FROM idle_interval_stats()`, [][]any{
			{nil, "host_wait", 1, 100}, {nil, "kernel_wait", 2, 15}, {nil, "other", 0, nil}})
		bdExpect(t, db, `SELECT device, stream, count, mean, min, max FROM queue_length_summary`, [][]any{
			{nil, 7, 8, 1, 0, 2}})
		bdExpect(t, db, `SELECT * FROM time_blocked_on_full_queue(max_queue_length := 1)`, [][]any{
			{"trace", 0, nil, 7, 210, 210.0 / 310}})
	})
}
