package engine

// This file writes a loaded database to a directory of Parquet files and reads such a directory back,
// so that a job too big for one machine can be queried by any Parquet engine (DuckDB, Spark, Trino),
// and so that a converted job re-loads without parsing JSON.
//
// Layout of DIR, one entry per trace table (every table with a trace_id column, except tracesql's derived
// _* tables, which an import rebuilds; a table of the user's without trace_id is left out, and said so):
//
//	DIR/<table>/rank=<r>/data_0.parquet   tables with an integer rank column, and the per-event tables
//	                                      of a Kineto trace (flows, counters, …), whose rank is joined
//	                                      from traces: hive partitioning, one directory per rank
//	DIR/<table>.parquet                   any other trace table (no rank to partition by)
//	DIR/rules/<table>.parquet             the classification rules the analyses used (kernel_classes,
//	                                      phase_rules): a fresh database importing the export adopts
//	                                      them, one holding other traces keeps its own (and says so)
//	DIR/settings/<table>.parquet          settings per trace set (nccl_clock_override): an import adds
//	                                      the rows of the labels it brings, except where the database
//	                                      has a row of the same key with other values (and says so)
//	DIR/tracesql_export.json              what was written: format version, tables, layout, rows,
//	                                      columns, and each file with its row count
//
// <table> is the table's name, or, for a name that cannot be a file name ("runs/2024"), that name
// %-encoded (fileBase), which the manifest records beside the real name.
//
// The rank of a joined table lives only in the directory name (Parquet readers add it back as a
// column with hive partitioning); the tables with their own rank column keep it there too.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"tracesql/internal/outdir"
)

// parquetManifest is DIR/tracesql_export.json.
type parquetManifest struct {
	Format int            `json:"format"` // parquetFormat; 1 = before events.link_idx
	Tool   string         `json:"tool"`
	Tables []ParquetTable `json:"tables"`
	Traces int64          `json:"traces"`
	// Rules are the classification tables (ruleTables), written as single files under rules/; absent from
	// exports written before them.
	Rules []ParquetTable `json:"rules,omitempty"`
	// Settings are the tables of per-label settings (settingTables), written as single files under
	// settings/; absent from exports written before them.
	Settings []ParquetTable `json:"settings,omitempty"`
	Written  string         `json:"written"` // UTC time of the export
}

// checkComplete refuses a manifest that lacks the tables every export has: without its events entry an
// import made traces with no events (every analysis empty, and no error said why).
func (m *parquetManifest) checkComplete() error {
	rows := map[string]int64{}
	for _, t := range m.Tables {
		rows[t.Name] = t.Rows
	}
	for _, name := range []string{"traces", "events"} {
		if _, ok := rows[name]; !ok {
			return fmt.Errorf("lists no %s table: the export is incomplete (every export has traces and events)", name)
		}
	}
	if rows["traces"] != m.Traces {
		return fmt.Errorf("its traces table has %d rows, but it counts %d traces", rows["traces"], m.Traces)
	}
	return nil
}

// ParquetTable is one table of an export: its name, layout and row count.
type ParquetTable struct {
	Name string `json:"name"`
	// File is the name of the table's file (File.parquet) or directory when it is not Name: a name that
	// cannot be a file name, encoded by fileBase. Absent when it is Name, and from older exports.
	File string `json:"file,omitempty"`
	// Layout: "rank" (own integer rank column, partitioned), "rank_joined" (rank from traces,
	// partitioned) or "single" (one file).
	Layout string `json:"layout"`
	Rows   int64  `json:"rows"`
	// Columns (name and DuckDB type, in table order) let an import create a table its database lacks
	// (one the user made); Files (paths relative to DIR, with their rows) let it name a file that is
	// missing, truncated or foreign. Both are absent from exports written before them.
	Columns []ParquetColumn `json:"columns,omitempty"`
	Files   []ParquetFile   `json:"files,omitempty"`
}

// ParquetColumn is one column of an exported table.
type ParquetColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// ParquetFile is one file of an exported table.
type ParquetFile struct {
	Path string `json:"path"` // relative to the export directory, '/'-separated
	Rows int64  `json:"rows"`
}

const manifestName = "tracesql_export.json"

// parquetFormat is the export format written: 2 since events has link_idx and the frames are views.
const parquetFormat = 2

// ruleTables are the tables of rules (no trace_id) that the analyses read and users edit.
var ruleTables = []string{"kernel_classes", "phase_rules"}

// settingTables are tables of settings per trace set (a label column, no trace_id) that users set and the
// views read: an import adds the rows of the labels it brings.
var settingTables = []string{"nccl_clock_override"}

// rankJoined are the Kineto per-event tables without a rank column: every row has a traces row.
var rankJoined = map[string]bool{"metadata_events": true, "flows": true, "counters": true, "instants": true, "other_events": true}

// partitionRankTypes are the types of a rank column that hive partitioning gives back as they were. A
// text rank is not among them: its values 'NULL' and '__HIVE_DEFAULT_PARTITION__' came back as NULL.
var partitionRankTypes = map[string]bool{"TINYINT": true, "SMALLINT": true, "INTEGER": true, "BIGINT": true, "HUGEINT": true,
	"UTINYINT": true, "USMALLINT": true, "UINTEGER": true, "UBIGINT": true}

// derivedTable says whether a table is one of tracesql's own _* tables (the stored analysis frames, and
// what older versions left), which an import rebuilds rather than reads. A user's table named _* is
// data like any other.
func derivedTable(name string) bool {
	lower := strings.ToLower(name)
	return strings.HasPrefix(lower, "_") && (isOwnName(lower) || legacyNames.MatchString(lower))
}

