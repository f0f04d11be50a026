package engine

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
)

// storedState is whether the per-trace results stored at load that kernel_classes decides (_trace_summary,
// _type_segments, _memory_bw_stats; queries/views/11_trace_summary.sql) are known to match kernel_classes, shared by the handles of one
// database. The analyses ask it through _stored_fresh() when a query is bound: when true they read the
// stored rows alone; when false they also plan the recompute of the traces stored under other rules,
// which costs most of a small analysis (temporal_breakdown on one trace: ~7 of 9 ms) even when it finds
// nothing to do.
type storedState struct {
	fresh atomic.Bool
}

// StoredMayChange forgets that the stored results are fresh: what a load or an import does first (while a
// rule cannot apply, the rows they store are stale).
func (db *DB) StoredMayChange() {
	db.stored.fresh.Store(false)
}

// SyncStored computes again the stored results of the traces whose rows predate the current kernel_classes
// (in a transaction of its own, on a writable database, when every rule can apply; inside a user's open
// transaction it only looks), and records whether every trace's results are now fresh. Only a client that
// sees every statement run on the database may call it (the CLI session), and it must call it again after
// every statement that may write: _stored_fresh() is a promise that nothing has changed kernel_classes
// since the last call. (A statement's own reads see the rules as they were when it began, so the call
// after it is soon enough.) Without a call the analyses always check, as a library user's queries need.
// An error leaves the results marked not fresh, which only costs time.
func (db *DB) SyncStored(ctx context.Context) error {
	db.stored.fresh.Store(false)
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return fmt.Errorf("stored results: %w", err)
	}
	defer conn.Close()
	// The check reads this database's tables by their plain names, and every tracesql database's views read
	// the one flag: after USE of another database, or beside another tracesql database (ATTACH), whose
	// rules this check does not see, the analyses check.
	var elsewhere bool
	if err := conn.QueryRowContext(ctx, `SELECT current_database() <> $1 OR EXISTS (SELECT 1 FROM duckdb_tables()
		WHERE table_name = '_trace_summary' AND schema_name = 'main' AND database_name <> $1)`, db.catalog).Scan(&elsewhere); err != nil || elsewhere {
		return err
	}
	stale, err := staleTraces(ctx, conn)
	if err != nil {
		return fmt.Errorf("stored results: %w", err)
	}
	if len(stale) > 0 {
		if db.ReadOnly {
			return nil
		}
		if open, err := TransactionOpen(ctx, conn); err != nil || open {
			// (the user's transaction is not tracesql's to write in: a failed refresh would abort it)
			return err
		}
		if usable, err := rulesUsable(ctx, conn); err != nil || !usable {
			return err
		}
		if err := refreshStored(ctx, conn, stale); err != nil {
			return fmt.Errorf("stored results: %w", err)
		}
	}
	db.stored.fresh.Store(true)
	return nil
}

// staleTraces lists the traces whose stored results were computed under other kernel_classes rules, or
// under rules that could not apply (_stale_traces).
func staleTraces(ctx context.Context, conn *sql.Conn) ([]int64, error) {
	rows, err := conn.QueryContext(ctx, `SELECT trace_id FROM _stale_traces(-2147483648, 2147483647, true) ORDER BY trace_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// refreshStored replaces the stored results of the stale traces, in one transaction. The kernel-type sweep
// goes first: _type_sweep's stale_only reads which traces are stale from _trace_summary.
func refreshStored(ctx context.Context, conn *sql.Conn, stale []int64) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after Commit, a no-op
	ids := make([]string, len(stale))
	for i, id := range stale {
		ids[i] = strconv.FormatInt(id, 10)
	}
	in := "(" + strings.Join(ids, ", ") + ")"
	lo, hi := stale[0], stale[len(stale)-1]
	for _, s := range []string{
		`DELETE FROM _memory_bw_stats WHERE trace_id IN ` + in,
		fmt.Sprintf(`INSERT INTO _memory_bw_stats SELECT * FROM _memory_bw_stats_source(%d, %d) WHERE trace_id IN %s`, lo, hi, in),
		`DELETE FROM _type_segments WHERE trace_id IN ` + in,
		fmt.Sprintf(`INSERT INTO _type_segments SELECT * FROM _type_sweep(%d, %d, true)`, lo, hi),
		`DELETE FROM _trace_summary WHERE trace_id IN ` + in,
		fmt.Sprintf(`INSERT INTO _trace_summary SELECT * FROM _trace_summary_source(%d, %d) WHERE trace_id IN %s`, lo, hi, in),
	} {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return tx.Commit()
}
