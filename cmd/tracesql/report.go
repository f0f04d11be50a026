package main

// `tracesql report` and the REPL's .report: run the report sections (queries/reports/*.sql plus a
// user's --reports-dir) and write one self-contained HTML file. A section whose query fails becomes a
// visible "not available" box and a one-line warning, never a failed report: the report must still
// be useful when one analysis does not apply to the trace (or is not built yet).

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"tracesql/engine"
	"tracesql/internal/outdir"
	"tracesql/queries"
	"tracesql/sqlfuncs"
)

const reportUsage = `usage: tracesql report [flags] [TRACE_DIR | TRACE_FILE ...]

Writes one self-contained HTML report (inline SVG charts, no scripts, opens offline) of the loaded
traces: one section per saved query in queries/reports/ and in --reports-dir.

flags:
`

// maxSectionRows caps the rows a section reads: a chart of more cannot be read anyway, and the
// section's SQL is there to get them all.
const maxSectionRows = 20000

func init() {
	// dot.go's init builds dotCommands first (files initialise in name order).
	dotCommands["report"] = dotCommand{".report FILE",
		"write an HTML report of the loaded traces (charts and their SQL) to FILE; --reports-dir DIR adds sections", (*session).dotReport}
}

// loadBeforeWriting loads the trace sets of a subcommand that writes one output (report, export-parquet), as
// the main command loads them, and returns false after saying, when one fails, that out is not written: as
// -c runs no query then, an output of the files that did load would pass for the job's.
func loadBeforeWriting(ctx context.Context, db *engine.DB, traces []tracePath, rf engine.RankFrom, stderr io.Writer, cmd, out string) bool {
	s := &session{db: db, out: io.Discard, stdout: io.Discard, errOut: stderr, format: "table"}
	opts := engine.LoadOptions{RankFrom: rf, Warn: func(w string) { fmt.Fprintf(stderr, "tracesql: warning: %s\n", w) }}
	if isTerminal(stderr) {
		opts.Progress = progressPrinter(stderr)
	}
	for _, set := range groupByLabel(traces) {
		opts.Label = set.label
		if err := loadTraces(ctx, s, set.paths, opts); err != nil {
			s.reportErr(err)
			why := ", since not every trace loaded"
			if errors.Is(err, errCancelled) {
				why = " (Ctrl-C)" // (also one after the last file's commit, which loads every file)
			}
			fmt.Fprintf(stderr, "tracesql: %s: %s not written%s\n", cmd, out, why)
			return false
		}
	}
	return true
}

