package queries_test

import (
	"database/sql"
	"fmt"
	"testing"
)

// TestGPUKernelsWithAnnotationsGPUWork checks which GPU events gpu_kernels_with_annotations lists, on the
// hand-built testdata/traces/hta_cases/annotations_gpu_work_only.json (µs times, all on GPU lane pid 0 / tid 7;
// gpu_user_annotation fwd [1000,2000) and inner [1025,1045)):
//
//	ev  3 gemm               kernel   stream 7, correlation 1   [1010,1020)  leaf fwd
//	ev  4 nocorr_k           kernel   stream 7, no correlation  [1030,1040)  leaf inner
//	ev  5 negcorr_k          kernel   stream 7, correlation -1  [1050,1060)  leaf fwd
//	ev  7 Memcpy HtoD        memcpy   stream 7, correlation 4   [1070,1080)  leaf fwd
//	ev  9 Memset (Device)    memset   stream 7, correlation 5   [1085,1090)  leaf fwd
//	ev 11 Stream Sync        cuda_sync stream 7, correlation 2  [1100,1580)  fwd
//	ev 13 Context Sync       cuda_sync stream 4294967295, c. 3  [1600,1900)  fwd
//	ev 15 Stream Wait Event  cuda_sync stream 7, correlation 6  [1950,1960)  fwd
//	ev 16 late_k             kernel   stream 7, no correlation  [2100,2110)  none
//
// Default mode: the GPU work that temporal_breakdown counts (kernels, memcpy, memset on a stream), with or
// without a correlation id, and no cuda_sync record: ev 3, 4, 5, 7, 9, 16. Per annotation: fwd 10+10+10+5 =
// 35 µs, inner 10, none 10; together 55 µs = temporal_breakdown's busy time (kernel_time 2110 − 1010 = 1100,
// idle 1045; nothing overlaps), so the README example adds up to GPU time.
// Compat mode (HTA 0.6.1, checked with HTA's get_gpu_kernels_with_user_annotations): HTA's GPU side, a stream
// with a correlation id or an Event / Context Sync: ev 3, 7, 9, 11, 13, 15, all under fwd (inner overlaps none
// of them): 10+10+5+480+300+10 = 815 µs.
func TestGPUKernelsWithAnnotationsGPUWork(t *testing.T) {
	db := bdOpenFile(t, "../testdata/traces/hta_cases/annotations_gpu_work_only.json").SQL
	db.SetMaxOpenConns(1)
	for _, compat := range []bool{false, true} {
		if _, err := db.Exec(fmt.Sprintf(`SET VARIABLE hta_compat = %v`, compat)); err != nil {
			t.Fatal(err)
		}
		t.Run(map[bool]string{false: "default", true: "compat"}[compat], func(t *testing.T) {
			rows := `SELECT ev_idx, name, kernel_type, annotation_ev_idx, annotation_name FROM gpu_kernels_with_annotations`
			sums := `SELECT annotation_name, sum(dur) / 1e3 AS us FROM gpu_kernels_with_annotations GROUP BY ALL ORDER BY us DESC, annotation_name`
			if !compat {
				bdExpect(t, db, rows, [][]any{
					{3, "gemm", "COMPUTATION", 0, "fwd"},
					{4, "nocorr_k", "COMPUTATION", 1, "inner"},
					{5, "negcorr_k", "COMPUTATION", 0, "fwd"},
					{7, "Memcpy HtoD (Pageable -> Device)", "MEMORY", 0, "fwd"},
					{9, "Memset (Device)", "MEMORY", 0, "fwd"},
					{16, "late_k", "COMPUTATION", nil, nil}})
				bdExpect(t, db, sums, [][]any{{"fwd", 35}, {"inner", 10}, {nil, 10}})
				// the rows add up to the busy time of temporal_breakdown (no overlap in this trace)
				bdExpect(t, db, `SELECT (SELECT sum(dur) / 1e3 FROM gpu_kernels_with_annotations) AS listed,
					kernel_time_us - idle_time_us AS busy FROM temporal_breakdown`, [][]any{{55, 55}})
			} else {
				bdExpect(t, db, rows, [][]any{
					{3, "gemm", "COMPUTATION", 0, "fwd"},
					{7, "Memcpy HtoD (Pageable -> Device)", "MEMORY", 0, "fwd"},
					{9, "Memset (Device)", "MEMORY", 0, "fwd"},
					{11, "Stream Sync", "OTHER", 0, "fwd"},
					{13, "Context Sync", "OTHER", 0, "fwd"},
					{15, "Stream Wait Event", "OTHER", 0, "fwd"}})
				bdExpect(t, db, sums, [][]any{{"fwd", 815}})
			}
		})
	}
}

