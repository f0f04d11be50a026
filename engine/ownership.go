package engine

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
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

// legacyNames are objects older tracesql versions left that migrate removes.
var legacyNames = regexp.MustCompile(`^(_hta_frame_compat|_tracesql_load_\d+)$`)

// isOwnName reports whether name (lower-cased) is one of the tables, views and macros install creates.
func isOwnName(name string) bool {
	_, ok := queries.OwnedKind(name)
	return ok
}

// catalogObject is an object of the database file's catalog: a table, view, macro, sequence, type,
// index or schema (not a temporary one, nor DuckDB's own).
type catalogObject struct{ kind, schema, name string }

// display is the object's name as a user would write it.
func (o catalogObject) display() string {
	if o.schema == "main" || o.kind == "schema" {
		return o.name
	}
	return o.schema + "." + o.name
}

// catalogObjects lists the objects of the database's file (catalog db.catalog). Sequences, types,
// indexes and schemas count: tracesql creates none, so each is a user's.
func (db *DB) catalogObjects(ctx context.Context) ([]catalogObject, error) {
	rows, err := db.SQL.QueryContext(ctx, `
		SELECT 'table', schema_name, table_name FROM duckdb_tables()
		WHERE database_name = $1 AND NOT internal AND NOT temporary
		UNION ALL
		SELECT 'view', schema_name, view_name FROM duckdb_views()
		WHERE database_name = $1 AND NOT internal AND NOT temporary
		UNION ALL
		SELECT DISTINCT 'macro', schema_name, function_name FROM duckdb_functions()
		WHERE database_name = $1 AND NOT internal AND function_type IN ('macro', 'table_macro')
		UNION ALL
		SELECT 'sequence', schema_name, sequence_name FROM duckdb_sequences()
		WHERE database_name = $1 AND NOT temporary
		UNION ALL
		SELECT 'type', schema_name, type_name FROM duckdb_types()
		WHERE database_name = $1 AND NOT internal
		UNION ALL
		SELECT 'index', schema_name, index_name FROM duckdb_indexes()
		WHERE database_name = $1
		UNION ALL
		SELECT 'schema', schema_name, schema_name FROM duckdb_schemas()
		WHERE database_name = $1 AND NOT internal`, db.catalog)
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

// freshInstall describes the database this tracesql installs, read from a scratch install in memory
// (so that it cannot drift from the embedded SQL): what checkOwnership compares a file without the
// install marker with, and HoldsNothing a file this process created.
type freshInstall struct {
	kinds   map[string]string   // each object's kind ("table", "view" or "macro"), by name
	columns map[string][]string // each table's columns, lower-cased, in order
	content string              // contentFingerprint of the fresh install
}

// fresh returns the freshInstall, made once per process (~0.2 s) and only when a file needs it. It is
// made under a context of its own: a cancelled open must not leave its error here for the later ones.
func fresh() (*freshInstall, error) {
	freshOnce.Do(func() { freshOnce.f, freshOnce.err = makeFreshInstall() })
	return freshOnce.f, freshOnce.err
}

// freshOnce holds fresh's result. (Not a sync.OnceValues: its function would start an initialisation
// cycle, install calling checkOwnership calling fresh.)
var freshOnce struct {
	sync.Once
	f   *freshInstall
	err error
}

func makeFreshInstall() (*freshInstall, error) {
	ctx := context.Background()
	db, err := openInstance(ctx, "", false)
	if err != nil {
		return nil, fmt.Errorf("scratch install: %w", err)
	}
	defer db.closePools() // not Close: that removes the spill directory the in-memory databases share
	f := &freshInstall{kinds: map[string]string{}, columns: map[string][]string{}}
	objs, err := db.catalogObjects(ctx)
	if err != nil {
		return nil, fmt.Errorf("scratch install: %w", err)
	}
	for _, o := range objs {
		f.kinds[strings.ToLower(o.name)] = o.kind
	}
	if f.columns, err = mainTableColumns(ctx, db.SQL, db.catalog); err != nil {
		return nil, fmt.Errorf("scratch install: %w", err)
	}
	if f.content, err = contentFingerprint(ctx, db.SQL, db.catalog); err != nil {
		return nil, fmt.Errorf("scratch install: %w", err)
	}
	return f, nil
}

// mainTableColumns returns the columns, lower-cased and in order, of each table in the main schema of
// catalog, by lower-cased name.
func mainTableColumns(ctx context.Context, q *sql.DB, catalog string) (map[string][]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT lower(c.table_name), lower(c.column_name)
		FROM duckdb_columns() c JOIN duckdb_tables() t USING (database_name, schema_name, table_name)
		WHERE c.database_name = $1 AND c.schema_name = 'main' AND NOT t.temporary
		ORDER BY c.table_name, c.column_index`, catalog)
	if err != nil {
		return nil, fmt.Errorf("read the columns: %w", err)
	}
	defer rows.Close()
	cols := map[string][]string{}
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			return nil, fmt.Errorf("read the columns: %w", err)
		}
		cols[table] = append(cols[table], column)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the columns: %w", err)
	}
	return cols, nil
}

// contentFingerprint sums up what the main schema of catalog holds: each view's and macro's
// definition, each table's and view's columns, and each table's rows (their count and the sum of
// their hashes; a hash alone would miss a column added with NULLs). Two databases with the same
// fingerprint hold the same, up to a hash collision.
func contentFingerprint(ctx context.Context, q *sql.DB, catalog string) (string, error) {
	var defs string
	if err := q.QueryRowContext(ctx, `SELECT coalesce(string_agg(d, chr(10) ORDER BY d), '') FROM (
			SELECT 'view ' || view_name || ': ' || sql AS d FROM duckdb_views()
			WHERE database_name = $1 AND schema_name = 'main' AND NOT internal AND NOT temporary
			UNION ALL
			SELECT 'macro ' || function_name || ' ' || function_type || ' ' || parameters::VARCHAR || ': ' || coalesce(macro_definition, '')
			FROM duckdb_functions()
			WHERE database_name = $1 AND schema_name = 'main' AND NOT internal AND function_type IN ('macro', 'table_macro')
			UNION ALL
			SELECT 'column ' || table_name || '.' || column_index || ' ' || column_name || ' ' || data_type FROM duckdb_columns()
			WHERE database_name = $1 AND schema_name = 'main' AND NOT internal)`, catalog).Scan(&defs); err != nil {
		return "", fmt.Errorf("read the definitions: %w", err)
	}
	tables, err := mainTableColumns(ctx, q, catalog)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(tables))
	for name := range tables {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(defs)
	for _, name := range names {
		var n int64
		var sum string
		if err := q.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0)::VARCHAR FROM `+
			sqlIdent(catalog)+`.main.`+sqlIdent(name)+` t`).Scan(&n, &sum); err != nil {
			return "", fmt.Errorf("read table %s: %w", name, err)
		}
		fmt.Fprintf(&b, "\nrows %s: %d %s", name, n, sum)
	}
	return b.String(), nil
}

