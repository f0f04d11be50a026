package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"tracesql/engine"
	"tracesql/queries"
	"tracesql/sqlfuncs"
)

// dotCommand is one REPL meta-command, modelled on the DuckDB CLI's.
type dotCommand struct {
	usage string
	help  string
	run   func(s *session, ctx context.Context, args []string) error
}

var dotCommands map[string]dotCommand

func init() {
	dotCommands = map[string]dotCommand{
		"help":     {".help [PATTERN]", "show this list (the commands whose names start with PATTERN)", (*session).dotHelp},
		"tables":   {".tables [PATTERN]", "list tables, views and table macros (names LIKE PATTERN)", (*session).dotTables},
		"schema":   {".schema [PATTERN]", "show the CREATE statements of the tables, views and macros named LIKE PATTERN (or of every table and view)", (*session).dotSchema},
		"chart":    {".chart SQL", "run SQL and draw its numeric columns as horizontal bars (like .mode bar)", (*session).dotChart},
		"describe": {".describe NAME", "document a table, view or analysis: what a row is, parameters, columns and units", (*session).dotDescribe},
		"mode":     {".mode [FORMAT]", "output format: " + strings.Join(Formats, ", ") + " (no FORMAT: show the current one)", (*session).dotMode},
		"headers":  {".headers [on|off]", "whether csv, tsv and list output start with the column names (as --no-header; no argument: show the setting)", (*session).dotHeaders},
		"maxrows":  {".maxrows [N]", "rows the table format shows, the first and last halves (0: all; no N: show the current number)", (*session).dotMaxRows},
		"timer":    {".timer [on|off]", "print the run time of each statement (no argument: show the setting)", (*session).dotTimer},
		"read":     {".read FILE", "run the statements in FILE", (*session).dotRead},
		"load":     {".load PATH... [--label L] [--replace]", "load trace files or directories as one trace set (--label before or after every path; --replace: a file changed since it was loaded replaces its older version)", (*session).dotLoad},
		"unload":   {".unload PATH... | --label L", "remove loaded files (a directory: its files) or a whole trace set from the database", (*session).dotUnload},
		"output":   {".output [FILE | |COMMAND]", "send results to FILE, or to a shell COMMAND's input (no FILE: back to stdout)", (*session).dotOutput},
		"once":     {".once FILE | |COMMAND", "send the next result to FILE, or to a shell COMMAND's input", (*session).dotOnce},
		"ranks":    {".ranks", "list the loaded trace files and their ranks", (*session).dotRanks},
		"quit":     {".quit [CODE]", "exit (with status CODE)", func(s *session, ctx context.Context, args []string) error { return s.dotQuit(".quit", args) }},
		"exit":     {".exit [CODE]", "exit (with status CODE)", func(s *session, ctx context.Context, args []string) error { return s.dotQuit(".exit", args) }},
	}
}

// dotCommandName resolves what was typed to a command's name: the name itself, or a prefix of exactly
// one name (.mo for .mode, as DuckDB's shell takes it).
func dotCommandName(typed string) (string, error) {
	if _, ok := dotCommands[typed]; ok {
		return typed, nil
	}
	var matches []string
	for name := range dotCommands {
		if strings.HasPrefix(name, typed) {
			matches = append(matches, name)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return "", fmt.Errorf("unknown command .%s (try .help)", typed)
	}
	sort.Strings(matches)
	return "", fmt.Errorf("ambiguous command .%s: .%s", typed, strings.Join(matches, ", ."))
}

// homeCommands name the dot commands that read or change tracesql's own tables: they run with
// tracesql's database as the default one, whatever a user's USE chose (their queries name the tables
// unqualified, and after `USE other` they failed with "Table with name traces does not exist").
var homeCommands = map[string]bool{"load": true, "unload": true, "ranks": true, "describe": true, "report": true}

// atHome runs fn with the session's default database and schema set to tracesql's (its catalog, main),
// and sets the user's search path back afterwards (DuckDB's USE is a setting of the search path).
func (s *session) atHome(ctx context.Context, fn func() error) error {
	var database, schema, path string
	if err := s.db.SQL.QueryRowContext(ctx, `SELECT current_database(), current_schema(), current_setting('search_path')`).Scan(&database, &schema, &path); err != nil {
		return err
	}
	home := s.db.Catalog()
	if home == "" || database == home && schema == "main" {
		return fn()
	}
	if _, err := s.db.SQL.ExecContext(ctx, "USE "+quoteIdent(home)+".main"); err != nil {
		return err
	}
	err := fn()
	// (not ctx: a cancelled command must still give the user's default back)
	if _, backErr := s.db.SQL.ExecContext(context.Background(), "SET search_path = "+mustLiteral(path)); backErr != nil && err == nil {
		err = fmt.Errorf("set the search path back to %q: %w", path, backErr)
	}
	return err
}

// freeText names the dot commands whose argument is text taken verbatim (SQL), not words:
// splitting `.chart SELECT 'a' AS x` on spaces and quotes would change the SQL.
var freeText = map[string]bool{"chart": true}

func (s *session) dot(ctx context.Context, line string) error {
	err := s.runDot(ctx, line)
	words := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "."))
	if len(words) > 1 && freeText[dotCommandNameOrEmpty(strings.TrimSuffix(words[0], ";"))] {
		return err // its ; is the SQL's
	}
	if err != nil && strings.HasSuffix(strings.TrimSpace(line), ";") && !errors.Is(err, errReported) {
		// `.tables;` is a habit from SQL; like DuckDB's shell the ; is read as part of the command.
		err = fmt.Errorf("%w (a dot command ends at the end of its line, with no ;)", err)
	}
	return err
}

