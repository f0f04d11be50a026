package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestParquetCommands converts a trace directory to Parquet with export-parquet, imports it into a
// database file with import-parquet, and queries that file: the same rows as the JSON load.
func TestParquetCommands(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	out := filepath.Join(dir, "pq")
	trace := filepath.Join("..", "..", "testdata", "traces", "alexnet")
	var so, se bytes.Buffer
	if rc := run(ctx, []string{"export-parquet", "-o", out, trace}, nil, &so, &se); rc != 0 {
		t.Fatalf("export-parquet: rc %d, stderr %s", rc, se.String())
	}
	if !strings.HasPrefix(so.String(), "exported ") || !strings.Contains(so.String(), out) {
		t.Errorf("export-parquet said %q", so.String())
	}
	db := filepath.Join(dir, "x.duckdb")
	so.Reset()
	if rc := run(ctx, []string{"import-parquet", "--db", db, out}, nil, &so, &se); rc != 0 {
		t.Fatalf("import-parquet: rc %d, stderr %s", rc, se.String())
	}
	if want := "imported 1 trace(s) from " + out + " into " + db + "\n"; so.String() != want {
		t.Errorf("import-parquet said %q, want %q", so.String(), want)
	}
	query := `SELECT count(*) AS n, sum(dur) AS d FROM events`
	var fromJSON, fromParquet bytes.Buffer
	if rc := run(ctx, []string{"--format", "csv", "-c", query, trace}, nil, &fromJSON, &se); rc != 0 {
		t.Fatal(se.String())
	}
	if rc := run(ctx, []string{"--db", db, "--format", "csv", "-c", query}, nil, &fromParquet, &se); rc != 0 {
		t.Fatal(se.String())
	}
	if fromJSON.String() != fromParquet.String() || !strings.HasPrefix(fromJSON.String(), "n,d\n868,") {
		t.Errorf("events from JSON %q, from Parquet %q", fromJSON.String(), fromParquet.String())
	}

	// Usage errors and a bad directory: exit status and one line naming the directory.
	for _, c := range []struct {
		args []string
		rc   int
		msg  string
	}{
		{[]string{"import-parquet", dir}, 2, "usage: tracesql import-parquet"},
		{[]string{"export-parquet", trace}, 2, "usage: tracesql export-parquet"},
		{[]string{"import-parquet", "--db", filepath.Join(dir, "y.duckdb"), dir}, 1, "tracesql: import parquet " + dir + ": no tracesql_export.json"},
	} {
		se.Reset()
		if rc := run(ctx, c.args, nil, &so, &se); rc != c.rc || !strings.Contains(se.String(), c.msg) {
			t.Errorf("%v: rc %d, stderr %q; want rc %d and %q", c.args, rc, se.String(), c.rc, c.msg)
		}
	}
}
