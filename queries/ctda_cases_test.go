package queries_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ctdaCase opens a hand-built trace of testdata/traces/ctda_cases (a review's repros of the method's
// corner cases: a 1 ms step, times in µs).
func ctdaCase(t *testing.T, name string) *sql.DB {
	t.Helper()
	return ctOpen(t, "../testdata/traces/ctda_cases/"+name+".json").SQL
}

// ctdaFacts: what one window's ctda analysis says, compared across traces that must agree.
type ctdaFacts struct {
	cpcr, busy float64
	hotspots   string // "name:µs, …", top 4
}

func ctdaFactsOf(t *testing.T, db *sql.DB, args string) ctdaFacts {
	t.Helper()
	var f ctdaFacts
	q := fmt.Sprintf(`SELECT max(cpcr), max(busy_bound) FROM critical_path_summary(algorithm := 'ctda'%s)`, args)
	if err := db.QueryRow(q).Scan(&f.cpcr, &f.busy); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	q = fmt.Sprintf(`SELECT string_agg(name || ':' || duration_us, ', ' ORDER BY duration_us DESC, name) FROM hotspots(top := 4%s)`, args)
	if err := db.QueryRow(q).Scan(&f.hotspots); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return f
}

// TestCTDASideThreadsLeaveThePathAlone: threads of the training process that neither launch GPU work nor hold
// the step back change nothing. The baseline step (no_side_thread): DataLoader copy 80 µs, a 300 µs aten::linear
// launching k1, the loss launching k2, a device sync, the optimizer; its busy work covers 685 µs of the 1 ms step
// and the path all of it. A logger thread's 2 µs Python frame inside the linear (logger_thread) had taken the
// linear off the path (CPCR 0.39), a pin-memory thread's loop frame with a 20 µs copy (pin_memory_frame) too
// (0.41); a side thread that copies the next batch after the optimizer (side_thread_ends_last) was the whole
// path (CPCR 0.095): the step's path there is the DataLoader, aten::mm, its 500 µs kernel and the optimizer.
func TestCTDASideThreadsLeaveThePathAlone(t *testing.T) {
	base := ctdaFactsOf(t, ctdaCase(t, "no_side_thread"), "")
	if math.Abs(base.cpcr-0.685) > 1e-9 || math.Abs(base.busy-0.685) > 1e-9 ||
		base.hotspots != "aten::linear:295.0, Optimizer.step#SGD.step:100.0, aten::mse_loss:95.0, aten::copy_:80.0" {
		t.Fatalf("baseline: %+v", base)
	}
	for _, name := range []string{"logger_thread", "pin_memory_frame"} {
		if got := ctdaFactsOf(t, ctdaCase(t, name), ""); got != base {
			t.Errorf("%s: %+v, want the baseline's %+v", name, got, base)
		}
	}
	db := ctdaCase(t, "side_thread_ends_last")
	got := ctdaFactsOf(t, db, "")
	var hta float64
	if err := db.QueryRow(`SELECT max(cpcr) FROM critical_path_summary()`).Scan(&hta); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.hotspots, "k:500.0, Optimizer.step#SGD.step:200.0") || got.cpcr < hta {
		t.Errorf("side_thread_ends_last: %+v (hta's CPCR %.3f); want the kernel and the optimizer on top, CPCR ≥ hta's", got, hta)
	}
}