func (s *session) runDot(ctx context.Context, line string) error {
	s.goBacked = nil // (.load, .read and the rest may change the catalog)
	line = strings.TrimPrefix(strings.TrimSpace(line), ".")
	name, rest := line, ""
	if i := strings.IndexAny(line, " \t"); i >= 0 {
		name, rest = line[:i], line[i+1:]
	}
	if name == "" {
		return fmt.Errorf("empty dot command (try .help)")
	}
	name, err := dotCommandName(name)
	if err != nil {
		return err
	}
	cmd := dotCommands[name]
	var args []string
	if piped := strings.TrimSpace(rest); (name == "once" || name == "output") && strings.HasPrefix(piped, "|") {
		args = []string{piped} // |command: the rest of the line is the shell's, quotes and all
	} else if freeText[name] {
		if rest = strings.TrimSpace(rest); rest != "" {
			args = []string{rest}
		}
	} else {
		if args, err = splitArgs(rest, fileArgCommands[name]); err != nil {
			return fmt.Errorf(".%s: %w", name, err)
		}
	}
	if name != "once" {
		// .once applies to the next command's output, a dot command's (.schema, .help) included.
		defer s.afterStatement()
	}
	// Ctrl-C stops the command (a .load rolls its file back), not the session: without a handler the
	// signal ended the process. (.read's statements and dot commands each set their own.)
	cctx := ctx
	if name != "read" {
		var stop context.CancelFunc
		cctx, stop = signal.NotifyContext(ctx, os.Interrupt)
		defer stop()
	}
	// Dot commands print with fmt, which drops write errors: a full disk must still fail the command.
	cw := &checkedWriter{w: s.out}
	s.out = cw
	if homeCommands[name] {
		err = s.atHome(cctx, func() error { return cmd.run(s, cctx, args) })
	} else {
		err = cmd.run(s, cctx, args)
	}
	if err != nil && cctx.Err() != nil && ctx.Err() == nil && !errors.Is(err, errReported) && !errors.Is(err, errCancelled) {
		err = &cancelledError{msg: "." + name + " cancelled (Ctrl-C)"}
	}
	if s.out == cw {
		s.out = cw.w
	}
	if err == nil {
		err = cw.err
	}
	return err
}

// checkedWriter remembers the first error of the writes through it.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// splitArgs splits a dot-command line on spaces, honouring single and double quotes; for a command whose
// arguments are files (files), also a backslash before a space, quote or backslash outside quotes
// (my\ query.sql, as a shell and Tab completion write it), and a leading ~/ outside quotes (the home
// directory). Other commands' arguments (a label, a LIKE pattern) keep both as typed.
func splitArgs(line string, files bool) ([]string, error) {
	args, last, _, quote := scanArgs(line, files)
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", line)
	}
	if last != nil {
		args = append(args, *last)
	}
	return args, nil
}

