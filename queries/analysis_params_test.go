package queries_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"tracesql/engine"
)

// apOpen loads testdata/hta/<name> once per label (ranks by file order: rank 0) into a fresh database.
func apOpen(t *testing.T, name string, labels ...string) *engine.DB {
	t.Helper()
	db := sqOpen(t, "")
	for _, l := range labels {
		if _, err := db.Load(context.Background(), []string{sqTestdata(name)}, engine.LoadOptions{Label: l, RankFrom: engine.RankIndex}); err != nil {
			t.Fatalf("load %s as %s: %v", name, l, err)
		}
	}
	return db
}

// apErrors runs each query and wants an error containing its message (modes: both, on one connection each).
func apErrors(t *testing.T, db *engine.DB, cases []struct{ q, msg string }) {
	t.Helper()
	for _, compat := range []bool{false, true} {
		c := sqConn(t, db, compat)
		for _, x := range cases {
			rows, err := c.QueryContext(context.Background(), x.q)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			if err == nil || !strings.Contains(err.Error(), x.msg) {
				t.Errorf("compat=%v: %s: error %v, want one containing %q", compat, x.q, err, x.msg)
			}
		}
	}
}

// TestAnalysisUnknownRankOrLabel: a macro that selects one rank (and optionally a label) refuses a rank or label
// that is not loaded, as export_kernel_sequences_overlay, export_counters_trace and critical_path do, instead of
// an empty result that reads as "no such sequence". frequent_kernel_sequences returned no rows.
func TestAnalysisUnknownRankOrLabel(t *testing.T) {
	// sq_kseq_bwd.json: aten::mm with 3 kernels in forward and in backward (TestSQKernelSequencesQuirks).
	db := apOpen(t, "sq_kseq_bwd.json", "a", "b")
	apErrors(t, db, []struct{ q, msg string }{
		{`SELECT * FROM frequent_kernel_sequences('aten::mm', rank := 3)`, "frequent_kernel_sequences: no trace with rank 3 is loaded (ranks loaded: "},
		{`SELECT * FROM frequent_kernel_sequences('aten::mm', label := 'nope')`, `frequent_kernel_sequences: no trace with label "nope" and rank 0 is loaded`},
		{`SELECT * FROM frequent_kernel_sequences('aten::mm', rank := 1, label := 'a')`, `no trace with label "a" and rank 1`},
		// the operator found nowhere is still checked first for the rank
		{`SELECT * FROM frequent_kernel_sequences('no such op', rank := 3)`, "no trace with rank 3"},
		// the sibling that writes the overlay (Go) already did this
		{`SELECT * FROM export_kernel_sequences_overlay('aten::mm', '` + t.TempDir() + `', rank := 3, label := 'a')`, `export_kernel_sequences_overlay: no trace with label "a" and rank 3 is loaded (ranks loaded: 0)`},
		{`SELECT * FROM export_kernel_sequences_overlay('aten::mm', '` + t.TempDir() + `', rank := 3)`, "export_kernel_sequences_overlay: no trace with rank 3 is loaded (ranks loaded: 0)"},
		// no operator: no rows (or an overlay that marks nothing and strips every event's args)
		{`SELECT * FROM frequent_kernel_sequences(NULL)`, "frequent_kernel_sequences: operator_name is required"},
		{`SELECT * FROM frequent_kernel_sequences('')`, "frequent_kernel_sequences: operator_name is required"},
		{`SELECT * FROM export_kernel_sequences_overlay(NULL, '` + t.TempDir() + `', label := 'a')`, "export_kernel_sequences_overlay: operator_name is required"},
		// (0 is every occurrence, an op that launched nothing as its name alone: TestSQKernelSequencesNoKernel)
		{`SELECT * FROM frequent_kernel_sequences('aten::mm', min_pattern_len := -1)`, "frequent_kernel_sequences: min_pattern_len must be at least 0, not -1"},
		{`SELECT * FROM export_kernel_sequences_overlay('aten::mm', '` + t.TempDir() + `', min_pattern_len := -1, label := 'a')`, "export_kernel_sequences_overlay: min_pattern_len must be at least 0, not -1"},
	})
	// Loaded ranks and labels still work, NULL rank and label meaning rank 0 of every label.
	c := sqConn(t, db, false)
	for q, want := range map[string]int{
		`SELECT count(*) FROM frequent_kernel_sequences('aten::mm', label := 'b')`:                        2,
		`SELECT count(*) FROM frequent_kernel_sequences('aten::mm', rank := NULL, label := NULL)`:         4,
		`SELECT count(*) FROM frequent_kernel_sequences('aten::mm', rank := 0, label := 'a', top_k := 1)`: 1,
		`SELECT count(*) FROM frequent_kernel_sequences('no such op')`:                                    0,
	} {
		var n int
		if err := c.QueryRowContext(context.Background(), q).Scan(&n); err != nil || n != want {
			t.Errorf("%s: %d rows (%v), want %d", q, n, err, want)
		}
	}
}