// TestCTDAPathStartsOnTheStepsThread: CPU work of another thread that ends after the step's own thread is done
// was waited for by nothing in the step, so it does not start the path. A C++ thread's
// ProcessGroupNCCL::allreduce launches ncclKernel (320–800 µs) that the main thread's device sync waits for before
// aten::after (810–950): the path is the op up to its launch, the launch, the kernel, the sync's return and
// aten::after, whether the op ends at 940 (comm_thread_ends_in_step) or 10 µs after the main thread's work, at 960
// (comm_thread_outlives_step: the op alone was the path, CPCR 0.66). Over the whole trace (an empty annotation) a DataLoader worker
// process's aten::cat running to 980 µs (worker_process_outlives_step) was the whole trace's path; the training
// process's path is aten::mm, its 660 µs kernel and aten::after, as with the step's annotation.
func TestCTDAPathStartsOnTheStepsThread(t *testing.T) {
	const comm = "ncclKernel:480.0, aten::after:140.0, cudaLaunchKernel:10.0, sync:5.0"
	const worker = "k_mm:660.0, aten::after:190.0, aten::mm:10.0, cudaLaunchKernel:10.0"
	for _, c := range []struct {
		trace, args string
		cpcr        float64
		hotspots    string
	}{
		{"comm_thread_ends_in_step", "", 0.635, comm},
		{"comm_thread_outlives_step", "", 0.635, comm},
		{"comm_thread_outlives_step", ", annotation := ''", 0.635, comm},
		{"worker_process_outlives_step", "", 0.875, worker},
		{"worker_process_outlives_step", ", annotation := ''", 0.875, worker},
	} {
		got := ctdaFactsOf(t, ctdaCase(t, c.trace), c.args)
		if math.Abs(got.cpcr-c.cpcr) > 1e-9 || got.hotspots != c.hotspots {
			t.Errorf("%s%s: CPCR %.4f, hotspots %s; want %.3f, %s", c.trace, c.args, got.cpcr, got.hotspots, c.cpcr, c.hotspots)
		}
	}
}

// TestCTDARowNames: what names a path row. kernel_from_previous_step: step 2 syncs on k_prev, launched by
// aten::prev at the end of step 1; over both steps, the first row was named ProfilerStep#1 (each instance spans
// half the window, and only an event spanning all of it was left out), and over the whole trace (an empty annotation) ProfilerStep#1's
// idle 880 µs topped the hotspots. zero_duration_kernel_first: aten::a launches a 0 µs k_zero, then the 200 µs
// k1; the GPU node's row was named k_zero, and its launcher row, the time aten::a's launches held the stream,
// aten::item (the launcher node's name, an op that ran after it).
func TestCTDARowNames(t *testing.T) {
	db := ctdaCase(t, "kernel_from_previous_step")
	ctWantRowsConn(t, db, `SELECT string_agg(name, ',' ORDER BY seq) FROM critical_path(algorithm := 'ctda', instance := 0, instance_end := 1) WHERE name IS NOT NULL`,
		[][]string{{"aten::prev,k_prev,aten::after"}})
	ctWantRowsConn(t, db, `SELECT string_agg(name, ',' ORDER BY duration_us DESC) FROM hotspots(annotation := '')`,
		[][]string{{"aten::after,k_prev,aten::prev,cudaLaunchKernel,aten::item"}})
	db = ctdaCase(t, "zero_duration_kernel_first")
	ctWantRowsConn(t, db, `SELECT string_agg(name || ':' || round(weight_us) || ':' || bound_by, ',' ORDER BY seq) FROM critical_path(algorithm := 'ctda') WHERE name IS NOT NULL`,
		[][]string{{"aten::a:20.0:cpu_bound,k1:200.0:gpu_compute_bound,aten::a:20.0:cpu_bound,aten::b:735.0:cpu_bound"}})
	ctWantRowsConn(t, db, `SELECT name FROM cdg_nodes() WHERE kind = 'gpu'`, [][]string{{"k1"}})
}

