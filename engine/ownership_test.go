package engine

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tracesql/queries"
)

// writeRawDB makes a DuckDB file at path with DuckDB alone (no tracesql), running the statements.
func writeRawDB(t *testing.T, path string, statements ...string) {
	t.Helper()
	raw, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range statements {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := raw.Exec(`CHECKPOINT`); err != nil {
		t.Fatal(err)
	}
}

// writeMarkerlessDB makes a tracesql database at path, runs the statements on it and drops install's
// marker: a file as a tracesql before the marker, or an install cut short, left it (plus the edits).
func writeMarkerlessDB(t *testing.T, path string, statements ...string) {
	t.Helper()
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, append(statements, `DROP TABLE _tracesql_install`)...)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOwnershipLookalikes: a DuckDB file without tracesql's install marker whose objects merely share a
// name with tracesql's (r42 #3: a user's view kernels was replaced, a table counters(metric, value) taken
// over, and a view threads beside a table flows(a) refused only after the install had written 11 tables
// into the file) is refused before anything is written: the file stays byte for byte as it was. An object
// must be of the kind tracesql makes of its name, a table must have tracesql's columns (less those migrate
// adds), and views and macros need the raw tables. Files tracesql left without the marker (an older
// version's, an install cut short) open.
func TestOwnershipLookalikes(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		raw  []string // statements for a file DuckDB alone makes
		ours []string // else statements on a tracesql database whose marker is then dropped
		want string   // the refusal's "it has KIND NAME"; "" = opens
	}{
		{name: "a view kernels", raw: []string{`CREATE VIEW kernels AS SELECT 'my_gemm' AS name, 123 AS dur_us`}, want: "view kernels"},
		{name: "a table counters(metric, value)", raw: []string{`CREATE TABLE counters(metric VARCHAR, value DOUBLE)`, `INSERT INTO counters VALUES ('revenue', 1e6)`},
			want: "table counters"},
		{name: "a view threads and a table flows(a)", raw: []string{`CREATE VIEW threads AS SELECT 1 AS x`, `CREATE TABLE flows(a INT)`}, want: "table flows"},
		{name: "a table kernel_classes(a)", raw: []string{`CREATE TABLE kernel_classes(a INT)`}, want: "table kernel_classes"},
		{name: "kernel_classes with a column more", raw: []string{`CREATE TABLE kernel_classes(priority INTEGER, pattern VARCHAR, kernel_type VARCHAR, applies_to VARCHAR, note VARCHAR)`},
			want: "table kernel_classes"},
		{name: "a macro kernel_breakdown(a)", raw: []string{`CREATE MACRO kernel_breakdown(a) AS a`}, want: "macro kernel_breakdown"},
		{name: "a table kernels", raw: []string{`CREATE TABLE kernels(name VARCHAR)`}, want: "table kernels"},
		{name: "a macro threads", raw: []string{`CREATE MACRO threads() AS TABLE SELECT 1 AS x`}, want: "macro threads"},
		{name: "a frame table without the raw tables", raw: []string{`CREATE TABLE _trace_summary(x INT)`}, want: "table _trace_summary"},
		{name: "a sequence", raw: []string{`CREATE SEQUENCE seq`}, want: "sequence seq"},
		{name: "a type", raw: []string{`CREATE TYPE mood AS ENUM ('a', 'b')`}, want: "type mood"},
		{name: "an empty schema", raw: []string{`CREATE SCHEMA s`}, want: "schema s"},
		{name: "the raw tables exactly, and a view of the user's", raw: append(queries.Schema()[:1:1], `CREATE VIEW mine AS SELECT 1 AS x`),
			want: "view mine"},
		{name: "an older tracesql's file with an index of the user's", ours: []string{`CREATE INDEX ix ON events(ts)`}, want: "index ix"},
		{name: "an older tracesql's file with a sequence of the user's", ours: []string{`CREATE SEQUENCE seq`}, want: "sequence seq"},

		{name: "empty", raw: []string{`SELECT 1`}},
		{name: "an install cut short after the raw tables", raw: queries.Schema()[:1]},
		{name: "an install cut short after the rules", raw: queries.Schema()},
		{name: "an older tracesql's file", ours: []string{`SELECT 1`}},
		{name: "an older tracesql's file before link_idx, flows.args and loader_version",
			ours: []string{`ALTER TABLE events DROP COLUMN link_idx`, `ALTER TABLE flows DROP COLUMN args`, `ALTER TABLE traces DROP COLUMN loader_version`}},
		{name: "an older tracesql's file with the frames of other kinds",
			ours: []string{`DROP TABLE _hta_frame_default`, `CREATE VIEW _hta_frame_default AS SELECT 1 AS stale`, `DROP VIEW _hta_frame_compat`,
				`CREATE TABLE _hta_frame_compat AS SELECT 1 AS stale`, `CREATE VIEW _tracesql_load_7 AS SELECT 1 AS stale`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.duckdb")
			if c.ours != nil {
				writeMarkerlessDB(t, path, c.ours...)
			} else {
				writeRawDB(t, path, c.raw...)
			}
			before := dirState(t, filepath.Dir(path))
			for _, open := range []func(context.Context, string) (*DB, error){OpenReadOnly, Open} {
				db, err := open(ctx, path)
				if c.want == "" {
					if err != nil && !(db == nil && strings.Contains(err.Error(), "open it once without --readonly")) {
						t.Fatal(err)
					}
					if db != nil {
						db.Close()
					}
					continue
				}
				if err == nil {
					db.Close()
					t.Fatal("opened without error")
				}
				var fe *ForeignDatabaseError
				if !errors.As(err, &fe) {
					t.Errorf("error %v (%T) is not an *ForeignDatabaseError", err, err)
				}
				if want := "not a tracesql database (it has " + c.want + " that tracesql did not create)"; !strings.HasSuffix(err.Error(), want) {
					t.Errorf("error %q, want it to end with %q", err, want)
				}
				if after := dirState(t, filepath.Dir(path)); after != before {
					t.Fatalf("the refused open changed the files:\nbefore %s\nafter  %s", before, after)
				}
			}
			if c.want != "" {
				return
			}
			// The file that opened is tracesql's now: it loads.
			db, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			mustLoad(t, db, "../testdata/traces/ns_resolution/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
			if got := queryInt(t, db, `SELECT count(*) FROM kernels`); got == 0 {
				t.Error("no kernels after a load")
			}
		})
	}
}

// TestHoldsNothing: a database file tracesql created holds nothing (and may be removed) only while it is
// as a fresh install made it. The user's rows in tracesql's own tables (r42 #2: an INSERT INTO
// kernel_classes was deleted with the file), and any object of theirs, sequences and types included,
// make it worth keeping; temporary objects and another database's do not.
func TestHoldsNothing(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		setup []string
		load  bool
		want  bool
	}{
		{name: "fresh", want: true},
		{name: "queries only", setup: []string{`SELECT count(*) FROM kernels`, `SELECT * FROM kernel_classes`}, want: true},
		{name: "a temporary table", setup: []string{`CREATE TEMP TABLE scratch AS SELECT 1 AS x`}, want: true},
		{name: "another database's table", setup: []string{`ATTACH ':memory:' AS other`, `CREATE TABLE other.t AS SELECT 1 AS x`}, want: true},
		{name: "a row added then deleted", setup: []string{`INSERT INTO kernel_classes VALUES (0, 'x', 'COMPUTATION', 'all')`,
			`DELETE FROM kernel_classes WHERE priority = 0`}, want: true},

		{name: "a kernel class added", setup: []string{`INSERT INTO kernel_classes VALUES (0, 'my_kernel', 'COMPUTATION', 'all')`}},
		{name: "a kernel class deleted", setup: []string{`DELETE FROM kernel_classes WHERE priority = 100`}},
		{name: "a phase rule changed", setup: []string{`UPDATE phase_rules SET phase = 'Mine' WHERE priority = 10`}},
		{name: "an NCCL clock override", setup: []string{`INSERT INTO nccl_clock_override VALUES ('trace', 0, NULL, 5)`}},
		{name: "a row in events", setup: []string{`INSERT INTO events (trace_id, ev_idx, name) VALUES (1, 0, 'mine')`}},
		{name: "a column added to kernel_classes", setup: []string{`ALTER TABLE kernel_classes ADD COLUMN note VARCHAR`}},
		{name: "a sequence", setup: []string{`CREATE SEQUENCE seq START 5`}},
		{name: "a type", setup: []string{`CREATE TYPE mood AS ENUM ('a')`}},
		{name: "a schema", setup: []string{`CREATE SCHEMA s`}},
		{name: "an index", setup: []string{`CREATE INDEX ix ON kernel_classes(priority)`}},
		{name: "a table", setup: []string{`CREATE TABLE keep AS SELECT 1 AS x`}},
		{name: "a view", setup: []string{`CREATE VIEW v AS SELECT 1 AS x`}},
		{name: "a macro", setup: []string{`CREATE MACRO m(a) AS a`}},
		{name: "a view of tracesql's redefined", setup: []string{`CREATE OR REPLACE VIEW threads AS SELECT 1 AS x`}},
		{name: "a trace", load: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, err := Open(ctx, filepath.Join(t.TempDir(), "t.duckdb"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			mustExec(t, db, c.setup...)
			if c.load {
				mustLoad(t, db, "../testdata/traces/ns_resolution/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
			}
			got, err := db.HoldsNothing(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("HoldsNothing = %v, want %v", got, c.want)
			}
		})
	}
}

// TestDiscard: Discard removes the file and its WAL while DuckDB still holds its lock, and closes; it
// removes nothing when the path names another file by then, when another handle has the file open, or
// for a database that is not a file open for writing.
func TestDiscard(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		prepare func(t *testing.T, db *DB, path string) (other *DB) // other: a second handle to close after
		want    string                                              // Discard's error; "" = removed
	}{
		{name: "a new file", prepare: func(t *testing.T, db *DB, path string) *DB { return nil }},
		{name: "a WAL not yet checkpointed", prepare: func(t *testing.T, db *DB, path string) *DB {
			mustExec(t, db, `SET checkpoint_threshold = '1GB'`, `INSERT INTO kernel_classes VALUES (0, 'x', 'COMPUTATION', 'all')`)
			if fi, err := os.Stat(path + ".wal"); err != nil || fi.Size() == 0 {
				t.Fatalf("no WAL to checkpoint: %v", err)
			}
			return nil
		}},
		{name: "the path renamed and made anew", want: "the path no longer names the file this process opened",
			prepare: func(t *testing.T, db *DB, path string) *DB {
				if err := os.Rename(path, path+".moved"); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte("someone else's"), 0o644); err != nil {
					t.Fatal(err)
				}
				return nil
			}},
		{name: "the path now a symbolic link", want: "the path no longer names the file this process opened",
			prepare: func(t *testing.T, db *DB, path string) *DB {
				if err := os.Rename(path, path+".moved"); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Base(path)+".moved", path); err != nil {
					t.Fatal(err)
				}
				return nil
			}},
		{name: "a second handle", want: "still open in 1 other handles of this process",
			prepare: func(t *testing.T, db *DB, path string) *DB {
				other, err := Open(ctx, path)
				if err != nil {
					t.Fatal(err)
				}
				return other
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "t.duckdb")
			db, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			other := c.prepare(t, db, path)
			before := dirState(t, dir)
			err = db.Discard(ctx)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if after := dirState(t, dir); after != "" {
					t.Errorf("files left: %s", after)
				}
				if err := db.Close(); err != nil {
					t.Errorf("Close after Discard: %v", err)
				}
				if after := dirState(t, dir); after != "" {
					t.Errorf("files after Close: %s", after)
				}
				return
			}
			if err == nil || !strings.HasSuffix(err.Error(), c.want) {
				t.Errorf("Discard: %v, want an error ending %q", err, c.want)
			}
			if after := dirState(t, dir); after != before {
				t.Errorf("a refused Discard changed the files:\nbefore %s\nafter  %s", before, after)
			}
			if got := queryInt(t, db, `SELECT count(*) FROM kernel_classes`); got == 0 {
				t.Error("the database is not open after a refused Discard")
			}
			if err := db.Close(); err != nil {
				t.Error(err)
			}
			if other != nil {
				other.Close()
			}
		})
	}
	for _, open := range []func() (*DB, error){
		func() (*DB, error) { return Open(ctx, "") },
		func() (*DB, error) {
			path := filepath.Join(t.TempDir(), "ro.duckdb")
			db, err := Open(ctx, path)
			if err != nil {
				return nil, err
			}
			db.Close()
			return OpenReadOnly(ctx, path)
		},
	} {
		db, err := open()
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Discard(ctx); err == nil || !strings.Contains(err.Error(), "not a file open for writing") {
			t.Errorf("Discard of %q (read-only %v): %v", db.Path, db.ReadOnly, err)
		}
		db.Close()
	}
}