// scanArgs is splitArgs for a line that may end inside its last argument (as Tab completion sees it):
// the arguments before the last, the last (nil when the line ends in a space) and where its text
// starts in line, and the quote still open at the end (0 if none).
func scanArgs(line string, files bool) (args []string, last *string, lastAt int, quote byte) {
	var cur strings.Builder
	inArg, tilde := false, false
	end := func() {
		a := cur.String()
		if tilde {
			if home, err := os.UserHomeDir(); err == nil {
				a = home + a[1:]
			}
		}
		args = append(args, a)
		cur.Reset()
		inArg, tilde = false, false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		if !inArg && c != ' ' && c != '\t' {
			lastAt = i
		}
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case files && c == '\\' && i+1 < len(line) && strings.IndexByte(" \t'\"\\", line[i+1]) >= 0:
			i++
			cur.WriteByte(line[i])
			inArg = true
		case c == '\'' || c == '"':
			quote, inArg = c, true
		case c == ' ' || c == '\t':
			if inArg {
				end()
			}
		default:
			if files && !inArg && c == '~' && (i+1 == len(line) || line[i+1] == '/' || line[i+1] == ' ' || line[i+1] == '\t') {
				tilde = true
			}
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		end()
		a := args[len(args)-1]
		last, args = &a, args[:len(args)-1]
	}
	return args, last, lastAt, quote
}

func (s *session) dotHelp(_ context.Context, args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("usage: .help [PATTERN]")
	}
	names := make([]string, 0, len(dotCommands))
	for n := range dotCommands {
		if len(args) == 0 || strings.HasPrefix(n, strings.ToLower(strings.TrimPrefix(args[0], "."))) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf(".help: no command starts with %q", args[0])
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(dotCommands[n].usage))
	}
	for _, n := range names {
		c := dotCommands[n]
		fmt.Fprintf(s.out, "%-*s  %s\n", width, c.usage, c.help)
	}
	return nil
}

// catalogObjects lists every table, view and macro a statement can name, with the name to name it by:
// bare in the main schema of the open database (or of temp), else schema- or database-qualified (a
// table in an ATTACHed database or a CREATE SCHEMA's was listed bare, or not at all). bare is the
// name without its qualifier; params and body are a macro's (joined by chr(31)) for .schema.
const catalogObjects = `
SELECT CASE WHEN database_name IN (current_database(), 'temp') AND schema_name = 'main' THEN name
            WHEN database_name IN (current_database(), 'temp') THEN schema_name || '.' || name
            ELSE database_name || '.' || schema_name || '.' || name END AS name,
       name AS bare, database_name, schema_name, kind, sql, params, body
FROM (
    SELECT database_name, schema_name, table_name AS name, 'table' AS kind, sql, NULL AS params, NULL AS body
        FROM duckdb_tables() WHERE NOT internal
    UNION ALL SELECT database_name, schema_name, view_name, 'view', sql, NULL, NULL FROM duckdb_views() WHERE NOT internal
    UNION ALL SELECT DISTINCT database_name, schema_name, function_name,
            CASE function_type WHEN 'table_macro' THEN 'table macro' ELSE 'macro' END, NULL,
            array_to_string(parameters, chr(31)), macro_definition
        FROM duckdb_functions() WHERE function_type IN ('macro', 'table_macro') AND NOT internal
        AND macro_definition IS NOT NULL)`

// catalogMatch is the condition on catalogObjects of a .tables or .schema PATTERN: LIKE's pattern with
// \ as its escape, as in SQLite's shell, ignoring case as SQL names do, matched against the name shown
// or the bare name.
func catalogMatch(pattern string) string {
	lit := "'" + strings.ReplaceAll(pattern, "'", "''") + "'"
	return "(name ILIKE " + lit + ` ESCAPE '\' OR bare ILIKE ` + lit + ` ESCAPE '\')`
}

// likeEscaper makes a name a LIKE pattern that matches only itself (catalogMatch's escape is \).
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// catalogHidden is the condition that leaves internal _* relations out of listings without a pattern:
// those named bare and, after a user's USE of another database, tracesql's own (home: its catalog).
func catalogHidden(home string) string {
	return `NOT (bare LIKE '\_%' ESCAPE '\' AND (name = bare OR database_name = ` + mustLiteral(home) + ` AND schema_name = 'main'))`
}

