package engine

import (
	"context"
	"path/filepath"
	"testing"
)

// storedAnalyses is what the stored per-trace results feed: temporal_breakdown (_trace_summary),
// kernel_type_breakdown and comm_comp_overlap (_type_segments), memory_bw_summary (_memory_bw_stats).
const storedAnalyses = `SELECT (SELECT string_agg(format('{} {} {}', rank, compute_time_us, non_compute_time_us), '; ') FROM temporal_breakdown)
	|| ' | ' || (SELECT string_agg(format('{} {}', kernel_type, sum_us), '; ' ORDER BY kernel_type) FROM kernel_type_breakdown())
	|| ' | ' || (SELECT string_agg(format('{} {}', rank, comp_comm_overlap_pct), '; ') FROM comm_comp_overlap)
	|| ' | ' || (SELECT coalesce(string_agg(format('{} {} {} {}', name, count, mean, p50), '; ' ORDER BY name), '') FROM memory_bw_summary)`

// TestSyncStored: SyncStored vouches for the stored results only when they match kernel_classes, and computes
// again those that do not; the analyses give the same answers whichever way they read them.
func TestSyncStored(t *testing.T) {
	ctx := context.Background()
	trace := filepath.Join("..", "testdata", "traces", "alexnet")
	const rule = `INSERT INTO kernel_classes VALUES (0, 'sgemm', 'COMMUNICATION', 'all'), (0, 'Memcpy HtoD', 'OTHER', 'all')`
	fresh := func(db *DB) bool {
		t.Helper()
		var b bool
		if err := db.SQL.QueryRow(`SELECT _stored_fresh()`).Scan(&b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	// the answers of a database that had the rule before the load (its stored results computed under it)
	var before, after string
	{
		db := openTestDB(t)
		mustLoad(t, db, trace)
		before = queryText(t, db, storedAnalyses)
		if _, err := db.SQL.Exec(rule); err != nil {
			t.Fatal(err)
		}
		other := openTestDB(t)
		if _, err := other.SQL.Exec(rule); err != nil {
			t.Fatal(err)
		}
		mustLoad(t, other, trace)
		after = queryText(t, other, storedAnalyses)
		if after == before {
			t.Fatalf("the rule changes nothing: %s", after)
		}
		if got := queryText(t, db, storedAnalyses); got != after || fresh(db) {
			t.Fatalf("without SyncStored, after the rule: %s (fresh %v), want %s (not fresh)", got, fresh(db), after)
		}
	}

	path := filepath.Join(t.TempDir(), "s.duckdb")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	mustLoad(t, db, trace)
	if err := db.SyncStored(ctx); err != nil || !fresh(db) {
		t.Fatalf("SyncStored after a load: %v, fresh %v; want fresh", err, fresh(db))
	}
	if got := queryText(t, db, storedAnalyses); got != before {
		t.Errorf("fresh, before the rule: %s, want %s", got, before)
	}

	// an edit inside a transaction: only looked at (stale, so not fresh), the rollback makes it fresh again
	db.SQL.SetMaxOpenConns(1) // (the transaction's connection is the one SyncStored gets)
	for _, s := range []string{"BEGIN", rule} {
		if _, err := db.SQL.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SyncStored(ctx); err != nil || fresh(db) {
		t.Fatalf("SyncStored in the transaction: %v, fresh %v; want not fresh", err, fresh(db))
	}
	if got := queryText(t, db, storedAnalyses); got != after {
		t.Errorf("in the transaction: %s, want %s", got, after)
	}
	if _, err := db.SQL.Exec("ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := db.SyncStored(ctx); err != nil || !fresh(db) {
		t.Fatalf("SyncStored after the rollback: %v, fresh %v; want fresh", err, fresh(db))
	}
	if got := queryText(t, db, storedAnalyses); got != before {
		t.Errorf("after the rollback: %s, want %s", got, before)
	}
	db.SQL.SetMaxOpenConns(0)

	// a rule that cannot apply: nothing computed again, not fresh, the analyses name the rule
	if _, err := db.SQL.Exec(`INSERT INTO kernel_classes VALUES (5, 'sgemm(', 'OTHER', 'all')`); err != nil {
		t.Fatal(err)
	}
	if err := db.SyncStored(ctx); err != nil || fresh(db) {
		t.Fatalf("SyncStored with a bad rule: %v, fresh %v; want not fresh", err, fresh(db))
	}
	if _, err := db.SQL.Exec(`FROM kernel_type_breakdown()`); err == nil {
		t.Error("kernel_type_breakdown with a bad rule: no error")
	}
	// the edit of an earlier session, left stale in the file (no SyncStored after it)
	for _, s := range []string{`DELETE FROM kernel_classes WHERE priority = 5`, rule} {
		if _, err := db.SQL.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.SyncStored(ctx); err != nil || fresh(ro) {
		t.Fatalf("read-only SyncStored of stale results: %v, fresh %v; want not fresh", err, fresh(ro))
	}
	if got := queryText(t, ro, storedAnalyses); got != after {
		t.Errorf("read-only, stale: %s, want %s", got, after)
	}
	ro.Close()

	if db, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := queryInt(t, db, `SELECT count(*) FROM _stale_traces(-2147483648, 2147483647, true)`); n != 1 {
		t.Fatalf("%d stale traces before SyncStored, want 1", n)
	}
	if err := db.SyncStored(ctx); err != nil || !fresh(db) {
		t.Fatalf("SyncStored of stale results: %v, fresh %v; want fresh", err, fresh(db))
	}
	if n := queryInt(t, db, `SELECT count(*) FROM _stale_traces(-2147483648, 2147483647, true)`); n != 0 {
		t.Errorf("%d stale traces after SyncStored, want 0", n)
	}
	if got := queryText(t, db, storedAnalyses); got != after {
		t.Errorf("computed again: %s, want %s", got, after)
	}
	// a load resets it (its rows would be stale under a rule that cannot apply)
	if _, err := db.Load(ctx, []string{filepath.Join("..", "testdata", "traces", "ns_resolution")}, LoadOptions{Label: "other"}); err != nil {
		t.Fatal(err)
	}
	if fresh(db) {
		t.Error("fresh after a load, want not until SyncStored")
	}
}
