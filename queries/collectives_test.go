package queries_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracesql/engine"
	"tracesql/queries"
)

// collectiveRank is one rank's Kineto trace holding collectives, each a record_param_comms op around the
// launch of one NCCL kernel (times in µs).
type collectiveRank struct {
	rank int
	ops  []collectiveOp
}

type collectiveOp struct {
	name, pg, dtype    string
	in, out, groupSize int
	kernelTS, dur      float64
}

func writeCollectiveTrace(t *testing.T, dir string, r collectiveRank) string {
	t.Helper()
	pid := 100 + r.rank
	events := []map[string]any{
		{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": pid, "tid": 1, "ts": 0, "dur": 10000},
	}
	for i, o := range r.ops {
		at := 10 + float64(i)*20 // issue order: the ops' order
		corr := 1 + i
		kernel := "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
		if o.name == "" {
			kernel = "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"
		}
		events = append(events,
			map[string]any{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": 1, "ts": at + 2, "dur": 3,
				"args": map[string]any{"correlation": corr}},
			map[string]any{"ph": "X", "cat": "kernel", "name": kernel, "pid": r.rank, "tid": 20, "ts": o.kernelTS, "dur": o.dur,
				"args": map[string]any{"stream": 20, "device": r.rank, "correlation": corr}})
		if o.name != "" {
			events = append(events, map[string]any{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": pid, "tid": 1,
				"ts": at, "dur": 8, "args": map[string]any{"Collective name": o.name, "Process Group Name": o.pg, "dtype": o.dtype,
					"In msg nelems": o.in, "Out msg nelems": o.out, "Group size": o.groupSize}})
		}
	}
	b, err := json.Marshal(map[string]any{
		"distributedInfo": map[string]any{"backend": "nccl", "rank": r.rank, "world_size": 2},
		"traceEvents":     events,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, fmt.Sprintf("rank%d.json", r.rank))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCollectives: two ranks, two process groups.
//   - pg "0", 1st: an all-reduce of 2^20 floats (4,194,304 B); rank 0's kernel runs [100, 1100] µs, rank 1 arrives at
//     600 and both end at 1100. The collective's own time is rank 1's 500 µs: algbw 8.39 GB/s,
//     busbw × 2(2−1)/2 the same; start skew 500, end skew 0, last rank 1. Rank 0's kernel alone: 4.19 GB/s.
//   - pg "0", 2nd: an all-gather of 1000 → 2000 BFloat16 (4000 B), both 10 µs from 2000: 0.4 GB/s, busbw × 1/2.
//   - pg "1": a broadcast of 10 floats on rank 0 and of 20 on rank 1 (the ranks' sequences do not line up):
//     consistent false, size the larger (80 B).
//   - a kernel without record_param_comms (an old trace): collective from its name, no size, pg NULL.
//   - pg "2": an all_to_allv whose splits differ by rank (in 1000 and 3000 BFloat16, out 2000): the ranks line up
//     (review r73 #4: consistent was false, and the report left it out); size the larger, 6000 B; rank 1 arrives
//     300 µs late, both end at 5310: 10 µs own time, 0.6 GB/s, busbw × 1/2.
func TestCollectives(t *testing.T) {
	dir := t.TempDir()
	p0 := writeCollectiveTrace(t, dir, collectiveRank{0, []collectiveOp{
		{"allreduce", "0", "Float", 1 << 20, 1 << 20, 2, 100, 1000},
		{"_allgather_base", "0", "BFloat16", 1000, 2000, 2, 2000, 10},
		{"broadcast", "1", "Float", 10, 10, 2, 3000, 5},
		{"", "", "", 0, 0, 0, 4000, 7},
		{"all_to_allv", "2", "BFloat16", 1000, 2000, 2, 5000, 310},
	}})
	p1 := writeCollectiveTrace(t, dir, collectiveRank{1, []collectiveOp{
		{"allreduce", "0", "Float", 1 << 20, 1 << 20, 2, 600, 500},
		{"_allgather_base", "0", "BFloat16", 1000, 2000, 2, 2000, 10},
		{"broadcast", "1", "Float", 20, 20, 2, 3000, 5},
		{"", "", "", 0, 0, 0, 4002, 5},
		{"all_to_allv", "2", "BFloat16", 3000, 2000, 2, 5300, 10},
	}})
	db := ctOpen(t, p0, p1)
	ctWantRows(t, db.SQL, `SELECT rank, collective, pg_name, seq, msg_bytes, round(busbw_gbps, 6) FROM comm_kernels WHERE rank = 0 ORDER BY ts`, [][]string{
		{"0", "allreduce", "0", "1", "4194304", "4.194304"},
		{"0", "_allgather_base", "0", "2", "4000", "0.2"},
		{"0", "broadcast", "1", "1", "40", "0.008"},
		{"0", "allgather", "NULL", "1", "NULL", "NULL"},
		{"0", "all_to_allv", "2", "1", "4000", "0.006452"},
	})
	ctWantRows(t, db.SQL, `SELECT pg_name, seq, collective, ranks, group_size, consistent, msg_bytes, start_skew_us, end_skew_us, last_rank,
		min_us, max_us, round(algbw_gbps, 6), round(busbw_gbps, 6) FROM collectives`, [][]string{
		{"0", "1", "allreduce", "2", "2", "true", "4194304", "500", "0", "1", "500", "1000", "8.388608", "8.388608"},
		{"0", "2", "_allgather_base", "2", "2", "true", "4000", "0", "0", "0", "10", "10", "0.4", "0.2"},
		{"1", "1", "broadcast", "2", "2", "false", "80", "0", "0", "0", "5", "5", "0.016", "0.016"},
		{"2", "1", "all_to_allv", "2", "2", "true", "6000", "300", "0", "1", "10", "310", "0.6", "0.3"},
		{"NULL", "1", "allgather", "2", "2", "true", "NULL", "2", "0", "1", "5", "7", "NULL", "NULL"},
	})
}

// TestCollectiveBusFactor: nccl-tests' bus-bandwidth factors, on the whole buffer of a gather or scatter as on an
// all-gather's (GatherGetBw, ScatterGetBw: (n−1)/n; they were 1, a bus bandwidth n/(n−1) too high, review r73 #3).
func TestCollectiveBusFactor(t *testing.T) {
	db := ctOpen(t)
	for _, c := range []struct {
		collective string
		n          int
		want       string
	}{
		{"allreduce", 4, "1.5"}, {"all_reduce", 2, "1"},
		{"_allgather_base", 4, "0.75"}, {"all_gather", 2, "0.5"}, {"reduce_scatter_tensor", 4, "0.75"}, {"all_to_allv", 4, "0.75"},
		{"gather", 4, "0.75"}, {"scatter", 2, "0.5"}, {"_gather_base", 4, "0.75"},
		{"broadcast", 4, "1"}, {"reduce", 4, "1"}, {"send", 2, "1"}, {"recv", 2, "1"},
		{"barrier", 4, "NULL"}, {"coalesced", 4, "NULL"}, {"allreduce", 0, "NULL"},
	} {
		ctWantRows(t, db.SQL, fmt.Sprintf(`SELECT _collective_busbw_factor('%s', %d)`, c.collective, c.n), [][]string{{c.want}})
	}
}

// TestCollectivesMatchPluginSkew: on the DLRM job, whose Kineto traces (PyTorch 2.1) name no collective,
// the skew of each collective's kernel starts and the rank whose kernel started last equal what the NCCL
// profiler plugin's files say (nccl_rank_skew: its kernel start spread, and the rank that arrived last).
func TestCollectivesMatchPluginSkew(t *testing.T) {
	db := ncclDLRM(t)
	got := ctRows(t, db.SQL, `SELECT collective, start_skew_us, last_rank, ranks, consistent FROM collectives ORDER BY seq`)
	want := ctRows(t, db.SQL, `SELECT CASE op WHEN 'SendRecv' THEN 'sendrecv' ELSE 'allreduce' END, kernel_start_spread_us, last_rank, ranks, true
		FROM nccl_rank_skew ORDER BY first_arrival_ts OFFSET 2`) // the first two: warm-ups before Kineto's window
	if len(got) != 8 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("collectives:\n got %v\nwant %v", got, want)
	}
}

// collKernel is one communication kernel of lineUpTrace: launched at at µs (in ProfilerStep#(at/10000)) inside a
// record_param_comms op with opArgs (nil: no op), the kernel's own args extended by kArgs.
type collKernel struct {
	at, kernelTS, dur float64
	stream            int
	kernel            string
	opArgs, kArgs     map[string]any
}

func lineUpTrace(t *testing.T, dir string, rank int, steps []int, ks []collKernel) string {
	t.Helper()
	pid := 100 + rank
	var events []map[string]any
	for _, s := range steps {
		events = append(events, map[string]any{"ph": "X", "cat": "user_annotation", "name": fmt.Sprintf("ProfilerStep#%d", s),
			"pid": pid, "tid": 1, "ts": s * 10000, "dur": 9999})
	}
	for i, k := range ks {
		corr := 1 + i
		kargs := map[string]any{"stream": k.stream, "device": rank, "correlation": corr}
		for a, v := range k.kArgs {
			kargs[a] = v
		}
		name := k.kernel
		if name == "" {
			name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
		}
		events = append(events,
			map[string]any{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": 1, "ts": k.at + 2, "dur": 3,
				"args": map[string]any{"correlation": corr}},
			map[string]any{"ph": "X", "cat": "kernel", "name": name, "pid": rank, "tid": k.stream, "ts": k.kernelTS, "dur": k.dur, "args": kargs})
		if k.opArgs != nil {
			events = append(events, map[string]any{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": pid, "tid": 1,
				"ts": k.at, "dur": 8, "args": k.opArgs})
		}
	}
	b, err := json.Marshal(map[string]any{"distributedInfo": map[string]any{"rank": rank, "world_size": 2}, "traceEvents": events})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, fmt.Sprintf("rank%d.json", rank))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCollectivesLineUp: pairing across ranks by process group, step and order within the step, and what
// consistent flags (values worked out by hand; 4 MiB all-reduces, 100 µs kernels, rank 1 50 µs late).
//   - pg "0": rank 1's window opened a step earlier (steps 1-3, rank 0: 2-3). By step the all-reduces pair
//     up: skew 50, last rank 1; by order alone every pair would be a step apart (skew 9950, last rank 0).
//   - pg "1", step 2: rank 1 holds two broadcasts, rank 0 one: both rows inconsistent (they pair unrelated kernels).
//   - pg "2": the collective's args on the kernel only (no op found): its process group and size still come through.
//   - pg "3": one all-reduce whose two kernels run at once on two streams: its time is their union, 100 µs, not 200.
//   - pg "4": a size past BIGINT's bytes (2^62 Doubles) and a negative group size are unknown (NULL), not an error.
//   - an old kernel name without any op, on both ranks: collective unknown, and the ranks still line up.
func TestCollectivesLineUp(t *testing.T) {
	op := func(name, pg string, n int64, gs int) map[string]any {
		return map[string]any{"Collective name": name, "Process Group Name": pg, "dtype": "Float", "In msg nelems": n, "Out msg nelems": n, "Group size": gs}
	}
	dir := t.TempDir()
	var ranks []string
	for r := range 2 {
		late := float64(50 * r)
		var ks []collKernel
		steps := []int{2, 3}
		if r == 1 {
			steps = []int{1, 2, 3}
		}
		for _, s := range steps {
			at := float64(s * 10000)
			ks = append(ks, collKernel{at: at + 10, kernelTS: at + 100 + late, dur: 100, stream: 20, opArgs: op("allreduce", "0", 1<<20, 2)})
		}
		ks = append(ks, collKernel{at: 20200, kernelTS: 20300 + late, dur: 10, stream: 20, opArgs: op("broadcast", "1", 10, 2)})
		if r == 1 {
			ks = append(ks, collKernel{at: 20400, kernelTS: 20500, dur: 10, stream: 20, opArgs: op("broadcast", "1", 10, 2)})
		}
		ks = append(ks,
			collKernel{at: 20600, kernelTS: 20700 + late, dur: 20, stream: 20, kArgs: op("allgather", "2", 1000, 2)},
			collKernel{at: 20800, kernelTS: 20900, dur: 100, stream: 20, opArgs: op("allreduce", "3", 1<<20, 2)},
			collKernel{at: 20801, kernelTS: 20900, dur: 100, stream: 21, opArgs: op("allreduce", "3", 1<<20, 2)},
			collKernel{at: 21000, kernelTS: 21100, dur: 10, stream: 20, opArgs: map[string]any{"Collective name": "allreduce",
				"Process Group Name": "4", "dtype": "Double", "In msg nelems": int64(1) << 62, "Out msg nelems": int64(1) << 62, "Group size": -3}},
			collKernel{at: 21200, kernelTS: 21300 + late, dur: 10, stream: 20, kernel: "ncclAllReduceRingLLKernel_sum_f32(ncclColl)"})
		ranks = append(ranks, lineUpTrace(t, dir, r, steps, ks))
	}
	db := ctOpen(t, ranks...)
	ctWantRows(t, db.SQL, `SELECT pg_name, step, seq, collective, ranks, group_size, consistent, msg_bytes, start_skew_us, last_rank,
		min_us, round(algbw_gbps, 6) FROM collectives`, [][]string{
		{"0", "1", "1", "allreduce", "1", "2", "true", "4194304", "0", "1", "100", "41.94304"},
		{"0", "2", "1", "allreduce", "2", "2", "true", "4194304", "50", "1", "100", "41.94304"},
		{"0", "3", "1", "allreduce", "2", "2", "true", "4194304", "50", "1", "100", "41.94304"},
		{"1", "2", "1", "broadcast", "2", "2", "false", "40", "50", "1", "10", "0.004"},
		{"1", "2", "2", "broadcast", "1", "2", "false", "40", "0", "1", "10", "0.004"},
		{"2", "2", "1", "allgather", "2", "2", "true", "4000", "50", "1", "20", "0.2"},
		{"3", "2", "1", "allreduce", "2", "2", "true", "4194304", "0", "0", "100", "41.94304"},
		{"4", "2", "1", "allreduce", "2", "2", "true", "NULL", "0", "0", "10", "NULL"},
		{"NULL", "2", "1", "NULL", "2", "2", "true", "NULL", "50", "1", "10", "NULL"},
	})
	ctWantRows(t, db.SQL, `SELECT in_nelems, msg_bytes, group_size FROM comm_kernels WHERE pg_name = '4' AND rank = 0`, [][]string{
		{"4611686018427387904", "NULL", "NULL"}})
}

// collectivesCases: the trace sets of testdata/traces/collectives_cases (a review's repros; steps of 1 ms, µs times,
// each collective a record_param_comms op around the launch of its NCCL kernel) and the collectives rows each must
// give, worked out by hand, as "pg_name step seq collective ranks group_size consistent start_skew_us last_rank
// min_us", by step, process group and seq.
var collectivesCases = []struct {
	dir  string
	why  string
	want []string
}{
	{"missing_on_one_rank", "both ranks have steps 1 and 2 and pg \"1\"'s all-gather of step 1; rank 1 lacks the one of step 2: " +
		"it holds 0 of them there, rank 0 one, so that row pairs nothing (its 100 µs is rank 0's kernel, wait included)", []string{
		"0 1 1 allreduce 2 2 true 30 1 170",
		"1 1 1 allgather 2 2 true 20 1 80",
		"0 2 1 allreduce 2 2 true 50 1 150",
		"1 2 1 allgather 1 2 false 0 0 100",
	}},
	{"extra_on_one_rank", "rank 1 holds an extra broadcast of pg \"0\" in step 2 (two collectives, rank 0 one): both of the " +
		"group's rows of that step are inconsistent; pg \"1\" still lines up", []string{
		"0 1 1 allreduce 2 2 true 30 1 170",
		"1 1 1 allgather 2 2 true 20 1 80",
		"0 2 1 allreduce 2 2 false 50 0 10",
		"0 2 2 allreduce 1 2 false 0 1 150",
		"1 2 1 allgather 2 2 true 0 0 100",
	}},
	{"window_shifted", "rank 0 profiled steps 1-2, rank 1 steps 2-3: in steps 1 and 3 the other rank's window lacks the step, " +
		"so the one rank's collectives are consistent", []string{
		"0 1 1 allreduce 1 2 true 0 0 200",
		"1 1 1 allgather 1 2 true 0 0 55",
		"0 2 1 allreduce 2 2 true 40 1 160",
		"1 2 1 allgather 2 2 true 25 0 55",
		"0 3 1 allreduce 1 2 true 0 1 160",
		"1 3 1 allgather 1 2 true 0 1 80",
	}},
	{"group_not_loaded", "ranks 0-2 of 4: pg \"0\" (all four) lines up on the three; pg \"1\" (ranks 0 and 2) lacks rank 2 " +
		"in step 2, which recorded the group in step 1; rank 1 never recorded pg \"1\" (not in it) and counts for nothing " +
		"there; pg \"2\" (ranks 1 and 3) has its one loaded rank", []string{
		"0 1 1 allreduce 3 4 true 20 2 180",
		"1 1 1 allgather 2 2 true 30 2 70",
		"2 1 1 broadcast 1 2 true 0 1 10",
		"0 2 1 allreduce 3 4 true 20 2 180",
		"1 2 1 allgather 1 2 false 0 0 100",
		"2 2 1 broadcast 1 2 true 0 1 10",
	}},
	{"outside_steps", "rank 0's all-reduce before step 1 (outside every step) pairs with nothing, where the windows began " +
		"(consistent); rank 1 has step 2 but not rank 0's all-reduce of it", []string{
		"0 NULL 1 allreduce 1 2 true 0 0 50",
		"0 1 1 allreduce 2 2 true 30 1 170",
		"0 2 1 allreduce 1 2 false 0 0 200",
	}},
	{"unnamed_group", "old kernels without record_param_comms: the process group is unknown (it stands for every group), " +
		"so rank 1 having step 2 without one does not make rank 0's inconsistent; one rank alone gives no group size", []string{
		"NULL 1 1 allreduce 2 2 true 5 1 195",
		"NULL 2 1 allreduce 1 NULL true 0 0 200",
	}},
}

const collectivesCaseQuery = `SELECT pg_name, step, seq, collective, ranks, group_size, consistent, start_skew_us, last_rank, min_us
	FROM collectives WHERE label = ? ORDER BY step NULLS FIRST, pg_name NULLS LAST, seq`

func collectivesCaseRows(t *testing.T, db *engine.DB, label string) []string {
	t.Helper()
	var got []string
	for _, r := range ctRows(t, db.SQL, collectivesCaseQuery, label) {
		got = append(got, strings.Join(r, " "))
	}
	return got
}

// TestCollectivesConsistentCases: each trace set of collectivesCases alone, then all of them in one database, one
// label each (a rank counts for its own trace set only).
func TestCollectivesConsistentCases(t *testing.T) {
	dir := filepath.Join("..", "testdata", "traces", "collectives_cases")
	for _, c := range collectivesCases {
		t.Run(c.dir, func(t *testing.T) {
			db := ctOpen(t, filepath.Join(dir, c.dir))
			var label string
			if err := db.SQL.QueryRow(`SELECT any_value(label) FROM traces`).Scan(&label); err != nil {
				t.Fatal(err)
			}
			if got := collectivesCaseRows(t, db, label); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("%s\n got %q\nwant %q", c.why, got, c.want)
			}
		})
	}
	db := ctOpen(t)
	for _, c := range collectivesCases {
		if _, err := db.Load(context.Background(), []string{filepath.Join(dir, c.dir)}, engine.LoadOptions{Label: c.dir}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range collectivesCases {
		if got := collectivesCaseRows(t, db, c.dir); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s among the other sets:\n got %q\nwant %q", c.dir, got, c.want)
		}
	}
}

// TestCollectivesReportSection: the report's "Waiting in collectives" section sums and takes the longest of the start
// skews of the consistent collectives of several ranks that each rank started last. missing_on_one_rank: rank 1 last
// in three (30, 20, 50 µs; the all-gather only rank 0 recorded is left out); extra_on_one_rank: rank 1 last in two
// (30, 20), rank 0 in one (0; the two inconsistent rows left out).
func TestCollectivesReportSection(t *testing.T) {
	var sec *queries.ReportSection
	for _, f := range queries.ReportFiles() {
		if f.Name != "45_collectives.sql" {
			continue
		}
		secs, err := queries.ParseReport(f.Name, f.Text)
		if err != nil || len(secs) != 1 {
			t.Fatalf("%s: %v, %d sections", f.Name, err, len(secs))
		}
		sec = &secs[0]
	}
	if sec == nil {
		t.Fatal("no 45_collectives.sql")
	}
	if !strings.Contains(sec.About, "total_wait_us") || !strings.Contains(sec.About, "longest_wait_us") ||
		strings.Join(sec.Y.Cols, ",") != "total_wait_us,longest_wait_us" {
		t.Errorf("section: about %q, y %v", sec.About, sec.Y.Cols)
	}
	db := ctOpen(t)
	for _, d := range []string{"missing_on_one_rank", "extra_on_one_rank"} {
		p := filepath.Join("..", "testdata", "traces", "collectives_cases", d)
		if _, err := db.Load(context.Background(), []string{p}, engine.LoadOptions{Label: d}); err != nil {
			t.Fatal(err)
		}
	}
	ctWantRows(t, db.SQL, sec.SQL, [][]string{
		{"extra_on_one_rank", "0", "0", "0", "1"},
		{"extra_on_one_rank", "1", "50", "30", "2"},
		{"missing_on_one_rank", "1", "100", "50", "3"},
	})
}