// TestCTDASyncCases: synchronisation corner cases, each against the answer worked out by hand.
func TestCTDASyncCases(t *testing.T) {
	// A 470 µs kernel k launched at 10 µs, a cudaEventSynchronize from 35 to 505 µs, then aten::after. The path
	// is mm + launch → k → the sync's return → aten::after, whatever the trace says about the sync: an Event
	// Sync record naming the stream (event_sync_placed), one naming none, as CUDA 12 writes it
	// (event_sync_unplaced: no edge at all, the wait counted as 505 µs of CPU work), or no records.
	want := ctdaFacts{0.535, 0.55, "k:470.0, aten::after:45.0, aten::mm:10.0, cudaLaunchKernel:10.0"}
	for _, name := range []string{"event_sync_placed", "event_sync_unplaced", "no_sync_records"} {
		db := ctdaCase(t, name)
		if got := ctdaFactsOf(t, db, ""); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
		// the first path row is the work before the sync, which the sync call must not name
		var first string
		if err := db.QueryRow(`SELECT name FROM critical_path(algorithm := 'ctda') ORDER BY seq LIMIT 1`).Scan(&first); err != nil {
			t.Fatal(err)
		}
		if first != "aten::mm" {
			t.Errorf("%s: first path row named %q, want aten::mm (the node's counted span is mm and its launch)", name, first)
		}
	}

	// A synchronous cudaMemcpy (45–515) whose copy runs after the 470 µs kernel k: it waited for k, whether or not
	// the window holds a sync record elsewhere (a Stream Sync at 582 here; CUPTI writes none for the copy). With
	// one, the wait was 470 µs of cpu_bound aten::to.
	for _, agg := range []string{"", ", aggregate := false"} {
		got := ctdaFactsOf(t, ctdaCase(t, "sync_copy_with_sync_record"), agg)
		if want := (ctdaFacts{0.57, 0.585, "k:470.0, aten::after:50.0, Memcpy DtoH (Device -> Pageable):10.0, aten::mm:10.0"}); got != want {
			t.Errorf("sync_copy_with_sync_record%s: %+v, want %+v", agg, got, want)
		}
	}

	// aten::a launches k1 (20–320) on stream 7, records an event, launches k2 (320–620) there too; what waits for
	// the event waits for k1 only: k3 on stream 8 (320–720) after a stream wait, or aten::b (330–900) after an
	// event sync. k1 and k2 were one GPU node, which had not ended when the waiting work began, so the wait was
	// lost (263 µs of launch overhead; 325 µs of CPU work).
	for name, want := range map[string]ctdaFacts{
		"record_between_launches_stream_wait": {0.715, 0.72, "k3:400.0, k1:300.0, cudaLaunchKernel:10.0, aten::a:5.0"},
		"record_between_launches_event_sync":  {0.885, 0.9, "aten::b:570.0, k1:300.0, cudaLaunchKernel:10.0, aten::a:5.0"},
		// The same with CUDA 12's records, which name neither the recorded stream nor the record call
		// (-1): a record then ends its node whichever wait it was for. K1 (40–300) and K2 (300–400) were
		// one GPU node, and the wait went: K1 off the path, its 310 µs event sync cpu_bound (CPCR 0.925),
		// or K3's wait 205 µs of kernel-kernel overhead (CPCR 0.724). (By hand, the event sync: 20 + 260 +
		// 585 + 40 µs of 1000 counted.)
		"record_between_launches_event_sync_cuda12":  {0.905, 0.935, "aten::item:580.0, K1:260.0, aten::add:40.0, aten::mm:10.0"},
		"record_between_launches_stream_wait_cuda12": {0.915, 0.935, "K3:595.0, K1:260.0, aten::item:40.0, aten::mm:10.0"},
	} {
		if got := ctdaFactsOf(t, ctdaCase(t, name), ""); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}

	// A C++ thread's cpp_worker_op launches kB1 (stream 7, 20–300) at 10 µs and kB2 (410–800) at 400 µs; the
	// main thread's cudaDeviceSynchronize (50–305) waits for kB1 only, then aten::after runs. kB1 and kB2 were one
	// GPU node, still running when aten::after began: the wait was lost, and the main thread's wait counted as
	// 48 µs of Python (CPCR 0.852, no kernel on the path).
	for _, agg := range []string{"", ", aggregate := false"} {
		got := ctdaFactsOf(t, ctdaCase(t, "device_sync_other_thread_node"), agg)
		if want := (ctdaFacts{0.882, 0.895, "aten::after:590.0, kB1:280.0, cpp_worker_op:5.0, cudaLaunchKernel:5.0"}); got != want {
			t.Errorf("device_sync_other_thread_node%s: %+v, want %+v", agg, got, want)
		}
	}

	// Step 2 (instance 1): kX (stream 9, 900–1100) and kO (stream 7, 1100–1500) have no launch call in the trace
	// (launched before profiling); the step records an event on stream 7 and makes stream 8 wait for it, so k8
	// (1500–1600) waits for kO, with the record placed or not (CUDA 12). kO, starting after the wait call, was
	// taken as launched then, and not waited for: a 475 µs launch delay, or a 400 µs gap.
	for _, name := range []string{"stream_wait_on_unlaunched_backlog", "stream_wait_on_unlaunched_backlog_cuda12"} {
		got := ctdaFactsOf(t, ctdaCase(t, name), ", instance := 1")
		if want := (ctdaFacts{0.6, 0.6, "kO:400.0, k8:100.0, kX:100.0"}); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}

	// backlog_stream_sync, step 2 (instance 1): kA (400 µs) was launched in step 1 behind kB on another
	// stream and starts only at 1100 µs, after step 2's cudaStreamSynchronize (1050–1505) began; the sync
	// waits for it.
	got := ctdaFactsOf(t, ctdaCase(t, "backlog_stream_sync"), ", instance := 1")
	if want := (ctdaFacts{0.545, 0.55, "kA:400.0, kB:100.0, aten::after:45.0"}); got != want {
		t.Errorf("backlog_stream_sync: %+v, want %+v", got, want)
	}
}

