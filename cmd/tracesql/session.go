package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"tracesql/engine"
	"tracesql/queries"
	"tracesql/sqlfuncs"
)

// session is one tracesql invocation: the database, the output settings and the statement runner
// shared by -c, -f, piped stdin and the REPL.
type session struct {
	endedBy      *atomic.Int32 // the signal that ended a batch or piped run (0: none yet; nil: not caught)
	db           *engine.DB
	out          io.Writer // stdout unless .output/.once redirect it
	stdout       io.Writer
	errOut       io.Writer
	format       string
	maxRows      int
	noHeader     bool // .headers off / --no-header
	timer        bool
	outFile      outputSink // current .output file or |command
	outputFailed bool       // a close of one failed (said): -c and -f exit 1
	once         bool       // restore stdout after the next statement
	loadOpts     engine.LoadOptions
	quit         bool
	readDepth    int     // .read files being run, one inside the other
	failed       bool    // an error was reported (piped stdin's exit status)
	where        string  // "FILE:LINE" of the statement running from a -f or .read file or a -c ("-c", "-c #N"), for its error
	whereLine    int     // the line where names, 0 when it names none (a one-line -c) or the statement starts with a comment; an error DuckDB places further down adds to it
	script       string  // the -f or .read file ("stdin" when piped) or "-c"/"-c #N" whose statements are running; "" for a lone -c and the REPL
	oneLine      bool    // the running script is one line: a -c's error names it without a line number
	sampleIDs    []int64 // trace ids of the bundled sample while it is loaded: the first traces loaded replace it
	terminal     bool    // the REPL runs on a terminal (its ^C echo stays on the line)
	bail         bool    // -c and -f: stop at the first error (.read inside them too)
	piped        bool    // statements come from a non-terminal stdin (readPiped)
	exitCode     *int    // .exit CODE
	sawBegin     bool    // a BEGIN or START (TRANSACTION) ran: later statements check for an open transaction
	// goBacked caches goBackedNames between statements that cannot change the catalog's macros and
	// views (reading and tokenising every definition cost 35 ms a statement inside a transaction)
	goBacked map[string]backedKind
	// usedCatalog is the database a USE made current ("" before one): the analyses' unqualified names reach
	// its main schema first, so its objects of their names are refused as tracesql's own are
	usedCatalog string
	// preparedCommands: per PREPAREd statement name, whether its EXECUTE answers with a status only
	preparedCommands map[string]bool
	// screen, when stdout is a terminal, returns its width: tables shown there fit it.
	screen func() int
	// A markdown or line result written after another to the same place starts with a blank line, else
	// the second table's header read as rows of the first. stdoutResults: one went to stdout;
	// fileResultOut: the .output / .once writer the last one went to.
	stdoutResults bool
	fileResultOut io.Writer
}

// screenWidth is the width a table shown now must fit: the terminal's for output to it, else 0 (any).
func (s *session) screenWidth() int {
	out := s.out
	for {
		cw, ok := out.(*checkedWriter)
		if !ok {
			break
		}
		out = cw.w // a dot command's output (a .read inside a .read: one in another), to the same place
	}
	if s.screen == nil || out != s.stdout {
		return 0
	}
	return s.screen()
}

// errQuit ends the session (.quit); errReported marks an error already printed (by a nested .read).
var (
	errQuit     = errors.New("quit")
	errReported = errors.New("error already reported")
	// errCancelled is a statement stopped by Ctrl-C.
	errCancelled = errors.New("query cancelled (Ctrl-C)")
	// errRestCancelled: feed stopped at a statement Ctrl-C cancelled at the REPL's prompt, already reported;
	// the rest of its line is not run.
	errRestCancelled = errors.New("the rest of the line was not run")
)

// cancelledError is errCancelled said of what Ctrl-C stopped, when that was not a query. lineCleared: the
// line the terminal echoed ^C on was cleared already (a load's progress line), so no newline goes first.
type cancelledError struct {
	msg         string
	lineCleared bool
}

