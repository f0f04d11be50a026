package engine

import (
	"context"
	"fmt"
	"testing"
)

// TestUnload: unloading one trace set removes its rows from every table that has a trace_id and
// leaves the other set's rows as they were; the unloaded files load again afterwards.
func TestUnload(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	if _, err := db.Load(ctx, []string{"../testdata/traces/alexnet"}, LoadOptions{Label: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Load(ctx, []string{"../testdata/traces/recorded/control"}, LoadOptions{Label: "b"}); err != nil {
		t.Fatal(err)
	}
	rows, err := db.SQL.Query(`SELECT DISTINCT table_name FROM duckdb_columns() WHERE schema_name = 'main' AND column_name = 'trace_id'
		AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		tables = append(tables, s)
	}
	rows.Close()
	if len(tables) < 10 {
		t.Fatalf("only %d tables with trace_id: %v", len(tables), tables)
	}
	count := func(table, label string) int64 {
		return queryInt(t, db, fmt.Sprintf(`SELECT count(*) FROM %s WHERE trace_id IN (SELECT trace_id FROM traces WHERE label = ?)`, sqlIdent(table)), label)
	}
	before := map[string]int64{}
	var aRows int64
	for _, tb := range tables {
		before[tb] = count(tb, "b")
		aRows += count(tb, "a")
	}
	if before["events"] == 0 || aRows == 0 {
		t.Fatalf("nothing loaded: b events %d, a rows %d", before["events"], aRows)
	}
	aID := queryInt(t, db, `SELECT trace_id FROM traces WHERE label = 'a'`)
	if err := db.Unload(ctx, []int64{aID}); err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if n := queryInt(t, db, fmt.Sprintf(`SELECT count(*) FROM %s WHERE trace_id = ?`, sqlIdent(tb)), aID); n != 0 {
			t.Errorf("%s: %d rows of the unloaded trace left", tb, n)
		}
		if n := count(tb, "b"); n != before[tb] {
			t.Errorf("%s: %d rows of the kept trace, had %d", tb, n, before[tb])
		}
	}
	if n := queryInt(t, db, `SELECT count(*) FROM temporal_breakdown WHERE label = 'b'`); n != 1 {
		t.Errorf("temporal_breakdown after the unload: %d rows for b, want 1", n)
	}
	res, err := db.Load(ctx, []string{"../testdata/traces/alexnet"}, LoadOptions{Label: "a"})
	if err != nil || len(res) != 1 || res[0].Skipped != "" {
		t.Fatalf("reload after unload: %+v, %v", res, err)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM kernels WHERE trace_id IN (SELECT trace_id FROM traces WHERE label = 'a')`); n == 0 {
		t.Error("the reloaded trace has no kernels")
	}
}

// TestUserTablesKeepTheirRows: a table of the user's with a trace_id column (a snapshot of kernels kept to
// compare with a re-profiled run) is not tracesql's: unloading the file leaves its rows, and the file loaded
// again gets a new id, so that the kept rows do not come to name it.
func TestUserTablesKeepTheirRows(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	first := mustLoad(t, db, "../testdata/traces/alexnet")[0].TraceID
	mustExec(t, db, `CREATE TABLE baseline AS SELECT trace_id, name, dur FROM kernels`, `CREATE TABLE notes (trace_id VARCHAR, note VARCHAR)`,
		`INSERT INTO notes VALUES ('x', 'not a number'), (NULL, NULL)`)
	kept := queryInt(t, db, `SELECT count(*) FROM baseline`)
	if kept == 0 {
		t.Fatal("no kernels in the snapshot")
	}
	if err := db.Unload(ctx, []int64{int64(first)}); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM baseline WHERE trace_id = ?`, first); n != kept {
		t.Errorf("baseline holds %d rows after the unload, had %d", n, kept)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM notes`); n != 2 {
		t.Errorf("notes holds %d rows after the unload, had 2", n)
	}
	again := mustLoad(t, db, "../testdata/traces/alexnet")[0].TraceID
	if again <= first {
		t.Errorf("the file loaded again got trace id %d, which the kept rows (id %d) could name", again, first)
	}
}

// TestOrphanRowsKeepTheirID (review r68 #1): rows of tracesql's tables whose traces row is gone (the user's
// DELETE FROM traces; a load killed while DuckDB wrote its commit, whose write-ahead log replays the big
// tables' full row groups without the traces row) keep their id from the next file: the next load took the
// orphans' id, and its trace held both files' events (its kernels doubled).
func TestOrphanRowsKeepTheirID(t *testing.T) {
	ctx := context.Background()
	db := twoSets(t)
	orphan := queryInt(t, db, `SELECT trace_id FROM traces WHERE label = 'b'`)
	mustExec(t, db, `DELETE FROM traces WHERE label = 'b'`)
	res, err := db.Load(ctx, []string{"../testdata/traces/alexnet"}, LoadOptions{Label: "c"})
	if err != nil || len(res) != 1 {
		t.Fatalf("load c: %+v, %v", res, err)
	}
	if int64(res[0].TraceID) <= orphan {
		t.Errorf("c got trace id %d, the orphan rows hold %d", res[0].TraceID, orphan)
	}
	a := queryInt(t, db, `SELECT count(*) FROM events WHERE trace_id = (SELECT trace_id FROM traces WHERE label = 'a')`)
	if c := queryInt(t, db, `SELECT count(*) FROM events WHERE trace_id = ?`, res[0].TraceID); c != a {
		t.Errorf("c (the same file as a) has %d events, a %d", c, a)
	}
}

// TestRemoveOrphanRows (review r68 #1): rows whose trace id is above every id traces holds (a load killed
// while DuckDB wrote its commit replays the big tables' full row groups without their traces row; the same
// as a DELETE FROM traces of the last trace) are removed from every table of tracesql's, and only those: the
// kept trace's rows stay, and a user's table keeps its rows.
func TestRemoveOrphanRows(t *testing.T) {
	ctx := context.Background()
	db := twoSets(t)
	mustExec(t, db, `CREATE TABLE mine AS SELECT trace_id, name FROM kernels`)
	mine := queryInt(t, db, `SELECT count(*) FROM mine`)
	if n, id, err := db.RemoveOrphanRows(ctx); err != nil || n != 0 || id != -1 {
		t.Fatalf("nothing to remove: got %d rows from id %d, %v", n, id, err)
	}
	a := queryInt(t, db, `SELECT trace_id FROM traces WHERE label = 'a'`)
	b := queryInt(t, db, `SELECT trace_id FROM traces WHERE label = 'b'`)
	aEvents := queryInt(t, db, `SELECT count(*) FROM events WHERE trace_id = ?`, a)
	bRows := queryInt(t, db, `SELECT count(*) FROM events WHERE trace_id = ?`, b) + queryInt(t, db, `SELECT count(*) FROM _hta_frame_default WHERE trace_id = ?`, b)
	mustExec(t, db, `DELETE FROM traces WHERE label = 'b'`)
	n, id, err := db.RemoveOrphanRows(ctx)
	if err != nil || id != b || n < bRows {
		t.Fatalf("removed %d rows from id %d (%v): want at least %d, from %d", n, id, err, bRows, b)
	}
	own, err := db.perFileTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range own {
		if k := queryInt(t, db, fmt.Sprintf(`SELECT count(*) FROM %s WHERE trace_id = ?`, sqlIdent(tb)), b); k != 0 {
			t.Errorf("%s: %d rows of the orphaned trace left", tb, k)
		}
	}
	if k := queryInt(t, db, `SELECT count(*) FROM events WHERE trace_id = ?`, a); k != aEvents {
		t.Errorf("the kept trace has %d events, had %d", k, aEvents)
	}
	if k := queryInt(t, db, `SELECT count(*) FROM mine`); k != mine {
		t.Errorf("the user's table has %d rows, had %d", k, mine)
	}
}

// twoSets opens a database holding trace set a (alexnet) and then b (recorded/control).
func twoSets(t *testing.T) *DB {
	t.Helper()
	db := openTestDB(t)
	for _, set := range []struct{ label, path string }{{"a", "../testdata/traces/alexnet"}, {"b", "../testdata/traces/recorded/control"}} {
		if _, err := db.Load(context.Background(), []string{set.path}, LoadOptions{Label: set.label}); err != nil {
			t.Fatal(err)
		}
	}
	return db
}