// TestGPUKernelsWithAnnotationsTies: annotations of equal duration over one GPU event.
// bd_annotation_ties.json: kA [100,104) under annB [95,105) and annC [98,108) (annA [90,100) ends at its
// start), kB [200,204) under annD [196,206), annE [199,209) and annF [197,207), all 10 µs, in the file in
// the order B, A, C, D, E, F. Default: the later start wins (annC, annE). HTA labels events annotation by
// annotation in its descending-duration order and the last label stays: among equal durations the last in
// the file up to 16 annotations (annC, annF).
// bd_fold_ties_60.json: kernel kI under outerI and innerI of identical span (30 kernels, 60 annotations in
// the file as outer0, inner0, outer1, …). Default: the later event, innerI, every time. Compat: HTA 0.6.1,
// run on this file, gives outerI to the 20 kernels listed (numpy's quicksort order of 60 durations).
func TestGPUKernelsWithAnnotationsTies(t *testing.T) {
	q := `SELECT name, annotation_name FROM gpu_kernels_with_annotations`
	outer := `SELECT list(ev_idx ORDER BY ev_idx) FILTER (annotation_name LIKE 'outer%')::VARCHAR,
		count(*) FILTER (annotation_name LIKE 'inner%') FROM gpu_kernels_with_annotations`
	for _, compat := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "compat"}[compat], func(t *testing.T) {
			set := fmt.Sprintf(`SET VARIABLE hta_compat = %v`, compat)
			db := bdOpenFile(t, bdTestdata("bd_annotation_ties.json")).SQL
			db.SetMaxOpenConns(1)
			db60 := bdOpenFile(t, bdTestdata("bd_fold_ties_60.json")).SQL
			db60.SetMaxOpenConns(1)
			for _, d := range []interface {
				Exec(string, ...any) (sql.Result, error)
			}{db, db60} {
				if _, err := d.Exec(set); err != nil {
					t.Fatal(err)
				}
			}
			if !compat {
				bdExpect(t, db, q, [][]any{{"kA", "annC"}, {"kB", "annE"}})
				bdExpect(t, db60, outer, [][]any{{nil, 30}})
				return
			}
			bdExpect(t, db, q, [][]any{{"kA", "annC"}, {"kB", "annF"}})
			bdExpect(t, db60, outer, [][]any{{"[8, 12, 14, 16, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 50, 58, 60]", 10}})
		})
	}
}

// TestGPUKernelsWithAnnotationsSameInterval: HTA 0.6.1 writes a label through the GPU events' interval index, so
// every event whose [ts, end) equals a labelled one's takes the label, on any stream; lanes are labelled in the
// order of their first annotation (by duration, longest first), the last write staying. Compat reproduces it
// (HTA 0.6.1, run on this trace: kx B, ky B, kw B, kz none); the default mode labels an event from its own lane only.
func TestGPUKernelsWithAnnotationsSameInterval(t *testing.T) {
	trace := `{"traceEvents":[
	{"ph":"X","cat":"gpu_user_annotation","name":"A","pid":0,"tid":7,"ts":0,"dur":100,"args":{}},
	{"ph":"X","cat":"gpu_user_annotation","name":"B","pid":0,"tid":8,"ts":0,"dur":50,"args":{}},
	{"ph":"X","cat":"kernel","name":"kx","pid":0,"tid":7,"ts":10,"dur":10,"args":{"stream":7,"device":0,"correlation":1}},
	{"ph":"X","cat":"kernel","name":"ky","pid":0,"tid":8,"ts":10,"dur":10,"args":{"stream":8,"device":0,"correlation":2}},
	{"ph":"X","cat":"kernel","name":"kz","pid":0,"tid":9,"ts":12,"dur":6,"args":{"stream":9,"device":0,"correlation":3}},
	{"ph":"X","cat":"kernel","name":"kw","pid":0,"tid":9,"ts":10,"dur":10,"args":{"stream":9,"device":0,"correlation":4}},
	{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":1,"args":{"correlation":1}},
	{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2,"dur":1,"args":{"correlation":2}},
	{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":4,"dur":1,"args":{"correlation":3}},
	{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":6,"dur":1,"args":{"correlation":4}}]}`
	db := ctOpenJSON(t, "same_interval.json", trace).SQL
	db.SetMaxOpenConns(1)
	q := `SELECT name, coalesce(annotation_name, '-') FROM gpu_kernels_with_annotations ORDER BY name`
	for _, c := range []struct {
		compat bool
		want   [][]string
	}{
		{false, [][]string{{"kw", "-"}, {"kx", "A"}, {"ky", "B"}, {"kz", "-"}}},
		{true, [][]string{{"kw", "B"}, {"kx", "B"}, {"ky", "B"}, {"kz", "-"}}},
	} {
		if _, err := db.Exec(fmt.Sprintf(`SET VARIABLE hta_compat = %v`, c.compat)); err != nil {
			t.Fatal(err)
		}
		ctWantRows(t, db, q, c.want)
	}
}