// runReport is `tracesql report`: load (or open --db), render, write -o. Exit 0 even when sections
// failed (each got a warning); 1 when nothing could be written; 2 for bad usage.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tracesql report", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a bad flag is reported in one line below
	dbPath := fs.String("db", "", "database file to report on (default: load the traces into memory)")
	readOnly := fs.Bool("readonly", false, "open --db read-only (beside other sessions reading it); no traces may be loaded")
	out := fs.String("o", "report.html", "HTML file to write")
	dir := fs.String("reports-dir", "", "directory of extra report sections (*.sql; same name = replaces a built-in one)")
	label, labels := "trace", []string(nil)
	fs.Var(labelFlag{&label, &labels}, "label", "label of the trace paths that follow it, or of all of them when it comes last")
	rankFrom := fs.String("rank-from", "auto", "rank discovery: auto, file, index")
	title := fs.String("title", "", "report title (default: tracesql report)")
	fs.Usage = func() {}
	traces, err := parseWithPaths(fs, args, &label, &labels)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, reportUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "tracesql: report: %v (tracesql report -h lists the flags)\n", err)
		return 2
	}
	if err := checkDBFlag(fs, *dbPath); err != nil {
		fmt.Fprintf(stderr, "tracesql: report: %v\n", err)
		return 2
	}
	if *out == "" {
		// outdir.Create("") wrote a hidden temporary file and nothing else, and the exit status was 0.
		fmt.Fprintln(stderr, "tracesql: report: -o: empty file name")
		return 2
	}
	if len(labels) > 0 && len(traces) == 0 {
		// It labels the traces the report loads; with none (the bundled sample, or --db's sets) it would be ignored.
		fmt.Fprintf(stderr, "tracesql: report: --label %s: no trace path follows it (a --db's trace sets keep their labels)\n", labels[len(labels)-1])
		return 2
	}
	rf, err := engine.ParseRankFrom(*rankFrom)
	if err != nil {
		fmt.Fprintf(stderr, "tracesql: report: %v\n", err)
		return 2
	}
	// A new -o file is tried before the traces load (review r78 #5: a missing directory failed after 10 s
	// of loading and every section, minutes on a whole job). (An existing one may be a FIFO, which a
	// try would open and close under its reader.)
	if _, err := os.Lstat(*out); errors.Is(err, os.ErrNotExist) {
		f, err := outdir.Create(*out)
		if err != nil {
			fmt.Fprintf(stderr, "tracesql: report: write %s: %v\n", *out, unwrapPath(err))
			return 1
		}
		f.Abort()
	}
	secs, err := reportSections(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "tracesql: report: %v\n", err)
		return 1
	}
	open := engine.Open
	if *readOnly {
		if *dbPath == "" || len(traces) > 0 {
			fmt.Fprintln(stderr, "tracesql: report: --readonly needs --db FILE and no traces to load")
			return 2
		}
		open = engine.OpenReadOnly
	}
	if _, err := os.Stat(*dbPath); *dbPath != "" && len(traces) == 0 && err != nil {
		// A report of a database that is not there would create an empty one and report on nothing.
		fmt.Fprintf(stderr, "tracesql: report: --db %s: %v\n", *dbPath, errors.Unwrap(err))
		return 1
	}
	db, err := open(ctx, *dbPath)
	if err != nil {
		fmt.Fprintf(stderr, "tracesql: report: %s\n", oneLine(err))
		return 1
	}
	defer db.Close()
	if *dbPath != "" {
		warnLoaderVersions(ctx, db, *dbPath, stderr)
	}
	if len(traces) == 0 && *dbPath == "" {
		p, err := samplePath()
		if err != nil {
			fmt.Fprintf(stderr, "tracesql: %v\n", err)
			return 1
		}
		traces = []tracePath{{p, "sample"}}
		// Said, since the report would otherwise pass for one of the user's traces.
		fmt.Fprintln(stderr, "tracesql: report: no traces or --db given: reporting on the bundled sample trace")
	}
	if !loadBeforeWriting(ctx, db, traces, rf, stderr, "report", *out) {
		return 1
	}
	if err := writeReportFile(ctx, db.SQL, *out, *title, secs, stderr); err != nil {
		if ctx.Err() != nil {
			name, _ := stopSignal(ctx)
			fmt.Fprintf(stderr, "tracesql: report cancelled (%s): %s not written\n", name, *out)
			return 1 // (run makes it 130, or 143 for SIGTERM)
		}
		fmt.Fprintf(stderr, "tracesql: report: %s\n", oneLine(err))
		return 1
	}
	fmt.Fprintf(stderr, "tracesql: report written to %s\n", *out)
	return 0
}

// dotReport is the REPL's .report FILE [--reports-dir DIR].
func (s *session) dotReport(ctx context.Context, args []string) error {
	var file, dir string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--reports-dir" || a == "-reports-dir":
			if i+1 == len(args) {
				return fmt.Errorf(".report: --reports-dir needs a value")
			}
			dir = args[i+1]
			i++
		case strings.HasPrefix(a, "--reports-dir="):
			dir = strings.TrimPrefix(a, "--reports-dir=")
		case file == "":
			file = a
		default:
			return fmt.Errorf("usage: .report FILE [--reports-dir DIR]")
		}
	}
	if file == "" {
		return fmt.Errorf("usage: .report FILE [--reports-dir DIR]")
	}
	secs, err := reportSections(dir)
	if err != nil {
		return fmt.Errorf(".report: %w", err)
	}
	if err := s.db.CheckNoTransaction(ctx); err != nil {
		return fmt.Errorf(".report: %w", err)
	}
	if err := writeReportFile(ctx, s.db.SQL, file, "", secs, s.errOut); err != nil {
		return fmt.Errorf(".report: %w", err)
	}
	fmt.Fprintf(s.errOut, "report written to %s\n", file)
	return nil
}