// traceTables lists the base tables that hold per-trace data (a trace_id column), traces first, and
// whether each is partitioned by its own rank column (one of partitionRankTypes). tracesql's derived
// tables are left out (derivedTable). It also returns, sorted, one line for each table of the user's that
// it leaves out: one without a trace_id column, or whose trace_id is not an integer (an import renumbers
// trace ids: such an export failed every import with a binder error listing every + overload).
func (db *DB) traceTables(ctx context.Context) ([]string, map[string]bool, []string, error) {
	rows, err := db.SQL.QueryContext(ctx, `SELECT c.table_name, coalesce(any_value(c.data_type) FILTER (WHERE c.column_name = 'trace_id'), ''),
			coalesce(any_value(c.data_type) FILTER (WHERE c.column_name = 'rank'), '')
		FROM duckdb_columns() c JOIN duckdb_tables() t ON t.table_oid = c.table_oid
		WHERE NOT c.internal AND c.database_name = ? AND c.schema_name = 'main' AND NOT t.temporary
		GROUP BY c.table_name
		ORDER BY c.table_name <> 'traces', c.table_name`, db.catalog)
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	var names, without []string
	partitioned := map[string]bool{}
	for rows.Next() {
		var n, idType, rankType string
		if err := rows.Scan(&n, &idType, &rankType); err != nil {
			return nil, nil, nil, err
		}
		switch lower := strings.ToLower(n); {
		case derivedTable(n):
		case idType == "":
			if !isOwnName(lower) && !legacyNames.MatchString(lower) {
				// An import renumbers trace ids to place an export beside other traces; a table without
				// them cannot be placed, and would be appended to the target's whole.
				without = append(without, fmt.Sprintf("table %s not exported: it has no trace_id column (an export holds per-trace tables only)", n))
			}
		case !partitionRankTypes[idType]:
			without = append(without, fmt.Sprintf("table %s not exported: its trace_id is %s, not an integer (an import renumbers trace ids)", n, idType))
		default:
			names = append(names, n)
			partitioned[n] = partitionRankTypes[rankType]
		}
	}
	return names, partitioned, without, rows.Err()
}

// notExportedObjects is the line saying which of the user's catalog objects an export leaves out
// because they are not tables of the main schema: views, macros, sequences, types, indexes, and the
// tables of other schemas ("" when there are none). Their definitions are SQL, not trace data; an
// import cannot place a table of another schema beside the target's traces.
func (db *DB) notExportedObjects(ctx context.Context) (string, error) {
	objs, err := db.catalogObjects(ctx)
	if err != nil {
		return "", err
	}
	var out []string
	for _, o := range objs {
		switch {
		case o.kind == "table" && o.schema == "main", o.kind == "schema" && o.name == "main":
		case o.schema == "main" && isOwnName(strings.ToLower(o.name)):
		default:
			out = append(out, o.kind+" "+o.display())
		}
	}
	if len(out) == 0 {
		return "", nil
	}
	slices.Sort(out)
	out = slices.Compact(out) // a macro with several overloads is listed once per overload
	return "not exported (an export holds the main schema's tables only; re-create these after an import): " + strings.Join(out, ", "), nil
}

// fileBase is the name of table name's file (fileBase.parquet) or directory in an export: the name
// itself when it can be one on any system, else with each byte that cannot (a '/', a control
// character, one Windows refuses), hive partitioning's '=' and the escape '%' itself written as %XX,
// and a leading '.' too ("." and ".." name directories, a dotfile is hidden). A name too long for a
// file is cut short and ends with a hash of the whole name, so two long names still differ.
func fileBase(name string) string {
	const maxBase, cutAt = 200, 180 // bytes; a file name may have 255, and ".parquet" follows
	var b strings.Builder
	cut := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte(`/\:*?"<>|%=`, c) >= 0 || (i == 0 && c == '.') {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
		if b.Len() <= cutAt && (i+1 == len(name) || utf8.RuneStart(name[i+1])) {
			cut = b.Len()
		}
	}
	if b.Len() <= maxBase {
		return b.String()
	}
	sum := sha256.Sum256([]byte(name))
	return b.String()[:cut] + "~" + hex.EncodeToString(sum[:8])
}

// base is the name of t's file (base.parquet) or directory in the export.
func (t ParquetTable) base() string {
	if t.File != "" {
		return t.File
	}
	return t.Name
}

