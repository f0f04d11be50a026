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
)

// TestNCCLP2PExchanges: point-to-point operations are matched across ranks by direction and number,
// not by each rank's own count of P2P groups. Ranks 0→1 exchange at 1 ms and 2→3 at 6 ms, each pair
// in step: two exchanges of two ranks with no arrival spread (numbering groups per rank made them
// one four-rank "collective" with rank 2 a 5 ms straggler and ranks 0 and 1 waiting 5 ms for it).
func TestNCCLP2PExchanges(t *testing.T) {
	dir := t.TempDir()
	kineto, plugin := filepath.Join(dir, "kineto"), filepath.Join(dir, "plugin")
	for _, d := range []string{kineto, plugin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for r := 0; r < 4; r++ {
		at := int64(1000) // µs: the pair's launch
		if r >= 2 {
			at = 6000
		}
		op, peer := "Send", r+1
		if r%2 == 1 {
			op, peer = "Recv", r-1
		}
		pid := 100 + r
		trace := map[string]any{
			"distributedInfo": map[string]any{"backend": "nccl", "rank": r, "world_size": 4},
			"traceEvents": []map[string]any{
				{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": pid, "tid": 1, "ts": 0, "dur": 8000},
				{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": 1, "ts": at, "dur": 2, "args": map[string]any{"correlation": 1}},
				{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": r, "tid": 20,
					"ts": at + 20, "dur": 100, "args": map[string]any{"stream": 20, "device": r, "correlation": 1}},
			},
		}
		b, err := json.Marshal(trace)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(kineto, fmt.Sprintf("rank%d.json", r)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		// The plugin's clock runs 500 µs behind Kineto's.
		t0 := at - 500
		var recs []string
		rec := func(name, cat, ph string, ts int64, args string) {
			s := fmt.Sprintf(`{"name":%q,"cat":%q,"ph":%q,"id":0,"pid":%d,"tid":1,"ts":%d`, name, cat, ph, pid, ts)
			if args != "" {
				s += `,"args":` + args
			}
			recs = append(recs, s+"}")
		}
		rec("Group API", "GROUP_API", "b", t0-30, `{"groupApiId":0,"groupDepth":1}`)
		rec("KernelLaunch", "KERNEL_LAUNCH", "b", t0, `{"groupId":0,"Stream":"0x1"}`)
		rec("KernelLaunch", "KERNEL_LAUNCH", "e", t0+2, "")
		rec(op, "P2P_API", "b", t0-30, `{"count":1048576,"datatype":"ncclInt8","GraphCaptured":0,"Stream":"0x1"}`)
		rec(op, "P2P", "b", t0-29, fmt.Sprintf(`{"CommHash":777,"Rank":%d,"Peer":%d,"Count":1048576,"Datatype":"ncclInt8","nChannels":1}`, r, peer))
		rec("KernelCh", "GPU", "b", t0+20, `{"Channel":0,"StartGpuClk":1,"StopGpuClk":2}`)
		rec("KernelCh", "GPU", "e", t0+120, "")
		rec(op, "P2P", "e", t0-28, "")
		rec(op, "P2P_API", "e", t0-27, "")
		rec("Group API", "GROUP_API", "e", t0-26, "")
		text := "[\n" + strings.Join(recs, ",\n") + ",\n{}]\n"
		if err := os.WriteFile(filepath.Join(plugin, fmt.Sprintf("nccl_777_%d.json", r)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, err := engine.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Load(context.Background(), []string{kineto, plugin}, engine.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	ctWantRows(t, db.SQL, `SELECT coll_key, op, ranks, aligned_ranks, first_rank, last_rank, arrival_spread_us
		FROM nccl_rank_skew ORDER BY coll_key`, [][]string{
		{"SendRecv#0", "SendRecv", "2", "2", "0", "0", "0"},
		{"SendRecv#1", "SendRecv", "2", "2", "2", "2", "0"},
	})
	ctWantRows(t, db.SQL, `SELECT kineto_rank, coll_key, arrival_wait_us FROM nccl_kernel_explain ORDER BY kineto_rank`, [][]string{
		{"0", "SendRecv#0", "0"}, {"1", "SendRecv#0", "0"}, {"2", "SendRecv#1", "0"}, {"3", "SendRecv#1", "0"},
	})
}