// reportSections parses the built-in report files and dir's *.sql files (a file named like a built-in
// one replaces it), in report order.
func reportSections(dir string) ([]queries.ReportSection, error) {
	files := queries.ReportFiles()
	if dir != "" {
		names, err := filepath.Glob(filepath.Join(dir, "*.sql"))
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("--reports-dir: %w", err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("--reports-dir %s: not a directory", dir)
		}
		byName := map[string]int{}
		for i, f := range files {
			byName[f.Name] = i
		}
		sort.Strings(names)
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				return nil, err
			}
			f := queries.ReportFile{Name: filepath.Base(n), Text: string(b), Path: n}
			if i, ok := byName[f.Name]; ok {
				files[i] = f
			} else {
				files = append(files, f)
			}
		}
		queries.SortReportFiles(files)
	}
	var out []queries.ReportSection
	for _, f := range files {
		secs, err := queries.ParseReport(cmp.Or(f.Path, f.Name), f.Text)
		if err != nil {
			return nil, err
		}
		out = append(out, secs...)
	}
	return out, nil
}

// writeReportFile renders the report and writes it to path (through a temporary file, so that a
// failure leaves no half-written report). Failed sections are warned about on warn, one line each.
func writeReportFile(ctx context.Context, db *sql.DB, path, title string, secs []queries.ReportSection, warn io.Writer) error {
	// Renaming the finished file onto a directory would fail with a baffling "file exists";
	// say what is wrong, and before the report's queries run.
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("write %s: is a directory", path)
	}
	if err := sqlfuncs.RefuseOwnFiles(ctx, db, path); err != nil {
		return err
	}
	// Created before the sections run: a directory that is not there fails at once, not after them.
	f, err := outdir.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	defer f.Abort()
	rep := buildReport(ctx, db, title, secs)
	if err := ctx.Err(); err != nil {
		// Cancelled sections are not "not available" analyses: an existing report stays as it was.
		return fmt.Errorf("%s not written: %w", path, err)
	}
	for _, s := range rep.Sections {
		if s.Err != "" {
			fmt.Fprintf(warn, "tracesql: warning: report section %q (%s): %s\n", s.Title, s.Path, s.Err)
		}
		for _, skip := range s.Skipped {
			fmt.Fprintf(warn, "tracesql: warning: report section %q (%s) leaves out %s\n", s.Title, s.Path, skip)
		}
	}
	if err := renderReport(f, rep); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	return nil
}

// unwrapPath drops the path an *fs.PathError names, for an error that names it already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// resultTable is a query result held in memory: column names and rows of Go values.
type resultTable struct {
	cols      []string
	types     []*sqlType // the columns' DuckDB types (nil where unknown), for cells' text
	typeNames []string   // the same as DuckDB writes them ("" where unknown), for @foreach's literals
	rows      [][]any
	truncated bool // more than maxSectionRows rows
}

// cell is the text of row r's column c in a table or label, as the table output mode prints it.
func (t *resultTable) cell(r, c int) string {
	var typ *sqlType
	if c < len(t.types) {
		typ = t.types[c]
	}
	return valueText(t.rows[r][c], typ)
}

func (t *resultTable) col(name string) int {
	for i, c := range t.cols {
		if strings.EqualFold(c, name) {
			return i
		}
	}
	return -1
}

