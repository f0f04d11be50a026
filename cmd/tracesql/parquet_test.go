package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
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

	// Two trace sets straight from JSON, flags after the paths: each keeps its --label.
	out2, db2 := filepath.Join(dir, "pq2sets"), filepath.Join(dir, "sets.duckdb")
	for _, args := range [][]string{{"export-parquet", "--label", "a", trace, "--label", "b", trace, "-o", out2}, {"import-parquet", out2, "--db", db2}} {
		if rc := run(ctx, args, nil, &so, &se); rc != 0 {
			t.Fatalf("%v: rc %d, stderr %s", args, rc, se.String())
		}
	}
	var labels bytes.Buffer
	if rc := run(ctx, []string{"--db", db2, "--format", "csv", "-c", "SELECT string_agg(label, '+' ORDER BY label) AS l FROM traces"}, nil, &labels, &se); rc != 0 || labels.String() != "l\na+b\n" {
		t.Errorf("labels after a two-set export: %q (rc %d, %s), want a,b", labels.String(), rc, se.String())
	}

	// Usage errors and a bad directory: exit status and one line naming the directory. A database
	// file that did not exist is not left behind by a failed command (absent), and an export of one
	// (a mistyped --db) is an error, not an empty export.
	missing := filepath.Join(dir, "missing.duckdb")
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		rc     int
		msg    string
		absent string
	}{
		// what is wrong on a line of its own, then the usage
		{[]string{"import-parquet", dir}, 2, "tracesql: import-parquet: no database to import into (--db F)\nusage: tracesql import-parquet", ""},
		{[]string{"import-parquet", "--db", filepath.Join(dir, "w.duckdb"), dir, dir}, 2, "tracesql: import-parquet: one directory to import, not 2\nusage:", ""},
		{[]string{"export-parquet", trace}, 2, "tracesql: export-parquet: no output directory (-o DIR)\nusage: tracesql export-parquet", ""},
		{[]string{"import-parquet", "--db", filepath.Join(dir, "y.duckdb"), dir}, 1, "tracesql: import parquet " + dir + ": no tracesql_export.json", filepath.Join(dir, "y.duckdb")},
		{[]string{"import-parquet", "--db", filepath.Join(dir, "y.duckdb"), filepath.Join(dir, "nosuch")}, 1, "tracesql: import parquet " + filepath.Join(dir, "nosuch") + ": no such directory", filepath.Join(dir, "y.duckdb")},
		{[]string{"export-parquet", "--db", missing, "-o", filepath.Join(dir, "link")}, 1, "tracesql: export parquet " + filepath.Join(dir, "link") + ": is a symbolic link: name the directory itself", missing},
		{[]string{"export-parquet", "--db", missing, "-o", filepath.Join(dir, "pq2")}, 1, "tracesql: export parquet " + filepath.Join(dir, "pq2") + ": database " + missing + " does not exist", missing},
		// flags that would be ignored
		{[]string{"import-parquet", "--db", filepath.Join(dir, "z.duckdb"), "--label", "x", dir}, 2, "tracesql: import-parquet: --label: import-parquet keeps the labels and ranks of the export\n", filepath.Join(dir, "z.duckdb")},
		{[]string{"export-parquet", "--db", missing, "--rank-from", "index", "-o", filepath.Join(dir, "pq3")}, 2, "tracesql: export-parquet: --rank-from: it applies to trace paths loaded before the export, and none is given\n", missing},
	} {
		se.Reset()
		if rc := run(ctx, c.args, nil, &so, &se); rc != c.rc || !strings.Contains(se.String(), c.msg) || strings.Count(se.String(), "\n") != 1 && c.rc == 1 {
			t.Errorf("%v: rc %d, stderr %q; want rc %d and %q", c.args, rc, se.String(), c.rc, c.msg)
		}
		if c.absent != "" {
			if _, err := os.Stat(c.absent); err == nil {
				t.Errorf("%v: left %s behind", c.args, c.absent)
			}
		}
	}
}

