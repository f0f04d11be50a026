package queries_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"testing"

	"tracesql/engine"
)

// ncclDLRM loads the 8 Kineto ranks of dlrm_8ranks with the plugin files generated for them
// (engine/nccl_gen_test.go: offset_r = first NCCL launch − 2 s − r·1.000003 ms, two warm-up
// all-reduces before the window, KernelLaunch jitter {0, 0, +2, 0, −1, 0, +40, 0} µs).
func ncclDLRM(t *testing.T) *engine.DB {
	t.Helper()
	db, err := engine.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Load(context.Background(), []string{"../testdata/traces/dlrm_8ranks", "../testdata/nccl/dlrm"}, engine.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	return db
}

// kinetoNCCL is one NCCL kernel of a Kineto rank, read from the plain events views (not the nccl views).
type kinetoNCCL struct {
	op     string
	evIdx  int64
	launch int64
}

func ncclKineto(t *testing.T, db *sql.DB) map[int][]kinetoNCCL {
	rows, err := db.Query(`SELECT rank, regexp_extract(name, '^ncclKernel_([A-Za-z]+)', 1), ev_idx, runtime_ts
		FROM kernel_launches WHERE name LIKE 'ncclKernel%' ORDER BY rank, ts`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int][]kinetoNCCL{}
	for rows.Next() {
		var r int
		var k kinetoNCCL
		if err := rows.Scan(&r, &k.op, &k.evIdx, &k.launch); err != nil {
			t.Fatal(err)
		}
		out[r] = append(out[r], k)
	}
	return out
}

func TestNCCLAlignment(t *testing.T) {
	db := ncclDLRM(t)
	kin := ncclKineto(t, db.SQL)
	rows, err := db.SQL.Query(`SELECT rank, kineto_rank, anchor, offset_ns, source, matched, units, kineto_kernels,
		residual_p50_ns, residual_max_ns, shift, alternatives FROM nccl_clock_alignment ORDER BY rank`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var rank, krank int
		var anchor, source string
		var off, matched, units, kk, p50, mx, shift, alt int64
		if err := rows.Scan(&rank, &krank, &anchor, &off, &source, &matched, &units, &kk, &p50, &mx, &shift, &alt); err != nil {
			t.Fatal(err)
		}
		want := kin[rank][0].launch - 2_000_000_000 - int64(rank)*1_000_003
		if off != want {
			t.Errorf("rank %d: offset %d, injected %d (diff %d ns)", rank, off, want, off-want)
		}
		if krank != rank || anchor != "launch" || source != "estimated" || matched != 8 || units != 10 || kk != 8 ||
			p50 != 0 || mx != 40000 || shift != 2 || alt != 0 {
			t.Errorf("rank %d: kineto_rank %d anchor %s source %s matched %d units %d kernels %d residual p50 %d max %d shift %d alternatives %d",
				rank, krank, anchor, source, matched, units, kk, p50, mx, shift, alt)
		}
		n++
	}
	rows.Close()
	if n != 8 {
		t.Fatalf("%d alignment rows, want 8", n)
	}

	// Each plugin operation points at the Kineto kernel of the same position and type.
	type opKey struct {
		rank  int
		evIdx int64
		op    string
	}
	ops := map[opKey]int{}
	crow, err := db.SQL.Query(`SELECT rank, kineto_ev_idx, op FROM nccl_collectives WHERE clock = 'kineto' AND kineto_ev_idx IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for crow.Next() {
		var k opKey
		if err := crow.Scan(&k.rank, &k.evIdx, &k.op); err != nil {
			t.Fatal(err)
		}
		if k.op == "Send" || k.op == "Recv" {
			k.op = "SendRecv"
		}
		ops[k]++
	}
	crow.Close()
	matchedOps := 0
	for rank, ks := range kin {
		for i, k := range ks {
			want := 1
			if k.op == "SendRecv" {
				want = 2
			}
			if got := ops[opKey{rank, k.evIdx, k.op}]; got != want {
				t.Errorf("rank %d kernel %d (%s, ev %d): %d matching operations, want %d", rank, i, k.op, k.evIdx, got, want)
			}
			matchedOps += want
		}
	}
	if len(ops) != 64 || matchedOps != 8*(5*2+3) {
		t.Errorf("%d kernels with operations, %d operations", len(ops), matchedOps)
	}
	// Bandwidths: AllReduce of 262144 floats, bus factor 2(n−1)/n = 1.75 for the 8 ranks.
	var algbw, busbw, kernelUS float64
	var bytes int64
	if err := db.SQL.QueryRow(`SELECT bytes, algbw_gbps, busbw_gbps, kineto_kernel_us FROM nccl_collectives
		WHERE rank = 0 AND coll_key = 'AllReduce#2'`).Scan(&bytes, &algbw, &busbw, &kernelUS); err != nil {
		t.Fatal(err)
	}
	if bytes != 1048576 || math.Abs(algbw-float64(bytes)/(kernelUS*1e3)) > 1e-9 || math.Abs(busbw-1.75*algbw) > 1e-9 {
		t.Errorf("AllReduce#2: bytes %d algbw %g busbw %g kernel %g µs", bytes, algbw, busbw, kernelUS)
	}

	// An override replaces the estimate for its rank only.
	if err := db.SetNCCLClockOffset(context.Background(), "trace", "0=123"); err != nil {
		t.Fatal(err)
	}
	var off0, est0 int64
	var src0, src1 string
	if err := db.SQL.QueryRow(`SELECT offset_ns, estimated_ns, source FROM nccl_clock_alignment WHERE rank = 0`).Scan(&off0, &est0, &src0); err != nil {
		t.Fatal(err)
	}
	if err := db.SQL.QueryRow(`SELECT source FROM nccl_clock_alignment WHERE rank = 1`).Scan(&src1); err != nil {
		t.Fatal(err)
	}
	if off0 != 123 || src0 != "override" || est0 != kin[0][0].launch-2_000_000_000 || src1 != "estimated" {
		t.Errorf("override: rank 0 offset %d (%s, estimate %d), rank 1 %s", off0, src0, est0, src1)
	}
	// Two rows that disagree for one rank and communicator, or a row without an offset, are errors naming
	// them, in both views that read the overrides (one of the two had silently won; a NULL offset hid the
	// estimate's replacement and read 'estimated'). An exact duplicate is harmless.
	for _, c := range []struct{ rows, want string }{
		{`('trace', 1, NULL, 5), ('trace', 1, NULL, 7)`, "rows for label trace, rank 1, comm_hash NULL (every communicator) disagree (5 and 7)"},
		{`('trace', NULL, NULL, NULL)`, "the row for label trace, rank NULL (every rank), comm_hash NULL (every communicator) has no offset_ns"},
		{`('trace', 1, NULL, 5), ('trace', 1, NULL, 5)`, ""},
	} {
		if _, err := db.SQL.Exec(`DELETE FROM nccl_clock_override; INSERT INTO nccl_clock_override VALUES ` + c.rows); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`SELECT count(*) FROM nccl_clock_alignment`, `SELECT count(*) FROM nccl_rank_skew`} {
			_, err := db.SQL.Exec(q)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("%s, %s: %v, want %q", c.rows, q, err, c.want)
			}
		}
	}
}

// TestNCCLRankSkew: the straggler of each collective is the rank whose Kineto launch came last
// (the generator puts every rank's API call 30 µs before its launch).
func TestNCCLRankSkew(t *testing.T) {
	db := ncclDLRM(t)
	kin := ncclKineto(t, db.SQL)
	type skew struct {
		first, last, ranks, aligned int
		spread                      float64
	}
	got := map[string]skew{}
	rows, err := db.SQL.Query(`SELECT coll_key, first_rank, last_rank, ranks, aligned_ranks, arrival_spread_us FROM nccl_rank_skew`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		var s skew
		if err := rows.Scan(&k, &s.first, &s.last, &s.ranks, &s.aligned, &s.spread); err != nil {
			t.Fatal(err)
		}
		got[k] = s
	}
	rows.Close()
	if len(got) != 10 {
		t.Errorf("%d collectives in nccl_rank_skew, want 10 (8 in the window, 2 warm-ups)", len(got))
	}
	nA2A, nAR := 0, 2 // two warm-up all-reduces precede the window
	for i := range kin[0] {
		key := ""
		if kin[0][i].op == "SendRecv" {
			key = fmt.Sprintf("SendRecv#%d", nA2A)
			nA2A++
		} else {
			key = fmt.Sprintf("AllReduce#%d", nAR)
			nAR++
		}
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		firstRank, lastRank := -1, -1
		for r := 0; r < 8; r++ {
			lo, hi = min(lo, kin[r][i].launch), max(hi, kin[r][i].launch)
		}
		for r := 7; r >= 0; r-- { // ties (ranks launching in the same µs) go to the lowest rank
			if kin[r][i].launch == lo {
				firstRank = r
			}
			if kin[r][i].launch == hi {
				lastRank = r
			}
		}
		s, ok := got[key]
		if !ok {
			t.Errorf("%s missing", key)
			continue
		}
		if s.first != firstRank || s.last != lastRank || s.ranks != 8 || s.aligned != 8 ||
			math.Abs(s.spread-float64(hi-lo)/1e3) > 1e-9 {
			t.Errorf("%s: %+v; want first rank %d, last %d, spread %g µs", key, s, firstRank, lastRank, float64(hi-lo)/1e3)
		}
	}
}

// TestNCCLCriticalPathHook: on rank 0 the critical path crosses four all-to-alls through their nccl:all_to_all
// CPU ops; nccl_kernel_explain says each waited for the last rank.
func TestNCCLCriticalPathHook(t *testing.T) {
	db := ncclDLRM(t)
	rows, err := db.SQL.Query(`SELECT n.coll_key, n.dominant, n.arrival_wait_us FROM critical_path(rank := 0) cp
		JOIN nccl_kernel_explain n ON n.label = cp.label AND n.kineto_rank = cp.rank AND cp.ev_idx IN (n.kineto_ev_idx, n.kineto_op_ev_idx)
		ORDER BY cp.seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var key, dom string
		var wait float64
		if err := rows.Scan(&key, &dom, &wait); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %.0f", key, dom, wait))
	}
	want := []string{"SendRecv#0 peer_arrival 2136", "SendRecv#1 peer_arrival 1024", "SendRecv#2 peer_arrival 167", "SendRecv#3 peer_arrival 175"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("critical path ⋈ nccl_kernel_explain:\n got %q\nwant %q", got, want)
	}
}

// TestNCCLPluginOnly: a plugin file without its Kineto trace keeps the plugin clock; the breakdown
// splits the proxy step states of the hand-written older-plugin file.
func TestNCCLPluginOnly(t *testing.T) {
	db, err := engine.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Load(context.Background(), []string{"../testdata/nccl/quirks/nccl_4242_0.json"}, engine.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	var clock, algo, dt string
	var bytes, apiTS, k0 int64
	var src sql.NullString
	if err := db.SQL.QueryRow(`SELECT c.clock, c.algorithm, c.datatype, c.bytes, c.api_ts, c.kernel_start_ts, a.source
		FROM nccl_collectives c JOIN nccl_clock_alignment a USING (trace_id)`).Scan(&clock, &algo, &dt, &bytes, &apiTS, &k0, &src); err != nil {
		t.Fatal(err)
	}
	// The API begins were written as ts 0 (unknown), so the arrival falls back to the COLL begin.
	if clock != "plugin" || algo != "RING" || dt != "ncclFloat32" || bytes != 4194304 || apiTS != 105250 || k0 != 120500 || src.Valid {
		t.Errorf("collective: clock %s algo %s dt %s bytes %d api %d kernel %d source %v", clock, algo, dt, bytes, apiTS, k0, src)
	}
	var ch, steps int64
	var sgw, spw, sw, net, kch float64
	var dom string
	if err := db.SQL.QueryRow(`SELECT channel, steps, send_gpu_wait_us, send_peer_wait_us, send_wait_us, net_us, kernel_ch_us, dominant
		FROM nccl_collective_breakdown`).Scan(&ch, &steps, &sgw, &spw, &sw, &net, &kch, &dom); err != nil {
		t.Fatal(err)
	}
	if ch != 0 || steps != 1 || sgw != 3.5 || spw != 5 || sw != 11 || net != 9 || kch != 30.5 || dom != "send_wait" {
		t.Errorf("breakdown: ch %d steps %d sgw %g spw %g sw %g net %g kch %g dominant %s", ch, steps, sgw, spw, sw, net, kch, dom)
	}
	var unmatched int64
	if err := db.SQL.QueryRow(`SELECT count(*) FROM nccl_unmatched`).Scan(&unmatched); err != nil || unmatched != 2 {
		t.Errorf("nccl_unmatched: %d %v", unmatched, err)
	}
}

// TestNCCLWarmupShift (testdata/nccl/warmup: 2 ranks, offsets −1 s and −2 s, each plugin file with one warm-up
// AllReduce before Kineto's window of 3): rank 1's warm-up is far from the rest, and the mean deviation rejects
// pairing it with the first kernel where the median deviation (0 both ways) did not. Rank 0's warm-up is as
// periodic as its launches, so both pairings fit exactly; an override then picks the one it agrees with, and the
// operations are matched to kernels by it (the override moved only the times before). Without proxy steps no
// step state dominates a kernel.
func TestNCCLWarmupShift(t *testing.T) {
	db, err := engine.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Load(context.Background(), []string{"../testdata/nccl/warmup/kineto", "../testdata/nccl/warmup/plugin"}, engine.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	const q = `SELECT string_agg(rank || ':' || offset_ns || ':' || shift || ':' || alternatives, ' ' ORDER BY rank) FROM nccl_clock_alignment`
	const matches = `SELECT string_agg(rank || ':' || coll_key || '=' || coalesce(kineto_ev_idx::VARCHAR, '-'), ' ' ORDER BY rank, coll_key) FROM nccl_collectives`
	for _, tc := range []struct{ name, override, alignment, matched string }{
		{"estimated", "", "0:-990000000:0:1 1:-2000000000:1:1",
			"0:AllReduce#0=5 0:AllReduce#1=7 0:AllReduce#2=9 0:AllReduce#3=- 1:AllReduce#0=- 1:AllReduce#1=5 1:AllReduce#2=7 1:AllReduce#3=9"},
		{"rank 0 overridden", "0=-1000000000", "0:-1000000000:1:1 1:-2000000000:1:1",
			"0:AllReduce#0=- 0:AllReduce#1=5 0:AllReduce#2=7 0:AllReduce#3=9 1:AllReduce#0=- 1:AllReduce#1=5 1:AllReduce#2=7 1:AllReduce#3=9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.override != "" {
				if err := db.SetNCCLClockOffset(context.Background(), "trace", tc.override); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range []struct{ q, want string }{{q, tc.alignment}, {matches, tc.matched}} {
				var got string
				if err := db.SQL.QueryRow(c.q).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != c.want {
					t.Errorf("%s:\n got %s\nwant %s", c.q, got, c.want)
				}
			}
		})
	}
	// The plugin files have no proxy steps (as collectives over NVLink): no step state can dominate a kernel (the
	// first of the six, send_gpu_wait, was named over six zeros).
	var named, explained int
	if err := db.SQL.QueryRow(`SELECT count(*) FILTER (WHERE dominant <> 'peer_arrival'), count(*) FROM nccl_kernel_explain`).Scan(&named, &explained); err != nil {
		t.Fatal(err)
	}
	if named != 0 || explained == 0 {
		t.Errorf("nccl_kernel_explain: %d of %d kernels dominated by a step state without proxy data", named, explained)
	}
}
