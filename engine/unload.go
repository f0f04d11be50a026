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

// perFileTables lists tracesql's tables that hold rows per file (those with a trace_id column), traces
// last, so that deleting in this order never leaves rows whose traces row is gone. A table of the user's
// with a trace_id column (a saved snapshot of kernels, say) is theirs: unloading or replacing a file
// leaves its rows, and nextTraceID keeps their ids from being given to another file.
func (db *DB) perFileTables(ctx context.Context) ([]string, error) {
	own, _, err := db.traceIDTables(ctx, db.SQL)
	return own, err
}

// traceIDTables lists the tables of this database (main schema, not temporary; a database the user
// ATTACHed may have tables of the same names) with a trace_id column: tracesql's own (traces last) and
// the user's.
func (db *DB) traceIDTables(ctx context.Context, q rowsQuerier) (own, user []string, err error) {
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT c.table_name FROM duckdb_columns() c
		JOIN duckdb_tables() t ON t.table_oid = c.table_oid
		WHERE c.database_name = ? AND c.schema_name = 'main' AND c.column_name = 'trace_id' AND NOT t.temporary
		ORDER BY c.table_name = 'traces', c.table_name`, db.catalog)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, nil, err
		}
		if isOwnName(strings.ToLower(t)) {
			own = append(own, t)
		} else {
			user = append(user, t)
		}
	}
	return own, user, rows.Err()
}

// rowsQuerier is a *sql.DB or *sql.Conn (a transaction's connection).
type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// nextTraceID is the id the next loaded file gets: one above every id in use, by any of tracesql's
// tables and the user's own tables with a trace_id column, so that rows the user kept of an unloaded
// or replaced file never come to name another file, and neither do rows whose traces row is gone (a
// user's DELETE FROM traces; a load killed while DuckDB wrote its commit, whose write-ahead log then
// replays the big tables' full row groups without the rest: review r68 found the next load's events
// doubled). DuckDB answers each max from its statistics (0.3 ms on a 4.9M-event trace).
func (db *DB) nextTraceID(ctx context.Context, q rowsQuerier) (int64, error) {
	own, user, err := db.traceIDTables(ctx, q)
	if err != nil {
		return 0, err
	}
	parts := []string{}
	for _, t := range own {
		parts = append(parts, "SELECT max(trace_id)::BIGINT AS id FROM "+sqlIdent(t))
	}
	for _, t := range user {
		parts = append(parts, "SELECT max(TRY_CAST(trace_id AS BIGINT)) AS id FROM "+sqlIdent(t))
	}
	if len(parts) == 0 {
		return 0, nil
	}
	var id int64
	if err := q.QueryRowContext(ctx, "SELECT coalesce(max(id), -1) + 1 FROM ("+strings.Join(parts, " UNION ALL ")+")").Scan(&id); err != nil {
		return 0, fmt.Errorf("next trace id: %w", err)
	}
	return id, nil
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

// RemoveOrphanRows deletes, from tracesql's per-trace tables, the rows of trace ids above every id that
// traces and nccl_traces hold, and returns how many it deleted and their lowest id (-1 none). Such rows
// are left by a load killed while DuckDB wrote its commit: the next open replays the big tables' full row
// groups from the torn write-ahead log without the traces row (review r68: 249,124 events counted under
// no trace, the kernels view 30,664 rows instead of 2,104), or by a user's DELETE FROM traces of the
// last trace. The check reads max(trace_id) of events, then of each table, which DuckDB answers from
// its statistics; rows of a deleted trace below the highest id are not looked for (that would scan every
// table).
func (db *DB) RemoveOrphanRows(ctx context.Context) (removed, firstID int64, err error) {
	if db.ReadOnly {
		return 0, -1, nil
	}
	db.loadMu.Lock()
	defer db.loadMu.Unlock()
	// events first, alone: it holds rows of every trace that had any, and the common answer, none above,
	// then costs one statement, not the catalog query and one per table (10 ms of a 50 ms open)
	var known, top int64
	if err := db.SQL.QueryRowContext(ctx, `SELECT (SELECT coalesce(max(id), -1) FROM (SELECT max(trace_id)::BIGINT AS id FROM traces
		UNION ALL SELECT max(trace_id)::BIGINT FROM nccl_traces)), (SELECT coalesce(max(trace_id), -1)::BIGINT FROM events)`).Scan(&known, &top); err != nil {
		return 0, -1, fmt.Errorf("look for orphan rows: %w", err)
	}
	firstID = -1
	if top <= known {
		return 0, firstID, nil
	}
	own, err := db.perFileTables(ctx)
	if err != nil {
		return 0, -1, err
	}
	for _, t := range own {
		if t == "traces" || t == "nccl_traces" {
			continue
		}
		var top, low sql.NullInt64
		if err := db.SQL.QueryRowContext(ctx, "SELECT max(trace_id)::BIGINT FROM "+sqlIdent(t)).Scan(&top); err != nil {
			return removed, firstID, fmt.Errorf("look for orphan rows in %s: %w", t, err)
		}
		if !top.Valid || top.Int64 <= known {
			continue
		}
		if err := db.SQL.QueryRowContext(ctx, "SELECT min(trace_id)::BIGINT FROM "+sqlIdent(t)+" WHERE trace_id > ?", known).Scan(&low); err == nil && low.Valid &&
			(firstID < 0 || low.Int64 < firstID) {
			firstID = low.Int64
		}
		res, err := db.SQL.ExecContext(ctx, "DELETE FROM "+sqlIdent(t)+" WHERE trace_id > ?", known)
		if err != nil {
			return removed, firstID, fmt.Errorf("remove orphan rows from %s: %w", t, err)
		}
		n, _ := res.RowsAffected()
		removed += n
	}
	return removed, firstID, nil
}
