package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracesql/engine"
)

// TestStoredResultsFollowRules: the session reads the per-trace results stored at load without checking them
// against kernel_classes (engine.DB.SyncStored), so an edit of the rules must reach the analyses all the
// same: in the statement after it, inside a transaction and after its rollback, and in a later session of a
// file whose rules another client changed.
func TestStoredResultsFollowRules(t *testing.T) {
	trace := "../../testdata/traces/alexnet"
	const rule = "INSERT INTO kernel_classes VALUES (0, 'sgemm', 'COMMUNICATION', 'all'), (0, 'Memcpy HtoD', 'OTHER', 'all');\n"
	const analyses = "SELECT compute_time_us, non_compute_time_us FROM temporal_breakdown;\n" +
		"SELECT kernel_type, sum_us FROM kernel_type_breakdown() ORDER BY kernel_type;\n" +
		"SELECT comp_comm_overlap_pct FROM comm_comp_overlap;\n" +
		"SELECT name, count, mean, p50 FROM memory_bw_summary;\n"
	const fresh = "SELECT _stored_fresh() AS fresh;\n"
	dir := t.TempDir()

	before := mustRun(t, analyses, "--format", "csv", trace)
	// the rule in place before the load: the stored results are computed under it
	ruled := filepath.Join(dir, "ruled.duckdb")
	mustRun(t, rule, "--db", ruled)
	after := mustRun(t, analyses, "--format", "csv", "--db", ruled, trace)
	if after == before {
		t.Fatalf("the rule changes nothing:\n%s", after)
	}

	edited := filepath.Join(dir, "edited.duckdb")
	writeDB(t, edited, trace)
	got := mustRun(t, fresh+analyses+rule+fresh+analyses+"BEGIN;\nDELETE FROM kernel_classes WHERE priority = 0;\n"+fresh+analyses+
		"ROLLBACK;\n"+fresh+analyses, "--format", "csv", "--db", edited)
	want := "fresh\ntrue\n" + before + "fresh\ntrue\n" + after + "fresh\nfalse\n" + before + "fresh\ntrue\n" + after
	if got != want {
		t.Errorf("edits in one session:\n%s\nwant\n%s", got, want)
	}
	if got := mustRun(t, fresh+analyses, "--format", "csv", "--db", edited); got != "fresh\ntrue\n"+after {
		t.Errorf("the next session:\n%s\nwant the rule's results, fresh", got)
	}

	// statements the session took for queries (a CTE named values), a plan that outlives the check (PREPARE),
	// and another tracesql database's rules (ATTACH), whose views read the same flag
	const temporal = "SELECT compute_time_us, non_compute_time_us FROM temporal_breakdown;\n"
	plain := filepath.Join(dir, "plain.duckdb")
	writeDB(t, plain, trace)
	temporalBefore := mustRun(t, temporal, "--format", "csv", "--db", plain)
	temporalAfter := mustRun(t, temporal, "--format", "csv", "--db", edited)
	if temporalBefore == temporalAfter {
		t.Fatalf("the rule changes no temporal_breakdown:\n%s", temporalAfter)
	}
	for _, c := range []struct {
		name     string
		attached bool // the session opens plain and attaches the copy of edited as o; else it opens the copy
		script   string
		want     string
	}{
		{"WITH values AS … DELETE", false, "WITH values AS (SELECT 0 AS p) DELETE FROM kernel_classes WHERE priority IN (SELECT p FROM values);\n" +
			temporal, temporalBefore},
		{"PREPARE, then an edit in a transaction", false, "PREPARE q AS " + temporal +
			"BEGIN;\nDELETE FROM kernel_classes WHERE priority = 0;\nEXECUTE q;\nROLLBACK;\nEXECUTE q;\n", temporalBefore + temporalAfter},
		{"ATTACH", true, "DELETE FROM o.kernel_classes WHERE priority = 0;\n" +
			strings.ReplaceAll(temporal, "FROM temporal_breakdown", "FROM o.temporal_breakdown") + temporal, temporalBefore + temporalBefore},
	} {
		copied := filepath.Join(dir, "copy.duckdb")
		if data, err := os.ReadFile(edited); err != nil {
			t.Fatal(err)
		} else if err := os.WriteFile(copied, data, 0o644); err != nil {
			t.Fatal(err)
		}
		db, script := copied, c.script
		if c.attached {
			db, script = plain, "ATTACH '"+copied+"' AS o;\n"+script
		}
		if got := mustRun(t, script, "--format", "csv", "--db", db); got != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, got, c.want)
		}
	}

	// edited by a client that keeps no account (a later session finds the rows stale): read-only, the
	// analyses check; writable, the open computes them again once
	stale := filepath.Join(dir, "stale.duckdb")
	writeDB(t, stale, trace)
	db, err := engine.Open(context.Background(), stale)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL.Exec(strings.TrimSpace(rule)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if got := mustRun(t, fresh+analyses, "--format", "csv", "--readonly", "--db", stale); got != "fresh\nfalse\n"+after {
		t.Errorf("read-only, stale:\n%s\nwant the rule's results, not fresh", got)
	}
	if got := mustRun(t, fresh+analyses, "--format", "csv", "--db", stale); got != "fresh\ntrue\n"+after {
		t.Errorf("writable, stale:\n%s\nwant the rule's results, fresh", got)
	}
}
