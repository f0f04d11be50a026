package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"tracesql/sqlfuncs"
)

// refuseOwnFiles returns an error when writing to path would replace a file this session depends on: a database file
// (the --db file, its write-ahead log, or one ATTACHed) or a loaded trace. Truncating the open database corrupts it,
// and overwriting a trace breaks every later export that re-reads it; both are one mistyped -o away.
func refuseOwnFiles(ctx context.Context, db *sql.DB, path string) error {
	target, err := os.Stat(path)
	if err != nil {
		return nil // nothing there yet: nothing to lose
	}
	rows, err := db.QueryContext(ctx, `
		SELECT 'the database file' AS what, path FROM duckdb_databases() WHERE path IS NOT NULL
		UNION ALL SELECT 'the database''s write-ahead log', path || '.wal' FROM duckdb_databases() WHERE path IS NOT NULL
		UNION ALL SELECT 'the loaded trace of rank ' || rank || ' (label ' || label || ')', path FROM traces
		UNION ALL SELECT 'the loaded NCCL profiler file of rank ' || rank || ' (label ' || label || ')', path FROM nccl_traces`)
	if err != nil {
		return fmt.Errorf("write %s: check that it is not one of the session's own files: %w", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var what, p string
		if err := rows.Scan(&what, &p); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if st, err := os.Stat(p); err == nil && os.SameFile(st, target) {
			return fmt.Errorf("write %s: that is %s; choose another file name", path, what)
		}
	}
	return rows.Err()
}

// refuseInternalCall returns an error when stmt calls one of the Go table functions itself, or hands
// query() SQL built at run time (sqlfuncs.RefuseInternalCall).
func refuseInternalCall(stmt string) error { return sqlfuncs.RefuseInternalCall(stmt) }
