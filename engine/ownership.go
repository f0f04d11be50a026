package engine

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"tracesql/queries"
)

// ForeignDatabaseError marks a database file that holds objects tracesql did not create: Open refuses
// it rather than add its tables beside the user's (or fail half-way through migrating them).
type ForeignDatabaseError struct {
	Kind, Name string // the first object found that tracesql did not create
}

func (e *ForeignDatabaseError) Error() string {
	return fmt.Sprintf("not a tracesql database (it has %s %s that tracesql did not create)", e.Kind, e.Name)
}

// signatureColumns are columns every tracesql version has written to traces and events: a table of
// that name without them is someone else's (the names alone are common words).
var signatureColumns = map[string][]string{
	"traces": {"trace_id", "label", "rank", "path", "file_bytes", "file_mtime"},
	"events": {"trace_id", "rank", "ev_idx", "ph", "cat", "name", "pid", "tid", "ts", "dur"},
}

// legacyNames are objects older tracesql versions left that migrate removes.
var legacyNames = regexp.MustCompile(`^(_hta_frame_compat|_tracesql_load_\d+)$`)

var createdName = regexp.MustCompile(`(?im)^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(TABLE|VIEW|MACRO)\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_][A-Za-z0-9_]*)`)

// ownNames are the tables, views and macros that install creates, from the embedded SQL itself so
// that the list cannot drift from it.
var ownNames = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{"_tracesql_install": true}
	for _, stmts := range [][]string{queries.Schema(), queries.Views()} {
		for _, s := range stmts {
			for _, m := range createdName.FindAllStringSubmatch(s, -1) {
				names[strings.ToLower(m[2])] = true
			}
		}
	}
	return names
})

// catalogObject is a table, view or macro of the database file.
type catalogObject struct{ kind, schema, name string }

// catalogObjects lists the database file's tables, views and macros (not temporary ones).
func (db *DB) catalogObjects(ctx context.Context) ([]catalogObject, error) {
	rows, err := db.SQL.QueryContext(ctx, `
		SELECT 'table', schema_name, table_name FROM duckdb_tables()
		WHERE database_name = current_database() AND NOT internal AND NOT temporary
		UNION ALL
		SELECT 'view', schema_name, view_name FROM duckdb_views()
		WHERE database_name = current_database() AND NOT internal AND NOT temporary
		UNION ALL
		SELECT DISTINCT 'macro', schema_name, function_name FROM duckdb_functions()
		WHERE database_name = current_database() AND NOT internal AND function_type IN ('macro', 'table_macro')`)
	if err != nil {
		return nil, fmt.Errorf("read the catalog: %w", err)
	}
	defer rows.Close()
	var objs []catalogObject
	for rows.Next() {
		var o catalogObject
		if err := rows.Scan(&o.kind, &o.schema, &o.name); err != nil {
			return nil, fmt.Errorf("read the catalog: %w", err)
		}
		objs = append(objs, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the catalog: %w", err)
	}
	return objs, nil
}

// HoldsNothing reports whether the database holds no trace, no NCCL profiler file and nothing but the
// objects tracesql creates: a file that may be removed without losing anything a user put in it.
func (db *DB) HoldsNothing(ctx context.Context) (bool, error) {
	var n int
	if err := db.SQL.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM traces) + (SELECT count(*) FROM nccl_traces)`).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return false, nil
	}
	objs, err := db.catalogObjects(ctx)
	if err != nil {
		return false, err
	}
	own := ownNames()
	for _, o := range objs {
		if o.schema != "main" || !own[strings.ToLower(o.name)] {
			return false, nil
		}
	}
	return true, nil
}

// checkOwnership, for a database file without install's marker (_tracesql_install, whose hash of any
// tracesql version makes the file ours: the rest is migrate's job), returns a *ForeignDatabaseError
// unless the file is empty or holds nothing but objects tracesql creates, with traces and events
// having their usual columns: a file written before the marker existed, or whose install was cut
// short. It reads the catalog only. A database with the marker may hold the user's own tables too
// (the README's what-if `CREATE TABLE g`).
func (db *DB) checkOwnership(ctx context.Context) error {
	objs, err := db.catalogObjects(ctx)
	if err != nil {
		return err
	}
	// Deterministic blame: the raw tables first (the likeliest clash), then by name.
	sort.SliceStable(objs, func(i, j int) bool {
		_, si := signatureColumns[strings.ToLower(objs[i].name)]
		_, sj := signatureColumns[strings.ToLower(objs[j].name)]
		if si != sj {
			return si
		}
		return objs[i].schema+"."+objs[i].name < objs[j].schema+"."+objs[j].name
	})
	own := ownNames()
	for _, o := range objs {
		name := o.name
		if o.schema != "main" {
			name = o.schema + "." + o.name
		}
		// DuckDB's names are case-insensitive: a table Events is the events install would find.
		lower := strings.ToLower(o.name)
		if o.schema != "main" || !(own[lower] || legacyNames.MatchString(lower)) {
			return &ForeignDatabaseError{Kind: o.kind, Name: name}
		}
		want, ok := signatureColumns[lower]
		if !ok {
			continue
		}
		if o.kind != "table" {
			return &ForeignDatabaseError{Kind: o.kind, Name: name}
		}
		var n int
		if err := db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_columns()
			WHERE database_name = current_database() AND schema_name = 'main' AND table_name = ? AND list_contains(?::VARCHAR[], column_name)`,
			o.name, want).Scan(&n); err != nil {
			return fmt.Errorf("read the catalog: %w", err)
		}
		if n != len(want) {
			return &ForeignDatabaseError{Kind: o.kind, Name: name}
		}
	}
	return nil
}
