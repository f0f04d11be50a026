package queries_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
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
func TestCollectives(t *testing.T) {
	dir := t.TempDir()
	p0 := writeCollectiveTrace(t, dir, collectiveRank{0, []collectiveOp{
		{"allreduce", "0", "Float", 1 << 20, 1 << 20, 2, 100, 1000},
		{"_allgather_base", "0", "BFloat16", 1000, 2000, 2, 2000, 10},
		{"broadcast", "1", "Float", 10, 10, 2, 3000, 5},
		{"", "", "", 0, 0, 0, 4000, 7},
	}})
	p1 := writeCollectiveTrace(t, dir, collectiveRank{1, []collectiveOp{
		{"allreduce", "0", "Float", 1 << 20, 1 << 20, 2, 600, 500},
		{"_allgather_base", "0", "BFloat16", 1000, 2000, 2, 2000, 10},
		{"broadcast", "1", "Float", 20, 20, 2, 3000, 5},
		{"", "", "", 0, 0, 0, 4002, 5},
	}})
	db := ctOpen(t, p0, p1)
	ctWantRows(t, db.SQL, `SELECT rank, collective, pg_name, seq, msg_bytes, round(busbw_gbps, 6) FROM comm_kernels WHERE rank = 0 ORDER BY ts`, [][]string{
		{"0", "allreduce", "0", "1", "4194304", "4.194304"},
		{"0", "_allgather_base", "0", "2", "4000", "0.2"},
		{"0", "broadcast", "1", "1", "40", "0.008"},
		{"0", "allgather", "NULL", "1", "NULL", "NULL"},
	})
	ctWantRows(t, db.SQL, `SELECT pg_name, seq, collective, ranks, group_size, consistent, msg_bytes, start_skew_us, end_skew_us, last_rank,
		min_us, max_us, round(algbw_gbps, 6), round(busbw_gbps, 6) FROM collectives`, [][]string{
		{"0", "1", "allreduce", "2", "2", "true", "4194304", "500", "0", "1", "500", "1000", "8.388608", "8.388608"},
		{"0", "2", "_allgather_base", "2", "2", "true", "4000", "0", "0", "0", "10", "10", "0.4", "0.2"},
		{"1", "1", "broadcast", "2", "2", "false", "80", "0", "0", "0", "5", "5", "0.016", "0.016"},
		{"NULL", "1", "allgather", "2", "2", "true", "NULL", "2", "0", "1", "5", "7", "NULL", "NULL"},
	})
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