// TestAnalysisListParameterTypes: a list parameter given a bare value or a list of the wrong type is a one-line
// error naming the macro and the parameter. It was a binder error about len(INTEGER_LITERAL),
// list_contains's template type or a lambda, or (kernel_launch_stats(ranks := [0.5])) a silent cast to rank 1.
func TestAnalysisListParameterTypes(t *testing.T) {
	db := apOpen(t, "bd_annotations.json", "trace")
	apErrors(t, db, []struct{ q, msg string }{
		{`SELECT * FROM idle_time_breakdown(ranks := 0)`, "idle_time_breakdown: ranks must be a list of integers such as [0, 1], not INTEGER"},
		{`SELECT * FROM idle_time_breakdown(streams := 7)`, "idle_time_breakdown: streams must be a list of integers"},
		{`SELECT * FROM idle_time_breakdown(ranks := ['0'])`, "idle_time_breakdown: ranks must be a list of integers such as [0, 1], not VARCHAR[]"},
		{`SELECT * FROM idle_interval_stats(ranks := 0)`, "idle_interval_stats: ranks must be a list of integers"},
		// a NULL element matched nothing: the result was empty
		{`SELECT * FROM idle_time_breakdown(ranks := [NULL])`, "idle_time_breakdown: ranks must not hold NULL: [NULL]"},
		{`SELECT * FROM idle_interval_stats(streams := [7, NULL])`, "idle_interval_stats: streams must not hold NULL: [7, NULL]"},
		{`SELECT * FROM kernel_launch_stats(ranks := [0, NULL])`, "kernel_launch_stats: ranks must not hold NULL"},
		{`SELECT * FROM potential_stragglers(profiler_steps := [NULL])`, "potential_stragglers: profiler_steps must not hold NULL"},
		{`SELECT * FROM idle_interval_stats(streams := [7.5])`, "idle_interval_stats: streams must be a list of integers"},
		{`SELECT * FROM kernel_launch_stats(ranks := 0)`, "kernel_launch_stats: ranks must be a list of integers"},
		{`SELECT * FROM kernel_launch_stats(ranks := [0.5])`, "kernel_launch_stats: ranks must be a list of integers"},
		{`SELECT * FROM user_annotation_breakdown(allowlist_patterns := [1])`, "user_annotation_breakdown: allowlist_patterns must be a list of strings"},
		// A rank no trace has is an error, not an empty result (a typo looked like a rank without GPU work).
		{`SELECT * FROM idle_time_breakdown(ranks := [0, 3])`, "idle_time_breakdown: ranks: no trace with rank 3 is loaded (ranks loaded: 0)"},
		{`SELECT * FROM idle_interval_stats(ranks := [-1])`, "idle_interval_stats: ranks: no trace with rank -1 is loaded (ranks loaded: 0)"},
		{`SELECT * FROM kernel_launch_stats(ranks := [5])`, "kernel_launch_stats: ranks: no trace with rank 5 is loaded (ranks loaded: 0)"},
		// so is a stream without GPU work, when the list names one (a mistyped 70 for 7 was an empty table)
		{`SELECT * FROM idle_time_breakdown(streams := [70])`, "idle_time_breakdown: streams: no GPU work on stream 70 in the loaded traces (streams: 7)"},
		{`SELECT * FROM idle_interval_stats(ranks := [0], streams := [7, -1])`, "idle_interval_stats: streams: no GPU work on stream -1 in the loaded traces (streams: 7)"},
		{`SELECT * FROM idle_time_breakdown(ranks := [3], streams := [70])`, "idle_time_breakdown: ranks: no trace with rank 3"},
	})
	// (the check runs on the rows the parameter filters: a trace with ProfilerStep# and CPU annotations)
	apErrors(t, apOpen(t, "sq_kseq_bwd.json", "trace"), []struct{ q, msg string }{
		{`SELECT * FROM potential_stragglers(profiler_steps := 1)`, "potential_stragglers: profiler_steps must be a list of integers"},
		// a step no trace has was an empty result, which read as "no stragglers"
		{`SELECT * FROM potential_stragglers(profiler_steps := [99])`, "potential_stragglers: profiler_steps: no trace has ProfilerStep#99 (steps loaded: "},
		{`SELECT * FROM user_annotation_breakdown(use_gpu_annotation := false, allowlist_patterns := 'fwd')`,
			"user_annotation_breakdown: allowlist_patterns must be a list of strings such as ['forward'], not VARCHAR"},
	})
	// Where there is nothing for the list to filter (a CPU-only trace without annotations or steps), a bad list
	// is still an error: the checks ran only on rows, and "streams: no GPU work" had a NULL message with no
	// stream at all, so it passed.
	apErrors(t, ctOpenJSON(t, "cpu_only.json", `{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":5}]}`),
		[]struct{ q, msg string }{
			{`SELECT * FROM idle_time_breakdown(streams := [99])`, "idle_time_breakdown: streams: no GPU work on stream 99 in the loaded traces (streams: none)"},
			{`SELECT * FROM idle_interval_stats(streams := [7])`, "idle_interval_stats: streams: no GPU work on stream 7 in the loaded traces (streams: none)"},
			{`SELECT * FROM user_annotation_breakdown(use_gpu_annotation := false, allowlist_patterns := 'fwd')`,
				"user_annotation_breakdown: allowlist_patterns must be a list of strings such as ['forward'], not VARCHAR"},
			{`SELECT * FROM user_annotation_breakdown(allowlist_patterns := [NULL])`, "user_annotation_breakdown: allowlist_patterns must not hold NULL"},
			{`SELECT * FROM potential_stragglers(profiler_steps := [3])`, "potential_stragglers: profiler_steps: no trace has ProfilerStep#3 (steps loaded: none"}, // compat adds why
			{`SELECT * FROM potential_stragglers(profiler_steps := 'x')`, "potential_stragglers: profiler_steps must be a list of integers"},
		})
	// Lists of any integer type, empty lists and NULL still work; an empty list of ranks or streams means all
	// of them, as NULL does (TestPotentialStragglers checks profiler_steps := []).
	c := sqConn(t, db, false)
	for _, q := range []string{
		`SELECT count(*) FROM idle_time_breakdown(ranks := [0::TINYINT], streams := [7::BIGINT])`,
		`SELECT count(*) FROM kernel_launch_stats(ranks := [0::UBIGINT])`,
		`SELECT count(*) FROM user_annotation_breakdown(allowlist_patterns := [])`,
	} {
		var n int
		if err := c.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	for _, p := range [][2]string{
		{`idle_interval_stats(ranks := [], streams := [])`, `idle_interval_stats()`},
		{`idle_time_breakdown(ranks := [], streams := [])`, `idle_time_breakdown()`},
		{`kernel_launch_stats(ranks := [])`, `kernel_launch_stats()`},
	} {
		var empty, all int
		if err := c.QueryRowContext(context.Background(), `SELECT count(*) FROM `+p[0]).Scan(&empty); err != nil {
			t.Fatalf("%s: %v", p[0], err)
		}
		if err := c.QueryRowContext(context.Background(), `SELECT count(*) FROM `+p[1]).Scan(&all); err != nil {
			t.Fatalf("%s: %v", p[1], err)
		}
		if empty != all || all == 0 {
			t.Errorf("%s: %d rows, %s: %d (want equal, > 0)", p[0], empty, p[1], all)
		}
	}
}

// TestRankStreamFilters: ranks and streams select exactly the rows of those ranks and streams, in every branch
// of the macros that take them (the stored idle summaries, a delay that computes them, compat mode): the filters
// read the lists _ranks_loaded checked, after the groups are formed.
func TestRankStreamFilters(t *testing.T) {
	db := ctOpen(t, "../testdata/traces/dlrm_8ranks")
	for _, compat := range []bool{false, true} {
		c := sqConn(t, db, compat)
		for _, f := range []struct{ call, where string }{
			{`idle_time_breakdown(ranks := [2, 5], streams := [22, 84])`, `rank IN (2, 5) AND stream IN (22, 84)`},
			{`idle_time_breakdown(consecutive_kernel_delay := 10, ranks := [3], streams := [7])`, `rank = 3 AND stream = 7`},
			{`idle_interval_stats(ranks := [2, 5], streams := [22, 84])`, `rank IN (2, 5) AND stream IN (22, 84)`},
			{`idle_interval_stats(consecutive_kernel_delay := 10, streams := [24])`, `stream = 24`},
			{`kernel_launch_stats(ranks := [1, 6])`, `rank IN (1, 6)`},
		} {
			all := f.call[:strings.Index(f.call, "(")+1]
			if i := strings.Index(f.call, "consecutive_kernel_delay := 10"); i >= 0 {
				all += "consecutive_kernel_delay := 10"
			}
			all += ")"
			got := ctRows(t, c, `SELECT * FROM `+f.call)
			want := ctRows(t, c, `SELECT * FROM `+all+` WHERE `+f.where)
			if len(want) == 0 || len(want) == len(ctRows(t, c, `SELECT * FROM `+all)) {
				t.Fatalf("compat %v, %s: the filter %s selects %d rows: not a test", compat, all, f.where, len(want))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("compat %v, %s: %d rows, want the %d of %s WHERE %s", compat, f.call, len(got), len(want), all, f.where)
			}
		}
	}
}

// TestAnalysisRequiredAndHugeParameters: export_counters_trace with a NULL rank says the rank is missing (it
// looked for rank -9223372036854775808), and a huge consecutive_kernel_delay counts every short-of-host gap as
// kernel_wait instead of overflowing BIGINT (delay · 1000).
func TestAnalysisRequiredAndHugeParameters(t *testing.T) {
	db := apOpen(t, "bd_idle.json", "trace")
	apErrors(t, db, []struct{ q, msg string }{
		{`SELECT * FROM export_counters_trace(NULL, '` + t.TempDir() + `')`, "export_counters_trace: rank is required"},
		{`SELECT * FROM export_counters_trace(rank := NULL, output_dir := '` + t.TempDir() + `', label := 'trace')`, "rank is required"},
	})
	// bd_idle.json (TestBreakdownsDefaultMode): host_wait 50, kernel_wait 10, other 50 µs by default; with no
	// limit on the kernel-wait delay the other 50 µs are kernel_wait too (compat: HTA's "other" interval of unknown
	// length before each stream's first event stays).
	for _, compat := range []bool{false, true} {
		c := sqConn(t, db, compat)
		for _, macro := range []string{"idle_time_breakdown", "idle_interval_stats"} {
			want := map[bool]string{false: "host_wait,kernel_wait", true: "host_wait,kernel_wait,other"}[compat]
			for _, delay := range []string{"9223372036854775807", "1e300", "1000000"} {
				q := `SELECT idle_category FROM ` + macro + `(consecutive_kernel_delay := ` + delay + `) ORDER BY ALL`
				var cats []string
				for _, r := range ctRows(t, c, q) {
					cats = append(cats, r[0])
				}
				if strings.Join(cats, ",") != want {
					t.Errorf("compat=%v: %s: categories %v, want %s", compat, q, cats, want)
				}
			}
		}
	}
}

// TestAnalysisParameterRanges: a value outside a parameter's range is an error naming the macro, the parameter
// and the value, where it used to run (a negative num_kernels folded every kernel, a negative
// consecutive_kernel_delay made every gap "other", num_candidates := -3 meant 1). Also on a CPU-only trace, where
// every one of these analyses is empty.
func TestAnalysisParameterRanges(t *testing.T) {
	cpuOnly := filepath.Join(t.TempDir(), "cpu.json")
	if err := os.WriteFile(cpuOnly, []byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := ctOpen(t, "../testdata/traces/dlrm_8ranks")
	for _, d := range []*engine.DB{db, ctOpen(t, cpuOnly)} {
		apErrors(t, d, []struct{ q, msg string }{
			{`SELECT * FROM kernel_breakdown(num_kernels := -1)`, "kernel_breakdown: num_kernels must be an integer >= 0, not -1"},
			// a fraction was rounded without a word
			{`SELECT * FROM kernel_breakdown(num_kernels := 2.5)`, "kernel_breakdown: num_kernels must be an integer >= 0, not 2.5"},
			{`SELECT * FROM kernel_duration_distribution(num_kernels := 0.5)`, "kernel_duration_distribution: num_kernels must be an integer >= 0, not 0.5"},
			{`SELECT * FROM time_blocked_on_full_queue(max_queue_length := 1.5)`, "time_blocked_on_full_queue: max_queue_length must be an integer >= 1, not 1.5"},
			{`SELECT * FROM kernel_breakdown(duration_ratio := 2)`, "kernel_breakdown: duration_ratio must be between 0 and 1, not 2"},
			{`SELECT * FROM kernel_duration_distribution(duration_ratio := -0.5)`, "kernel_duration_distribution: duration_ratio must be between 0 and 1, not -0.5"},
			{`SELECT * FROM user_annotation_breakdown(use_gpu_annotation := false, num_kernels := -3)`, "user_annotation_breakdown: num_kernels must be an integer >= 0, not -3"},
			{`SELECT * FROM idle_time_breakdown(consecutive_kernel_delay := -5)`, "idle_time_breakdown: consecutive_kernel_delay must be a finite number >= 0 (µs), not -5"},
			// NaN passed the range checks (DuckDB orders NaN above every number), a boolean became 1, a string a number
			{`SELECT * FROM kernel_breakdown(num_kernels := 'NaN'::DOUBLE)`, "kernel_breakdown: num_kernels must be an integer >= 0, not nan"},
			{`SELECT * FROM time_blocked_on_full_queue(max_queue_length := 'inf'::DOUBLE)`, "time_blocked_on_full_queue: max_queue_length must be an integer >= 1, not inf"},
			{`SELECT * FROM kernel_launch_stats(runtime_cutoff := true)`, "kernel_launch_stats: runtime_cutoff must be a finite number >= 0 (µs), not true (BOOLEAN)"},
			{`SELECT * FROM kernel_breakdown(duration_ratio := '0.5')`, "kernel_breakdown: duration_ratio must be between 0 and 1, given as a number, not the text '0.5'"},
			{`SELECT * FROM user_annotation_breakdown(num_kernels := true)`, "user_annotation_breakdown: num_kernels must be an integer >= 0, not true (BOOLEAN)"},
			{`SELECT * FROM idle_interval_stats(consecutive_kernel_delay := -5)`, "idle_interval_stats: consecutive_kernel_delay must be a finite number >= 0 (µs), not -5"},
			// NaN compares greater than every number in DuckDB: it passed as an infinite delay
			{`SELECT * FROM idle_time_breakdown(consecutive_kernel_delay := 'nan'::DOUBLE)`, "idle_time_breakdown: consecutive_kernel_delay must be a finite number >= 0 (µs), not nan"},
			{`SELECT * FROM idle_interval_stats(consecutive_kernel_delay := 'inf'::DOUBLE)`, "idle_interval_stats: consecutive_kernel_delay must be a finite number >= 0 (µs), not inf"},
			{`SELECT * FROM kernel_launch_stats(runtime_cutoff := -1)`, "kernel_launch_stats: runtime_cutoff must be a finite number >= 0 (µs), not -1"},
			{`SELECT * FROM kernel_launch_stats(launch_delay_cutoff := -1)`, "kernel_launch_stats: launch_delay_cutoff must be a finite number >= 0 (µs), not -1"},
			{`SELECT * FROM kernel_launch_stats(launch_delay_cutoff := 'nan'::DOUBLE)`, "kernel_launch_stats: launch_delay_cutoff must be a finite number >= 0 (µs), not nan"},
			{`SELECT * FROM time_blocked_on_full_queue(max_queue_length := 0)`, "time_blocked_on_full_queue: max_queue_length must be an integer >= 1, not 0"},
			{`SELECT * FROM potential_stragglers(num_candidates := -3)`, "potential_stragglers: num_candidates must be an integer >= 1, not -3"},
			// a wrong type named too (a boolean listed DuckDB's trunc overloads, a list a COALESCE type error)
			{`SELECT * FROM potential_stragglers(num_candidates := true)`, "potential_stragglers: num_candidates must be an integer, not true (BOOLEAN)"},
			{`SELECT * FROM potential_stragglers(num_candidates := [2])`, "potential_stragglers: num_candidates must be an integer, not [2] (INTEGER[])"},
		})
	}
	// The bounds themselves are accepted.
	c := sqConn(t, db, false)
	for _, q := range []string{`kernel_breakdown(num_kernels := 0, duration_ratio := 1)`, `idle_time_breakdown(consecutive_kernel_delay := 0)`,
		`time_blocked_on_full_queue(max_queue_length := 1)`, `potential_stragglers(num_candidates := 1)`, `kernel_launch_stats(runtime_cutoff := 0)`} {
		var n int
		if err := c.QueryRowContext(context.Background(), `SELECT count(*) FROM `+q).Scan(&n); err != nil || n == 0 {
			t.Errorf("%s: %d rows, %v", q, n, err)
		}
	}
}

// TestAnalysisParameterTypes: a value of a type a parameter cannot take (a list, a struct, a date, a decimal or 2
// for a boolean, a number for a label, an integer list element beyond BIGINT) is an error naming the macro and the
// parameter, in every public macro. Such values gave DuckDB binder errors about coalesce(), trunc() or an internal
// Go function (_hta_call_stack, _export_kernel_sequences_overlay), and 2 was silently true for the booleans read
// raw; the critical-path family's errors named no function at all.
func TestAnalysisParameterTypes(t *testing.T) {
	db := ctOpen(t, "../testdata/traces/dlrm_8ranks")
	dir := t.TempDir()
	apErrors(t, db, []struct{ q, msg string }{
		{`SELECT * FROM idle_time_breakdown(consecutive_kernel_delay := [1])`, "idle_time_breakdown: consecutive_kernel_delay must be a finite number >= 0 (µs), not [1] (INTEGER[])"},
		{`SELECT * FROM idle_interval_stats(consecutive_kernel_delay := DATE '2020-01-01')`, "idle_interval_stats: consecutive_kernel_delay must be a finite number >= 0 (µs), not 2020-01-01 (DATE)"},
		{`SELECT * FROM kernel_breakdown(include_memory_kernels := 1.5)`, "kernel_breakdown: include_memory_kernels must be true or false, not 1.5 (DECIMAL(2,1))"},
		{`SELECT * FROM kernel_breakdown(include_memory_kernels := 2)`, "kernel_breakdown: include_memory_kernels must be true or false, not 2 (INTEGER)"},
		{`SELECT * FROM kernel_breakdown(num_kernels := {'a': 1})`, "kernel_breakdown: num_kernels must be an integer >= 0, not {'a': 1} (STRUCT(a INTEGER))"},
		// (a list of decimals, whose type name starts with DECIMAL too)
		{`SELECT * FROM kernel_duration_distribution(duration_ratio := [0.5])`, "kernel_duration_distribution: duration_ratio must be between 0 and 1, not [0.5] (DECIMAL(2,1)[])"},
		{`SELECT * FROM critical_path_whatif(scale := 'true', factor := [0.5])`, "critical_path_whatif: factor must be a number, not [0.5] (DECIMAL(2,1)[])"},
		{`SELECT * FROM kernel_type_breakdown(include_memory_kernels := [true])`, "kernel_type_breakdown: include_memory_kernels must be true or false, not [true] (BOOLEAN[])"},
		{`SELECT * FROM kernel_type_breakdown_by_rank(include_memory_kernels := 'maybe')`, "kernel_type_breakdown_by_rank: include_memory_kernels must be true or false, not maybe (VARCHAR)"},
		{`SELECT * FROM kernel_launch_stats(runtime_cutoff := [1])`, "kernel_launch_stats: runtime_cutoff must be a finite number >= 0 (µs), not [1] (INTEGER[])"},
		{`SELECT * FROM kernel_launch_stats(include_memory_events := 2)`, "kernel_launch_stats: include_memory_events must be true or false, not 2 (INTEGER)"},
		{`SELECT * FROM user_annotation_breakdown(use_gpu_annotation := [1])`, "user_annotation_breakdown: use_gpu_annotation must be true or false, not [1] (INTEGER[])"},
		{`SELECT * FROM user_annotation_breakdown(duration_ratio := 'abc')`, "user_annotation_breakdown: duration_ratio must be between 0 and 1, given as a number, not the text 'abc'"},
		{`SELECT * FROM time_blocked_on_full_queue(max_queue_length := [3])`, "time_blocked_on_full_queue: max_queue_length must be an integer >= 1, not [3] (INTEGER[])"},
		{`SELECT * FROM idle_time_breakdown(ranks := [9223372036854775808])`, "idle_time_breakdown: ranks is out of range: [9223372036854775808]"},
		{`SELECT * FROM potential_stragglers(profiler_steps := [1, -9223372036854775809])`, "potential_stragglers: profiler_steps is out of range"},
		{`SELECT * FROM frequent_kernel_sequences('aten::addmm', label := 1)`, "frequent_kernel_sequences: label must be a string, not 1 (INTEGER)"},
		{`SELECT * FROM frequent_kernel_sequences(['aten::addmm'])`, "frequent_kernel_sequences: operator_name must be a string, not ['aten::addmm'] (VARCHAR[])"},
		{`SELECT * FROM frequent_kernel_sequences('aten::addmm', top_k := 1.5)`, "frequent_kernel_sequences: top_k must be an integer, not 1.5"},
		{`SELECT * FROM export_kernel_sequences_overlay('aten::addmm', '` + dir + `', compress_other_kernels := 2)`, "export_kernel_sequences_overlay: compress_other_kernels must be true or false, not 2 (INTEGER)"},
		{`SELECT * FROM export_kernel_sequences_overlay('aten::addmm', '` + dir + `', rank := 'x')`, "export_kernel_sequences_overlay: rank must be an integer, not x (VARCHAR)"},
		{`SELECT * FROM temporal_breakdown, kernel_breakdown(hta_compat := 'x')`, "kernel_breakdown: hta_compat must be true or false, not x (VARCHAR)"},
		{`SELECT * FROM trace_diff('trace', 'trace', hta_compat := [1])`, "trace_diff: hta_compat must be true or false, not [1] (INTEGER[])"},
		// the critical-path family, SQL-side and Go-side messages alike
		{`SELECT * FROM critical_path(rank := 'x')`, "critical_path: rank must be an integer, not x (VARCHAR)"},
		{`SELECT * FROM critical_path_summary(label := 1)`, "critical_path_summary: label must be a string, not 1 (INTEGER)"},
		{`SELECT * FROM hotspots(rank := 9)`, "hotspots: no trace with rank 9 is loaded"},
		{`SELECT * FROM cdg_nodes(rank := -1)`, "cdg_nodes: rank must be a rank number"},
		{`SELECT * FROM cp_graph_edges(algorithm := 'abc')`, `cp_graph_edges: unknown algorithm "abc"`},
		{`SELECT * FROM critical_path_whatif(scale := 'true', factor := 'NaN'::DOUBLE)`, "critical_path_whatif: factor must be"},
		{`SELECT * FROM export_critical_path_overlay(rank := 0, output_dir := '` + dir + `', instance := 99)`, "export_critical_path_overlay: critical path of label"},
	})
	// What DuckDB casts to a boolean from its text still is one, and a DOUBLE duration_ratio folds as the same
	// decimal does: the default-mode share is compared as a quotient, so that a share of exactly the ratio is
	// equal to it in both types.
	c := sqConn(t, db, false)
	for _, p := range [][2]string{
		{`kernel_breakdown(include_memory_kernels := 'yes')`, `kernel_breakdown(include_memory_kernels := true)`},
		{`kernel_launch_stats(include_memory_events := 0)`, `kernel_launch_stats(include_memory_events := false)`},
		{`user_annotation_breakdown(use_gpu_annotation := 'f')`, `user_annotation_breakdown(use_gpu_annotation := false)`},
		{`kernel_breakdown(duration_ratio := 0.5::DOUBLE, num_kernels := 1)`, `kernel_breakdown(duration_ratio := 0.5, num_kernels := 1)`},
	} {
		got := ctRows(t, c, `SELECT * FROM `+p[0]+` ORDER BY ALL`)
		want := ctRows(t, c, `SELECT * FROM `+p[1]+` ORDER BY ALL`)
		if len(want) == 0 || strings.Join(flatRows(got), "\n") != strings.Join(flatRows(want), "\n") {
			t.Errorf("%s: %d rows, %s: %d rows, or they differ", p[0], len(got), p[1], len(want))
		}
	}
}