func (e *cancelledError) Error() string { return e.msg }
func (e *cancelledError) Unwrap() error { return errCancelled }

// oneLine reduces an error to the one line the user sees. DuckDB's messages go on over further
// lines: a hint (`Did you mean "kernels"?`, `Candidate bindings: …`, a tab-indented list of
// candidate functions), then after a blank line the SQL context (`LINE 1: …` and a caret). The
// hint is kept, joined with spaces (list items with commas); the context is dropped.
func oneLine(err error) string {
	var b strings.Builder
	prevItem := false
	for _, line := range strings.Split(err.Error(), "\n") {
		item := strings.HasPrefix(line, "\t")
		line = strings.TrimSpace(line)
		if line == "" {
			if b.Len() > 0 {
				break
			}
			continue
		}
		if strings.HasPrefix(line, "LINE ") && b.Len() > 0 {
			break
		}
		switch {
		case b.Len() == 0:
		case item && prevItem && !strings.HasSuffix(b.String(), ":"): // not after "Candidate functions:"
			b.WriteString(", ")
		default:
			b.WriteByte(' ')
		}
		b.WriteString(line)
		prevItem = item
	}
	// DuckDB's closest name may be one of tracesql's internal objects (a leading underscore), which no
	// user meant: "Table with name nosuch does not exist! Did you mean "_nccl_shift"?".
	return internalHint.ReplaceAllString(b.String(), "")
}

var unboundParams = regexp.MustCompile(`incorrect argument count for command: have 0 want (\d+)`)

var internalHint = regexp.MustCompile(` Did you mean "_[^"]*"\?`)

func (s *session) reportErr(err error) {
	s.failed = true
	if errors.Is(err, errReported) || s.endedBy != nil && s.endedBy.Load() != 0 {
		return // (a statement a SIGTERM cancelled: the run's last line says so)
	}
	err = engine.RuleError(context.Background(), s.db.SQL, err) // a bad pattern a user put in kernel_classes
	err = engine.MemoryError(context.Background(), s.db, err)
	if s.db.Fatal(err) {
		err = engine.FatalError(s.db, err)
	}
	where := ""
	if s.where != "" {
		where = s.where + ": "
	}
	if m := duckdbLine.FindStringSubmatch(strings.Join(errorContext(err), "\n")); m != nil && s.whereLine > 0 && s.where != "" {
		// the line of the error, not of the statement's start (DuckDB counts from the statement's first line)
		if n, _ := strconv.Atoi(m[1]); n > 1 {
			where = fmt.Sprintf("%s:%d: ", s.script, s.whereLine+n-1)
		}
	}
	var cancelled *cancelledError
	if errors.Is(err, errCancelled) && s.terminal && !(errors.As(err, &cancelled) && cancelled.lineCleared) {
		fmt.Fprintln(s.errOut) // past the ^C the terminal echoed
	}
	fmt.Fprintf(s.errOut, "tracesql: %s%s\n", where, oneLine(err))
	if s.terminal {
		// In the REPL, DuckDB's pointer to the place in a long statement: "LINE 3: …" and its caret.
		for _, line := range errorContext(err) {
			fmt.Fprintln(s.errOut, line)
		}
	}
}

// duckdbLine reads the line DuckDB's error context points at ("LINE 3: …").
var duckdbLine = regexp.MustCompile(`^LINE (\d+):`)

// errorContext returns the SQL context DuckDB puts after its message, "LINE n: …" and the caret
// line under it, or nil.
func errorContext(err error) []string {
	lines := strings.Split(strings.TrimRight(err.Error(), "\n"), "\n")
	for i, line := range lines {
		if i > 0 && strings.HasPrefix(line, "LINE ") {
			return lines[i:]
		}
	}
	return nil
}

