package queries_test

import (
	"fmt"
	"testing"
)

// TestHTADefaultModeCases: hand-built one-step traces (testdata/traces/hta_cases, a review's repros; µs times)
// where HTA 0.6.1's rules make the `hta` path wrong, and what default mode gives instead, worked out by hand;
// compat keeps HTA's answer (checked against HTA 0.6.1 by the review). Every default path also stays inside the
// time it spans, and its graph has no edge back in time.
func TestHTADefaultModeCases(t *testing.T) {
	for _, c := range []struct {
		file            string
		buckets         string  // default mode: bound_by=µs, by name
		compatLength    float64 // HTA 0.6.1's path, µs
		compatBackEdges int     // HTA's edges whose end precedes their start
		why             string
	}{
		// one process, two GPUs, stream 7 on each (DataParallel): HTA keys a stream's last kernel and queue by the
		// stream id, so GPU 1's kernel was the previous kernel of GPU 0's, the launch edges were lost to a merged
		// queue, and GPU 1's stream sync waited for GPU 0's kernel 130 µs later
		{"two_gpus_one_process", "=0.0 cpu_bound=12.0 gpu_compute_bound=150.0 gpu_kernel_launch_overhead=23.0", 195, 2,
			"aten::a 10-12, a→b, b 25-27, launch delay 27-50, k0 50-200"},
		// a logger thread's op starts at 50 in the 0-100 step and runs to 400: CPU time after the step is not its own
		{"side_thread_outlives_step", "cpu_bound=50.0", 350, 0, "the logger op cut at the step's end"},
		// a launch call that starts at the µs another thread's ends took the runtime lock over: it keeps its own
		// span whichever call the file lists first (HTA: 22 or 30)
		{"lock_handoff_later_call_listed_first", "cpu_bound=30.0", 22, 0, "aten::b 30→launch 30-50→b end 60"},
		{"lock_handoff_earlier_call_listed_first", "cpu_bound=30.0", 30, 0, "as above"},
		// the runtime lock is a process's: a worker process's 3 µs launch took the main process's 100 µs launch span
		{"lock_other_process", "cpu_bound=190.0", 112, 0, "aten::a 10-200 with its launch 20-120"},
		// a launch call written with dur 0 brings its 200 µs kernel, which the device sync then waits for
		{"zero_duration_launch", "=0.0 cpu_bound=12.0 gpu_compute_bound=200.0 gpu_kernel_launch_overhead=8.0", 20, 0,
			"mm 10-12, launch delay 12-20, kernel 20-220, sync, relu 230-240"},
		// aten::Q and its stream sync outlive the step (100-200) and are cut at its end; the sync edge from k2's end
		// (245) into the cut sync's end (200) went back in time
		{"sync_cut_at_step_end", "gpu_compute_bound=85.0 gpu_kernel_kernel_overhead=40.0 gpu_kernel_launch_overhead=10.0", 145, 0,
			"k1 and k2 with their launch and the gap between them"},
		// stream 7: k1 30-130, k2 120-200 (starts 10 µs before k1 ends), k3 195-200 (inside k2), k4 210-250; HTA
		// counts both overlaps twice (edges back in time, clamped to 0): 265 µs over 260 µs of rows
		{"overlapping_kernels_one_stream", "=0.0 cpu_bound=12.0 gpu_compute_bound=210.0 gpu_kernel_kernel_overhead=10.0 gpu_kernel_launch_overhead=18.0", 265, 2,
			"mm 10-12, launch delay 12-30, k1 30-120, k2 120-195, k3 195-200, gap 200-210, k4 210-250, relu 260-270"},
		// a kernel whose launch is not in the trace (index_correlation 0), 100 µs before the step: it came into
		// the graph with a launch edge from the file's first event (event 0, in the step), back in time
		{"kernel_launched_before_profiling", "=0.0 cpu_bound=35.0 gpu_compute_bound=100.0 gpu_kernel_launch_overhead=25.0", 160, 0,
			"first 10-30, mm 40-45, launch delay 45-70, k1 70-170, sync, relu 190-200"},
		// k1, launched at 12, waits until 150 behind k0, launched before the step (so not in the graph): HTA calls
		// the 138 µs a launch delay
		{"kernel_behind_earlier_work", "=0.0 cpu_bound=10.0 gpu_compute_bound=100.0", 250, 0, "k1 150-250, sync, relu 260-270"},
	} {
		t.Run(c.file, func(t *testing.T) {
			db := ctOpen(t, "../testdata/traces/hta_cases/"+c.file+".json").SQL
			var buckets string
			var length, window, span float64
			if err := db.QueryRow(`SELECT string_agg(bound_by || '=' || duration_us, ' ' ORDER BY bound_by), max(path_length_us), max(window_us)
				FROM critical_path_summary()`).Scan(&buckets, &length, &window); err != nil {
				t.Fatal(err)
			}
			if buckets != c.buckets {
				t.Errorf("default: buckets %s, want %s (%s)", buckets, c.buckets, c.why)
			}
			if err := db.QueryRow(`SELECT (max(end_ts) - min(ts)) / 1000 FROM critical_path()`).Scan(&span); err != nil {
				t.Fatal(err)
			}
			if length > span || length > window {
				t.Errorf("default: path of %.1f µs over rows spanning %.1f µs in a %.1f µs window", length, span, window)
			}
			for _, compat := range []bool{false, true} {
				var back int
				var compatLength float64
				q := fmt.Sprintf(`SELECT (SELECT count(*) FROM cp_graph_edges(compat := %v) WHERE end_ts < ts), max(path_length_us)
					FROM critical_path_summary(compat := %[1]v)`, compat)
				if err := db.QueryRow(q).Scan(&back, &compatLength); err != nil {
					t.Fatal(err)
				}
				if want := map[bool]int{false: 0, true: c.compatBackEdges}[compat]; back != want {
					t.Errorf("compat=%v: %d edges back in time, want %d", compat, back, want)
				}
				if compat && compatLength != c.compatLength {
					t.Errorf("compat: path %.1f µs, want HTA's %.1f", compatLength, c.compatLength)
				}
			}
		})
	}
}

// TestHTAGapAfterEndedAnnotation: the time between one op's end and the next op's start belongs to the
// innermost event open over all of it. Op P (0–100) holds annotation A (10–30), which holds op C (12–20);
// op D (60–70) follows in P. HTA charges the edge from C's end to D's start (40 µs) to C's parent A, which
// ended at 30, so hotspots kept 10 µs of it and cpcr 0.6 of a window that P covers whole. Default mode
// charges it to P; compat keeps HTA's.
func TestHTAGapAfterEndedAnnotation(t *testing.T) {
	db := ctOpen(t, "../testdata/traces/hta_cases/gap_after_ended_annotation.json")
	for _, c := range []struct {
		compat   string
		hotspots [][]string
		cpcr     string
	}{
		{"false", [][]string{{"C", "8"}, {"D", "10"}, {"P", "82"}}, "1"},
		{"true", [][]string{{"A", "10"}, {"C", "8"}, {"D", "10"}, {"P", "42"}}, "0.6"},
	} {
		ctWantRows(t, db.SQL, `SELECT name, duration_us FROM hotspots(algorithm := 'hta', top := 0, hta_compat := `+c.compat+`) ORDER BY name`, c.hotspots)
		ctWantRows(t, db.SQL, `SELECT max(cpcr) FROM critical_path_summary(hta_compat := `+c.compat+`)`, [][]string{{c.cpcr}})
	}
	ctWantRows(t, db.SQL, `SELECT name, weight_us FROM critical_path() WHERE seq = 2`, [][]string{{"P", "40"}})
}
