package engine

// The generator of testdata/nccl/dlrm: NCCL profiler-plugin files (print_event.cc's exact format) for
// the 8 ranks of testdata/traces/dlrm_8ranks, whose NCCL kernels give the sequence. Each rank gets a
// known clock offset, two warm-up all-reduces before the Kineto window, and launch jitter (one 40 µs
// outlier) that a median must see through. `go test -tags duckdb_arrow ./engine -run TestNCCLFixture
// -update-nccl` rewrites the files; otherwise the test checks they are what the generator makes.

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

var updateNCCL = flag.Bool("update-nccl", false, "rewrite testdata/nccl/dlrm from the generator")

const (
	ncclGenComm = "9316512174413312871" // > 2^63: comm hashes are uint64
	ncclGenDir  = "../testdata/nccl/dlrm"
)

// ncclGenOffset is the injected Kineto − plugin clock offset of a rank, ns.
func ncclGenOffset(rank int, firstLaunch int64) int64 {
	return firstLaunch - 2_000_000_000 - int64(rank)*1_000_003
}

// ncclGenJitter is added to the plugin's KernelLaunch begin of the i-th unit in the Kineto window.
var ncclGenJitter = []int64{0, 0, 2000, 0, -1000, 0, 40000, 0}

// ncclGenKernel is one NCCL kernel of a rank's Kineto trace.
type ncclGenKernel struct {
	op             string // AllReduce or SendRecv
	launch, k0, k1 int64  // runtime call start, kernel start and end (Kineto ns)
}

