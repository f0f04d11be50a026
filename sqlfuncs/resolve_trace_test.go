package sqlfuncs_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"tracesql/engine"
)

// TestResolveTraceMessages: every function that works on the one trace of a (label, rank) resolves it the same
// way (resolveTrace), so its errors read the same whichever function reports them, each prefixed by the
// function's name: a rank or label that is not loaded names what is, and a rank loaded under several labels
// asks for label :=.
func TestResolveTraceMessages(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	trace := filepath.Join("..", "testdata", "traces", "hta_cases", "zero_duration_launch.json")
	// the same file under two labels: rank 0 of "a" and rank 0 of "b"
	for _, label := range []string{"a", "b"} {
		if _, err := db.Load(ctx, []string{trace}, engine.LoadOptions{Label: label, RankFrom: engine.RankIndex}); err != nil {
			t.Fatalf("load %s as %s: %v", trace, label, err)
		}
	}
	out := t.TempDir()

	// Each function's call on rank (and label, unless it is NULL).
	calls := []struct {
		fn   string
		call func(rank, label string) string
	}{
		{"critical_path", func(rank, label string) string {
			return `SELECT * FROM critical_path(rank := ` + rank + `, label := ` + label + `)`
		}},
		{"export_counters_trace", func(rank, label string) string {
			return `SELECT * FROM export_counters_trace(` + rank + `, '` + out + `', label := ` + label + `)`
		}},
		{"export_kernel_sequences_overlay", func(rank, label string) string {
			return `SELECT * FROM export_kernel_sequences_overlay('aten::mm', '` + out + `', rank := ` + rank + `, label := ` + label + `)`
		}},
	}
	cases := []struct {
		name, rank, label, want string
	}{
		{"unknown rank", "3", "NULL", `no trace with rank 3 is loaded (ranks loaded: 0)`},
		{"unknown rank under a label", "3", "'a'", `no trace with label "a" and rank 3 is loaded (ranks loaded: 0)`},
		{"unknown label", "0", "'nope'", `no trace with label "nope" and rank 0 is loaded (none under label "nope")`},
		{"several labels", "0", "NULL", `rank 0 is loaded under several labels ("a", "b"): pass label := ...`},
	}
	for _, c := range calls {
		for _, tc := range cases {
			t.Run(c.fn+"/"+tc.name, func(t *testing.T) {
				q := c.call(tc.rank, tc.label)
				want := c.fn + ": " + tc.want
				if err := queryErr(ctx, db.SQL, q); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: error %v, want one containing %q", q, err, want)
				}
			})
		}
	}

	// frequent_kernel_sequences checks in SQL (queries/views/40_kernel_sequences.sql), with the same wording for
	// what it checks; a rank under several labels is no error there (one result per trace).
	for q, want := range map[string]string{
		`SELECT * FROM frequent_kernel_sequences('aten::mm', rank := 3)`:       `frequent_kernel_sequences: no trace with rank 3 is loaded (ranks loaded: 0)`,
		`SELECT * FROM frequent_kernel_sequences('aten::mm', label := 'nope')`: `frequent_kernel_sequences: no trace with label "nope" and rank 0 is loaded`,
	} {
		if err := queryErr(ctx, db.SQL, q); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", q, err, want)
		}
	}

	// A loaded (label, rank) resolves: the error is no longer about the trace.
	for _, q := range []string{
		`SELECT * FROM export_kernel_sequences_overlay('no such op', '` + out + `', label := 'a')`,
		`SELECT * FROM critical_path(label := 'b', annotation := 'no such annotation')`,
	} {
		rows, err := db.SQL.QueryContext(ctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if err != nil && (strings.Contains(err.Error(), "no trace with") || strings.Contains(err.Error(), "several labels")) {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// queryErr runs q and reads all its rows: the error of either (a table function fails as it is read).
func queryErr(ctx context.Context, db *sql.DB, q string) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}