// checkBase refuses a manifest whose table names a file or directory outside the export's top level.
func (t ParquetTable) checkBase() error {
	b := t.base()
	if !filepath.IsLocal(b) || strings.ContainsAny(b, `/\`) {
		return fmt.Errorf("%s: table %s: file name %q is not a name in the export", manifestName, t.Name, b)
	}
	return nil
}

func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func sqlIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// CheckExportDir says whether ExportParquet can write to dir, without writing anything: the command
// line asks before it loads the traces it is given (minutes for a large job), so that an output it
// would refuse is refused up front.
func CheckExportDir(dir string) error {
	final := filepath.Clean(dir)
	fail := func(err error) error { return fmt.Errorf("export parquet %s: %w", final, err) }
	fi, err := os.Lstat(final)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fail(err)
	}
	if !fi.IsDir() {
		// The export is renamed into place over an empty directory; a file (the database itself, say)
		// or a link there would be deleted and replaced.
		if fi.Mode()&os.ModeSymlink != 0 {
			return fail(errors.New("is a symbolic link: name the directory itself"))
		}
		return fail(errors.New("exists and is not a directory"))
	}
	ents, err := os.ReadDir(final)
	if err != nil {
		return fail(err)
	}
	if len(ents) > 0 {
		// (r71 #5: the staging directory of an export that was killed, hidden, made the directory look empty)
		if len(ents) == 1 && strings.HasPrefix(ents[0].Name(), stagingPrefix) {
			return fail(fmt.Errorf("holds only %s, left by an export that was stopped before it finished: remove it (rm -r) and export again", ents[0].Name()))
		}
		return fail(errors.New("directory is not empty (refusing to mix two exports)"))
	}
	return nil
}

// rewordedError is err with another message.
type rewordedError struct {
	msg string
	err error
}

func (e *rewordedError) Error() string { return e.msg }
func (e *rewordedError) Unwrap() error { return e.err }

// stagingPrefix starts the name of the directory an export writes in before it moves its files into the
// (empty) directory it was given.
const stagingPrefix = ".tracesql-export.partial-"

// moveUp moves the entries of the finished export in staging (a directory inside final) into final, the
// manifest last, and removes staging. On failure the entries already moved go back, so final holds no
// half export.
func moveUp(staging, final string) error {
	ents, err := os.ReadDir(staging)
	if err != nil {
		return err
	}
	var moved []string
	move := func(name string) error {
		if err := os.Rename(filepath.Join(staging, name), filepath.Join(final, name)); err != nil {
			for _, m := range moved {
				os.Rename(filepath.Join(final, m), filepath.Join(staging, m))
			}
			return err
		}
		moved = append(moved, name)
		return nil
	}
	for _, e := range ents {
		if e.Name() != manifestName {
			if err := move(e.Name()); err != nil {
				return err
			}
		}
	}
	if err := move(manifestName); err != nil {
		return err
	}
	return os.Remove(staging)
}

// ExportParquet writes every trace table to dir (created; it must not exist or be an empty directory,
// CheckExportDir) with one COPY per table, and a manifest. It returns the
// manifest's tables; note (when not nil) gets one line per table of the user's that it leaves out.
func (db *DB) ExportParquet(ctx context.Context, dir string, note func(string)) (_ []ParquetTable, err error) {
	final := filepath.Clean(dir) // "job.parquet/": its parent is ., not job.parquet
	staging := ""                // the hidden directory the export is written in, once made
	fail := func(err error) ([]ParquetTable, error) {
		// DuckDB's error names the file it wrote in the staging directory: name it where it would have been
		// (r71 #8).
		if msg := err.Error(); staging != "" && strings.Contains(msg, staging) {
			err = &rewordedError{strings.ReplaceAll(msg, staging, final), err}
		}
		return nil, fmt.Errorf("export parquet %s: %w", final, err)
	}
	if err := CheckExportDir(final); err != nil {
		return nil, err
	}
	// Written under a hidden name and put in place when whole: half an export (a Parquet file cut off by
	// Ctrl-C, tables without a manifest) never appears under the name given. A new directory is made
	// beside it and renamed; an existing (empty) one is written into, through a hidden directory inside it
	// whose entries move up, the manifest last: replacing it lost its owner, group and mode, failed on a
	// mount point (after the whole export) and in a parent the user cannot write.
	var created []string
	inPlace := false
	if fi, serr := os.Stat(final); serr == nil && fi.IsDir() {
		inPlace = true
		dir, err = os.MkdirTemp(final, stagingPrefix)
	} else {
		if created, err = outdir.Make(filepath.Dir(final)); err != nil {
			return fail(err)
		}
		dir, err = os.MkdirTemp(filepath.Dir(final), "."+filepath.Base(final)+".partial-")
		if err == nil {
			err = os.Chmod(dir, 0o755) // MkdirTemp's 0700 would become the export's
		}
	}
	if err != nil {
		os.Remove(dir)
		outdir.RemoveEmpty(created)
		var pe *os.PathError
		if errors.As(err, &pe) {
			// (the error named the hidden staging directory, r71 #8)
			err = fmt.Errorf("cannot create the directory: %w", pe.Err)
		}
		return fail(err)
	}
	staging = filepath.Clean(dir) // (as the COPY targets name it: MkdirTemp returns ./.x.partial-N)
	defer func() {
		if err == nil {
			var rerr error
			if inPlace {
				rerr = moveUp(dir, final)
			} else {
				rerr = os.Rename(dir, final)
			}
			if rerr != nil {
				err = fmt.Errorf("export parquet %s: %w", final, rerr)
			}
		}
		if err != nil {
			os.RemoveAll(dir)
			if ctx.Err() != nil {
				// An interrupted COPY's last tasks may still create a partition directory just after
				// DuckDB returns.
				time.Sleep(100 * time.Millisecond)
				os.RemoveAll(dir)
			}
			outdir.RemoveEmpty(created)
		}
	}()
	names, partitioned, without, err := db.traceTables(ctx)
	if err != nil {
		return fail(err)
	}
	if other, err := db.notExportedObjects(ctx); err != nil {
		return fail(err)
	} else if other != "" {
		without = append(without, other)
	}
	man := parquetManifest{Format: parquetFormat, Tool: "tracesql"}
	if err := db.SQL.QueryRowContext(ctx, `SELECT count(*), strftime(now() AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') FROM traces`).Scan(&man.Traces, &man.Written); err != nil {
		return fail(err)
	}
	for _, name := range names {
		t := ParquetTable{Name: name}
		if b := fileBase(name); b != name {
			t.File = b
		}
		if err := db.SQL.QueryRowContext(ctx, "SELECT count(*) FROM "+sqlIdent(name)).Scan(&t.Rows); err != nil {
			return fail(err)
		}
		if t.Columns, err = tableColumns(ctx, db.SQL, name); err != nil {
			return fail(fmt.Errorf("table %s: %w", name, err))
		}
		star := "*" + lossyColumns(t.Columns)
		var src, target, opts string
		switch {
		case partitioned[name]:
			t.Layout = "rank"
			src = "SELECT " + star + " FROM " + sqlIdent(name)
		case rankJoined[name]:
			t.Layout = "rank_joined"
			src = "SELECT t.rank, x." + star + " FROM " + sqlIdent(name) + " x JOIN traces t USING (trace_id)"
		default:
			t.Layout = "single"
			src = "SELECT " + star + " FROM " + sqlIdent(name)
		}
		if t.Layout == "single" {
			target = filepath.Join(dir, t.base()+".parquet")
			opts = "FORMAT parquet, COMPRESSION zstd"
		} else {
			target = filepath.Join(dir, t.base())
			opts = "FORMAT parquet, COMPRESSION zstd, PARTITION_BY (rank), OVERWRITE_OR_IGNORE"
		}
		if t.Rows > 0 || t.Layout == "single" {
			q := fmt.Sprintf("COPY (%s) TO %s (%s)", src, sqlString(target), opts)
			if _, err := db.SQL.ExecContext(ctx, q); err != nil {
				return fail(fmt.Errorf("table %s: %w", name, err))
			}
			if t.Files, err = writtenFiles(ctx, db.SQL, dir, t); err != nil {
				return fail(fmt.Errorf("table %s: %w", name, err))
			}
		}
		man.Tables = append(man.Tables, t)
	}
	for _, group := range []struct {
		sub    string
		tables []string
		into   *[]ParquetTable
	}{{"rules", ruleTables, &man.Rules}, {"settings", settingTables, &man.Settings}} {
		for _, name := range group.tables {
			t, err := db.exportWhole(ctx, dir, group.sub, name)
			if err != nil {
				return fail(fmt.Errorf("table %s: %w", name, err))
			}
			*group.into = append(*group.into, t)
		}
	}
	b, _ := json.MarshalIndent(man, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, manifestName), append(b, '\n'), 0o644); err != nil {
		return fail(err)
	}
	if note != nil {
		for _, line := range without {
			note(line)
		}
	}
	return man.Tables, nil
}

// exportWhole writes table name, sorted, as the one file dir/sub/name.parquet (the rules and settings tables:
// small, and the same rows give the same file).
func (db *DB) exportWhole(ctx context.Context, dir, sub, name string) (ParquetTable, error) {
	t := ParquetTable{Name: name, Layout: "single"}
	if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
		return t, err
	}
	if err := db.SQL.QueryRowContext(ctx, "SELECT count(*) FROM "+sqlIdent(name)).Scan(&t.Rows); err != nil {
		return t, err
	}
	var err error
	if t.Columns, err = tableColumns(ctx, db.SQL, name); err != nil {
		return t, err
	}
	rel := sub + "/" + name + ".parquet"
	q := fmt.Sprintf("COPY (SELECT * FROM %s ORDER BY ALL) TO %s (FORMAT parquet, COMPRESSION zstd)", sqlIdent(name), sqlString(filepath.Join(dir, filepath.FromSlash(rel))))
	if _, err := db.SQL.ExecContext(ctx, q); err != nil {
		return t, err
	}
	t.Files = []ParquetFile{{Path: rel, Rows: t.Rows}}
	return t, nil
}