// dotTables is .tables [PATTERN]: the names matching a LIKE pattern (as DuckDB's and SQLite's shells do),
// every name without one.
func (s *session) dotTables(ctx context.Context, args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("usage: .tables [PATTERN]")
	}
	query := "SELECT name, kind AS type FROM (" + catalogObjects + ") WHERE kind <> 'macro' AND " + catalogHidden(s.db.Catalog())
	if len(args) == 1 {
		query += " AND " + catalogMatch(args[0])
		// A pattern that matches nothing prints nothing, as in DuckDB's shell (not a box with no rows).
		var n int
		if err := s.db.SQL.QueryRowContext(ctx, "SELECT count(*) FROM ("+query+")").Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			s.noteNoMatch(args[0])
			return nil
		}
	}
	return s.runAll(ctx, query+" ORDER BY name")
}

// runAll runs a dot command's listing query: every row is shown whatever --maxrows says, since
// the point of .tables or .ranks is to see all the names.
func (s *session) runAll(ctx context.Context, query string) error {
	saved := s.maxRows
	s.maxRows = 0
	defer func() { s.maxRows = saved }()
	return s.run(ctx, query)
}

func (s *session) dotSchema(ctx context.Context, args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("usage: .schema [PATTERN]")
	}
	// A named macro too, as .tables lists them. DuckDB keeps a macro's body, normalised, without its
	// parameters' defaults; those of tracesql's own macros come from their documented signature (when
	// the parameters are still the documented ones: a user may have replaced the macro). A bare
	// .schema lists tables and views, as DuckDB's CLI.
	q := "SELECT name, sql, params, body, kind = 'table macro' FROM (" + catalogObjects + ") WHERE "
	// A pattern names macros too, and the internal _* relations; without one, tables and views but
	// not the internal ones, as in .tables.
	if len(args) == 1 {
		q += catalogMatch(args[0])
	} else {
		q += "kind IN ('table', 'view') AND " + catalogHidden(s.db.Catalog())
	}
	rows, err := s.db.SQL.QueryContext(ctx, q+" ORDER BY name")
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var name string
		var sqlText, params, body sql.NullString
		var isTable sql.NullBool
		if err := rows.Scan(&name, &sqlText, &params, &body, &isTable); err != nil {
			return err
		}
		if !sqlText.Valid {
			as := " AS "
			if isTable.Bool {
				as = " AS TABLE "
			}
			sqlText.String = "CREATE MACRO " + name + "(" + strings.Join(macroParams(name, splitParams(params.String)), ", ") + ")" + as + body.String + ";"
		}
		fmt.Fprintln(s.out, strings.TrimSpace(sqlText.String))
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n == 0 && len(args) == 1 {
		s.noteNoMatch(args[0])
	}
	return nil
}

// noteNoMatch says on stderr that a .tables or .schema pattern matched nothing. Not an error (DuckDB's shell
// prints nothing), so that a script goes on and exits 0 as there; .tables and .schema answered differently.
func (s *session) noteNoMatch(pattern string) {
	if strings.HasSuffix(pattern, ";") {
		fmt.Fprintf(s.errOut, "note: no name matches %q (a dot command ends at the end of its line, with no ;)\n", pattern)
		return
	}
	fmt.Fprintf(s.errOut, "note: no table, view or macro named like %q (.tables lists them)\n", pattern)
}

func (s *session) dotMode(_ context.Context, args []string) error {
	switch len(args) {
	case 0:
		fmt.Fprintln(s.out, s.format)
		return nil
	case 1:
	default: // `.mode csv -- note` or `.mode a b`: say so rather than ignore the line
		return fmt.Errorf("usage: .mode [FORMAT] (one of %s; got %d arguments)", strings.Join(Formats, ", "), len(args))
	}
	format, ok := CanonicalFormat(args[0])
	if !ok {
		return fmt.Errorf(".mode %s: unknown format (want %s)", args[0], strings.Join(Formats, ", "))
	}
	s.format = format
	return nil
}

func (s *session) dotTimer(_ context.Context, args []string) error {
	return s.setOrShow(".timer", args, &s.timer, false)
}

func (s *session) dotHeaders(_ context.Context, args []string) error {
	return s.setOrShow(".headers", args, &s.noHeader, true)
}

// setOrShow is an on|off dot command: with its one argument it sets *flag (to the opposite of what was
// typed where the flag is negative, as noHeader), with none it prints the setting, as .mode and .maxrows do.
func (s *session) setOrShow(cmd string, args []string, flag *bool, negative bool) error {
	if len(args) == 0 {
		if *flag != negative {
			fmt.Fprintln(s.out, "on")
		} else {
			fmt.Fprintln(s.out, "off")
		}
		return nil
	}
	on, ok := onOff(args)
	if !ok {
		return fmt.Errorf("usage: %s [on|off]", cmd)
	}
	*flag = on != negative
	return nil
}