// discardHelperEnv, set, makes TestDiscardHelperProcess the other process of TestDiscardLeavesNewFile.
const discardHelperEnv = "TRACESQL_TEST_DISCARD_HELPER"

// TestDiscardLeavesNewFile: once Discard has removed the file, another process may make a database at the
// path; closing the discarded one must leave that database and its WAL alone (r42 #1: the file was
// removed by name after Close, with another process's load in it). The other process here writes its
// database and keeps it open with a WAL while this one closes, then adds a row and closes.
func TestDiscardLeavesNewFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "t.duckdb")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A WAL with something in it, as after a failed run's statements: Discard's checkpoint must empty it.
	mustExec(t, db, `SET checkpoint_threshold = '1GB'`, `INSERT INTO kernel_classes VALUES (0, 'x', 'COMPUTATION', 'all')`)
	// Discard's two halves, with the other process between them.
	if err := db.removeFile(ctx); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiscardHelperProcess$")
	cmd.Env = append(os.Environ(), discardHelperEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready") {
				ready <- sc.Text()
				break
			}
		}
		io.Copy(io.Discard, stdout)
		close(ready)
	}()
	select {
	case _, ok := <-ready:
		if !ok {
			t.Fatal("the other process ended before it was ready")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the other process did not get ready")
	}
	// The other process's file and WAL: the same files, of the same size and time, after this one closes.
	state := func() []os.FileInfo {
		var fis []os.FileInfo
		for _, p := range []string{path, path + ".wal"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatalf("the other process's database: %v", err)
			}
			fis = append(fis, fi)
		}
		return fis
	}
	before := state()
	if err := db.closePools(); err != nil { // Discard's other half
		t.Fatal(err)
	}
	for i, after := range state() {
		if b := before[i]; !os.SameFile(b, after) || b.Size() != after.Size() || !b.ModTime().Equal(after.ModTime()) {
			t.Errorf("closing the discarded database changed %s: %d bytes at %v before, %d bytes at %v after", after.Name(),
				b.Size(), b.ModTime(), after.Size(), after.ModTime())
		}
	}
	stdin.Close() // the other process adds its last row and closes
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the other process: %v", err)
	}
	raw, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM b`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1001 {
		t.Errorf("the other process's table has %d rows, want 1001", n)
	}
}

// TestDiscardHelperProcess is TestDiscardLeavesNewFile's other process (only with discardHelperEnv set).
func TestDiscardHelperProcess(t *testing.T) {
	path := os.Getenv(discardHelperEnv)
	if path == "" {
		t.Skip("the other process of TestDiscardLeavesNewFile")
	}
	raw, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`SET checkpoint_threshold = '1GB'`, `CREATE TABLE b AS SELECT range AS x FROM range(1000)`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	if _, err := raw.Exec(`INSERT INTO b VALUES (1000)`); err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}
}