// TestCTDANodeCases: how events become nodes.
func TestCTDANodeCases(t *testing.T) {
	// Two GPUs, both with a stream 7: the kernels one CPU node launched onto each are two GPU nodes. k_dev1 starts
	// as its launch call returns (60 µs): the call did not wait for it (r75 #7), and its 10 µs count as launching.
	db := ctdaCase(t, "two_gpus_one_stream_id")
	ctWantRowsConn(t, db, `SELECT pid, stream, name FROM cdg_nodes() WHERE kind = 'gpu' ORDER BY pid`,
		[][]string{{"0", "7", "k_dev0"}, {"1", "7", "k_dev1"}})
	if got := ctdaFactsOf(t, db, ""); got.hotspots != "k_dev1:440.0, aten::after:45.0, aten::a:20.0, cudaLaunchKernel:20.0" {
		t.Errorf("two_gpus_one_stream_id: hotspots %s", got.hotspots)
	}

	// A launch call with its operator's exact extent, listed before it, is still inside it: aten::relu
	// launches krelu (call edge), and the path runs aten::pre → relu → krelu (CPCR 0.535, hta 0.525).
	db = ctdaCase(t, "launch_same_extent")
	ctWantRowsConn(t, db, `SELECT count(*) FROM cdg_edges() WHERE dependency = 'call'`, [][]string{{"1"}})
	if got := ctdaFactsOf(t, db, ""); got.cpcr != 0.535 || !strings.Contains(got.hotspots, "aten::pre:100.0") {
		t.Errorf("launch_same_extent: %+v", got)
	}

	// A launch call of zero duration at 390 in aten::mm (0–400) launches k (400–800), which a stream sync waits
	// for: mm → k → aten::after (the kernel looked launched before the window, and the path lost mm: CPCR 0.51).
	for _, agg := range []string{"", ", aggregate := false"} {
		got := ctdaFactsOf(t, ctdaCase(t, "zero_duration_launch"), agg)
		if want := (ctdaFacts{0.9, 0.915, "k:400.0, aten::mm:390.0, aten::after:100.0, aten::item:10.0"}); got != want {
			t.Errorf("zero_duration_launch%s: %+v, want %+v", agg, got, want)
		}
	}

	// A 'forward' window: the window's own annotation is left out of the hotspots, an operator whose name
	// contains "forward" is not.
	got := ctdaFactsOf(t, ctdaCase(t, "annotation_in_op_name"), ", annotation := 'forward'")
	if !strings.HasPrefix(got.hotspots, "aten::forward_helper_op:200.0, aten::mm:100.0") || strings.Contains(got.hotspots, "## forward ##") {
		t.Errorf("annotation_in_op_name: hotspots %s", got.hotspots)
	}

	// The autograd thread's backward inside the main thread's run_backward: run_backward waits (left out), the
	// path crosses from the main thread's loss to the autograd thread (CPCR 0.79 of a busy bound of 0.85).
	db = ctdaCase(t, "autograd_thread")
	if got := ctdaFactsOf(t, db, ""); got != (ctdaFacts{0.79, 0.85, "bwd_k:320.0, aten::copy_:180.0, ## forward ##:110.0, fwd_k:100.0"}) {
		t.Errorf("autograd_thread: %+v", got)
	}
	ctWantRowsConn(t, db, `SELECT count(*) FROM critical_path(algorithm := 'ctda') WHERE name = 'torch::autograd::run_backward'`, [][]string{{"0"}})
}