// onOff reads the one on|off argument of a dot command, in any case, and the other spellings DuckDB's
// shell takes (yes|no, true|false, 1|0).
func onOff(args []string) (on, ok bool) {
	if len(args) != 1 {
		return false, false
	}
	switch strings.ToLower(args[0]) {
	case "on", "yes", "true", "1":
		return true, true
	case "off", "no", "false", "0":
		return false, true
	}
	return false, false
}

// maxReadDepth bounds .read inside .read (sqlite3 allows 25, we keep it smaller): a file that
// reads itself, or two that read each other, would otherwise recurse until the stack overflows.
const maxReadDepth = 16

// dotQuit ends the session, with exit status CODE if given (as DuckDB's .exit CODE).
// dotQuit is .quit and .exit (cmd, for the usage line).
func (s *session) dotQuit(cmd string, args []string) error {
	switch len(args) {
	case 0:
	case 1:
		code, err := strconv.Atoi(args[0])
		if err != nil || code < 0 || code > 255 {
			return fmt.Errorf("usage: %s [CODE] (CODE a number from 0 to 255, not %q)", cmd, args[0])
		}
		s.exitCode = &code
	default:
		return fmt.Errorf("usage: %s [CODE]", cmd)
	}
	return errQuit
}

// dotMaxRows is --maxrows for the rest of the session.
func (s *session) dotMaxRows(_ context.Context, args []string) error {
	switch len(args) {
	case 0:
		fmt.Fprintln(s.out, s.maxRows)
		return nil
	case 1:
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 0 {
			return fmt.Errorf("usage: .maxrows [N] (N a number of rows >= 0, not %q)", args[0])
		}
		s.maxRows = n
		return nil
	}
	return fmt.Errorf("usage: .maxrows [N]")
}

func (s *session) dotRead(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: .read FILE")
	}
	if s.readDepth >= maxReadDepth {
		return fmt.Errorf(".read %s: nested more than %d deep (does a file .read itself?)", args[0], maxReadDepth)
	}
	text, err := readSQLFile(args[0])
	if err != nil {
		return fmt.Errorf(".read: %w", err)
	}
	s.readDepth++
	defer func() { s.readDepth-- }()
	// As the session runs: -c and -f stop at the first error, the REPL and piped input go on.
	if err := s.runScript(ctx, text, args[0], s.bail); err != nil {
		if errors.Is(err, errCancelled) {
			return errors.Join(errReported, errCancelled) // stops the script around it too (stopsOnCancel)
		}
		return errReported
	}
	return nil
}

func (s *session) dotLoad(ctx context.Context, args []string) error {
	opts := s.loadOpts
	opts.Replace = false // asked for per .load, not carried over from the command line
	var paths []string
	labelled := false
	pathsBeforeLabel := 0 // paths named before the first --label
	// One .load is one trace set: a second --label would silently win over the first.
	setLabel := func(l string) error {
		if labelled && l != opts.Label {
			return fmt.Errorf(".load: two labels, %q and %q: one .load loads one trace set (run .load once per label)", opts.Label, l)
		}
		if !labelled {
			pathsBeforeLabel = len(paths)
		}
		opts.Label, labelled = l, true
		return nil
	}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--replace" || a == "-replace":
			opts.Replace = true
		case a == "--label" || a == "-label":
			if i+1 == len(args) {
				return fmt.Errorf(".load: --label needs a value")
			}
			if err := setLabel(args[i+1]); err != nil {
				return err
			}
			i++
		case strings.HasPrefix(a, "--label="):
			if err := setLabel(strings.TrimPrefix(a, "--label=")); err != nil {
				return err
			}
		case strings.HasPrefix(a, "-") && a != "-":
			return fmt.Errorf(".load: unknown flag %s (usage: .load PATH... [--label L] [--replace]; ./%s names a file of that name)", a, a)
		default:
			paths = append(paths, a)
		}
	}
	if opts.Label == "" { // as --label '' on the command line: not silently the default "trace"
		return fmt.Errorf(".load: --label: empty label")
	}
	if len(paths) == 0 {
		return fmt.Errorf("usage: .load PATH... [--label L] [--replace]")
	}
	// On the command line, --label between paths labels only the paths after it; one .load is one trace set,
	// so the same words would put the paths before it under the label too: refused rather than read two ways.
	if labelled && pathsBeforeLabel > 0 && pathsBeforeLabel < len(paths) {
		return fmt.Errorf(".load: --label %s comes between paths (%s before it, %s after): one .load loads one trace set, so put --label before or after every path, or run .load once per label", opts.Label, paths[pathsBeforeLabel-1], paths[pathsBeforeLabel])
	}
	return loadTraces(ctx, s, paths, opts)
}