// run executes one statement (SQL or dot command) and prints its result.
func (s *session) run(ctx context.Context, stmt string) (err error) {
	defer func() {
		// A bug in one statement's rendering is that statement's error: the session (the REPL,
		// the rest of a piped script) goes on.
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	stmt = strings.TrimSpace(stmt)
	if stmt == "" {
		return nil
	}
	// DuckDB numbers an error's line from the text's start, or past a leading comment: only a statement
	// with none has its error's own line named
	if end, _ := queries.LeadingComments(stmt); end > 0 {
		s.whereLine = 0
	}
	if !readsOnly(stmt) && !leavesRulesUnchanged(stmt) {
		// (a dot command too: .load, .unload, .open) The analyses read the per-trace results stored at
		// load without checking them against kernel_classes only while nothing has changed it since the
		// last check. Checked after the statement: inside it, its reads see the rules as they were before.
		defer func() { s.db.SyncStored(context.WithoutCancel(ctx)) }()
	}
	if strings.HasPrefix(stmt, ".") {
		return s.dot(ctx, stmt)
	}
	if statementKeyword(stmt) == "PREPARE" {
		// A prepared statement keeps the plan it is bound with, and with the stored results known fresh
		// that plan reads them unchecked: an EXECUTE after an edit of kernel_classes inside a transaction,
		// or of a rule that cannot apply, gave the old rules' numbers. Bound while not fresh, it checks.
		s.db.StoredMayChange()
	}
	defer s.afterStatement()
	// Ctrl-C cancels the running query, not the session.
	qctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	defer func() {
		// (before stop, which cancels qctx too) DuckDB's own words for it came after Go's
		// "context canceled" on one line.
		if err != nil && qctx.Err() != nil && ctx.Err() == nil {
			err = errCancelled
		}
	}()
	if err := sqlfuncs.RefuseUserStatement(stmt, s.db.Catalog(), s.usedCatalog); err != nil {
		return err
	}
	if err := s.refuseCommittedOnlyRead(qctx, stmt); err != nil {
		return err
	}
	var compatBefore *sql.NullString
	if statementKeyword(stmt) == "SET" && compatVariable.MatchString(stmt) {
		var v sql.NullString
		if s.db.SQL.QueryRowContext(qctx, `SELECT TRY_CAST(getvariable('hta_compat')::VARCHAR AS BOOLEAN)::VARCHAR`).Scan(&v) == nil {
			compatBefore = &v
		}
	}
	start := time.Now()
	rows, err := queryForDisplay(qctx, s.db.SQL, stmt)
	if m := unboundParams.FindStringSubmatch(fmt.Sprint(err)); m != nil {
		// database/sql's words for a $1 or ? that nothing binds
		return fmt.Errorf("the statement has %s parameter(s) ($1 or ?) and the CLI binds none: write the values in the SQL (or PREPARE it and EXECUTE with values)", m[1])
	} else if err != nil {
		return explainBindError(qctx, s.db.SQL, stmt, err)
	}
	defer rows.Close()
	if rows.warning != "" {
		fmt.Fprintln(s.errOut, rows.warning)
	}
	typeNames := rows.typeNames
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	if len(cols) == 1 && (cols[0] == "Success" || cols[0] == "Count") && s.isCommand(stmt) {
		// DDL and DML: like the DuckDB CLI in its default mode, print nothing.
		for rows.Next() {
		}
	} else if s.format == "table" && len(cols) == 2 && cols[0] == "explain_key" && cols[1] == "explain_value" {
		// EXPLAIN: the plan is a drawing already; a table cell would escape its newlines and cut it.
		for rows.Next() {
			var key, plan sql.NullString
			if err := rows.Scan(&key, &plan); err != nil {
				return err
			}
			if _, err := fmt.Fprintln(s.out, plan.String); err != nil {
				return err
			}
		}
	} else {
		after := s.fileResultOut == s.out
		if s.out == s.stdout {
			after, s.stdoutResults = s.stdoutResults, true
		} else {
			s.fileResultOut = s.out
		}
		if f, _ := CanonicalFormat(s.format); (f == "markdown" || f == "line") && after {
			if _, err := io.WriteString(s.out, "\n"); err != nil {
				return err
			}
		}
		if _, err := renderRowsWidth(qctx, s.out, s.format, rows.Rows, s.maxRows, s.screenWidth(), typeNames, !s.noHeader); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if statementKeyword(stmt) == "USE" {
		rows.Close()
		if err := s.keepHomeOnPath(qctx); err != nil {
			return err
		}
	}
	if compatBefore != nil {
		rows.Close()
		if err := s.checkCompatVariable(qctx, *compatBefore); err != nil {
			return err
		}
	}
	if s.timer {
		fmt.Fprintf(s.errOut, "Run Time: %.3f s\n", time.Since(start).Seconds())
	}
	return nil
}

var compatVariable = regexp.MustCompile(`(?i)\bhta_compat\b`)

// readsOnly reports a statement that cannot write a table: a query (WITH … SELECT included, where WITH …
// INSERT is not), DESCRIBE, SHOW, SUMMARIZE. Anything else may edit kernel_classes.
func readsOnly(stmt string) bool {
	if strings.HasPrefix(stmt, ".") {
		return false
	}
	switch statementKeyword(stmt) {
	case "SELECT", "FROM", "VALUES", "TABLE", "PIVOT", "UNPIVOT", "DESCRIBE", "SHOW", "SUMMARIZE":
		return true
	}
	return false
}

// leavesRulesUnchanged reports a statement that writes only to a table, view or macro it names, and by
// that name not kernel_classes nor one of tracesql's own (a leading '_'): an INSERT, UPDATE, DELETE or
// TRUNCATE of a user's table, a CREATE of one (queries.DDLTargets reads which). After such a statement the
// stored results need no check against kernel_classes (engine.DB.SyncStored), which cost ~1.7 ms a
// statement: 10,000 piped INSERTs into a user's table took 19.6 s instead of 3.3 s. Any other statement
// (COPY, EXECUTE, ALTER, DROP, ATTACH, USE, COMMIT, a dot command …) is checked.
func leavesRulesUnchanged(stmt string) bool {
	switch statementKeyword(stmt) {
	case "INSERT", "UPDATE", "DELETE", "TRUNCATE", "CREATE":
	default:
		return false
	}
	targets, unchanged := 0, true
	queries.DDLTargets(stmt, func(_, _, name, _ string) {
		targets++
		unchanged = unchanged && name != "kernel_classes" && !strings.HasPrefix(name, "_")
	})
	return unchanged && targets > 0
}

// checkCompatVariable refuses a SET VARIABLE hta_compat to anything but a boolean when it is set (DuckDB
// takes any value, and the analyses' error came at the next one, blamed on it, or never), and puts back
// the value before, which was a boolean or unset.
func (s *session) checkCompatVariable(ctx context.Context, before sql.NullString) error {
	// (not hta_compat(), which raises the error: inside BEGIN … COMMIT that aborted the user's
	// transaction, and the value could not be put back)
	var value sql.NullString
	var ok bool
	if err := s.db.SQL.QueryRowContext(ctx, `SELECT getvariable('hta_compat')::VARCHAR,
		getvariable('hta_compat') IS NULL OR TRY_CAST(getvariable('hta_compat')::VARCHAR AS BOOLEAN) IS NOT NULL`).Scan(&value, &ok); err != nil || ok {
		return err
	}
	err := fmt.Errorf("hta_compat is %s: SET VARIABLE hta_compat = true (HTA 0.6.1's results) or false", value.String)
	restore, was := `RESET VARIABLE hta_compat`, "unset (default mode)"
	if before.Valid {
		restore, was = "SET VARIABLE hta_compat = "+before.String, before.String // (true or false)
	}
	if _, rerr := s.db.SQL.ExecContext(context.WithoutCancel(ctx), restore); rerr != nil {
		return fmt.Errorf("%w (and putting back its value before failed: %v)", err, rerr)
	}
	return fmt.Errorf("%w; hta_compat stays %s", err, was)
}

// keepHomeOnPath follows a user's USE: DuckDB's search path is then that database only, and tracesql's
// macros, whose bodies name its tables and helper macros unqualified, failed after `USE other`
// ("Table Function with name _bd_fold does not exist"), even called qualified. Appending tracesql's
// main schema to the path keeps them working while new tables still go to the database USE chose.
func (s *session) keepHomeOnPath(ctx context.Context) error {
	home := s.db.Catalog()
	var path string
	if err := s.db.SQL.QueryRowContext(ctx, `SELECT current_setting('search_path'), current_database()`).Scan(&path, &s.usedCatalog); err != nil || home == "" {
		return err
	}
	entry := quoteIdent(home) + ".main"
	for _, p := range strings.Split(path, ",") {
		if p == home+".main" || p == entry {
			return nil
		}
	}
	_, err := s.db.SQL.ExecContext(ctx, "SET search_path = "+mustLiteral(path+","+entry))
	return err
}

// commandKeywords start the statements whose result is only a status (DuckDB answers them with
// one column, Success or Count): DDL, DML, transactions, settings.
var commandKeywords = map[string]bool{"CREATE": true, "DROP": true, "ALTER": true, "INSERT": true,
	"UPDATE": true, "DELETE": true, "TRUNCATE": true, "MERGE": true, "COPY": true, "ATTACH": true,
	"DETACH": true, "USE": true, "SET": true, "RESET": true, "LOAD": true, "INSTALL": true,
	"FORCE": true, "BEGIN": true, "START": true, "COMMIT": true, "END": true, "ROLLBACK": true,
	"ABORT": true, "CHECKPOINT": true, "VACUUM": true, "ANALYZE": true, "EXPORT": true,
	"IMPORT": true, "PREPARE": true, "DEALLOCATE": true, "COMMENT": true, "PRAGMA": true}

// isCommand reports a statement whose one-column Success/Count result is a status, not data.
// It looks at the first keyword after comments, so that `/* x */ SELECT true AS Success` and
// `SELECT count(*) AS Count` are queries, and their results are printed. A PRAGMA that answers with
// data (`PRAGMA table_info`) has other columns. An EXECUTE is what the statement it runs is: a
// PREPAREd INSERT answers Count, a PREPAREd `SELECT count(*) AS Count` data.
func (s *session) isCommand(stmt string) bool {
	switch kw := statementKeyword(stmt); kw {
	case "PREPARE":
		if name, body, ok := preparedStatement(stmt); ok {
			if s.preparedCommands == nil {
				s.preparedCommands = map[string]bool{}
			}
			s.preparedCommands[name] = commandKeywords[statementKeyword(body)] && !hasReturning(body)
		}
		return true
	case "EXECUTE":
		name, _, _ := preparedStatement(stmt)
		command, known := s.preparedCommands[name]
		return command || !known
	default:
		return commandKeywords[kw] && !hasReturning(stmt)
	}
}

// preparedNamePattern matches `PREPARE name AS body` and `EXECUTE name(args)` after leading comments.
var preparedNamePattern = regexp.MustCompile(`(?is)^(?:PREPARE|EXECUTE)\s+("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)\s*(?:AS\s+(.*))?`)

// preparedStatement returns the statement name of a PREPARE or EXECUTE (case folded unless quoted, as
// DuckDB's identifiers) and a PREPARE's body.
func preparedStatement(stmt string) (name, body string, ok bool) {
	end, _ := queries.LeadingComments(stmt)
	m := preparedNamePattern.FindStringSubmatch(stmt[end:])
	if m == nil {
		return "", "", false
	}
	name = m[1]
	if strings.HasPrefix(name, `"`) {
		name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
	} else {
		name = strings.ToLower(name)
	}
	return name, m[2], true
}

// executeCall returns the statement name of `EXECUTE name(args)` and the text after the name: its
// argument list, if any.
func executeCall(stmt string) (name, args string, ok bool) {
	end, _ := queries.LeadingComments(stmt)
	m := preparedNamePattern.FindStringSubmatchIndex(stmt[end:])
	if m == nil || statementKeyword(stmt) != "EXECUTE" || m[4] >= 0 {
		return "", "", false
	}
	name, _, _ = preparedStatement(stmt)
	return name, strings.TrimRight(stmt[end+m[1]:], "; \t\r\n"), true
}

// hasReturning reports a RETURNING clause outside parentheses: an INSERT, UPDATE or DELETE with one
// answers with rows, not a count.
func hasReturning(stmt string) bool {
	return topLevelWord(stmt, 0, func(i int, w string) bool { return w == "RETURNING" && !afterAS(stmt[:i]) }, nil) >= 0
}

// afterAS reports text ending in the keyword AS: a word after it is a name (SELECT 1 AS returning).
func afterAS(text string) bool {
	text = strings.TrimRight(text, " \t\r\n")
	return len(text) >= 2 && strings.EqualFold(text[len(text)-2:], "AS") &&
		(len(text) == 2 || !queries.IsIdentStart(text[len(text)-3]) && (text[len(text)-3] < '0' || text[len(text)-3] > '9'))
}

func (s *session) afterStatement() {
	if s.once {
		s.once = false
		s.closeOutput()
	}
}

// outputSink is where .output and .once send results: a file, or a command's input.
type outputSink interface {
	io.Writer
	Close() error
	Name() string
}

// pipeSink is the input of a shell command run by .output |command or .once |command; Close waits for it.
type pipeSink struct {
	io.WriteCloser
	cmd  *exec.Cmd
	name string
}

func startPipe(command string, stdout, stderr io.Writer) (*pipeSink, error) {
	c := exec.Command("/bin/sh", "-c", command)
	c.Stdout, c.Stderr = stdout, stderr
	w, err := c.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("|%s: %w", command, err)
	}
	return &pipeSink{WriteCloser: w, cmd: c, name: "|" + command}, nil
}

func (p *pipeSink) Name() string { return p.name }

func (p *pipeSink) Write(b []byte) (int, error) {
	n, err := p.WriteCloser.Write(b)
	if err != nil {
		err = fmt.Errorf("write to %s: %w", p.name, errors.Unwrap(err)) // (os's words name the pipe "|1")
	}
	return n, err
}

func (p *pipeSink) Close() error {
	err := p.WriteCloser.Close()
	if werr := p.cmd.Wait(); werr != nil && err == nil {
		err = werr
	}
	return err
}

// closeOutput closes the .output or .once file, if any, and sends output to stdout again. A failed close
// (a full disk, NFS) can mean a short file: said, and counted as a failed statement.
func (s *session) closeOutput() {
	if s.outFile != nil {
		if err := s.outFile.Close(); err != nil {
			what := "output file " + s.outFile.Name()
			if _, piped := s.outFile.(*pipeSink); piped {
				what = "output " + s.outFile.Name()
			}
			s.reportErr(fmt.Errorf("%s: %w", what, err))
			s.outputFailed = true
		}
		s.outFile = nil
	}
	s.out = s.stdout
}

// runScript executes every statement in text. In batch mode the first error stops it.
//
// source names the file the text comes from ("-c", or "-c #N" for the Nth of several; "" for a lone one-line -c): an
// error is then reported with the file and the line its statement starts on, as psql does.
func (s *session) runScript(ctx context.Context, text, source string, stopOnError bool) error {
	var buf stmtBuffer
	defer func(script, where string, oneLine bool) {
		s.script, s.where, s.oneLine = script, where, oneLine
	}(s.script, s.where, s.oneLine)
	s.script, s.oneLine = source, !strings.Contains(text, "\n")
	// A file saved with a byte-order mark: DuckDB skips one before SQL, but not before a dot command.
	text = strings.TrimPrefix(text, "\ufeff")
	for _, line := range strings.Split(text, "\n") {
		if errs := s.feed(ctx, &buf, line, stopOnError); errs != nil {
			return errs
		}
		if s.quit {
			return nil
		}
	}
	// A final statement without ';' still runs, as in the DuckDB CLI with -c.
	if err := s.runPending(ctx, &buf); err != nil {
		s.reportErr(err)
		return err
	}
	return nil
}

// runPending runs the statement left in buf without its ';' at the end of the input, if any.
func (s *session) runPending(ctx context.Context, buf *stmtBuffer) error {
	p := buf.Pending()
	if line, ok := buf.UnclosedComment(); ok {
		// the input ends inside a /* comment: the statements after the /* did not run
		s.setWhere(line)
		return errors.New("unterminated /* comment: the input ends inside it, and the statements after it did not run")
	}
	if p == "" || queries.OnlyComments(p) {
		return nil
	}
	s.setWhere(buf.PendingLine())
	return s.run(ctx, p)
}

// setWhere records the line of s.script an error is reported at.
func (s *session) setWhere(line int) {
	switch {
	case s.script == "":
	case s.oneLine && strings.HasPrefix(s.script, "-c"):
		s.where = s.script
	default:
		s.where = fmt.Sprintf("%s:%d", s.script, line)
		s.whereLine = line
		return
	}
	s.whereLine = 0
}

// feed handles one input line: a dot command when no statement is pending, else SQL text. A dot
// command after the last ';' of a line (`SELECT 1; .mode csv`) runs too, and ends with the line.
func (s *session) feed(ctx context.Context, buf *stmtBuffer, line string, stopOnError bool) error {
	if buf.Pending() == "" && strings.HasPrefix(strings.TrimSpace(line), ".") {
		buf.SkipLine()
		s.setWhere(buf.lines)
		return s.feedDot(ctx, line, stopOnError)
	}
	for _, stmt := range buf.Add(line) {
		s.setWhere(stmt.line)
		if err := s.run(ctx, stmt.text); err != nil {
			s.reportErr(err)
			if stopOnError || s.stopsOnCancel(err) {
				return err
			}
			if errors.Is(err, errCancelled) {
				return errRestCancelled // the REPL's prompt: the rest of the line goes too
			}
		}
	}
	if p := buf.Pending(); strings.HasPrefix(p, ".") {
		buf.Reset()
		s.setWhere(buf.lines)
		return s.feedDot(ctx, p, stopOnError)
	}
	return nil
}

// feedDot runs one dot-command line.
func (s *session) feedDot(ctx context.Context, line string, stopOnError bool) error {
	if err := s.run(ctx, line); err != nil {
		if errors.Is(err, errQuit) {
			s.quit = true
			return nil
		}
		s.reportErr(err)
		if stopOnError || s.stopsOnCancel(err) {
			return err
		}
	}
	return nil
}

// stopsOnCancel reports whether a statement cancelled by Ctrl-C stops the script it is part of, as in
// DuckDB's shell: piped input and a .read file stop; the REPL's own prompt only loses that statement.
// So does DuckDB's fatal error, after which it answers every statement with that error again.
func (s *session) stopsOnCancel(err error) bool {
	return (errors.Is(err, errCancelled) || s.db.Fatal(err)) && (s.piped || s.readDepth > 0)
}

// overview prints the sections of the overview report.
func (s *session) overview(ctx context.Context) error {
	secs, err := queries.Report("overview")
	if err != nil {
		return err
	}
	for _, sec := range secs {
		if sec.HideEmpty {
			var any bool
			if err := s.db.SQL.QueryRowContext(ctx, "SELECT EXISTS ("+sec.SQL+")").Scan(&any); err != nil || !any {
				continue // the section runs below only to say something
			}
		}
		fmt.Fprintf(s.out, "%s\n", sec.Title)
		if err := s.run(ctx, sec.SQL); err != nil {
			return err
		}
		fmt.Fprintln(s.out)
	}
	return nil
}

// quitStatus is the exit status after .quit or .exit: its CODE, else status.
func (s *session) quitStatus(status int) int {
	if s.exitCode != nil {
		return *s.exitCode
	}
	return status
}