// TestGPUKernelsWithAnnotationsZeroLength (review r67 #1): a zero-length GPU event lies in the annotations
// holding its instant. Annotations outer [0, 100) and inner [50, 60) µs; memsets of 0 µs at 50 and 51 and a
// kernel [50, 51). The memset at 50 took outer (an interval overlap of [50, 50) and [50, 60) is empty), the one
// at 51 inner; both are inner now. Compat keeps HTA's overlap (HTA 0.6.1's pandas IntervalIndex.overlaps, as
// the reviewer ran it: outer, inner, inner). A zero-length annotation, a marker at 70 inside kernel k2 [65, 80),
// holds no time (review r77 #2: k2 took the marker, the shortest annotation overlapping it); HTA's overlap test
// finds it, and compat keeps that.
func TestGPUKernelsWithAnnotationsZeroLength(t *testing.T) {
	db := ctOpenJSON(t, "zero_length.json", `{"traceEvents":[
	{"ph":"X","cat":"gpu_user_annotation","name":"outer","pid":0,"tid":7,"ts":0,"dur":100,"args":{}},
	{"ph":"X","cat":"gpu_user_annotation","name":"inner","pid":0,"tid":7,"ts":50,"dur":10,"args":{}},
	{"ph":"X","cat":"gpu_user_annotation","name":"marker","pid":0,"tid":7,"ts":70,"dur":0,"args":{}},
	{"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":65,"dur":15,"args":{"stream":7,"device":0,"correlation":4}},
	{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":46,"dur":1,"args":{"correlation":4}},
	{"ph":"X","cat":"gpu_memset","name":"Memset at 50","pid":0,"tid":7,"ts":50,"dur":0,"args":{"stream":7,"device":0,"correlation":1}},
	{"ph":"X","cat":"gpu_memset","name":"Memset at 51","pid":0,"tid":7,"ts":51,"dur":0,"args":{"stream":7,"device":0,"correlation":2}},
	{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":50,"dur":1,"args":{"stream":7,"device":0,"correlation":3}},
	{"ph":"X","cat":"cuda_runtime","name":"cudaMemsetAsync","pid":1,"tid":1,"ts":40,"dur":1,"args":{"correlation":1}},
	{"ph":"X","cat":"cuda_runtime","name":"cudaMemsetAsync","pid":1,"tid":1,"ts":42,"dur":1,"args":{"correlation":2}},
	{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":44,"dur":1,"args":{"correlation":3}}]}`).SQL
	db.SetMaxOpenConns(1)
	q := `SELECT name, coalesce(annotation_name, '-') FROM gpu_kernels_with_annotations ORDER BY name`
	for _, c := range []struct {
		compat bool
		want   [][]string
	}{
		{false, [][]string{{"Memset at 50", "inner"}, {"Memset at 51", "inner"}, {"k", "inner"}, {"k2", "outer"}}},
		{true, [][]string{{"Memset at 50", "outer"}, {"Memset at 51", "inner"}, {"k", "inner"}, {"k2", "marker"}}},
	} {
		if _, err := db.Exec(fmt.Sprintf(`SET VARIABLE hta_compat = %v`, c.compat)); err != nil {
			t.Fatal(err)
		}
		ctWantRows(t, db, q, c.want)
	}
}