// writtenAsText reports the column types Parquet cannot hold exactly, which the export writes as text, at any
// depth (a LIST, STRUCT, MAP or ARRAY of them too: r76 #1, a sum(ts) inside a STRUCT came back 4e5 off):
// DuckDB writes a HUGEINT or UHUGEINT as a DOUBLE, which loses digits past 2^53 and cannot be read back into
// a UHUGEINT above 2^127; a TIMETZ as its time in UTC, its offset lost (r71 #3: 12:34:56+03 came back
// 12:34:56+00, another instant); an INTERVAL in Parquet's milliseconds, its microseconds lost and a
// negative one refused (r76 #2: every kernel duration came back 0).
func writtenAsText(typ string) bool {
	return lossyType.MatchString(typ)
}

var lossyType = regexp.MustCompile(`\b(U?HUGEINT|INTERVAL)\b|TIME WITH TIME ZONE`)

// lossyColumns is the REPLACE clause that writes the writtenAsText columns as text. The import casts the
// text back to the manifest's type.
func lossyColumns(cols []ParquetColumn) string {
	var repl []string
	for _, c := range cols {
		if writtenAsText(c.Type) {
			repl = append(repl, fmt.Sprintf("%s::VARCHAR AS %s", sqlIdent(c.Name), sqlIdent(c.Name)))
		}
	}
	if len(repl) == 0 {
		return ""
	}
	return " REPLACE (" + strings.Join(repl, ", ") + ")"
}

// queryer is what tableColumns and writtenFiles need of a *sql.DB or *sql.Conn.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// tableColumns lists a main-schema table's columns and their types, in order.
func tableColumns(ctx context.Context, q queryer, table string) ([]ParquetColumn, error) {
	return queryColumns(ctx, q, `SELECT column_name, data_type FROM duckdb_columns()
		WHERE database_name = current_database() AND schema_name = 'main' AND table_name = ? ORDER BY column_index`, table)
}

// queryColumns runs a query of (name, type) rows.
func queryColumns(ctx context.Context, q queryer, query string, args ...any) ([]ParquetColumn, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ParquetColumn
	for rows.Next() {
		var c ParquetColumn
		if err := rows.Scan(&c.Name, &c.Type); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// tableFiles are the Parquet files of t found in dir, sorted, relative and '/'-separated. The
// directories are listed rather than globbed: dir is the user's path, and a '*', '?' or '[' in it
// would be read as a pattern (matching a sibling export, or not the directory itself).
func tableFiles(dir string, t ParquetTable) ([]string, error) {
	if t.Layout == "single" {
		return []string{t.base() + ".parquet"}, nil
	}
	parts, err := os.ReadDir(filepath.Join(dir, t.base()))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range parts {
		if !p.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, t.base(), p.Name()))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if !f.IsDir() && strings.HasSuffix(f.Name(), ".parquet") {
				out = append(out, t.base()+"/"+p.Name()+"/"+f.Name())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// duckPath is path as DuckDB's readers take it literally: they glob every path they are given, so
// the pattern characters are escaped as one-character classes ("a[1]" → "a[[]1]").
func duckPath(path string) string {
	var b strings.Builder
	for _, c := range path {
		if c == '*' || c == '?' || c == '[' {
			b.WriteByte('[')
			b.WriteRune(c)
			b.WriteByte(']')
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// writtenFiles lists the files a COPY wrote for t, with their row counts read back from their
// footers.
func writtenFiles(ctx context.Context, q queryer, dir string, t ParquetTable) ([]ParquetFile, error) {
	names, err := tableFiles(dir, t)
	if err != nil {
		return nil, err
	}
	rows, err := fileRows(ctx, q, dir, names)
	if err != nil {
		return nil, err
	}
	out := make([]ParquetFile, len(names))
	var sum int64
	for i, n := range names {
		out[i] = ParquetFile{Path: n, Rows: rows[i]}
		sum += rows[i]
	}
	if sum != t.Rows {
		return nil, fmt.Errorf("wrote %d rows, the table has %d", sum, t.Rows)
	}
	return out, nil
}

// fileRows reads the row count of each file (relative to dir) from its footer, one file at a time so
// that an error names the file.
func fileRows(ctx context.Context, q queryer, dir string, names []string) ([]int64, error) {
	out := make([]int64, len(names))
	for i, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		rows, err := q.QueryContext(ctx, `SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata(?)`, duckPath(p))
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", n, err)
		}
		for rows.Next() {
			err = rows.Scan(&out[i])
		}
		if err == nil {
			err = rows.Err()
		}
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", n, err)
		}
	}
	return out, nil
}

// checkFiles compares the Parquet files of t in dir with the manifest's list: a file missing, one the
// export did not write, or one whose row count differs is an error that names it. It returns the
// files' paths.
func checkFiles(ctx context.Context, conn *sql.Conn, dir string, t ParquetTable) ([]string, error) {
	listed := map[string]bool{}
	var paths []string
	for _, f := range t.Files {
		// By its elements: a table named "kernels..bak" is inside the export.
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return nil, fmt.Errorf("%s: file path %q is not inside the export", manifestName, f.Path)
		}
		listed[f.Path] = true
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("file %s is missing (incomplete export)", f.Path)
			}
			return nil, err
		}
		paths = append(paths, p)
	}
	found, err := tableFiles(dir, t)
	if err != nil {
		return nil, err
	}
	for _, f := range found {
		if !listed[f] && t.Layout != "single" {
			return nil, fmt.Errorf("file %s is not listed in %s (left by another export?)", f, manifestName)
		}
	}
	names := make([]string, len(t.Files))
	for i, f := range t.Files {
		names[i] = f.Path
	}
	rows, err := fileRows(ctx, conn, dir, names)
	if err != nil {
		return nil, err
	}
	for i, f := range t.Files {
		if rows[i] != f.Rows {
			return nil, fmt.Errorf("file %s holds %d rows, the manifest says %d", f.Path, rows[i], f.Rows)
		}
	}
	if err := checkFileColumns(ctx, conn, dir, t, names); err != nil {
		return nil, err
	}
	return paths, nil
}

