package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"

	"tracesql/sqlfuncs"
)

// Unload removes loaded files from the database: every row of every table that carries one of the
// trace ids (events, the side tables, the stored frames, NCCL tables; traces itself last), in one
// transaction, so a failure leaves all of them. The CLI uses it for .unload, and to drop the bundled
// sample once the user's own traces are in: left beside them, it was summed into every aggregate over
// events.
func (db *DB) Unload(ctx context.Context, traceIDs []int64) error {
	if len(traceIDs) == 0 {
		return nil
	}
	tables, err := db.perFileTables(ctx)
	if err != nil {
		return fmt.Errorf("unload: %w", err)
	}
	conn, err := db.connOutsideTransaction(ctx)
	if err != nil {
		return fmt.Errorf("unload: %w", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("unload: %w", err)
	}
	defer tx.Rollback()
	if err := deleteTraceRows(ctx, txExecer{tx}, tables, traceIDs...); err != nil {
		return fmt.Errorf("unload: %w", err)
	}
	// A clock offset set for a label none of whose files is left goes with them.
	if _, err := tx.ExecContext(ctx, `DELETE FROM nccl_clock_override WHERE label NOT IN
		(SELECT label FROM traces UNION SELECT label FROM nccl_traces)`); err != nil {
		return fmt.Errorf("unload from nccl_clock_override: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("unload: %w", err)
	}
	// Cached critical-path graphs are keyed by trace id, and the next load may take an unloaded id
	// again (it takes the largest id + 1).
	sqlfuncs.ResetCriticalPathCache()
	return nil
}

// perFileTables lists every table of the database that holds rows per file (those with a trace_id column),
// traces last, so that deleting in this order never leaves rows whose traces row is gone.
func (db *DB) perFileTables(ctx context.Context) ([]string, error) {
	// (this database's only: a database the user ATTACHed may have tables of the same names)
	rows, err := db.SQL.QueryContext(ctx, `SELECT DISTINCT c.table_name FROM duckdb_columns() c
		JOIN duckdb_tables() t ON t.table_oid = c.table_oid
		WHERE c.database_name = ? AND c.schema_name = 'main' AND c.column_name = 'trace_id' AND NOT t.temporary
		ORDER BY c.table_name = 'traces', c.table_name`, db.catalog)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	return tables, rows.Err()
}

// deleteTraceRows deletes the rows of traceIDs (negative ids are ignored) from tables, inside the
// caller's transaction.
func deleteTraceRows(ctx context.Context, ex driver.ExecerContext, tables []string, traceIDs ...int64) error {
	var ids []string
	for _, id := range traceIDs {
		if id >= 0 {
			ids = append(ids, strconv.FormatInt(id, 10))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	in := "(" + strings.Join(ids, ", ") + ")"
	for _, t := range tables {
		if _, err := ex.ExecContext(ctx, "DELETE FROM "+sqlIdent(t)+" WHERE trace_id IN "+in, nil); err != nil {
			return fmt.Errorf("delete from %s: %w", t, err)
		}
	}
	return nil
}

// txExecer runs deleteTraceRows' statements in a database/sql transaction.
type txExecer struct{ tx *sql.Tx }

func (e txExecer) ExecContext(ctx context.Context, query string, _ []driver.NamedValue) (driver.Result, error) {
	return e.tx.ExecContext(ctx, query)
}

// LoadedFile is one file in the database: a Kineto trace or an NCCL profiler-plugin file.
type LoadedFile struct {
	TraceID int64
	Label   string
	Path    string // absolute, as loaded
}

// LoadedFiles lists the loaded files in trace_id order.
func (db *DB) LoadedFiles(ctx context.Context) ([]LoadedFile, error) {
	rows, err := db.SQL.QueryContext(ctx, `SELECT trace_id, label, path FROM traces
		UNION ALL SELECT trace_id, label, path FROM nccl_traces ORDER BY trace_id`)
	if err != nil {
		return nil, fmt.Errorf("loaded files: %w", err)
	}
	defer rows.Close()
	var out []LoadedFile
	for rows.Next() {
		var f LoadedFile
		if err := rows.Scan(&f.TraceID, &f.Label, &f.Path); err != nil {
			return nil, fmt.Errorf("loaded files: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
