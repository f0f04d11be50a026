package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tableFingerprints returns, per trace table, its row count and an order-insensitive hash of every
// row (sum of row hashes): equal fingerprints mean equal multisets of rows.
func tableFingerprints(t *testing.T, db *DB) map[string]string {
	t.Helper()
	names, _, err := db.traceTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		var count int64
		var sum string
		q := `SELECT count(*), coalesce(sum(hash(x))::VARCHAR, '0') FROM ` + sqlIdent(n) + ` x`
		if n == "traces" {
			// loaded_at is when the file was loaded; every other column must survive.
			q = `SELECT count(*), coalesce(sum(hash(x))::VARCHAR, '0') FROM (SELECT * EXCLUDE (loaded_at) FROM traces) x`
		}
		if err := db.SQL.QueryRow(q).Scan(&count, &sum); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out[n] = sum
		out[n+" rows"] = fmt.Sprint(count)
	}
	return out
}

func queryText(t *testing.T, db *DB, q string) string {
	t.Helper()
	rows, err := db.SQL.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			b.WriteString(strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(fmt.Sprint(v), "\n", " "), "\t", " ")))
			b.WriteByte('\t')
		}
		b.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestParquetRoundTrip loads two trace sets (eight dlrm ranks and alexnet), exports them, imports the
// export into a fresh database and checks that every row of every table (the stored frames included)
// and the analyses' results are the same.
func TestParquetRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := openTestDB(t)
	dlrm, _ := filepath.Glob(filepath.Join("..", "testdata", "traces", "dlrm_8ranks", "*.json.gz"))
	if _, err := src.Load(ctx, dlrm, LoadOptions{Label: "dlrm"}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Load(ctx, []string{filepath.Join("..", "testdata", "traces", "alexnet")}, LoadOptions{Label: "alexnet"}); err != nil {
		t.Fatal(err)
	}
	// A hand-built rank with the phases the real traces above lack: counters and async events.
	hand := filepath.Join(t.TempDir(), "hand_rank5.json")
	os.WriteFile(hand, []byte(`{"distributedInfo": {"rank": 5}, "traceEvents": [
		{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 10.5, "dur": 3, "args": {"External id": 7}},
		{"ph": "C", "name": "Queue Length", "pid": 1, "tid": 2, "ts": 11, "args": {"a": 1, "b": "x"}},
		{"ph": "b", "cat": "async", "name": "io", "id": 3, "pid": "Spans", "tid": 2, "ts": 12},
		{"ph": "e", "cat": "async", "name": "io", "id": 3, "pid": "Spans", "tid": 2, "ts": 14}]}`), 0o644)
	if _, err := src.Load(ctx, []string{hand}, LoadOptions{Label: "hand"}); err != nil {
		t.Fatal(err)
	}
	for _, tb := range []string{"counters", "other_events"} {
		if queryInt(t, src, "SELECT count(*) FROM "+tb) == 0 {
			t.Fatalf("no %s rows to round-trip", tb)
		}
	}
	dir := filepath.Join(t.TempDir(), "export")
	tables, err := src.ExportParquet(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	layouts := map[string]string{}
	for _, tb := range tables {
		layouts[tb.Name] = tb.Layout
	}
	for name, want := range map[string]string{"traces": "rank", "events": "rank", "flows": "rank_joined", "counters": "rank_joined"} {
		if layouts[name] != want {
			t.Errorf("table %s: layout %q, want %q", name, layouts[name], want)
		}
	}
	// One hive partition per rank: 8 dlrm ranks (alexnet's rank 0 shares rank=0) and rank 5's file.
	parts, _ := filepath.Glob(filepath.Join(dir, "events", "rank=*"))
	if len(parts) != 8 {
		t.Errorf("events: %d rank partitions, want 8: %v", len(parts), parts)
	}
	if _, err := os.Stat(filepath.Join(dir, "counters", "rank=5")); err != nil {
		t.Errorf("counters not partitioned by the joined rank: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "flows", "rank=3")); err != nil {
		t.Errorf("flows not partitioned by the joined rank: %v", err)
	}

	dst := openTestDB(t)
	n, err := dst.ImportParquet(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Errorf("imported %d traces, want 10", n)
	}
	want, got := tableFingerprints(t, src), tableFingerprints(t, dst)
	if len(want) < 16 {
		t.Errorf("only %d trace tables: %v", len(want)/2, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: after the round trip %s, want %s", k, got[k], w)
		}
	}
	for _, q := range []string{
		`SELECT * FROM temporal_breakdown ORDER BY ALL`,
		`SELECT * FROM kernel_type_breakdown() ORDER BY ALL`,
		`SELECT * FROM idle_time_breakdown() ORDER BY ALL`,
	} {
		a, b := queryText(t, src, q), queryText(t, dst, q)
		if a != b || a == "" {
			t.Errorf("%s differs after the round trip:\nsource:\n%s\nimported:\n%s", q, a, b)
		}
	}
}

// TestParquetImportErrors: a directory that is not an export, an import that collides with loaded
// ranks (the database stays as it was), and an export into a non-empty directory.
func TestParquetImportErrors(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	mustLoad(t, db, filepath.Join("..", "testdata", "traces", "alexnet"))
	dir := filepath.Join(t.TempDir(), "x")
	if _, err := db.ExportParquet(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExportParquet(ctx, dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("export into a used directory: %v", err)
	}
	before := tableFingerprints(t, db)
	_, err := db.ImportParquet(ctx, dir)
	if err == nil || !strings.Contains(err.Error(), `rank 0 of trace set "trace" is already loaded`) || !strings.Contains(err.Error(), dir) {
		t.Errorf("import of a loaded rank: %v", err)
	}
	after := tableFingerprints(t, db)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed by a failed import: %s → %s", k, v, after[k])
		}
	}
	empty := t.TempDir()
	if _, err := db.ImportParquet(ctx, empty); err == nil || !strings.Contains(err.Error(), "not a directory written by tracesql export-parquet") {
		t.Errorf("import of a plain directory: %v", err)
	}
	os.WriteFile(filepath.Join(empty, manifestName), []byte(`{"format": 7}`), 0o644)
	if _, err := db.ImportParquet(ctx, empty); err == nil || !strings.Contains(err.Error(), "format 7 is not supported") {
		t.Errorf("import of a future format: %v", err)
	}
	// A label set apart imports beside the loaded traces, with fresh trace ids.
	if _, err := db.SQL.Exec(`UPDATE traces SET label = 'other'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ImportParquet(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if got := queryInt(t, db, `SELECT count(DISTINCT trace_id) FROM events`); got != 2 {
		t.Errorf("events of %d traces after the second import, want 2", got)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM _hta_frame_default WHERE trace_id = 1`); got == 0 {
		t.Error("no frame rows for the imported trace")
	}
	if a, b := queryInt(t, db, `SELECT count(*) FROM _gpu_frame_default WHERE trace_id = 1`),
		queryInt(t, db, `SELECT count(*) FROM _gpu_frame_default WHERE trace_id = 0`); a == 0 || a != b {
		t.Errorf("GPU frame rows: %d for the imported trace, %d for the first import", a, b)
	}
	if got := queryInt(t, db, `SELECT count(DISTINCT (busy_ns, comp_ns)) FROM _trace_summary`); got != 1 ||
		queryInt(t, db, `SELECT count(*) FROM _trace_summary`) != 2 {
		t.Errorf("trace totals: %d distinct for the two imports of one trace, want 2 rows and 1 value", got)
	}
}