// TestInflateCommand (beside the Parquet commands: both are issue 6's scale tools): the files written
// are listed, a bad count is a usage error, and a directory holding an earlier job is refused with one
// line naming the trace and the directory.
func TestInflateCommand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	trace := filepath.Join("..", "..", "testdata", "traces", "call_stack", "backward_thread.json")
	out := filepath.Join(dir, "job")
	var so, se bytes.Buffer
	if rc := run(ctx, []string{"inflate", "--ranks", "2", "--steps", "3", "--gzip", "-o", out, trace}, nil, &so, &se); rc != 0 {
		t.Fatalf("inflate: rc %d, stderr %s", rc, se.String())
	}
	if want := filepath.Join(out, "backward_thread_rank0.json.gz") + "\n" + filepath.Join(out, "backward_thread_rank1.json.gz") + "\n"; so.String() != want {
		t.Errorf("inflate said %q, want %q", so.String(), want)
	}
	for _, c := range []struct {
		args []string
		rc   int
		msg  string
	}{
		{[]string{"inflate", "--ranks", "0", "-o", filepath.Join(dir, "a"), trace}, 2, "tracesql: inflate: --ranks and --steps must be at least 1 (got 0 and 10)\n"},
		{[]string{"inflate", "--steps", "-3", "-o", filepath.Join(dir, "a"), trace}, 2, "tracesql: inflate: --ranks and --steps must be at least 1 (got 1 and -3)\n"},
		{[]string{"inflate", "--ranks", "1", "-o", out, trace}, 1, "tracesql: inflate " + trace + ": output directory " + out + " is not empty (refusing to mix two jobs)\n"},
	} {
		so.Reset()
		se.Reset()
		if rc := run(ctx, c.args, nil, &so, &se); rc != c.rc || se.String() != c.msg {
			t.Errorf("%v: rc %d, stderr %q; want rc %d and %q", c.args, rc, se.String(), c.rc, c.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err == nil {
		t.Error("a refused inflate created its output directory")
	}
}

// TestExportParquetRefusedUpFront: an output the export would refuse is refused before the traces named are
// loaded (minutes for a large job), with one line naming it: here the trace does not even exist, so an error
// about the output shows that the load was not tried.
func TestExportParquetRefusedUpFront(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	file := filepath.Join(dir, "job.duckdb")
	empty := filepath.Join(dir, "empty")
	for _, p := range []string{full, empty} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(full, "x"), file} {
		if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "missing.json")
	t.Chdir(empty)
	for _, c := range []struct{ out, msg string }{
		{full, "directory is not empty (refusing to mix two exports)"},
		{file, "exists and is not a directory"},
	} {
		var so, se bytes.Buffer
		rc := run(ctx, []string{"export-parquet", "-o", c.out, missing}, nil, &so, &se)
		if want := "tracesql: export parquet " + c.out + ": " + c.msg + "\n"; rc != 1 || se.String() != want {
			t.Errorf("-o %s: rc %d, stderr %q; want rc 1 and %q", c.out, rc, se.String(), want)
		}
	}
	// The current directory, empty, is written into: here the load fails first, and leaves nothing.
	var so, se bytes.Buffer
	if rc := run(ctx, []string{"export-parquet", "-o", ".", missing}, nil, &so, &se); rc != 1 || !strings.Contains(se.String(), "missing.json") {
		t.Errorf("-o . with a missing trace: rc %d, stderr %q", rc, se.String())
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("%d entries left in the current directory", len(ents))
	}
}

// TestExportBesideReader: export-parquet of a database it loads nothing into opens it read-only, so it runs
// while another session reads the file (it took a writer's lock and was refused, with DuckDB's hint to use
// a -readonly flag export-parquet did not have).
func TestExportBesideReader(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "x.duckdb")
	mustRun(t, "", "--db", db, backwardJSON, "-c", "SELECT 1")
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reader := exec.Command(bin, "--db", db, "--readonly", "--format", "csv")
	reader.Env = append(os.Environ(), asCLI+"=1")
	stdin, err := reader.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := reader.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	defer reader.Wait()
	defer stdin.Close()
	// Once the reader answers, it holds the file open.
	if _, err := stdin.Write([]byte("SELECT 42 AS open;\n")); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && lines.Text() != "42" {
	}
	out, errOut, code := runCLI(t, "", "export-parquet", "--db", db, "-o", filepath.Join(dir, "pq"))
	if code != 0 || !strings.HasPrefix(out, "exported ") {
		t.Errorf("export-parquet beside a reader: %d %q %s", code, out, errOut)
	}
}