// runSection runs a section's statement (once per @foreach row) on a connection of its own, so that
// its SET VARIABLEs are seen by its statement and reset before the connection goes back to the pool.
// A @foreach row whose statement fails (a rank without the annotation the section asks for) is left
// out and named in skipped, as "report_rank=3: error"; err is set only when every row failed.
func runSection(ctx context.Context, db *sql.DB, sec queries.ReportSection) (res *resultTable, skipped []string, err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	// A report reads: whatever a section's SQL changes in the database (a user's section may create a
	// table) is rolled back, so that a report on a --db leaves the file as it was. Never on the
	// connection of a user's open transaction: the refused BEGIN would abort it.
	if open, err := engine.TransactionOpen(ctx, conn); err != nil || open {
		return nil, nil, cmp.Or(err, engine.ErrTransactionOpen)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return nil, nil, err
	}
	var restore func()
	defer func() {
		// The rollback first: after a failed statement the transaction is aborted, and the variables could
		// not be put back inside it (DuckDB variables are not transactional, so the rollback keeps them).
		conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		if restore != nil {
			restore()
		}
	}()
	if sec.Foreach == "" {
		res, err := queryTable(ctx, conn, sec.SQL)
		return res, nil, err
	}
	each, err := queryTable(ctx, conn, sec.Foreach)
	if err != nil {
		return nil, nil, fmt.Errorf("@foreach: %w", err)
	}
	// @foreach's variables are the database's, not the connection's (DuckDB): one the user set before the
	// report gets its value back afterwards; the others are reset.
	if restore, err = saveVariables(ctx, conn, each.cols); err != nil {
		return nil, nil, fmt.Errorf("@foreach: %w", err)
	}
	// Rows past the cap: the @foreach rows that were not read, or those of the rows after the section's
	// own rows reached it (they ran, and were thrown away), make the section truncated, and it says so.
	res = &resultTable{truncated: each.truncated}
	var firstErr error
	for _, row := range each.rows {
		if len(res.rows) >= maxSectionRows {
			res.truncated = true
			break
		}
		for i, c := range each.cols {
			lit, err := each.literal(row, i)
			if err != nil {
				return nil, nil, fmt.Errorf("@foreach column %s: %w", c, err)
			}
			if _, err := conn.ExecContext(ctx, "SET VARIABLE "+quoteIdent(c)+" = "+lit); err != nil {
				return nil, nil, fmt.Errorf("@foreach: %w", err)
			}
		}
		n := len(res.rows)
		err := appendQuery(ctx, conn, sec.SQL, res)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return nil, nil, err
		}
		err = fmt.Errorf("%s: %w", foreachDesc(each.cols, row), err)
		firstErr = cmp.Or(firstErr, err)
		skipped = append(skipped, oneLine(err))
		res.rows = res.rows[:n]
		// The failed statement aborted the transaction: start another for the next rows (what the
		// section changed is rolled back in the end anyway).
		if _, rerr := conn.ExecContext(ctx, "ROLLBACK"); rerr != nil {
			return nil, nil, err
		}
		if _, rerr := conn.ExecContext(ctx, "BEGIN TRANSACTION"); rerr != nil {
			return nil, nil, err
		}
	}
	if len(skipped) > 0 && len(skipped) == len(each.rows) {
		return nil, nil, firstErr
	}
	return res, skipped, nil
}

// saveVariables copies the DuckDB variables names that are set to backups, and returns the function that puts
// them back (and resets the names that were not set).
func saveVariables(ctx context.Context, conn *sql.Conn, names []string) (func(), error) {
	backup := func(n string) string { return "__tracesql_report_saved_" + n }
	var saved []string
	for _, n := range names {
		var set bool
		if err := conn.QueryRowContext(ctx, "SELECT count(*) > 0 FROM duckdb_variables() WHERE name = ?", n).Scan(&set); err != nil {
			return nil, err
		}
		if set {
			if _, err := conn.ExecContext(ctx, "SET VARIABLE "+quoteIdent(backup(n))+" = getvariable("+mustLiteral(n)+")"); err != nil {
				return nil, err
			}
			saved = append(saved, n)
		}
	}
	return func() {
		bg := context.WithoutCancel(ctx)
		for _, n := range names {
			if slices.Contains(saved, n) {
				conn.ExecContext(bg, "SET VARIABLE "+quoteIdent(n)+" = getvariable("+mustLiteral(backup(n))+")")
				conn.ExecContext(bg, "RESET VARIABLE "+quoteIdent(backup(n)))
			} else {
				conn.ExecContext(bg, "RESET VARIABLE "+quoteIdent(n))
			}
		}
	}, nil
}

