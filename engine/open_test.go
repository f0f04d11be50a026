package engine

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// frameDigest summarises a database's events.link_idx and stored frames, to compare two builds.
func frameDigest(t *testing.T, db *DB) [11]int64 {
	t.Helper()
	return [11]int64{
		queryInt(t, db, `SELECT count(*) FROM _hta_frame_default`),
		queryInt(t, db, `SELECT (bit_xor(hash(trace_id, ev_idx, link_idx)) >> 1)::BIGINT FROM events`),
		queryInt(t, db, `SELECT (bit_xor(hash(f)) >> 1)::BIGINT FROM _hta_frame_default f`),
		queryInt(t, db, `SELECT count(*) FROM _gpu_frame_default`),
		queryInt(t, db, `SELECT (bit_xor(hash(f)) >> 1)::BIGINT FROM _gpu_frame_default f`),
		queryInt(t, db, `SELECT count(*) FROM _trace_summary`),
		queryInt(t, db, `SELECT (bit_xor(hash(s)) >> 1)::BIGINT FROM _trace_summary s`),
		queryInt(t, db, `SELECT count(*) FROM _type_segments`),
		queryInt(t, db, `SELECT (bit_xor(hash(s)) >> 1)::BIGINT FROM _type_segments s`),
		queryInt(t, db, `SELECT count(*) FROM _compat_fixups`),
		queryInt(t, db, `SELECT (bit_xor(hash(x)) >> 1)::BIGINT FROM _compat_fixups x`),
	}
}

