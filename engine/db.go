// Package engine opens the DuckDB database, discovers trace files, stream-parses Kineto / Chrome
// trace JSON and bulk-loads it into the raw tables, then installs the schema and views of package
// queries. It is the only package that reads trace files.
package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"tracesql/queries"
	"tracesql/sqlfuncs"
)

// DB is an open tracesql database: DuckDB with the tracesql schema and views installed.
type DB struct {
	SQL  *sql.DB
	Path string // "" for in-memory

	loadMu sync.Mutex // serialises trace_id allocation and the insert transaction
}

// Open opens (creating if needed) the database at path, or an in-memory one for "", and installs the
// schema and views. Views are re-created on every open so that a database written by an older
// tracesql gets the current definitions.
func Open(ctx context.Context, path string) (*DB, error) {
	dsn := path
	q := url.Values{}
	q.Set("threads", fmt.Sprint(runtime.NumCPU()))
	for k, v := range memorySettings(path) { // load.go: spill to disk rather than run out of memory
		q.Set(k, v)
	}
	if dsn != "" {
		dsn += "?" + q.Encode()
	} else {
		dsn = "?" + q.Encode()
	}
	connector, err := duckdb.NewConnector(dsn, nil)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", displayPath(path), err)
	}
	db := &DB{SQL: sql.OpenDB(connector), Path: path}
	// Table functions query on a second connection while the first runs (stack.md §1.4): never cap at 1.
	db.SQL.SetMaxIdleConns(4)
	if err := db.install(ctx); err != nil {
		db.SQL.Close()
		return nil, fmt.Errorf("open database %s: %w", displayPath(path), err)
	}
	return db, nil
}

func displayPath(p string) string {
	if p == "" {
		return "(in-memory)"
	}
	return p
}

func (db *DB) install(ctx context.Context) error {
	// Functions first: the macros in queries wrap them.
	if err := sqlfuncs.Register(ctx, db.SQL); err != nil {
		return fmt.Errorf("install functions: %w", err)
	}
	for _, stmts := range [][]string{queries.Schema(), queries.Views()} {
		for _, s := range stmts {
			if _, err := db.SQL.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("install schema: %w", err)
			}
		}
	}
	return db.fillFrames(ctx)
}

// Close checkpoints (so the .duckdb file is complete without its WAL) and closes the database.
func (db *DB) Close() error {
	if db.Path != "" {
		db.SQL.Exec("CHECKPOINT")
	}
	err := db.SQL.Close()
	os.Remove(memorySettings(db.Path)["temp_directory"]) // DuckDB leaves its spill directory behind, empty
	return err
}

// frameTables are the stored results of queries' _hta_frame_build macro, one per mode: the input every
// analysis reads (queries/views/10_hta_frame.sql). Computing them once per trace keeps analyses fast.
var frameTables = [...]struct {
	table  string
	compat bool
}{{"_hta_frame_default", false}, {"_hta_frame_compat", true}}

// buildFrames stores the analysis frames of one freshly inserted trace.
func buildFrames(ctx context.Context, ex driver.ExecerContext, traceID int) error {
	for _, f := range frameTables {
		q := fmt.Sprintf(`INSERT INTO %s SELECT * FROM _hta_frame_build(%t, %d)`, f.table, f.compat, traceID)
		if _, err := ex.ExecContext(ctx, q, nil); err != nil {
			return fmt.Errorf("build %s: %w", f.table, err)
		}
	}
	return nil
}

// fillFrames builds the frames of traces loaded by a tracesql that did not store them yet.
func (db *DB) fillFrames(ctx context.Context) error {
	for _, f := range frameTables {
		rows, err := db.SQL.QueryContext(ctx, fmt.Sprintf(
			`SELECT trace_id FROM traces WHERE trace_id NOT IN (SELECT DISTINCT trace_id FROM %s) ORDER BY 1`, f.table))
		if err != nil {
			return err
		}
		var ids []int
		for rows.Next() {
			var id int
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		for _, id := range ids {
			q := fmt.Sprintf(`INSERT INTO %s SELECT * FROM _hta_frame_build(%t, %d)`, f.table, f.compat, id)
			if _, err := db.SQL.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("build %s: %w", f.table, err)
			}
		}
	}
	return nil
}