// dotUnload removes loaded files: those named (a directory names the files loaded from it, not from its
// subdirectories), of every trace set or of --label's; or, with --label alone, the whole set. A path that
// names nothing loaded is an error, and then nothing is removed.
func (s *session) dotUnload(ctx context.Context, args []string) error {
	const usage = "usage: .unload PATH... | --label L (PATH... --label L: those files of that trace set)"
	label, hasLabel := "", false
	var paths []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--label" || a == "-label":
			if i+1 == len(args) {
				return fmt.Errorf(".unload: --label needs a value")
			}
			label, hasLabel = args[i+1], true
			i++
		case strings.HasPrefix(a, "--label="):
			label, hasLabel = strings.TrimPrefix(a, "--label="), true
		case strings.HasPrefix(a, "-") && a != "-":
			return fmt.Errorf(".unload: unknown flag %s (%s)", a, usage)
		default:
			paths = append(paths, a)
		}
	}
	if len(paths) == 0 && !hasLabel {
		return errors.New(usage)
	}
	if s.db.ReadOnly {
		return fmt.Errorf(".unload: %w", engine.ErrReadOnly)
	}
	files, err := s.db.LoadedFiles(ctx)
	if err != nil {
		return fmt.Errorf(".unload: %w", err)
	}
	if hasLabel {
		known := false
		for _, f := range files {
			known = known || f.Label == label
		}
		if !known {
			return fmt.Errorf(".unload: no trace set %q is loaded (.ranks lists them)", label)
		}
	}
	var ids []int64
	var labels []string // of the files picked, in order of first pick
	picked := map[int64]bool{}
	pick := func(f engine.LoadedFile) {
		if !picked[f.TraceID] {
			picked[f.TraceID] = true
			ids = append(ids, f.TraceID)
			if !slices.Contains(labels, f.Label) {
				labels = append(labels, f.Label)
			}
		}
	}
	// A path names the files loaded through it or through any other name of the same file or directory
	// (a symbolic link and its target, as loading treats them).
	resolved := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf(".unload %s: %w", p, err)
		}
		real := resolved(abs)
		n := 0
		for _, f := range files {
			if hasLabel && f.Label != label {
				continue
			}
			if f.Path != abs && filepath.Dir(f.Path) != abs {
				fr := resolved(f.Path)
				if fr != real && filepath.Dir(fr) != real {
					continue
				}
			}
			pick(f)
			n++
		}
		if n == 0 {
			where := ""
			if hasLabel {
				where = fmt.Sprintf(" in trace set %q", label)
			}
			return fmt.Errorf(".unload %s: no file loaded from it%s (.ranks lists the loaded files)", p, where)
		}
	}
	if len(paths) == 0 {
		for _, f := range files {
			if f.Label == label {
				pick(f)
			}
		}
	}
	if err := s.db.Unload(ctx, ids); err != nil {
		return err
	}
	// The bundled sample unloaded by hand is no longer there for the next load to replace: its trace
	// ids may be the next files' (the next load takes the largest id + 1).
	kept := s.sampleIDs[:0]
	for _, id := range s.sampleIDs {
		if !picked[id] {
			kept = append(kept, id)
		}
	}
	s.sampleIDs = kept
	// A path loaded under several labels (a baseline and a test of one file) is unloaded from every one:
	// say so, since the user may have meant one (.unload PATH --label L).
	from := ""
	if len(labels) > 1 {
		quoted := make([]string, len(labels))
		for i, l := range labels {
			quoted[i] = strconv.Quote(l)
		}
		from = ", from trace sets " + strings.Join(quoted, ", ") + " (--label L unloads from one)"
	}
	fmt.Fprintf(s.errOut, "unloaded %d file(s)%s\n", len(ids), from)
	return nil
}