// exactParquetTypes are the DuckDB types a Parquet file gives back as they were written.
var exactParquetTypes = map[string]bool{"BOOLEAN": true, "TINYINT": true, "SMALLINT": true, "INTEGER": true, "BIGINT": true,
	"UTINYINT": true, "USMALLINT": true, "UINTEGER": true, "UBIGINT": true, "FLOAT": true, "DOUBLE": true, "VARCHAR": true, "DATE": true}

// checkFileColumns checks each file of t against the manifest's columns: the names in order (less the
// rank of the partition directories), the type of each column of an exactly kept type (writtenAsText ones
// are text), and one schema for all the files of t. DuckDB reads a list of files
// with the first one's schema: a file lacking a column gave NULLs for every rank, one with ts as a
// DOUBLE rounded every rank's ns away, and the same file later in the list was a "schema mismatch".
func checkFileColumns(ctx context.Context, q queryer, dir string, t ParquetTable, names []string) error {
	if len(t.Columns) == 0 {
		return nil // an export written before the manifest listed columns
	}
	var want []ParquetColumn
	for _, c := range t.Columns {
		if t.Layout == "rank" && c.Name == "rank" {
			continue
		}
		if writtenAsText(c.Type) {
			c.Type = "VARCHAR"
		}
		want = append(want, c)
	}
	var first []ParquetColumn
	for i, n := range names {
		have, err := parquetColumns(ctx, q, filepath.Join(dir, filepath.FromSlash(n)))
		if err != nil {
			return fmt.Errorf("file %s: %w", n, err)
		}
		if i == 0 {
			first = have
		}
		if len(have) != len(want) {
			return fmt.Errorf("file %s has %d columns, the manifest lists %d (%s)", n, len(have), len(want), columnNames(want))
		}
		for j, c := range have {
			switch w := want[j]; {
			case c.Name != w.Name:
				return fmt.Errorf("file %s: column %d is %s, the manifest says %s", n, j+1, c.Name, w.Name)
			case exactParquetTypes[w.Type] && c.Type != w.Type:
				return fmt.Errorf("file %s: column %s is %s, the manifest says %s", n, c.Name, c.Type, w.Type)
			case c.Type != first[j].Type:
				return fmt.Errorf("file %s: column %s is %s, in %s it is %s", n, c.Name, c.Type, names[0], first[j].Type)
			}
		}
	}
	return nil
}

// parquetColumns are the columns of one Parquet file, as DuckDB reads them.
func parquetColumns(ctx context.Context, q queryer, path string) ([]ParquetColumn, error) {
	return queryColumns(ctx, q, `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(?, hive_partitioning = false))`, duckPath(path))
}

func columnNames(cols []ParquetColumn) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// ImportParquet loads a directory written by ExportParquet into the database in one transaction:
// all of it or, on error, nothing. Trace ids are renumbered after the database's own (Kineto and NCCL
// traces alike), so an export can be imported beside other traces; a Kineto trace whose (label,
// rank), or an NCCL trace whose (label, rank, communicator), is already present is an error. A table
// of the export that the database lacks (one the user created) is created, rows or none, and a column
// the user added to one of tracesql's tables is added to the database's (note says so). The export's
// rules (kernel_classes, phase_rules) replace those of a database that holds no trace yet, so that an
// export round-trips with the user's edits; a database with traces keeps its own, and note says so. It
// returns the number of traces imported, Kineto and NCCL.
func (db *DB) ImportParquet(ctx context.Context, dir string, note func(string)) (int64, error) {
	db.StoredMayChange()
	if db.ReadOnly {
		return 0, fmt.Errorf("import %s: %w", dir, ErrReadOnly)
	}
	fail := func(err error) (int64, error) { return 0, fmt.Errorf("import parquet %s: %w", dir, err) }
	raw, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, dirErr := os.Stat(dir); dirErr != nil {
				return fail(errors.New("no such directory"))
			}
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
	if err := man.checkComplete(); err != nil {
		return fail(fmt.Errorf("%s: %w", manifestName, err))
	}
	// known: the tables the database has (any table of the export's name is inserted into, not created)
	known := map[string]bool{}
	rows, err := db.SQL.QueryContext(ctx, `SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' AND NOT temporary`, db.catalog)
	if err != nil {
		return fail(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return fail(err)
		}
		known[n] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail(err)
	}

	db.loadMu.Lock()
	defer db.loadMu.Unlock()
	conn, err := db.connOutsideTransaction(ctx)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return fail(err)
	}
	// A trace_id names one file everywhere: NCCL traces draw from the same sequence (nextTraceID).
	firstID, err := db.nextTraceID(ctx, conn)
	if err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return fail(err)
	}
	// Whether the database holds a trace decides whose rules win, not firstID: the rows of a user's
	// table can keep trace ids from above after the last trace is unloaded.
	var empty bool
	if err := conn.QueryRowContext(ctx, `SELECT NOT EXISTS (FROM traces) AND NOT EXISTS (FROM nccl_traces)`).Scan(&empty); err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return fail(err)
	}
	n, notes, err := importTables(ctx, conn, dir, man, known, firstID)
	if err == nil {
		// Before the frames are built: they classify kernels with the rules.
		var ruleNotes []string
		ruleNotes, err = importRules(ctx, conn, dir, man.Rules, empty)
		notes = append(notes, ruleNotes...)
	}
	if err == nil {
		var settingNotes []string
		settingNotes, err = importSettings(ctx, conn, dir, man.Settings, firstID)
		notes = append(notes, settingNotes...)
	}
	imported := fmt.Sprintf("trace_id >= %d", firstID)
	if err == nil && man.Format == 1 {
		// Format 1 predates events.link_idx (and stored the analysis frames, skipped below).
		_, err = conn.ExecContext(ctx, fillLinksSQL(imported))
	}
	usable := false
	if err == nil {
		usable, err = rulesUsable(ctx, conn)
	}
	for _, s := range frameInserts(firstID, math.MaxInt64, usable) {
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
	if note != nil {
		for _, s := range notes {
			note(s)
		}
	}
	return n, nil
}