func ncclGenInputs(t testing.TB) (map[int][]ncclGenKernel, map[int]int64) {
	db := openTestDB(t)
	mustLoad(t, db, "../testdata/traces/dlrm_8ranks")
	rows, err := db.SQL.Query(`SELECT rank, regexp_extract(name, '^ncclKernel_([A-Za-z]+)', 1), runtime_ts, ts, ts + dur
		FROM kernel_launches WHERE name LIKE 'ncclKernel%' ORDER BY rank, ts`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ks := map[int][]ncclGenKernel{}
	for rows.Next() {
		var r int
		var k ncclGenKernel
		if err := rows.Scan(&r, &k.op, &k.launch, &k.k0, &k.k1); err != nil {
			t.Fatal(err)
		}
		ks[r] = append(ks[r], k)
	}
	pids := map[int]int64{}
	prow, err := db.SQL.Query(`SELECT rank, min(pid) FROM cpu_ops GROUP BY rank`)
	if err != nil {
		t.Fatal(err)
	}
	defer prow.Close()
	for prow.Next() {
		var r int
		var p int64
		if err := prow.Scan(&r, &p); err != nil {
			t.Fatal(err)
		}
		pids[r] = p
	}
	return ks, pids
}

// ncclGen writes one rank's plugin file the way print_event.cc prints it.
type ncclGen struct {
	b                                                     bytes.Buffer
	pid                                                   int64
	groupAPI, collAPI, p2pAPI, launch, coll, p2p, proxyOp int
	proxyStep, proxyCtrl                                  int
}

func usText(ns int64) string { return fmt.Sprintf("%d.%03d000", ns/1000, ns%1000) }

func (g *ncclGen) ev(name, cat, ph string, id int, ts int64, args string) {
	fmt.Fprintf(&g.b, `{"name": "%s", "cat": "%s", "ph": "%s", "id": %d, "pid": %d, "tid": 1, "ts": %s`, name, cat, ph, id, g.pid, usText(ts))
	if args != "" {
		fmt.Fprintf(&g.b, `, "args": {%s}`, args)
	}
	g.b.WriteString("},\n")
}

// channel prints one KernelCh with a send and a receive proxy operation of one step each.
func (g *ncclGen) channel(ch, peerSend, peerRecv int, k0, k1, trans int64) {
	g.ev("KernelCh", "GPU", "b", 0, k0+1000, fmt.Sprintf(`"Channel": %d, "StartGpuClk": %d, "StopGpuClk": %d`, ch, 5_000_000_000+k0, 5_000_000_000+k1))
	pargs := func(peer int) string {
		return fmt.Sprintf(`"Channel": %d, "Peer": %d, "Steps": 1, "ChunkSize": 131072, "transSize": %d`, ch, peer, trans)
	}
	g.ev("ScheduleSend", "PROXY", "b", g.proxyOp, k0-20000, pargs(peerSend))
	g.ev("ScheduleSend", "PROXY", "e", g.proxyOp, k0, "")
	g.ev("ProgressSend", "PROXY", "b", g.proxyOp, k0, pargs(peerSend))
	step := `"Step": 0`
	g.ev("SendGpuWait", "NET", "b", g.proxyStep, k0+1000, step)
	g.ev("SendGpuWait", "NET", "e", g.proxyStep, k0+3000, "")
	g.ev("SendPeerWait", "NET", "b", g.proxyStep, k0+3000, step)
	g.ev("SendPeerWait", "NET", "e", g.proxyStep, k1-8000, "")
	g.ev("SendWait", "NET", "b", g.proxyStep, k1-8000, step)
	g.ev("SendWait", "NET", "e", g.proxyStep, k1-2000, "")
	g.proxyStep++
	g.ev("ProgressSend", "PROXY", "e", g.proxyOp, k1-1000, "")
	g.proxyOp++
	g.ev("ScheduleRecv", "PROXY", "b", g.proxyOp, k0-20000, pargs(peerRecv))
	g.ev("ScheduleRecv", "PROXY", "e", g.proxyOp, k0, "")
	g.ev("ProgressRecv", "PROXY", "b", g.proxyOp, k0, pargs(peerRecv))
	g.ev("RecvWait", "NET", "b", g.proxyStep, k0+2000, step)
	g.ev("RecvWait", "NET", "e", g.proxyStep, k1-6000, "")
	g.ev("RecvFlushWait", "NET", "b", g.proxyStep, k1-6000, step)
	g.ev("RecvFlushWait", "NET", "e", g.proxyStep, k1-5000, "")
	g.ev("RecvGpuWait", "NET", "b", g.proxyStep, k1-5000, step)
	g.ev("RecvGpuWait", "NET", "e", g.proxyStep, k1-2000, "")
	g.proxyStep++
	g.ev("ProgressRecv", "PROXY", "e", g.proxyOp, k1-1000, "")
	g.proxyOp++
	g.ev("KernelCh", "GPU", "e", 0, k1, "")
}

// unit prints one Group API call launching one kernel: an AllReduce (2 channels) or a SendRecv group
// (a Send to the next rank and a Recv from the previous one, 1 channel each). Times are plugin ns.
func (g *ncclGen) unit(rank int, op string, seq int, api, launch, k0, k1 int64) {
	stream := `"Stream": "0x5581a3c0e2b0"`
	g.ev("Group API", "GROUP_API", "b", g.groupAPI, api, fmt.Sprintf(`"groupApiId": %d, "groupDepth": 1`, g.groupAPI))
	g.ev("KernelLaunch", "KERNEL_LAUNCH", "b", g.launch, launch, fmt.Sprintf(`"groupId": %d, %s`, g.groupAPI, stream))
	g.ev("KernelLaunch", "KERNEL_LAUNCH", "e", g.launch, launch+4000, "")
	g.launch++
	next, prev := (rank+1)%8, (rank+7)%8
	if op == "AllReduce" {
		g.ev("AllReduce", "COLL_API", "b", g.collAPI, api+1000, `"count": 262144, "datatype": "ncclFloat32", "root": 0, "GraphCaptured": 0, `+stream)
		g.ev("AllReduce", "COLL", "b", g.coll, api+3000, fmt.Sprintf(`"SeqNum": %d, "CommHash": %s, "Rank": %d, "Count": 262144, "Datatype": "ncclFloat32", "Algorithm": "RING", "Protocol": "LL", "nChannels": 2`, seq, ncclGenComm, rank))
		for ch := 0; ch < 2; ch++ {
			g.channel(ch, next, prev, k0, k1, 524288)
		}
		g.ev("AllReduce", "COLL", "e", g.coll, api+8000, "")
		g.coll++
		g.ev("AllReduce", "COLL_API", "e", g.collAPI, api+10000, "")
		g.collAPI++
	} else {
		for i, fn := range []string{"Send", "Recv"} {
			peer := next
			if fn == "Recv" {
				peer = prev
			}
			t := api + int64(i)*2000
			g.ev(fn, "P2P_API", "b", g.p2pAPI, t, `"count": 3072, "datatype": "ncclInt8", "GraphCaptured": 0, `+stream)
			g.ev(fn, "P2P", "b", g.p2p, t+500, fmt.Sprintf(`"CommHash": %s, "Rank": %d, "Peer": %d, "Count": 3072, "Datatype": "ncclInt8", "nChannels": 1`, ncclGenComm, rank, peer))
			g.channel(0, next, prev, k0, k1, 3072)
			g.ev(fn, "P2P", "e", g.p2p, t+1500, "")
			g.p2p++
			g.ev(fn, "P2P_API", "e", g.p2pAPI, t+1800, "")
			g.p2pAPI++
		}
	}
	g.ev("Group API", "GROUP_API", "e", g.groupAPI, api+12000, "")
	g.groupAPI++
}

// ncclGenFiles renders every rank's file (uncompressed JSON), keyed by file name.
func ncclGenFiles(ks map[int][]ncclGenKernel, pids map[int]int64) map[string][]byte {
	out := map[string][]byte{}
	for rank := 0; rank < 8; rank++ {
		kern := ks[rank]
		off := ncclGenOffset(rank, kern[0].launch)
		g := &ncclGen{pid: pids[rank]}
		g.b.WriteString("[\n")
		// Two warm-up all-reduces long before the profiled window (plugin time 1.0 s and 1.5 s).
		for i, at := range []int64{1_000_000_000, 1_500_000_000} {
			g.unit(rank, "AllReduce", i, at, at+30000, at+40000, at+240000)
		}
		seq := 2
		for i, k := range kern {
			s := -1
			if k.op == "AllReduce" {
				s, seq = seq, seq+1
			}
			api := k.launch - 30000 - off
			g.unit(rank, k.op, s, api, k.launch-off+ncclGenJitter[i], k.k0-off, k.k1-off)
		}
		// ProxyCtrl states: cat PROXY too, with their own id counter (ids collide with ProxyOp's).
		for i, st := range []string{"Idle", "Sleep", "Append"} {
			t := int64(900_000_000 + i*1000)
			args := ""
			if st == "Append" {
				args = `"appended": 4`
			}
			g.ev(st, "PROXY", "b", g.proxyCtrl, t, args)
			g.ev(st, "PROXY", "e", g.proxyCtrl, t+500, "")
			g.proxyCtrl++
		}
		g.b.WriteString("{}]\n")
		out[fmt.Sprintf("nccl_%s_%d.json.gz", ncclGenComm, rank)] = g.b.Bytes()
	}
	return out
}

func gunzipFile(t testing.TB, path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNCCLFixture(t *testing.T) {
	ks, pids := ncclGenInputs(t)
	files := ncclGenFiles(ks, pids)
	if *updateNCCL {
		if err := os.MkdirAll(ncclGenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			var z bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
			zw.Write(b)
			zw.Close()
			if err := os.WriteFile(filepath.Join(ncclGenDir, name), z.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, want := range files {
		got := gunzipFile(t, filepath.Join(ncclGenDir, name))
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the generator's output (run with -update-nccl)", name)
		}
	}
}