// TestOpenMigratesOldDatabase: a database written before events.link_idx existed, with the analysis
// frames stored as other kinds of objects (a table for compat, a view for default), opens with link_idx filled in SQL exactly as the loader fills it and the
// frame rebuilt.
func TestOpenMigratesOldDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	links := filepath.Join(dir, "links.json")
	if err := os.WriteFile(links, []byte(linksTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "old.duckdb")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Load(ctx, []string{links, "../testdata/traces/ns_resolution/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"},
		LoadOptions{RankFrom: RankIndex}); err != nil {
		t.Fatal(err)
	}
	want := frameDigest(t, db)
	mustExec(t, db,
		`ALTER TABLE events DROP COLUMN link_idx`, `ALTER TABLE flows DROP COLUMN args`,
		`DROP TABLE _hta_frame_default`, `DROP VIEW _hta_frame_compat`, `DROP TABLE _gpu_frame_default`,
		`CREATE TABLE _gpu_frame_default AS SELECT 1 AS stale`,
		`CREATE VIEW _hta_frame_default AS SELECT 1 AS stale`, `CREATE TABLE _hta_frame_compat AS SELECT 1 AS stale`,
		`DROP TABLE _trace_summary`, `DROP TABLE _type_segments`, `CREATE TABLE _type_segments AS SELECT 1 AS stale`,
		`DROP TABLE _compat_fixups`, `CREATE TABLE _compat_fixups AS SELECT 1 AS stale`,
		`CREATE VIEW _tracesql_load_7 AS SELECT 1 AS stale`, // what an older loader's Arrow scan left behind
		`DROP TABLE _tracesql_install`)
	db.Close()

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := frameDigest(t, db); got != want {
		t.Errorf("after migration: rows/link/frame digest %v, want %v", got, want)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM duckdb_columns() WHERE table_name = 'flows' AND column_name = 'args' AND data_type = 'JSON'`); got != 1 {
		t.Error("flows has no args JSON column after migration")
	}
	if got := queryInt(t, db, `SELECT count(*) FROM duckdb_views() WHERE view_name = '_hta_frame_compat'`); got != 1 {
		t.Error("_hta_frame_compat is not a view after migration")
	}
	if got := queryInt(t, db, `SELECT count(*) FROM duckdb_views() WHERE view_name LIKE '_tracesql_load%'`); got != 0 {
		t.Errorf("%d stale Arrow scan views after migration", got)
	}
}

// TestOpenSkipsCurrentInstall: a file written by this tracesql is opened as it is (re-creating hundreds
// of views and macros was most of a re-open); another version's file gets the current definitions.
func TestOpenSkipsCurrentInstall(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.duckdb")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL.Exec(`DROP VIEW kernels`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	views := func() int64 {
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		n := queryInt(t, db, `SELECT count(*) FROM duckdb_views() WHERE view_name = 'kernels'`)
		if _, err := db.SQL.Exec(`UPDATE _tracesql_install SET hash = 'another version'`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if views() != 0 {
		t.Error("re-open of a current database re-installed the views")
	}
	if views() != 1 {
		t.Error("re-open of another version's database did not install the views")
	}
}

// TestOpenInstallIsAllOrNothing: the install runs in one transaction, so one that fails part-way (here a
// user's table where the last view goes) changes nothing: the views before it are not replaced and the
// marker still names the older version. (It also syncs the log once instead of once per statement.)
func TestOpenInstallIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.duckdb")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `DROP VIEW async_events`, `DROP VIEW nccl_kernel_explain`, `CREATE TABLE nccl_kernel_explain (x INTEGER)`,
		`UPDATE _tracesql_install SET hash = 'another version'`)
	db.Close()

	if db, err := Open(ctx, path); err == nil {
		db.Close()
		t.Fatal("install over a user's table named like a view: no error")
	} else if !strings.Contains(err.Error(), "nccl_kernel_explain") {
		t.Errorf("error %q does not name nccl_kernel_explain", err)
	}
	raw, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var views int
	var hash string
	if err := raw.QueryRow(`SELECT count(*) FROM duckdb_views() WHERE view_name = 'async_events'`).Scan(&views); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRow(`SELECT hash FROM _tracesql_install`).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if views != 0 || hash != "another version" {
		t.Errorf("after the failed install: async_events views %d (want 0), marker %q (want the older one): a half install was kept", views, hash)
	}
}

// TestLoadManyFilesCheckpointsOnce: a multi-file load into a file database defers DuckDB's automatic
// checkpoints to one at the end, then restores the threshold; the data is complete after a re-open.
func TestLoadManyFilesCheckpointsOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var paths []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("rank%d.json", i))
		if err := os.WriteFile(p, []byte(linksTrace), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	path := filepath.Join(dir, "t.duckdb")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var before string
	db.SQL.QueryRow(`SELECT current_setting('checkpoint_threshold')`).Scan(&before)
	mustLoad(t, db, paths...)
	var after string
	db.SQL.QueryRow(`SELECT current_setting('checkpoint_threshold')`).Scan(&after)
	if after != before {
		t.Errorf("checkpoint_threshold %q after the load, want %q restored", after, before)
	}
	if fi, err := os.Stat(path + ".wal"); err == nil && fi.Size() > 0 {
		t.Errorf("WAL of %d bytes left after the load: no final checkpoint", fi.Size())
	}
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := queryInt(t, db, `SELECT count(*) FROM events`); got != 33 {
		t.Errorf("%d events after re-open, want 33", got)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM _hta_frame_default`); got != 27 {
		t.Errorf("%d frame rows after re-open, want 27", got)
	}
	// In memory the load checkpoints every 128 MB instead of 16 (a checkpoint is what compresses): the
	// threshold comes back too.
	mem := openTestDB(t)
	mem.SQL.QueryRow(`SELECT current_setting('checkpoint_threshold')`).Scan(&before)
	mustLoad(t, mem, paths...)
	mem.SQL.QueryRow(`SELECT current_setting('checkpoint_threshold')`).Scan(&after)
	if after != before || queryInt(t, mem, `SELECT count(*) FROM events`) != 33 {
		t.Errorf("in memory: checkpoint_threshold %q after the load (want %q), %d events (want 33)", after, before,
			queryInt(t, mem, `SELECT count(*) FROM events`))
	}
}

// TestOpenRefusesForeignDatabase: a DuckDB file holding objects tracesql did not create is refused
// with one line naming it, before anything is written: the file stays byte for byte as it was (the
// old install added its 11 tables, then failed migrating the user's events). An empty file, and a
// tracesql database with the user's own tables in it, open.
func TestOpenRefusesForeignDatabase(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		setup []string
		want  string // "" = opens
	}{
		{"events of another schema", []string{`CREATE TABLE events(x INT)`}, "it has table events that tracesql did not create"},
		{"Events of another schema", []string{`CREATE TABLE "Events"(x INT)`}, "it has table Events that tracesql did not create"},
		{"traces of another schema", []string{`CREATE TABLE traces(trace_id INT, path VARCHAR)`}, "it has table traces that tracesql did not create"},
		{"other table", []string{`CREATE TABLE sales(x INT)`}, "it has table sales that tracesql did not create"},
		{"other table beside ours", []string{`CREATE TABLE kernel_classes(x INT)`, `CREATE TABLE sales(x INT)`}, "it has table sales"},
		{"events as a view", []string{`CREATE VIEW events AS SELECT 1 AS x`}, "it has view events that tracesql did not create"},
		{"view", []string{`CREATE VIEW v AS SELECT 1 AS x`}, "it has view v that tracesql did not create"},
		{"macro", []string{`CREATE MACRO plus1(a) AS a + 1`}, "it has macro plus1 that tracesql did not create"},
		{"table in another schema", []string{`CREATE SCHEMA s`, `CREATE TABLE s.t(x INT)`}, "it has table s.t that tracesql did not create"},
		{"empty", []string{`SELECT 1`}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "foreign.duckdb")
			raw, err := sql.Open("duckdb", path)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range c.setup {
				if _, err := raw.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			raw.Exec(`CHECKPOINT`)
			raw.Close()
			before := dirState(t, filepath.Dir(path))
			for range 2 { // the second open meets the same file, so the same error
				db, err := Open(ctx, path)
				if c.want == "" {
					if err != nil {
						t.Fatal(err)
					}
					db.Close()
					return
				}
				if err == nil {
					db.Close()
					t.Fatal("opened without error")
				}
				msg := err.Error()
				if want := "open database " + path + ": not a tracesql database (" + c.want; !strings.HasPrefix(msg, want) {
					t.Errorf("error %q, want it to start with %q", msg, want)
				}
				if strings.Contains(msg, "\n") {
					t.Errorf("error is not one line: %q", msg)
				}
				var fe *ForeignDatabaseError
				if !errors.As(err, &fe) {
					t.Errorf("error %T is not an *ForeignDatabaseError", err)
				}
				if after := dirState(t, filepath.Dir(path)); after != before {
					t.Fatalf("the refused open changed the files:\nbefore %s\nafter  %s", before, after)
				}
			}
		})
	}
}