// importRules compares each rule table of an export with the database's. When they differ, the export's
// replace them if adopt (the database held no trace, Kineto or NCCL, before the import), else the
// database's stay. It returns what it did, one line per table that differs.
func importRules(ctx context.Context, conn *sql.Conn, dir string, rules []ParquetTable, adopt bool) ([]string, error) {
	var notes []string
	for _, t := range rules {
		if !slices.Contains(ruleTables, t.Name) || len(t.Files) != 1 || t.Files[0].Path != "rules/"+t.Name+".parquet" {
			return nil, fmt.Errorf("%s: unexpected rules entry %q", manifestName, t.Name)
		}
		f := t.Files[0]
		rows, err := fileRows(ctx, conn, dir, []string{f.Path})
		if err != nil {
			return nil, fmt.Errorf("rules %s: %w", t.Name, err)
		}
		if rows[0] != t.Rows {
			return nil, fmt.Errorf("file %s holds %d rows, the manifest says %d", f.Path, rows[0], t.Rows)
		}
		have, err := tableColumns(ctx, conn, t.Name)
		if err != nil {
			return nil, fmt.Errorf("rules %s: %w", t.Name, err)
		}
		if !slices.Equal(have, t.Columns) {
			notes = append(notes, fmt.Sprintf("%s: the export's rules have other columns than this database's: kept this database's", t.Name))
			continue
		}
		cols := make([]string, len(have))
		for i, c := range have {
			cols[i] = sqlIdent(c.Name)
		}
		list := strings.Join(cols, ", ")
		file := sqlString(duckPath(filepath.Join(dir, filepath.FromSlash(f.Path))))
		var differ int64
		q := fmt.Sprintf(`SELECT (SELECT count(*) FROM (SELECT %[1]s FROM %[2]s EXCEPT ALL SELECT %[1]s FROM %[3]s))
			+ (SELECT count(*) FROM (SELECT %[1]s FROM %[3]s EXCEPT ALL SELECT %[1]s FROM %[2]s))`, list, singleRead(file), sqlIdent(t.Name))
		if err := conn.QueryRowContext(ctx, q).Scan(&differ); err != nil {
			return nil, fmt.Errorf("rules %s: %w", t.Name, err)
		}
		switch {
		case differ == 0:
		case adopt:
			if _, err := conn.ExecContext(ctx, "DELETE FROM "+sqlIdent(t.Name)); err != nil {
				return nil, fmt.Errorf("rules %s: %w", t.Name, err)
			}
			if _, err := conn.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", sqlIdent(t.Name), list, list, singleRead(file))); err != nil {
				return nil, fmt.Errorf("rules %s: %w", t.Name, err)
			}
			notes = append(notes, fmt.Sprintf("%s: took the export's %d rules (%d rows differ from this database's, which holds no trace yet)", t.Name, t.Rows, differ))
		default:
			// The file by its absolute name, in one transaction: run from another directory, the DELETE
			// committed and the INSERT found no file, leaving no rule at all.
			abs := file
			if a, err := filepath.Abs(filepath.Join(dir, filepath.FromSlash(f.Path))); err == nil {
				abs = sqlString(duckPath(a))
			}
			notes = append(notes, fmt.Sprintf("%s: the export's rules differ from this database's in %d rows: kept this database's (to use the export's: BEGIN; DELETE FROM %s; INSERT INTO %s SELECT * FROM %s; COMMIT)",
				t.Name, differ, t.Name, t.Name, abs))
		}
	}
	return notes, nil
}

// settingKeys are the columns of a settings table that say what a row applies to: two rows with the
// same key and other values conflict (one of them silently won in nccl_clock_alignment).
var settingKeys = map[string][]string{"nccl_clock_override": {"label", "rank", "comm_hash"}}

