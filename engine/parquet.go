package engine

// This file writes a loaded database to a directory of Parquet files and reads such a directory back,
// so that a job too big for one machine can be queried by any Parquet engine (DuckDB, Spark, Trino),
// and so that a converted job re-loads without parsing JSON.
//
// Layout of DIR, one entry per trace table (every table with a trace_id column, except the derived _*
// tables, which an import rebuilds):
//
//	DIR/<table>/rank=<r>/data_0.parquet   tables with a rank column, and the per-event tables of a
//	                                      Kineto trace (flows, counters, …), whose rank is joined from
//	                                      traces: hive partitioning, one directory per rank
//	DIR/<table>.parquet                   any other trace table (no rank to partition by)
//	DIR/tracesql_export.json              what was written: format version, tables, layout, rows
//
// The rank of a joined table lives only in the directory name (Parquet readers add it back as a
// column with hive partitioning); the tables with their own rank column keep it there too.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// parquetManifest is DIR/tracesql_export.json.
type parquetManifest struct {
	Format  int            `json:"format"` // parquetFormat; 1 = before events.link_idx
	Tool    string         `json:"tool"`
	Tables  []ParquetTable `json:"tables"`
	Traces  int64          `json:"traces"`
	Written string         `json:"written"` // UTC time of the export
}

// ParquetTable is one table of an export: its name, layout and row count.
type ParquetTable struct {
	Name string `json:"name"`
	// Layout: "rank" (own rank column, partitioned), "rank_joined" (rank from traces, partitioned) or
	// "single" (one file).
	Layout string `json:"layout"`
	Rows   int64  `json:"rows"`
}

const manifestName = "tracesql_export.json"

// parquetFormat is the export format written: 2 since events has link_idx and the frames are views.
const parquetFormat = 2

// rankJoined are the Kineto per-event tables without a rank column: every row has a traces row.
var rankJoined = map[string]bool{"metadata_events": true, "flows": true, "counters": true, "instants": true, "other_events": true}

// traceTables lists the base tables that hold per-trace data (a trace_id column), traces first, and
// whether each has a rank column. Tables named _* are derived (the stored analysis frame) and rebuilt
// on import instead.
func (db *DB) traceTables(ctx context.Context) ([]string, map[string]bool, error) {
	rows, err := db.SQL.QueryContext(ctx, `SELECT c.table_name, bool_or(c.column_name = 'rank')
		FROM duckdb_columns() c JOIN duckdb_tables() t ON t.table_oid = c.table_oid
		WHERE NOT c.internal AND c.schema_name = 'main' AND NOT t.temporary AND NOT starts_with(c.table_name, '_')
		GROUP BY c.table_name HAVING bool_or(c.column_name = 'trace_id')
		ORDER BY c.table_name <> 'traces', c.table_name`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var names []string
	hasRank := map[string]bool{}
	for rows.Next() {
		var n string
		var r bool
		if err := rows.Scan(&n, &r); err != nil {
			return nil, nil, err
		}
		names = append(names, n)
		hasRank[n] = r
	}
	return names, hasRank, rows.Err()
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func sqlIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// ExportParquet writes every trace table to dir (created; it must not exist or be empty) with one
// COPY per table, and a manifest. It returns the manifest's tables.
func (db *DB) ExportParquet(ctx context.Context, dir string) ([]ParquetTable, error) {
	fail := func(err error) ([]ParquetTable, error) {
		return nil, fmt.Errorf("export parquet %s: %w", dir, err)
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fail(errors.New("directory is not empty (refusing to mix two exports)"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	names, hasRank, err := db.traceTables(ctx)
	if err != nil {
		return fail(err)
	}
	man := parquetManifest{Format: parquetFormat, Tool: "tracesql"}
	if err := db.SQL.QueryRowContext(ctx, `SELECT count(*), strftime(now() AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') FROM traces`).Scan(&man.Traces, &man.Written); err != nil {
		return fail(err)
	}
	for _, name := range names {
		t := ParquetTable{Name: name}
		if err := db.SQL.QueryRowContext(ctx, "SELECT count(*) FROM "+sqlIdent(name)).Scan(&t.Rows); err != nil {
			return fail(err)
		}
		var src, target, opts string
		switch {
		case hasRank[name]:
			t.Layout = "rank"
			src = "SELECT * FROM " + sqlIdent(name)
		case rankJoined[name]:
			t.Layout = "rank_joined"
			src = "SELECT t.rank, x.* FROM " + sqlIdent(name) + " x JOIN traces t USING (trace_id)"
		default:
			t.Layout = "single"
			src = "SELECT * FROM " + sqlIdent(name)
		}
		if t.Layout == "single" {
			target = filepath.Join(dir, name+".parquet")
			opts = "FORMAT parquet, COMPRESSION zstd"
		} else {
			target = filepath.Join(dir, name)
			opts = "FORMAT parquet, COMPRESSION zstd, PARTITION_BY (rank), OVERWRITE_OR_IGNORE"
		}
		if t.Rows > 0 || t.Layout == "single" {
			q := fmt.Sprintf("COPY (%s) TO %s (%s)", src, sqlString(target), opts)
			if _, err := db.SQL.ExecContext(ctx, q); err != nil {
				return fail(fmt.Errorf("table %s: %w", name, err))
			}
		}
		man.Tables = append(man.Tables, t)
	}
	b, _ := json.MarshalIndent(man, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, manifestName), append(b, '\n'), 0o644); err != nil {
		return fail(err)
	}
	return man.Tables, nil
}

// ImportParquet loads a directory written by ExportParquet into the database in one transaction:
// all of it or, on error, nothing. Trace ids are renumbered after the database's own, so an export
// can be imported beside other traces; a (label, rank) already present is an error. It returns the
// number of traces imported.
func (db *DB) ImportParquet(ctx context.Context, dir string) (int64, error) {
	fail := func(err error) (int64, error) { return 0, fmt.Errorf("import parquet %s: %w", dir, err) }
	raw, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fail(fmt.Errorf("no %s: not a directory written by tracesql export-parquet", manifestName))
		}
		return fail(err)
	}
	var man parquetManifest
	if err := json.Unmarshal(raw, &man); err != nil {
		return fail(fmt.Errorf("%s: %w", manifestName, err))
	}
	if man.Format != 1 && man.Format != parquetFormat {
		return fail(fmt.Errorf("%s: format %d is not supported (this tracesql reads formats 1 and %d)", manifestName, man.Format, parquetFormat))
	}
	names, _, err := db.traceTables(ctx)
	if err != nil {
		return fail(err)
	}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}

	db.loadMu.Lock()
	defer db.loadMu.Unlock()
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return fail(err)
	}
	var firstID int64
	if err := conn.QueryRowContext(ctx, `SELECT coalesce(max(trace_id), -1) + 1 FROM traces`).Scan(&firstID); err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return fail(err)
	}
	n, err := importTables(ctx, conn, dir, man, known)
	imported := fmt.Sprintf("trace_id >= %d", firstID)
	if err == nil && man.Format == 1 {
		// Format 1 predates events.link_idx (and stored the analysis frames, skipped below).
		_, err = conn.ExecContext(ctx, fillLinksSQL(imported))
	}
	for _, s := range frameInserts(firstID, math.MaxInt64) {
		if err == nil {
			_, err = conn.ExecContext(ctx, s)
		}
	}
	if err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return fail(err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fail(err)
	}
	return n, nil
}