// TestParquetCommandsUserTables: what export-parquet writes, import-parquet reads back under the table's own
// name, whatever the name; a table it cannot export (no trace_id) gets one line on stderr saying so, where
// "exported N table(s)" alone left it out without a word.
func TestParquetCommandsUserTables(t *testing.T) {
	for _, c := range []struct {
		name, create, table string
		stderr              string // of the export
		exported            bool
	}{
		{"dots", `CREATE TABLE "kernels..bak" AS SELECT * FROM events`, "kernels..bak", "", true},
		{"slash", `CREATE TABLE "runs/2024" AS SELECT trace_id, 1 AS x FROM traces`, "runs/2024", "", true},
		{"underscore", `CREATE TABLE _kernels_snapshot AS SELECT * FROM events`, "_kernels_snapshot", "", true},
		{"no trace_id", `CREATE TABLE notes (note VARCHAR); INSERT INTO notes VALUES ('x')`, "notes",
			"tracesql: table notes not exported: it has no trace_id column (an export holds per-trace tables only)\n", false},
		{"text trace_id", `CREATE TABLE runs (trace_id VARCHAR, x INTEGER); INSERT INTO runs VALUES ('run-a', 1)`, "runs",
			"tracesql: table runs not exported: its trace_id is VARCHAR, not an integer (an import renumbers trace ids)\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src, dst, out := filepath.Join(dir, "src.duckdb"), filepath.Join(dir, "dst.duckdb"), filepath.Join(dir, "pq")
			mustRun(t, "", "--db", src, backwardJSON, "-c", c.create)
			so, se, rc := runCLI(t, "", "export-parquet", "--db", src, "-o", out)
			if rc != 0 || se != c.stderr || !strings.HasPrefix(so, "exported ") {
				t.Fatalf("export-parquet: rc %d, stdout %q, stderr %q; want stderr %q", rc, so, se, c.stderr)
			}
			mustRun(t, "", "import-parquet", "--db", dst, out)
			q := `SELECT count(*) AS n FROM duckdb_tables() WHERE table_name = ` + "'" + strings.ReplaceAll(c.table, "'", "''") + "'"
			want := "n\n0\n"
			if c.exported {
				q = `SELECT count(*) AS n FROM "` + c.table + `"`
				want = mustRun(t, "", "--db", src, "--readonly", "--format", "csv", "-c", q)
			}
			if got := mustRun(t, "", "--db", dst, "--readonly", "--format", "csv", "-c", q); got != want || got == "n\n0\n" && c.exported {
				t.Errorf("%s after the round trip: %q, want %q", c.table, got, want)
			}
		})
	}
}

// TestExportParquetLoadFailure: a trace that fails to load stops export-parquet as it stops report, and says the
// export is not written and that the other files loaded (r71 #7: neither was said).
func TestExportParquetLoadFailure(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", "hta_cases", "aten_op_kernels_order.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"r0.json": good, "r1.json": []byte(`{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1}`)} {
		if err := os.MkdirAll(filepath.Join(dir, "mixed"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "mixed", name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	stdout, stderr, code := runCLI(t, "", "export-parquet", "-o", out, filepath.Join(dir, "mixed"))
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 1 || stdout != "" || len(lines) != 3 || !strings.HasPrefix(lines[0], "tracesql: load "+filepath.Join(dir, "mixed", "r1.json")+": ") ||
		lines[1] != "tracesql: the other 1 file(s) loaded" || lines[2] != "tracesql: export-parquet: "+out+" not written, since not every trace loaded" {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the export was written")
	}
}
