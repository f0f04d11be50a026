package queries_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNCCLP2PExchanges: point-to-point operations are matched across ranks by direction and number,
// not by each rank's own count of P2P groups. Ranks 0→1 exchange at 1 ms and 2→3 at 6 ms, each pair
// in step: two exchanges of two ranks with no arrival spread (numbering groups per rank made them
// one four-rank "collective" with rank 2 a 5 ms straggler and ranks 0 and 1 waiting 5 ms for it).
func TestNCCLP2PExchanges(t *testing.T) {
	_, kineto, plugin := ncclDirs(t)
	for r := 0; r < 4; r++ {
		at := int64(1000) // µs: the pair's launch
		if r >= 2 {
			at = 6000
		}
		op, peer := "Send", r+1
		if r%2 == 1 {
			op, peer = "Recv", r-1
		}
		writeNCCLOp(t, kineto, plugin, ncclOp{rank: r, world: 4, at: at, op: op, peer: peer})
	}
	db := ctOpen(t, kineto, plugin)
	ctWantRows(t, db.SQL, `SELECT coll_key, op, ranks, aligned_ranks, first_rank, last_rank, arrival_spread_us
		FROM nccl_rank_skew ORDER BY coll_key`, [][]string{
		{"SendRecv#0", "SendRecv", "2", "2", "0", "0", "0"},
		{"SendRecv#1", "SendRecv", "2", "2", "2", "2", "0"},
	})
	ctWantRows(t, db.SQL, `SELECT kineto_rank, coll_key, arrival_wait_us FROM nccl_kernel_explain ORDER BY kineto_rank`, [][]string{
		{"0", "SendRecv#0", "0"}, {"1", "SendRecv#0", "0"}, {"2", "SendRecv#1", "0"}, {"3", "SendRecv#1", "0"},
	})
}

// ncclOp is one NCCL operation of one rank, written as a Kineto trace (a launch and its kernel, inside
// record_param_comms when groupSize > 0) and a plugin file whose clock runs 500 µs behind Kineto's.
type ncclOp struct {
	rank, world int
	at          int64  // launch, Kineto µs
	op          string // Send, Recv (P2P) or a collective (AllReduce, …)
	peer        int    // P2P
	groupSize   int    // record_param_comms "Group size" (0: no such op)
}