// TestCTDAReviewR62: review r62's cases, each worked out by hand (µs):
//   - sync_with_side_thread_ending_later: aten::mm launches mm_k (40–495), cudaDeviceSynchronize waits 100–500,
//     aten::after follows; a logger thread's aten::to (310–520) ends after the sync returned. The sync waited:
//     mm 0–30, launch 10, mm_k 455, sync 5, after 100 (the logger's end read as "the sync did not wait", and
//     the path was 600 µs cpu_bound).
//   - gpu_node_interleaved_on_stream: a side thread's node launches a1 (10–29) and, later, a2 (70–80); the main
//     thread's b1 runs between them (29–60), then an event sync and aten::after (62–200). The path: side_op
//     7, launch 3, a1 19, b1 31, sync 2, after 138 = 200 µs (it was 236 µs, longer than the step, and a1 had
//     no hotspot time: a1's segment counted the side op's time after it).
//   - launch_under_side_thread_copy: a pin-memory thread's copy starts 2 µs into aten::linear's 5 µs
//     cudaLaunchKernel of a 600 µs gemm: linear 105, launch 5, gemm 600, sync 10, after 50 = 770 µs (the
//     launch call was dropped as pre-empted, the gemm had no launcher and the path lost the linear).
func TestCTDAReviewR62(t *testing.T) {
	type bucket struct {
		bound string
		us    float64
	}
	for _, c := range []struct {
		name     string
		path     float64
		buckets  []bucket
		hotspots string
	}{
		{"sync_with_side_thread_ending_later", 600,
			[]bucket{{"cpu_bound", 135}, {"gpu_compute_bound", 455}, {"gpu_kernel_launch_overhead", 10}},
			"mm_k:455.0, aten::after:100.0, aten::mm:10.0, cudaLaunchKernel:10.0"},
		{"gpu_node_interleaved_on_stream", 200,
			[]bucket{{"cpu_bound", 147}, {"gpu_compute_bound", 50}, {"gpu_kernel_launch_overhead", 3}},
			"aten::after:138.0, b1:31.0, a1:19.0, cudaLaunchKernel:5.0"},
		{"launch_under_side_thread_copy", 770,
			[]bucket{{"cpu_bound", 165}, {"gpu_compute_bound", 600}, {"gpu_kernel_launch_overhead", 5}},
			"gemm:600.0, aten::linear:100.0, aten::after:50.0, cudaLaunchKernel:5.0"},
	} {
		db := ctdaCase(t, c.name)
		rows, err := db.Query(`SELECT bound_by, duration_us, path_length_us FROM critical_path_summary(algorithm := 'ctda') WHERE duration_us > 0 ORDER BY bound_by`)
		if err != nil {
			t.Fatal(err)
		}
		var got []bucket
		for rows.Next() {
			var b bucket
			var path float64
			if err := rows.Scan(&b.bound, &b.us, &path); err != nil {
				t.Fatal(err)
			}
			if path != c.path {
				t.Errorf("%s: path %v µs, want %v", c.name, path, c.path)
			}
			got = append(got, b)
		}
		rows.Close()
		if fmt.Sprint(got) != fmt.Sprint(c.buckets) {
			t.Errorf("%s: buckets %v, want %v", c.name, got, c.buckets)
		}
		if f := ctdaFactsOf(t, db, ""); f.hotspots != c.hotspots {
			t.Errorf("%s: hotspots %s, want %s", c.name, f.hotspots, c.hotspots)
		}
	}
}