func importTables(ctx context.Context, conn *sql.Conn, dir string, man parquetManifest, known map[string]bool) (int64, error) {
	var offset int64
	if err := conn.QueryRowContext(ctx, `SELECT coalesce(max(trace_id), -1) + 1 FROM traces`).Scan(&offset); err != nil {
		return 0, err
	}
	// Rows are inserted in ev_idx order per trace, the order a JSON load gives, so that ties in
	// analyses that sort resolve as they would after loading the JSON.
	sort.SliceStable(man.Tables, func(i, j int) bool { return man.Tables[i].Name == "traces" && man.Tables[j].Name != "traces" })
	var imported int64
	for _, t := range man.Tables {
		if strings.HasPrefix(t.Name, "_") && man.Format == 1 {
			continue // format 1 stored the analysis frames: rebuilt instead
		}
		if !known[t.Name] {
			return 0, fmt.Errorf("table %s of the export does not exist in this database (export from a newer tracesql?)", t.Name)
		}
		var src string
		switch t.Layout {
		case "rank", "rank_joined":
			if t.Rows == 0 {
				continue
			}
			src = fmt.Sprintf("read_parquet(%s, hive_partitioning = true)", sqlString(filepath.Join(dir, t.Name, "*", "*.parquet")))
		case "single":
			src = fmt.Sprintf("read_parquet(%s)", sqlString(filepath.Join(dir, t.Name+".parquet")))
		default:
			return 0, fmt.Errorf("table %s: unknown layout %q", t.Name, t.Layout)
		}
		sel := fmt.Sprintf("* REPLACE (trace_id + %d AS trace_id)", offset)
		if t.Layout == "rank_joined" {
			sel = fmt.Sprintf("* EXCLUDE (rank) REPLACE (trace_id + %d AS trace_id)", offset)
		}
		order := ""
		if hasColumn(ctx, conn, t.Name, "ev_idx") {
			order = " ORDER BY trace_id, ev_idx"
		}
		q := fmt.Sprintf("INSERT INTO %s BY NAME SELECT %s FROM %s%s", sqlIdent(t.Name), sel, src, order)
		res, err := conn.ExecContext(ctx, q)
		if err != nil {
			return 0, fmt.Errorf("table %s: %w", t.Name, err)
		}
		rows, _ := res.RowsAffected()
		if rows != t.Rows {
			return 0, fmt.Errorf("table %s: read %d rows, the manifest says %d (incomplete export?)", t.Name, rows, t.Rows)
		}
		if t.Name == "traces" {
			imported = rows
			var label string
			var rank int
			err := conn.QueryRowContext(ctx, `SELECT label, rank FROM traces GROUP BY label, rank HAVING count(*) > 1 LIMIT 1`).Scan(&label, &rank)
			if err == nil {
				return 0, fmt.Errorf("rank %d of trace set %q is already loaded in this database (import into another database)", rank, label)
			} else if !errors.Is(err, sql.ErrNoRows) {
				return 0, err
			}
		}
	}
	return imported, nil
}

func hasColumn(ctx context.Context, conn *sql.Conn, table, col string) bool {
	var n int
	conn.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_columns() WHERE table_name = ? AND column_name = ? AND schema_name = 'main'`, table, col).Scan(&n)
	return n > 0
}
