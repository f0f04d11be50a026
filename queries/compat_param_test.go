package queries_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracesql/engine"
	"tracesql/internal/htaref"
)

// cpResult runs q on c and returns its rows, one string per row (ctFormat values joined by |). With file, the
// first column is the path of a file the query wrote: it is replaced by whether the file is gzip and its
// (decompressed) content.
func cpResult(t *testing.T, c *sql.Conn, q string, file bool) []string {
	t.Helper()
	var out []string
	for _, s := range ctRows(t, c, q) {
		if file {
			b, err := os.ReadFile(s[0])
			if err != nil {
				t.Fatal(err)
			}
			gz := bytes.HasPrefix(b, []byte{0x1f, 0x8b})
			if gz {
				r, err := gzip.NewReader(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				if b, err = io.ReadAll(r); err != nil {
					t.Fatal(err)
				}
			}
			s[0] = fmt.Sprintf("gzip=%v %s", gz, b)
		}
		out = append(out, strings.Join(s, "|"))
	}
	return out
}

// cpSame reports whether two results are equal row for row.
func cpSame(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n") && len(a) == len(b)
}

// cpExec runs a statement on c.
func cpExec(t *testing.T, c *sql.Conn, q string) {
	t.Helper()
	if _, err := c.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestHTACompatParameter: an analysis macro's hta_compat argument sets the mode of that call whatever the
// session's hta_compat: macro(…, hta_compat := true) with the variable unset returns exactly the rows of
// macro(…) under SET VARIABLE hta_compat = true, and hta_compat := false with the variable set those of the
// default mode. Every case is one where the two modes differ on its trace, so that an argument the macro
// (or a macro it calls) ignores fails the test.
func TestHTACompatParameter(t *testing.T) {
	_, traces := htaref.Root(t)
	filter, err := filepath.Glob(filepath.Join(traces, "trace_filter", "*.json.gz"))
	if err != nil || len(filter) != 2 {
		t.Fatalf("trace_filter: %v %v", filter, err)
	}
	type tc struct {
		macro, args string // args: the other arguments; {out} is replaced by a fresh directory
		file        bool   // the macro writes a file whose path is the first column
	}
	sets := []struct {
		name  string
		open  func(t *testing.T) *engine.DB
		cases []tc
	}{
		// two ranks of a real trace: every analysis of the breakdown, launch, queue, straggler and sequence
		// families differs between the modes here
		{"trace_filter", func(t *testing.T) *engine.DB { return sqOpen(t, "trace", filter...) }, []tc{
			{"idle_time_breakdown", "", false},
			{"idle_interval_stats", "", false},
			{"kernel_type_breakdown", "", false},
			{"kernel_type_breakdown_by_rank", "", false},
			{"kernel_breakdown", "", false},
			{"kernel_duration_distribution", "", false},
			{"user_annotation_breakdown", "use_gpu_annotation := false", false},
			{"kernel_launch_stats", "", false},
			{"time_blocked_on_full_queue", "max_queue_length := 2", false},
			{"potential_stragglers", "", false},
			{"frequent_kernel_sequences", "'aten::'", false},
			{"export_counters_trace", "0, '{out}'", true},
			{"export_kernel_sequences_overlay", "'aten::', '{out}', min_pattern_len := 1", true},
		}},
		// a gpu_user_annotation is a GPU op by default, a CPU op to HTA (TestSQTraceDiffDefault)
		{"sq_diff", func(t *testing.T) *engine.DB {
			return sqDiffDB(t, "a", sqTestdata("sq_diff_a.json"), "b", sqTestdata("sq_diff_b.json"))
		}, []tc{
			{"trace_diff", "'a', 'b', device_type := 'GPU'", false},
			{"ops_diff", "'a', 'b', device_type := 'GPU'", false},
		}},
		// sub-µs events: HTA's µs-rounded frame gives another critical path (hta_compat is compat's synonym)
		{"sq_kseq_subus", func(t *testing.T) *engine.DB { return sqOpen(t, "trace", sqTestdata("sq_kseq_subus.json")) }, []tc{
			{"critical_path", "annotation := ''", false},
		}},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			db := set.open(t)
			for _, x := range set.cases {
				t.Run(x.macro, func(t *testing.T) {
					call := func(hc string) string {
						var parts []string
						if x.args != "" {
							parts = append(parts, strings.ReplaceAll(x.args, "{out}", t.TempDir()))
						}
						if hc != "" {
							parts = append(parts, "hta_compat := "+hc)
						}
						return fmt.Sprintf("SELECT * FROM %s(%s)", x.macro, strings.Join(parts, ", "))
					}
					c, err := db.SQL.Conn(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					cpExec(t, c, `RESET VARIABLE hta_compat`)
					compatArg := cpResult(t, c, call("true"), x.file)
					cpExec(t, c, `SET VARIABLE hta_compat = true`)
					compatVar := cpResult(t, c, call(""), x.file)
					defaultArg := cpResult(t, c, call("false"), x.file)
					cpExec(t, c, `RESET VARIABLE hta_compat`)
					defaultVar := cpResult(t, c, call(""), x.file)
					if cpSame(compatVar, defaultVar) {
						t.Fatalf("the modes give the same %d rows on this trace: the case tests nothing", len(compatVar))
					}
					if !cpSame(compatArg, compatVar) {
						t.Errorf("hta_compat := true, variable unset: %d rows that differ from the compat mode's %d",
							len(compatArg), len(compatVar))
					}
					if !cpSame(defaultArg, defaultVar) {
						t.Errorf("hta_compat := false, variable set: %d rows that differ from the default mode's %d",
							len(defaultArg), len(defaultVar))
					}
				})
			}
		})
	}
}

// TestCompatSynonym: the critical-path macros take hta_compat as a synonym of their compat parameter; compat
// wins when both are given.
func TestCompatSynonym(t *testing.T) {
	db := sqOpen(t, "trace", sqTestdata("sq_kseq_subus.json"))
	c, err := db.SQL.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q := func(args string) []string {
		return cpResult(t, c, `SELECT * FROM critical_path(annotation := ''`+args+`)`, false)
	}
	compat, def := q(", compat := true"), q(", compat := false")
	if cpSame(compat, def) {
		t.Fatal("the modes give the same critical path: the test tests nothing")
	}
	for args, want := range map[string][]string{
		", hta_compat := true":                  compat,
		", compat := false, hta_compat := true": def,
		", compat := true, hta_compat := false": compat,
	} {
		if got := q(args); !cpSame(got, want) {
			t.Errorf("critical_path(annotation := ''%s): %v, want %v", args, got, want)
		}
	}
}

// TestCompatVariableValues: the session variable takes what casts to a boolean; anything else is an error
// naming the variable ('banana' used to read as false, running every analysis in the default mode).
func TestCompatVariableValues(t *testing.T) {
	db := sqOpen(t, "trace", sqTestdata("sq_kseq_subus.json"))
	c, err := db.SQL.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// (2, -1 and 0.5 cast to BOOLEAN as true, and ran the analyses in compat mode: r41 #5)
	for value, want := range map[string]string{"true": "true", "1": "true", "0": "false", "'false'": "false", "NULL": "false",
		"'banana'": "error banana", "2": "error 2", "-1": "error -1", "0.5": "error 0.5"} {
		cpExec(t, c, `SET VARIABLE hta_compat = `+value)
		var got bool
		err := c.QueryRowContext(context.Background(), `SELECT count(*) > 0 AND hta_compat() FROM temporal_breakdown`).Scan(&got)
		switch {
		case strings.HasPrefix(want, "error "):
			if err == nil || !strings.Contains(err.Error(), "hta_compat is "+strings.TrimPrefix(want, "error ")+": SET VARIABLE hta_compat = true") {
				t.Errorf("hta_compat = %s: error %v, want one naming the variable", value, err)
			}
		case err != nil:
			t.Errorf("hta_compat = %s: %v", value, err)
		case fmt.Sprint(got) != want:
			t.Errorf("hta_compat = %s: compat %v, want %s", value, got, want)
		}
	}
}