// foreachDesc names one @foreach row in an error, e.g. "report_rank=1".
func foreachDesc(cols []string, row []any) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = fmt.Sprintf("%s=%v", c, row[i])
	}
	return strings.Join(parts, " ")
}

func queryTable(ctx context.Context, conn *sql.Conn, q string) (*resultTable, error) {
	t := &resultTable{}
	if err := appendQuery(ctx, conn, q, t); err != nil {
		return nil, err
	}
	return t, nil
}

// appendQuery runs q and appends its rows to t (setting t.cols from the first result; a later result
// must have the same columns).
func appendQuery(ctx context.Context, conn *sql.Conn, q string, t *resultTable) error {
	var current string // (the database the section's unqualified names reach)
	if err := conn.QueryRowContext(ctx, `SELECT current_database()`).Scan(&current); err != nil {
		return err
	}
	if err := sqlfuncs.RefuseUserStatement(q, current); err != nil {
		return err
	}
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	if t.cols == nil {
		t.cols = cols
		if cts, err := rows.ColumnTypes(); err == nil {
			for _, ct := range cts {
				t.types = append(t.types, parseType(ct.DatabaseTypeName()))
				t.typeNames = append(t.typeNames, ct.DatabaseTypeName())
			}
		}
	} else if strings.Join(cols, "\x00") != strings.Join(t.cols, "\x00") {
		return fmt.Errorf("columns changed between @foreach rows: %v, then %v", t.cols, cols)
	}
	for rows.Next() {
		if len(t.rows) >= maxSectionRows {
			t.truncated = true
			break
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		t.rows = append(t.rows, vals)
	}
	return rows.Err()
}

// mustLiteral is a string's SQL literal.
func mustLiteral(s string) string {
	lit, _ := sqlLiteral(s)
	return lit
}

// literal is row's value in column c as a SQL literal of the column's own type, for SET VARIABLE: the Go
// literal where the driver's value says its type (numbers, text, booleans, decimals, timestamps), else the
// value's text cast to the column's type (HUGEINT, INTERVAL, UUID, BLOB, DATE, TIME, TIMESTAMPTZ, …; an
// ENUM's value is its text). A nested value (a list, struct, map or union) is refused: its text does not always read back.
func (t *resultTable) literal(row []any, c int) (string, error) {
	var typ *sqlType
	var name string
	if c < len(t.types) {
		typ, name = t.types[c], t.typeNames[c]
	}
	if typ != nil {
		switch typ.name {
		case "LIST", "ARRAY", "STRUCT", "MAP", "UNION":
			return "", fmt.Errorf("a %s value cannot be a variable here: select it as VARCHAR, or one variable per element", name)
		case "DATE", "TIME", "TIMETZ", "TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE", "TIME WITH TIME ZONE":
			// The driver's time.Time drops the zone, and a TIME or DATE is no TIMESTAMP.
			if row[c] != nil {
				return "CAST(" + mustLiteral(valueText(row[c], typ)) + " AS " + name + ")", nil
			}
		}
	}
	lit, err := sqlLiteral(row[c])
	if err == nil || name == "" {
		return lit, err
	}
	return "CAST(" + mustLiteral(valueText(row[c], typ)) + " AS " + name + ")", nil
}

// sqlLiteral writes a scanned value as a SQL literal for SET VARIABLE.
func sqlLiteral(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "NULL", nil
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", nil
	case bool:
		return strconv.FormatBool(x), nil
	case int64, int32, int16, int8, int, uint64, uint32, uint16, uint8:
		return fmt.Sprint(x), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), nil
	case duckdb.Decimal: // round(x, 2) and friends
		return fmt.Sprintf("%s::DECIMAL(%d,%d)", x.String(), x.Width, x.Scale), nil
	case time.Time: // DATE and TIMESTAMP arrive as UTC times; a TIMESTAMP literal compares with either
		return "TIMESTAMP '" + x.UTC().Format("2006-01-02 15:04:05.999999") + "'", nil
	}
	return "", fmt.Errorf("unsupported value type %T", v)
}