func (s *session) dotOutput(ctx context.Context, args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("usage: .output [FILE]")
	}
	s.closeOutput()
	s.once = false
	if len(args) == 0 || args[0] == "stdout" { // "stdout" as in DuckDB's and sqlite's shells
		return nil
	}
	return s.openOutput(ctx, ".output", args[0])
}

// openOutput sends results to file, or to a shell command's input for "|command" (as sqlite3's and
// DuckDB's shells do; the file "|cat" was created); cmd names the dot command in errors.
func (s *session) openOutput(ctx context.Context, cmd, file string) error {
	if file == "-e" || file == "-x" {
		return fmt.Errorf("%s %s: opening the output in an editor or a spreadsheet is not supported (write to a file, or to |command)", cmd, file)
	}
	if command, ok := strings.CutPrefix(file, "|"); ok {
		if strings.TrimSpace(command) == "" {
			return fmt.Errorf("%s: no command after |", cmd)
		}
		p, err := startPipe(command, s.stdout, s.errOut)
		if err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		s.outFile, s.out = p, p
		return nil
	}
	if err := sqlfuncs.RefuseOwnFiles(ctx, s.db.SQL, file); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if strings.HasSuffix(file, ";") {
		fmt.Fprintf(s.errOut, "note: %s writes to the file %q (a dot command ends at the end of its line, with no ;)\n", cmd, file)
	}
	s.outFile, s.out = f, f
	return nil
}

func (s *session) dotOnce(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: .once FILE")
	}
	s.closeOutput()
	s.once = false
	if err := s.openOutput(ctx, ".once", args[0]); err != nil {
		return err
	}
	s.once = true
	return nil
}

func (s *session) dotRanks(ctx context.Context, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf(".ranks takes no arguments")
	}
	if err := s.runAll(ctx, `SELECT label, rank, trace_id, regexp_extract(path, '[^/]+$') AS file, events, device_type,
        round((max_ts - min_ts) / 1e6, 3) AS span_ms FROM traces ORDER BY label, rank`); err != nil {
		return err
	}
	// The NCCL profiler-plugin files loaded, when there are any, in a table of their own (r72 #9: not listed)
	var n int
	if err := s.db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM nccl_traces`).Scan(&n); err != nil || n == 0 {
		return err
	}
	return s.runAll(ctx, `SELECT label, rank, comm_hash, trace_id, regexp_extract(path, '[^/]+$') AS nccl_file, intervals
        FROM nccl_traces ORDER BY label, comm_hash, rank`)
}

// dotDescribe prints the documentation parsed from the SQL that defines NAME; for an undocumented
// relation (a user's table) it falls back to DuckDB's DESCRIBE.
func (s *session) dotDescribe(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: .describe NAME")
	}
	// kernel_breakdown(), as the signatures are written: the name is what is meant
	args = []string{strings.TrimSuffix(strings.TrimSpace(args[0]), "()")}
	d, ok := queries.Lookup(args[0])
	if rest, qualified := strings.CutPrefix(args[0], "main."); !ok && qualified {
		d, ok = queries.Lookup(rest) // the schema tracesql's own tables and views are in
	}
	if !ok {
		err := s.runAll(ctx, "DESCRIBE "+qualifiedName(args[0]))
		base := args[0][strings.LastIndexByte(args[0], '.')+1:]
		if err != nil && strings.Contains(strings.ToLower(err.Error()), "with name "+strings.ToLower(strings.Trim(base, `"`))+" does not exist") {
			// A user's macro has no columns DESCRIBE can name without its arguments: its definition, as
			// .schema shows it.
			exact := likeEscaper.Replace(strings.TrimPrefix(args[0], "main."))
			var macros int
			if qerr := s.db.SQL.QueryRowContext(ctx, "SELECT count(*) FROM ("+catalogObjects+") WHERE kind IN ('macro', 'table macro') AND "+catalogMatch(exact)).Scan(&macros); qerr == nil && macros > 0 {
				return s.dotSchema(ctx, []string{exact})
			}
			// DuckDB's words are about its own DESCRIBE statement (a caret under it in the REPL)
			hint := ""
			if m := didYouMean.FindStringSubmatch(oneLine(err)); m != nil {
				hint = fmt.Sprintf("; did you mean %s?", m[1])
			}
			return fmt.Errorf(".describe: no table, view, macro or analysis is named %s (.tables lists them%s)", args[0], hint)
		}
		return err
	}
	fmt.Fprintf(s.out, "%s %s\n  %s\n", d.Kind, d.Signature, d.Summary)
	if d.Kind != "macro" {
		cols, err := columnsWithBaseDocs(ctx, s, d)
		if err != nil {
			return err
		}
		d.Columns = cols
	}
	width := 0
	for _, c := range d.Columns {
		width = max(width, len(c.Name))
	}
	for _, c := range d.Columns {
		fmt.Fprintf(s.out, "  %-*s  %s\n", width, c.Name, c.Doc)
	}
	return nil
}