// TestOpenKeepsUserTables: the user's own tables in a tracesql database (the README's what-if copy of
// a graph) do not make it foreign.
func TestOpenKeepsUserTables(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.duckdb")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL.Exec(`CREATE TABLE g AS SELECT 1 AS weight_us`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := queryInt(t, db, `SELECT weight_us FROM g`); got != 1 {
		t.Errorf("g.weight_us = %d, want 1", got)
	}
}

// dirState lists each file of dir with its size and content hash.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s(%d bytes, dir %v, sha256 %x) ", e.Name(), len(data), e.IsDir(), sha256.Sum256(data))
	}
	return b.String()
}

// TestOpenReadOnly: a database written by this version opens read-only in two handles at once (DuckDB
// lets one writer open a file and no one else); the analyses read it, and a load, an NCCL clock offset,
// an import and a statement that writes all fail, leaving the file as it was. A file tracesql did not
// write, one written by another version and a missing one are refused with a message saying which.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "ro.duckdb")
	trace := "../testdata/traces/ns_resolution/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Load(ctx, []string{trace}, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	want := frameDigest(t, db)
	events := queryInt(t, db, `SELECT count(*) FROM events`)
	db.Close()

	a, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("second read-only open: %v", err)
	}
	if got := queryInt(t, b, `SELECT count(*) FROM temporal_breakdown`); got != 1 {
		t.Errorf("temporal_breakdown read-only: %d rows, want 1", got)
	}
	if got := frameDigest(t, a); got != want {
		t.Errorf("read-only frames %v, want %v", got, want)
	}
	for what, err := range map[string]error{
		"load":   func() error { _, err := a.Load(ctx, []string{trace}, LoadOptions{Label: "again"}); return err }(),
		"nccl":   a.SetNCCLClockOffset(ctx, "trace", "0"),
		"import": func() error { _, err := a.ImportParquet(ctx, dir, nil); return err }(),
	} {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a read-only database: %v, want ErrReadOnly", what, err)
		}
	}
	if _, err := a.SQL.ExecContext(ctx, `DELETE FROM events`); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("DELETE on a read-only database: %v", err)
	}
	a.Close()
	b.Close()

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM events`); got != events {
		t.Errorf("events after the refused changes: %d, want %d", got, events)
	}
	// as if another version had written it
	if _, err := db.SQL.ExecContext(ctx, `UPDATE _tracesql_install SET hash = 'older'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := OpenReadOnly(ctx, path); err == nil || !strings.Contains(err.Error(), "another version of tracesql") {
		t.Errorf("read-only open of another version's file: %v", err)
	}

	foreign := filepath.Join(dir, "foreign.duckdb")
	raw, err := sql.Open("duckdb", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE mine (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	// Someone else's file: the same refusal as a writable open, not advice to open it for writing
	// (which is then refused too).
	if _, err := OpenReadOnly(ctx, foreign); err == nil || !strings.Contains(err.Error(), "not a tracesql database (it has table mine") {
		t.Errorf("read-only open of a foreign file: %v", err)
	}
	empty := filepath.Join(dir, "empty.duckdb")
	if raw, err = sql.Open("duckdb", empty); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CHECKPOINT`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := OpenReadOnly(ctx, empty); err == nil || !strings.Contains(err.Error(), "not written by tracesql (no tracesql schema): open it once without --readonly") {
		t.Errorf("read-only open of an empty DuckDB file: %v", err)
	}
	if _, err := OpenReadOnly(ctx, filepath.Join(dir, "missing.duckdb")); err == nil || !strings.Contains(err.Error(), "missing.duckdb") {
		t.Errorf("read-only open of a missing file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.duckdb")); !os.IsNotExist(err) {
		t.Errorf("the missing file was created: %v", err)
	}
	if _, err := OpenReadOnly(ctx, ""); err == nil {
		t.Error("read-only in-memory database: no error")
	}
}

// TestOpenSameFileTwice: duckdb-go gives every open of one file in a process the same DuckDB instance, so
// a second open shares the first's DB (concurrent read-only opens used to fail registering functions);
// each open is closed on its own, and the file stays usable until the last Close.
func TestOpenSameFileTwice(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "x.duckdb")
	w, err := Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	mustLoad(t, w, "../testdata/traces/call_stack/backward_thread.json")
	if _, err := OpenReadOnly(ctx, p); err == nil || !strings.Contains(err.Error(), "already open in this process for writing") {
		t.Errorf("read-only open beside a writer: %v", err)
	}
	w2, err := Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	w.Close() // a second Close of one handle must not close the other's
	if n := queryInt(t, w2, `SELECT count(*) FROM events`); n != 7 {
		t.Errorf("after the first Close the second open reads %d events, want 7", n)
	}
	w2.Close()
	for round := 0; round < 10; round++ {
		var wg sync.WaitGroup
		dbs, errs := make([]*DB, 2), make([]error, 2)
		for i := range dbs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dbs[i], errs[i] = OpenReadOnly(ctx, p)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: concurrent read-only open: %v", round, err)
			}
			if n := queryInt(t, dbs[i], `SELECT count(*) FROM events`); n != 7 {
				t.Fatalf("round %d: %d events, want 7", round, n)
			}
		}
		for _, db := range dbs {
			db.Close()
		}
	}
}

// TestOpenWithBadRule: a kernel_classes rule that cannot apply keeps neither a load nor the open of another
// version's file (which rebuilds the analysis frames) from succeeding; the analyses name the rule until it is
// deleted, and then agree with a database that never had it. The open used to fail "correct or delete that row",
// with no way left to run the DELETE.
func TestOpenWithBadRule(t *testing.T) {
	ctx := context.Background()
	trace := filepath.Join("..", "testdata", "traces", "alexnet")
	want := func() string {
		db := openTestDB(t)
		mustLoad(t, db, trace)
		return strings.TrimSpace(queryText(t, db, `SELECT string_agg(kernel_type || ':' || round(sum_us), ' ' ORDER BY kernel_type) FROM kernel_type_breakdown()`))
	}()
	for _, bad := range []string{`(5, 'sgemm(', 'OTHER', 'all')`, `(5, 'x{1001}', 'OTHER', 'all')`,
		`(5, 'sgemm', 'communication', 'all')`, `(5, NULL, 'OTHER', 'all')`} {
		path := filepath.Join(t.TempDir(), "k.duckdb")
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.ExecContext(ctx, `INSERT INTO kernel_classes VALUES `+bad); err != nil {
			t.Fatal(err)
		}
		var warned []string
		if _, err := db.Load(ctx, []string{trace}, LoadOptions{Warn: func(s string) { warned = append(warned, s) }}); err != nil || len(warned) != 1 {
			t.Fatalf("%s: load: %v, warnings %q; want it loaded, with a warning", bad, err, warned)
		}
		// as if another version had written it: the next open rebuilds the frames
		if _, err := db.SQL.ExecContext(ctx, `UPDATE _tracesql_install SET hash = 'older'`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if db, err = Open(ctx, path); err != nil {
			t.Fatalf("%s: open: %v", bad, err)
		}
		if _, err := db.SQL.ExecContext(ctx, `FROM kernel_type_breakdown()`); err == nil || !strings.Contains(RuleError(ctx, db.SQL, err).Error(), "priority 5") {
			t.Errorf("%s: kernel_type_breakdown: %v, want an error naming the rule", bad, err)
		}
		if _, err := db.SQL.ExecContext(ctx, `DELETE FROM kernel_classes WHERE priority = 5`); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(queryText(t, db, `SELECT string_agg(kernel_type || ':' || round(sum_us), ' ' ORDER BY kernel_type) FROM kernel_type_breakdown()`)); got != want {
			t.Errorf("%s: after the DELETE %s, want %s", bad, got, want)
		}
		db.Close()
	}
}
