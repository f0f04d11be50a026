package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"tracesql/sqlfuncs"
)

// Unload removes loaded files from the database: every row of every table that carries one of the
// trace ids (events, the side tables, the stored frames, NCCL tables; traces itself last), in one
// transaction, so a failure leaves all of them. The CLI uses it to drop the bundled sample once the
// user's own traces are in: left beside them, it was summed into every aggregate over events.
func (db *DB) Unload(ctx context.Context, traceIDs []int64) error {
	if len(traceIDs) == 0 {
		return nil
	}
	ids := make([]string, len(traceIDs))
	for i, id := range traceIDs {
		ids[i] = strconv.FormatInt(id, 10)
	}
	in := "(" + strings.Join(ids, ", ") + ")"
	rows, err := db.SQL.QueryContext(ctx, `SELECT DISTINCT c.table_name FROM duckdb_columns() c
		JOIN duckdb_tables() t ON t.schema_name = c.schema_name AND t.table_name = c.table_name
		WHERE c.schema_name = 'main' AND c.column_name = 'trace_id' AND NOT t.temporary
		ORDER BY c.table_name = 'traces', c.table_name`)
	if err != nil {
		return fmt.Errorf("unload: %w", err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return fmt.Errorf("unload: %w", err)
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("unload: %w", err)
	}
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("unload: %w", err)
	}
	defer tx.Rollback()
	for _, t := range tables {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+sqlIdent(t)+" WHERE trace_id IN "+in); err != nil {
			return fmt.Errorf("unload from %s: %w", t, err)
		}
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