func writeNCCLOp(t *testing.T, kineto, plugin string, o ncclOp) {
	t.Helper()
	pid, at := 100+o.rank, o.at
	p2p := o.op == "Send" || o.op == "Recv"
	kernel := "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"
	if !p2p {
		kernel = "ncclDevKernel_" + o.op + "_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	}
	events := []map[string]any{
		{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": pid, "tid": 1, "ts": 0, "dur": 8000},
		{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": 1, "ts": at, "dur": 2, "args": map[string]any{"correlation": 1}},
		{"ph": "X", "cat": "kernel", "name": kernel, "pid": o.rank, "tid": 20,
			"ts": at + 20, "dur": 100, "args": map[string]any{"stream": 20, "device": o.rank, "correlation": 1}},
	}
	if o.groupSize > 0 {
		events = append(events, map[string]any{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": pid, "tid": 1,
			"ts": at - 2, "dur": 6, "args": map[string]any{"Group size": o.groupSize}})
	}
	b, err := json.Marshal(map[string]any{
		"distributedInfo": map[string]any{"backend": "nccl", "rank": o.rank, "world_size": o.world},
		"traceEvents":     events,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kineto, fmt.Sprintf("rank%d.json", o.rank)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := at - 500
	var recs []string
	rec := func(name, cat, ph string, ts int64, args string) {
		s := fmt.Sprintf(`{"name":%q,"cat":%q,"ph":%q,"id":0,"pid":%d,"tid":1,"ts":%d`, name, cat, ph, pid, ts)
		if args != "" {
			s += `,"args":` + args
		}
		recs = append(recs, s+"}")
	}
	api, cat, opArgs := "P2P_API", "P2P", fmt.Sprintf(`{"CommHash":777,"Rank":%d,"Peer":%d,"Count":1048576,"Datatype":"ncclInt8","nChannels":1}`, o.rank, o.peer)
	if !p2p {
		api, cat = "COLL_API", "COLL"
		opArgs = fmt.Sprintf(`{"SeqNum":0,"CommHash":777,"Rank":%d,"Count":262144,"Datatype":"ncclFloat32","Algorithm":"RING","Protocol":"LL","nChannels":1}`, o.rank)
	}
	rec("Group API", "GROUP_API", "b", t0-30, `{"groupApiId":0,"groupDepth":1}`)
	rec("KernelLaunch", "KERNEL_LAUNCH", "b", t0, `{"groupId":0,"Stream":"0x1"}`)
	rec("KernelLaunch", "KERNEL_LAUNCH", "e", t0+2, "")
	rec(o.op, api, "b", t0-30, `{"count":1048576,"datatype":"ncclInt8","GraphCaptured":0,"Stream":"0x1"}`)
	rec(o.op, cat, "b", t0-29, opArgs)
	rec("KernelCh", "GPU", "b", t0+20, `{"Channel":0,"StartGpuClk":1,"StopGpuClk":2}`)
	rec("KernelCh", "GPU", "e", t0+120, "")
	rec(o.op, cat, "e", t0-28, "")
	rec(o.op, api, "e", t0-27, "")
	rec("Group API", "GROUP_API", "e", t0-26, "")
	text := "[\n" + strings.Join(recs, ",\n") + ",\n{}]\n"
	if err := os.WriteFile(filepath.Join(plugin, fmt.Sprintf("nccl_777_%d.json", o.rank)), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNCCLBusBandwidthCommSize: busbw's n is the communicator's size even when not every rank's plugin
// file is loaded: record_param_comms' Group size when the trace has it, else the highest rank or P2P
// peer named (dlrm_8ranks with the files of ranks 0–3: their all-to-alls name peers up to 7), unknown where
// one rank's file alone names no other.
func TestNCCLBusBandwidthCommSize(t *testing.T) {
	dir, kineto, plugin := ncclDirs(t)
	// Rank 1 of a 4-rank all-reduce, alone: Group size 4 gives 2·3/4 = 1.5.
	writeNCCLOp(t, kineto, plugin, ncclOp{rank: 1, world: 4, at: 1000, op: "AllReduce", groupSize: 4})
	db := ctOpen(t, kineto, plugin)
	ctWantRows(t, db.SQL, `SELECT op, busbw_gbps / algbw_gbps FROM nccl_collectives`, [][]string{{"AllReduce", "1.5"}})

	// Rank 0 alone, no Group size: the communicator's size is unknown (its busbw was 0, AllReduce's factor for
	// n = 1; review r73 #5), and 1 in a job of world size 1; the Kineto collectives view says the same (its size
	// unknown without record_param_comms).
	for _, c := range []struct {
		world int
		want  [][]string
	}{{2, [][]string{{"NULL", "NULL", "NULL", "NULL"}}}, {1, [][]string{{"1", "0", "1", "NULL"}}}} {
		_, kineto, plugin := ncclDirs(t)
		writeNCCLOp(t, kineto, plugin, ncclOp{rank: 0, world: c.world, at: 1000, op: "AllReduce"})
		db := ctOpen(t, kineto, plugin)
		ctWantRows(t, db.SQL, `SELECT n.comm_size, n.busbw_gbps, c.group_size, c.busbw_gbps FROM nccl_collectives n, collectives c`, c.want)
	}

	half := filepath.Join(dir, "half")
	if err := os.Mkdir(half, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../testdata/nccl/dlrm/*_[0-3].json.gz")
	if len(files) != 4 {
		t.Fatalf("dlrm plugin files of ranks 0-3: %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(half, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db2 := ctOpen(t, "../testdata/traces/dlrm_8ranks", half)
	ctWantRows(t, db2.SQL, `SELECT op, min(busbw_gbps / algbw_gbps), max(busbw_gbps / algbw_gbps), count(DISTINCT rank)
		FROM nccl_collectives WHERE algbw_gbps > 0 GROUP BY op ORDER BY op`, [][]string{{"AllReduce", "1.75", "1.75", "4"}, {"Recv", "1", "1", "4"}, {"Send", "1", "1", "4"}})
}

// TestNCCLOneCommunicatorOfTwo: with the files of one communicator loaded, the Kineto kernels of the
// other (AllGather, interleaved with its AllReduces) are no holes in the match: offset +500 µs, all
// three AllReduces matched to their own kernels (they matched 1 of 3, at −3.5 ms, to the wrong kernel).
func TestNCCLOneCommunicatorOfTwo(t *testing.T) {
	for _, files := range [][]string{{"pluginA"}, {"pluginB"}, {"pluginA", "pluginB"}} {
		t.Run(strings.Join(files, "+"), func(t *testing.T) {
			paths := []string{"../testdata/nccl/twocomm/kineto"}
			for _, f := range files {
				paths = append(paths, "../testdata/nccl/twocomm/"+f)
			}
			db := ctOpen(t, paths...)
			var want [][]string
			for rank := 0; rank < 2; rank++ {
				for _, f := range files {
					want = append(want, []string{fmt.Sprint(rank), map[string]string{"pluginA": "111", "pluginB": "222"}[f], "500000", "3", "3", "0"})
				}
			}
			ctWantRows(t, db.SQL, `SELECT rank, comm_hash, offset_ns, matched, units, residual_max_ns
				FROM nccl_clock_alignment ORDER BY rank, comm_hash`, want)
			// Each operation's kernel: its own type, in order (the n-th of its type on its rank).
			ctWantRows(t, db.SQL, `SELECT count(*) FILTER (WHERE name IS NULL OR NOT starts_with(name, 'ncclDevKernel_' || op)
				   OR coll_key <> op || '#' || nth)
				FROM (SELECT c.op, c.coll_key, k.name, row_number() OVER (PARTITION BY c.rank, c.op ORDER BY k.ts) - 1 AS nth
				      FROM nccl_collectives c LEFT JOIN events k ON k.trace_id = c.kineto_trace_id AND k.ev_idx = c.kineto_ev_idx)`,
				[][]string{{"0"}})
		})
	}
}

// ncclDirs makes a temporary directory with kineto/ and plugin/ in it.
func ncclDirs(t *testing.T) (dir, kineto, plugin string) {
	t.Helper()
	dir = t.TempDir()
	kineto, plugin = filepath.Join(dir, "kineto"), filepath.Join(dir, "plugin")
	for _, d := range []string{kineto, plugin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, kineto, plugin
}