var didYouMean = regexp.MustCompile(`Did you mean "([^"]+)"\?`)

// qualifiedName quotes a name typed after a dot command for SQL: schema.table (or db.schema.table) part by
// part, as DuckDB reads it (quoted whole, main.events named a table called "main.events"). A name the user
// quoted is taken as written.
func qualifiedName(name string) string {
	if strings.Contains(name, `"`) {
		return name
	}
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = quoteIdent(p)
	}
	return strings.Join(parts, ".")
}

// columnsWithBaseDocs lists a table's or view's columns in order with their docs. A view that
// documents only what it adds to the rows it selects (kernels and cpu_ops: rows of events; gpu_frame:
// hta_frame's rows and a kernel_type) gets the other columns' docs from the documented table or view
// that has the most of them.
func columnsWithBaseDocs(ctx context.Context, s *session, d queries.Doc) ([]queries.ColumnDoc, error) {
	rows, err := s.db.SQL.QueryContext(ctx, `SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = ? ORDER BY column_index`, d.Name)
	if err != nil {
		return nil, fmt.Errorf(".describe %s: %w", d.Name, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf(".describe %s: %w", d.Name, err)
		}
		names = append(names, c)
	}
	if err := rows.Err(); err != nil || len(names) == 0 {
		return d.Columns, err // not in the catalog (a doc of something not installed): as documented
	}
	doc := map[string]string{}
	for _, c := range d.Columns {
		doc[c.Name] = c.Doc
	}
	var missing []string
	for _, n := range names {
		if _, ok := doc[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		var base map[string]string
		best := 0
		for _, b := range queries.Docs() {
			if b.Kind == "macro" || b.Name == d.Name {
				continue
			}
			m := map[string]string{}
			for _, c := range b.Columns {
				m[c.Name] = c.Doc
			}
			hits := 0
			for _, n := range missing {
				if _, ok := m[n]; ok {
					hits++
				}
			}
			if hits > best {
				base, best = m, hits
			}
		}
		for _, n := range missing {
			if v, ok := base[n]; ok {
				doc[n] = v
			}
		}
	}
	cols := make([]queries.ColumnDoc, len(names))
	for i, n := range names {
		cols[i] = queries.ColumnDoc{Name: n, Doc: doc[n]}
	}
	return cols, nil
}

// macroParams is a macro's parameter list for .schema: with the defaults of tracesql's documented
// signature when the parameter names are the documented ones, else the bare names.
func macroParams(name string, params []string) []string {
	declared, ok := queries.MacroParams(name)
	if !ok || len(declared) != len(params) {
		return params
	}
	for i, p := range declared {
		if n, _, _ := strings.Cut(p, ":="); !strings.EqualFold(strings.TrimSpace(n), params[i]) {
			return params
		}
	}
	return declared
}

// splitParams splits duckdb_functions().parameters as .schema reads it (joined by U+001F).
func splitParams(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x1f")
}

// quoteIdent quotes a SQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// dotChart runs one query and renders it as bars, whatever the current mode.
func (s *session) dotChart(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: .chart SQL")
	}
	stmt := strings.TrimSpace(args[0])
	if semi, _ := queries.StatementEnd(stmt, 0); semi >= 0 {
		// (all ran and only the first was drawn: a CREATE beside it ran unseen, a second result was lost)
		if more, tail := splitStatements(stmt[semi+1:]); len(more) > 0 || !queries.OnlyComments(tail) {
			return fmt.Errorf(".chart takes one statement: run the others on their own")
		}
		stmt = stmt[:semi] // (and what follows it: ';'s and comments)
	}
	saved := s.format
	s.format = "bar"
	defer func() { s.format = saved }()
	return s.run(ctx, stmt)
}

// dotCommandNameOrEmpty is dotCommandName, "" for what names no command.
func dotCommandNameOrEmpty(typed string) string {
	name, _ := dotCommandName(typed)
	return name
}