// TestCTDARecordSplitKeepsPhase: in a CUDA 12 trace every event record ends its node (the waits name no
// record), but the work after it keeps the node's phase: the batch's host-to-device copy after the
// DataLoader's record became Forward's, and 150-270 µs a step of the recorded traces moved from
// data_loading to cpu_bound. data_loading is the bucket from before records split nodes; cpu_bound
// grew by 566.4 µs when blocking Python functions after the last op became work (review r75 #4): the
// step's path now runs on to its end, through Tensor.mean and queue.get's 292 µs lock acquire.
func TestCTDARecordSplitKeepsPhase(t *testing.T) {
	db := ctOpen(t, "../testdata/traces/recorded/test")
	ctWantRows(t, db.SQL, `SELECT string_agg(bound_by || '=' || round(duration_us, 1), ' ' ORDER BY bound_by)
		FROM critical_path_summary(instance := 1, algorithm := 'ctda')`,
		[][]string{{"cpu_bound=6077.6 data_loading=8765.4 gpu_compute_bound=1.4 gpu_kernel_launch_overhead=0.1"}})
}

// TestCTDALegacyStepMarkerIsNoWork: a 2021-era trace writes ProfilerStep#1 in category Operator, as
// every record_function then. Its self time (the 40 µs of the 100 µs step no op covers) is not work: the
// busy bound is aten::mm 30 + gemm 10 + aten::add 30 = 70 µs, neither algorithm's CPCR exceeds it, and
// neither lists the marker as a hotspot. Before, both CPCRs and the bound were 1.0, and hta's top
// hotspot was ProfilerStep#1 (40 µs).
func TestCTDALegacyStepMarkerIsNoWork(t *testing.T) {
	db := ctdaCase(t, "legacy_step_marker")
	for _, alg := range []string{"ctda", "hta"} {
		for _, ann := range []string{"ProfilerStep", ""} {
			var cpcr, busy float64
			var marker int
			q := fmt.Sprintf(`SELECT max(cpcr), max(busy_bound),
				(SELECT count(*) FROM hotspots(annotation := '%[2]s', algorithm := '%[1]s') WHERE name LIKE 'ProfilerStep%%')
				FROM critical_path_summary(annotation := '%[2]s', algorithm := '%[1]s')`, alg, ann)
			if err := db.QueryRow(q).Scan(&cpcr, &busy, &marker); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if math.Abs(busy-0.7) > 1e-9 || cpcr > busy+1e-9 || cpcr < 0.5 || marker != 0 {
				t.Errorf("%s, annotation %q: CPCR %.3f, busy bound %.3f, %d ProfilerStep hotspots; want the bound 0.7, CPCR in [0.5, 0.7], none",
					alg, ann, cpcr, busy, marker)
			}
		}
	}
}