// HoldsNothing reports whether the database holds nothing a user put in it: no trace, no NCCL profiler
// file, no object tracesql does not create (a table, view or macro of another name, or any sequence,
// type, index or schema), and tracesql's own tables, views and macros exactly as a fresh install makes
// them (a row the user added to kernel_classes, the README's way to teach the analyses a kernel family,
// is theirs). A file that holds nothing may be removed without losing anything.
func (db *DB) HoldsNothing(ctx context.Context) (bool, error) {
	var n int
	if err := db.SQL.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM `+sqlIdent(db.catalog)+`.main.traces) + (SELECT count(*) FROM `+
		sqlIdent(db.catalog)+`.main.nccl_traces)`).Scan(&n); err != nil {
		return false, fmt.Errorf("count the traces: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	objs, err := db.catalogObjects(ctx)
	if err != nil {
		return false, err
	}
	f, err := fresh()
	if err != nil {
		return false, err
	}
	for _, o := range objs {
		if o.schema != "main" || f.kinds[strings.ToLower(o.name)] != o.kind {
			return false, nil
		}
	}
	content, err := contentFingerprint(ctx, db.SQL, db.catalog)
	if err != nil {
		return false, err
	}
	return content == f.content, nil
}

// checkOwnership, for a database file without install's marker (_tracesql_install, whose hash of any
// tracesql version makes the file ours: the rest is migrate's job), returns a *ForeignDatabaseError
// unless the file is empty or holds nothing but what an install of tracesql, cut short or of a version
// before the marker, leaves: its tables with their columns (less those migrate adds), its views and
// macros, and the objects migrate removes. Each object must be of the kind tracesql makes of its name,
// and views and macros come only after the raw tables traces and events (install's order): a user's
// view named kernels, or a table counters(metric, value), is not tracesql's. It reads the catalog only,
// so that a refused file stays exactly as it was. A database with the marker may hold the user's own
// objects too (the README's what-if `CREATE TABLE g`).
func (db *DB) checkOwnership(ctx context.Context) error {
	objs, err := db.catalogObjects(ctx)
	if err != nil || len(objs) == 0 {
		return err
	}
	f, err := fresh()
	if err != nil {
		return err
	}
	// Deterministic blame: an object of a name tracesql never uses first (the plainest message), then
	// one of tracesql's names that is not what tracesql makes of it, a schema last (it may merely hold
	// the others); by name within each.
	rank := func(o catalogObject) int {
		lower := strings.ToLower(o.name)
		switch {
		case o.kind == "schema":
			return 2
		case o.schema != "main" || (f.kinds[lower] == "" && !legacyNames.MatchString(lower)):
			return 0
		}
		return 1
	}
	sort.SliceStable(objs, func(i, j int) bool {
		if ri, rj := rank(objs[i]), rank(objs[j]); ri != rj {
			return ri < rj
		}
		return objs[i].display() < objs[j].display()
	})
	columns, err := mainTableColumns(ctx, db.SQL, db.catalog)
	if err != nil {
		return err
	}
	// Install makes the raw tables first: any other object (a view, a macro, a frame table) without
	// traces and events beside it is not what an install left.
	var needsRaw *catalogObject
	for i, o := range objs {
		foreign := &ForeignDatabaseError{Kind: o.kind, Name: o.display()}
		if o.schema != "main" {
			return foreign
		}
		// DuckDB's names are case-insensitive: a table Events is the events install would find.
		lower := strings.ToLower(o.name)
		switch {
		case slices.Contains(rebuiltFrames, lower):
			// migrate drops these whatever they are; older versions made some tables, some views.
			if o.kind != "table" && o.kind != "view" {
				return foreign
			}
		case legacyNames.MatchString(lower):
			if o.kind != "view" { // an older loader's Arrow scan
				return foreign
			}
		case f.kinds[lower] != o.kind:
			return foreign
		case o.kind == "table":
			if !sameColumns(lower, columns[lower], f.columns[lower]) {
				return foreign
			}
			continue
		}
		if needsRaw == nil {
			needsRaw = &objs[i]
		}
	}
	if needsRaw != nil && (columns["traces"] == nil || columns["events"] == nil) {
		return &ForeignDatabaseError{Kind: needsRaw.kind, Name: needsRaw.display()}
	}
	return nil
}

// sameColumns reports whether a table of a file without the install marker has the columns (have)
// that install gives it (want), but for those migrate adds to an older version's file.
func sameColumns(table string, have, want []string) bool {
	optional := map[string]bool{}
	for _, c := range migratedColumns {
		if c.table == table && !slices.Contains(have, c.column) {
			optional[c.column] = true
		}
	}
	want = slices.DeleteFunc(slices.Clone(want), func(c string) bool { return optional[c] })
	return slices.Equal(have, want)
}