// importSettings adds the rows of each settings table of an export whose label is one of the imported
// traces' (those from firstID on), except rows the database holds already. Where the database holds a
// row with the same key (settingKeys) and other values, the database's stays, as its rules do, and
// the note (one line per such row) names both.
func importSettings(ctx context.Context, conn *sql.Conn, dir string, settings []ParquetTable, firstID int64) ([]string, error) {
	var notes []string
	for _, t := range settings {
		if !slices.Contains(settingTables, t.Name) || len(t.Files) != 1 || t.Files[0].Path != "settings/"+t.Name+".parquet" {
			return nil, fmt.Errorf("%s: unexpected settings entry %q", manifestName, t.Name)
		}
		f := t.Files[0]
		rows, err := fileRows(ctx, conn, dir, []string{f.Path})
		if err != nil {
			return nil, fmt.Errorf("settings %s: %w", t.Name, err)
		}
		if rows[0] != t.Rows {
			return nil, fmt.Errorf("file %s holds %d rows, the manifest says %d", f.Path, rows[0], t.Rows)
		}
		cols := make([]string, len(t.Columns))
		var match, key, values, theirs []string
		for i, c := range t.Columns {
			cols[i] = sqlIdent(c.Name)
			shown := func(alias string) string { // "rank 3"
				return fmt.Sprintf("%s || ' ' || coalesce(%s.%s::VARCHAR, 'NULL')", sqlString(c.Name), alias, sqlIdent(c.Name))
			}
			if slices.Contains(settingKeys[t.Name], c.Name) {
				match = append(match, fmt.Sprintf("d.%[1]s IS NOT DISTINCT FROM n.%[1]s", sqlIdent(c.Name)))
				key = append(key, shown("n"))
			} else {
				values = append(values, shown("d"))
				theirs = append(theirs, shown("n"))
			}
		}
		list := strings.Join(cols, ", ")
		file := sqlString(duckPath(filepath.Join(dir, filepath.FromSlash(f.Path))))
		// src: the export's rows of the labels imported. A label the database held already keeps its own
		// traces' settings: the export's rows apply to the ranks the import brings only, a row for every
		// rank (rank NULL, what --nccl-clock-offset NS writes) becoming one per rank brought. (It had
		// moved the database's rank 0 from its estimated offset to the export's, without a word.)
		src := fmt.Sprintf(`SELECT %[1]s FROM %[2]s
			WHERE label IN (SELECT label FROM traces WHERE trace_id >= %[3]d UNION SELECT label FROM nccl_traces WHERE trace_id >= %[3]d)`, list, singleRead(file), firstID)
		perRank := slices.ContainsFunc(t.Columns, func(c ParquetColumn) bool { return c.Name == "rank" }) &&
			slices.ContainsFunc(t.Columns, func(c ParquetColumn) bool { return c.Name == "label" })
		held := fmt.Sprintf(`(SELECT label FROM traces WHERE trace_id < %[1]d UNION SELECT label FROM nccl_traces WHERE trace_id < %[1]d)`, firstID)
		if perRank {
			var spread int64
			if err := conn.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM (%s) s WHERE label IN %s AND rank IS NULL`, src, held)).Scan(&spread); err != nil {
				return nil, fmt.Errorf("settings %s: %w", t.Name, err)
			}
			if spread > 0 {
				notes = append(notes, fmt.Sprintf("%s: %d row(s) of the export for every rank of a trace set this database held already apply to the ranks the import brings, not to the database's own", t.Name, spread))
			}
			src = fmt.Sprintf(`WITH s AS (%[1]s),
				brought AS (SELECT label, rank FROM traces WHERE trace_id >= %[2]d UNION SELECT label, rank FROM nccl_traces WHERE trace_id >= %[2]d)
				SELECT * FROM s WHERE label NOT IN %[3]s
				UNION ALL
				SELECT s.* REPLACE (b.rank AS rank) FROM s JOIN brought b ON b.label = s.label AND (s.rank IS NULL OR s.rank = b.rank)
				WHERE s.label IN %[3]s`, src, firstID, held)
		}
		// n: those rows that the database lacks.
		news := fmt.Sprintf(`WITH n AS (SELECT %[2]s FROM (%[3]s) EXCEPT SELECT %[2]s FROM %[1]s)`, sqlIdent(t.Name), list, src)
		conflict := "false" // a table without its key columns, or with nothing else: no row is another's
		if len(match) > 0 && len(values) > 0 {
			same := strings.Join(match, " AND ")
			conflict = fmt.Sprintf("EXISTS (SELECT 1 FROM %s d WHERE %s)", sqlIdent(t.Name), same)
			q := fmt.Sprintf(`%s SELECT DISTINCT concat_ws(', ', %s), concat_ws(', ', %s), concat_ws(', ', %s)
				FROM n JOIN %s d ON %s ORDER BY ALL`, news, strings.Join(key, ", "), strings.Join(values, ", "), strings.Join(theirs, ", "),
				sqlIdent(t.Name), same)
			found, err := conn.QueryContext(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("settings %s: %w", t.Name, err)
			}
			for found.Next() {
				var k, mine, other string
				if err := found.Scan(&k, &mine, &other); err != nil {
					found.Close()
					return nil, fmt.Errorf("settings %s: %w", t.Name, err)
				}
				notes = append(notes, fmt.Sprintf("%s: kept this database's row for %s (%s); the export's (%s) is not imported", t.Name, k, mine, other))
			}
			found.Close()
			if err := found.Err(); err != nil {
				return nil, fmt.Errorf("settings %s: %w", t.Name, err)
			}
		}
		q := fmt.Sprintf(`INSERT INTO %s (%s) %s SELECT %s FROM n WHERE NOT %s`, sqlIdent(t.Name), list, news, list, conflict)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("settings %s: %w", t.Name, err)
		}
	}
	return notes, nil
}

// importTables inserts the rows of the export's trace tables, trace ids shifted by offset, creating the
// tables the database lacks and adding the columns it lacks. It returns the number of traces imported
// and one note per column added.
func importTables(ctx context.Context, conn *sql.Conn, dir string, man parquetManifest, known map[string]bool, offset int64) (int64, []string, error) {
	// Rows are inserted in ev_idx order per trace, the order a JSON load gives, so that ties in
	// analyses that sort resolve as they would after loading the JSON.
	sort.SliceStable(man.Tables, func(i, j int) bool { return man.Tables[i].Name == "traces" && man.Tables[j].Name != "traces" })
	var notes []string
	var imported int64
	for _, t := range man.Tables {
		if strings.HasPrefix(t.Name, "_") && man.Format == 1 {
			continue // format 1 stored the analysis frames (and no table of the user's named _*): rebuilt instead
		}
		if err := t.checkBase(); err != nil {
			return 0, nil, err
		}
		if known[t.Name] {
			added, err := addColumns(ctx, conn, t)
			if err != nil {
				return 0, nil, fmt.Errorf("table %s: %w", t.Name, err)
			}
			notes = append(notes, added...)
		}
		var src string
		switch t.Layout {
		case "rank", "rank_joined":
			if t.Rows == 0 {
				// A COPY of no rows writes no partition, so there is nothing to read; the table itself
				// (one of the user's) is still made from the manifest's columns, which an export written
				// before it listed them cannot give.
				if t.Columns == nil {
					continue
				}
				if _, err := checkFiles(ctx, conn, dir, t); err != nil {
					return 0, nil, fmt.Errorf("table %s: %w", t.Name, err)
				}
				if !known[t.Name] {
					if err := createImported(ctx, conn, t, ""); err != nil {
						return 0, nil, fmt.Errorf("table %s: %w", t.Name, err)
					}
					known[t.Name] = true
				}
				continue
			}
			src = sqlString(duckPath(filepath.Join(dir, t.base())) + string(filepath.Separator) + filepath.Join("*", "*.parquet"))
		case "single":
			src = sqlString(duckPath(filepath.Join(dir, t.base()+".parquet")))
		default:
			return 0, nil, fmt.Errorf("table %s: unknown layout %q", t.Name, t.Layout)
		}
		if t.Files != nil {
			paths, err := checkFiles(ctx, conn, dir, t)
			if err != nil {
				return 0, nil, fmt.Errorf("table %s: %w", t.Name, err)
			}
			quoted := make([]string, len(paths))
			for i, p := range paths {
				quoted[i] = sqlString(duckPath(p))
			}
			src = "[" + strings.Join(quoted, ", ") + "]"
		}
		if !known[t.Name] {
			// A table of the user's (or of a newer tracesql): made from the export's columns.
			if err := createImported(ctx, conn, t, src); err != nil {
				return 0, nil, fmt.Errorf("table %s: %w", t.Name, err)
			}
			known[t.Name] = true
		}
		sel := fmt.Sprintf("* REPLACE (trace_id + %d AS trace_id)", offset)
		if t.Layout == "single" {
			src = singleRead(src)
		} else {
			src = partitionedRead(src)
			sel = fmt.Sprintf("* EXCLUDE (%s) REPLACE (trace_id + %d AS trace_id)", fileColumn, offset)
			if t.Layout == "rank" {
				// The rank of the directory names, with the type of the table's column.
				sel += ", " + rankOfFile(rankType(ctx, conn, t)) + " AS rank"
			}
		}
		order := ""
		if hasColumn(ctx, conn, t.Name, "ev_idx") {
			order = " ORDER BY trace_id, ev_idx"
		}
		q := fmt.Sprintf("INSERT INTO %s BY NAME SELECT %s FROM %s%s", sqlIdent(t.Name), sel, src, order)
		res, err := conn.ExecContext(ctx, q)
		if err != nil {
			return 0, nil, fmt.Errorf("table %s: %w", t.Name, err)
		}
		rows, _ := res.RowsAffected()
		if rows != t.Rows {
			return 0, nil, fmt.Errorf("table %s: read %d rows, the manifest says %d (incomplete export?)", t.Name, rows, t.Rows)
		}
		switch t.Name {
		case "traces":
			imported += rows
			var label, rank string
			err := conn.QueryRowContext(ctx, fmt.Sprintf(`SELECT n.label, coalesce(n.rank::VARCHAR, 'NULL') FROM traces n
				WHERE n.trace_id >= %d AND EXISTS (SELECT 1 FROM traces o WHERE o.trace_id <> n.trace_id
				AND o.label IS NOT DISTINCT FROM n.label AND o.rank IS NOT DISTINCT FROM n.rank)
				ORDER BY n.trace_id LIMIT 1`, offset)).Scan(&label, &rank)
			if err == nil {
				return 0, nil, fmt.Errorf("rank %s of trace set %q is already loaded in this database (import into another database)", rank, label)
			} else if !errors.Is(err, sql.ErrNoRows) {
				return 0, nil, err
			}
		case "nccl_traces":
			imported += rows
			var label, rank, comm string
			err := conn.QueryRowContext(ctx, fmt.Sprintf(`SELECT n.label, coalesce(n.rank::VARCHAR, 'NULL'), coalesce(n.comm_hash, 'NULL') FROM nccl_traces n
				WHERE n.trace_id >= %d AND EXISTS (SELECT 1 FROM nccl_traces o WHERE o.trace_id <> n.trace_id
				AND o.label IS NOT DISTINCT FROM n.label AND o.rank IS NOT DISTINCT FROM n.rank AND o.comm_hash IS NOT DISTINCT FROM n.comm_hash)
				ORDER BY n.trace_id LIMIT 1`, offset)).Scan(&label, &rank, &comm)
			if err == nil {
				return 0, nil, fmt.Errorf("the NCCL trace of rank %s, communicator %s, of trace set %q is already loaded in this database (import into another database)", rank, comm, label)
			} else if !errors.Is(err, sql.ErrNoRows) {
				return 0, nil, err
			}
		}
	}
	return imported, notes, nil
}

// addColumns adds to the database's table t.Name the columns of the export's t that it lacks (the user
// ran ALTER TABLE events ADD COLUMN … before exporting): the import keeps the user's data rather than
// refuse it, and the database's own rows get NULL there. It returns one note per column added.
func addColumns(ctx context.Context, conn *sql.Conn, t ParquetTable) ([]string, error) {
	if len(t.Columns) == 0 {
		return nil, nil // an export written before the manifest listed columns
	}
	have, err := tableColumns(ctx, conn, t.Name)
	if err != nil {
		return nil, err
	}
	var notes []string
	for _, c := range t.Columns {
		// DuckDB's column names are case-insensitive: Note is note.
		if slices.ContainsFunc(have, func(h ParquetColumn) bool { return strings.EqualFold(h.Name, c.Name) }) {
			continue
		}
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", sqlIdent(t.Name), sqlIdent(c.Name), c.Type)); err != nil {
			return nil, fmt.Errorf("add the export's column %s %s: %w", c.Name, c.Type, err)
		}
		have = append(have, c)
		notes = append(notes, fmt.Sprintf("%s: added column %s %s, which the export has and this database lacked", t.Name, c.Name, c.Type))
	}
	return notes, nil
}

// createImported creates a table the database lacks: with the export's columns and types when the
// manifest lists them, else with those of the Parquet files (src: the files' SQL list or glob).
func createImported(ctx context.Context, conn *sql.Conn, t ParquetTable, src string) error {
	var q string
	if len(t.Columns) > 0 {
		cols := make([]string, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = sqlIdent(c.Name) + " " + c.Type
		}
		q = fmt.Sprintf("CREATE TABLE %s (%s)", sqlIdent(t.Name), strings.Join(cols, ", "))
	} else {
		sel, read := "*", singleRead(src)
		if t.Layout != "single" {
			sel, read = "* EXCLUDE ("+fileColumn+")", partitionedRead(src)
			if t.Layout == "rank" {
				sel += ", NULL::BIGINT AS rank" // (the type hive partitioning gave an integer rank)
			}
		}
		q = fmt.Sprintf("CREATE TABLE %s AS SELECT %s FROM %s LIMIT 0", sqlIdent(t.Name), sel, read)
	}
	_, err := conn.ExecContext(ctx, q)
	return err
}

// A partitioned table's files are read without hive partitioning, which makes a column of every key=value
// directory in the path: the user's own (an export in /data/date=2024-11-01/job.parquet failed to import,
// one under out/rank=7/ made every rank 7), not only the export's rank=N. The rank comes from the file's
// own directory, named in fileColumn.
const fileColumn = "__tracesql_file"

// partitionedRead reads the partitioned files src (an SQL list or glob) with each row's file name.
func partitionedRead(src string) string {
	return fmt.Sprintf("read_parquet(%s, hive_partitioning = false, filename = '%s')", src, fileColumn)
}

// singleRead reads the files src (an SQL string, list or glob) of a table exported whole: without hive
// partitioning too, or a key=value directory above the export became a column, overwriting a column of that
// name (r71 #1: under out/rank=7/ the NCCL clock override of rank 0 moved to rank 7; under label=prod/ a
// user table's label column was rewritten) or failing the import.
func singleRead(src string) string {
	return fmt.Sprintf("read_parquet(%s, hive_partitioning = false)", src)
}

// rankOfFile is the SQL of a row's rank from its file's directory, rank=<r>, as typ (DuckDB writes a NULL
// rank as __HIVE_DEFAULT_PARTITION__; NULL as hive partitioning reads it).
func rankOfFile(typ string) string {
	r := fmt.Sprintf(`regexp_extract(%s, '[/\\]rank=([^/\\]*)[/\\][^/\\]*$', 1)`, fileColumn)
	return fmt.Sprintf("CASE WHEN %s IN ('__HIVE_DEFAULT_PARTITION__', 'NULL') THEN NULL ELSE %s::%s END", r, r, typ)
}

// rankType is the type of table t's rank column in the database: one of partitionRankTypes, else BIGINT.
func rankType(ctx context.Context, conn *sql.Conn, t ParquetTable) string {
	var typ string
	if err := conn.QueryRowContext(ctx, `SELECT data_type FROM duckdb_columns() WHERE database_name = current_database()
		AND schema_name = 'main' AND table_name = ? AND column_name = 'rank'`, t.Name).Scan(&typ); err != nil || !partitionRankTypes[typ] {
		return "BIGINT"
	}
	return typ
}

func hasColumn(ctx context.Context, conn *sql.Conn, table, col string) bool {
	var n int
	conn.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_columns() WHERE table_name = ? AND column_name = ? AND schema_name = 'main'`, table, col).Scan(&n)
	return n > 0
}