// TestCTDARunBackwardWaits (review r75 #2): the main thread's torch::autograd::run_backward op waits for the
// autograd engine, even where the engine's ops cover little of it (run_backward_sparse: 150 of its 340 µs, a
// GPU-bound backward; run_backward_outlives_engine: it runs on 430 µs after them). It stayed on the path as a
// node (its 340 or 740 µs the second or first hotspot), and the path stepped back in time to the autograd
// thread's work inside it (a cross-thread gap of −300 or −700 µs). The path: data loading, forward, loss, the
// autograd thread's backward and its kernel k_b2 up to the stream sync, the optimizer. run_backward_sparse:
// CPCR (30 + 140 + 50 + 20 + 15 + 55 + 10 + 535 + 140) / 2000 = 0.4975, as with run_backward a Python frame.
func TestCTDARunBackwardWaits(t *testing.T) {
	for _, c := range []struct {
		name string
		cpcr float64
		top  string
	}{
		{"run_backward_sparse", 0.4975, "k_b2:535.0, dataset.py(20): resize:250.0"},
		{"run_backward_outlives_engine", 0.5475, "k_b2:485.0, dataset.py(20): resize:250.0"},
	} {
		for _, agg := range []string{"", ", aggregate := false"} {
			db := ctdaCase(t, c.name)
			if got := ctdaFactsOf(t, db, agg); got.cpcr != c.cpcr || !strings.HasPrefix(got.hotspots, c.top) || strings.Contains(got.hotspots, "run_backward") {
				t.Errorf("%s%s: %+v, want CPCR %v, hotspots from %s", c.name, agg, got, c.cpcr, c.top)
			}
			ctWantRowsConn(t, db, `SELECT count(*) FILTER (name = 'torch::autograd::run_backward'), count(*) FILTER (weight_us < 0)
				FROM critical_path(algorithm := 'ctda'`+agg+`)`, [][]string{{"0", "0"}})
		}
	}
}

// TestCTDAShiftedClock (review r75 #1): ctda's answers do not depend on where the trace's clock starts. Every
// ctda_cases trace, and the same trace 20 ms earlier (its times negative, as a Chrome trace may have them): the
// same summary, hotspots, nodes and edges, and the path's times 20 ms earlier. Negative times gave every node
// an end of 0 and a path of the whole trace (autograd_thread: 100 % data_loading).
func TestCTDAShiftedClock(t *testing.T) {
	const shiftUS = 20000
	files, err := filepath.Glob("../testdata/traces/ctda_cases/*.json")
	if err != nil || len(files) < 20 {
		t.Fatalf("ctda_cases: %v %v", files, err)
	}
	queries := []string{
		`SELECT * EXCLUDE (label) FROM critical_path_summary(algorithm := 'ctda')`,
		`SELECT * EXCLUDE (label) FROM hotspots()`,
		fmt.Sprintf(`SELECT * EXCLUDE (label, ts, end_ts, first_launch_end_ts), ts + %[1]d, end_ts + %[1]d, first_launch_end_ts + %[1]d FROM cdg_nodes() ORDER BY node`, shiftUS*1000),
		`SELECT * EXCLUDE (label) FROM cdg_edges() ORDER BY src_node, dst_node, edge_type`,
		fmt.Sprintf(`SELECT * EXCLUDE (label, ts, end_ts), ts + %[1]d, end_ts + %[1]d FROM critical_path(algorithm := 'ctda') ORDER BY seq`, shiftUS*1000),
		fmt.Sprintf(`SELECT * EXCLUDE (label, ts, end_ts), ts + %[1]d, end_ts + %[1]d FROM critical_path(algorithm := 'ctda', aggregate := false) ORDER BY seq`, shiftUS*1000),
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			for _, e := range doc["traceEvents"].([]any) {
				ev := e.(map[string]any)
				if ts, ok := ev["ts"].(json.Number); ok {
					v, err := ts.Int64()
					if err != nil {
						t.Fatalf("a ts that is not an integer: %s", ts)
					}
					ev["ts"] = v - shiftUS
				}
			}
			shifted, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			orig, early := ctOpen(t, file).SQL, ctOpenJSON(t, name+".json", string(shifted)).SQL
			for _, q := range queries {
				if strings.Contains(q, "+") {
					// the original's times, compared as the shifted trace's plus the shift
					base := strings.NewReplacer(fmt.Sprintf(" + %d", shiftUS*1000), "").Replace(q)
					if want, got := ctRows(t, orig, base), ctRows(t, early, q); !reflect.DeepEqual(got, want) {
						t.Errorf("%s:\n shifted %v\n    want %v", q, got, want)
					}
					continue
				}
				if want, got := ctRows(t, orig, q), ctRows(t, early, q); !reflect.DeepEqual(got, want) {
					t.Errorf("%s:\n shifted %v\n    want %v", q, got, want)
				}
			}
		})
	}
}
