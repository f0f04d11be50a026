package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"tracesql/engine"
	"tracesql/queries"
)

// session is one tracesql invocation: the database, the output settings and the statement runner
// shared by -c, -f, piped stdin and the REPL.
type session struct {
	db       *engine.DB
	out      io.Writer // stdout unless .output/.once redirect it
	stdout   io.Writer
	errOut   io.Writer
	format   string
	maxRows  int
	timer    bool
	outFile  *os.File // current .output file
	once     bool     // restore stdout after the next statement
	loadOpts engine.LoadOptions
	quit     bool
	failed   bool // an error was reported (piped stdin's exit status)
}

// errQuit ends the session (.quit); errReported marks an error already printed (by a nested .read).
var (
	errQuit     = errors.New("quit")
	errReported = errors.New("error already reported")
)

// oneLine reduces an error to the one line the user sees: DuckDB's messages carry the SQL context
// on further lines.
func oneLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	return msg
}

func (s *session) reportErr(err error) {
	s.failed = true
	if errors.Is(err, errReported) {
		return
	}
	fmt.Fprintf(s.errOut, "tracesql: %s\n", oneLine(err))
}

// run executes one statement (SQL or dot command) and prints its result.
func (s *session) run(ctx context.Context, stmt string) error {
	stmt = strings.TrimSpace(stmt)
	if stmt == "" {
		return nil
	}
	if strings.HasPrefix(stmt, ".") {
		return s.dot(ctx, stmt)
	}
	defer s.afterStatement()
	// Ctrl-C cancels the running query, not the session.
	qctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	start := time.Now()
	rows, err := s.db.SQL.QueryContext(qctx, stmt)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	if len(cols) == 1 && (cols[0] == "Success" || cols[0] == "Count") && !isQuery(stmt) {
		// DDL and DML: like the DuckDB CLI in its default mode, print nothing.
		for rows.Next() {
		}
	} else if _, err := RenderRows(s.out, s.format, rows, s.maxRows); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if s.timer {
		fmt.Fprintf(s.errOut, "Run Time: %.3f s\n", time.Since(start).Seconds())
	}
	return nil
}

// isQuery reports statements whose result is data, even if its one column is named Count.
func isQuery(stmt string) bool {
	f := strings.ToUpper(strings.Fields(stmt + " x")[0])
	switch f {
	case "SELECT", "WITH", "FROM", "VALUES", "TABLE", "SHOW", "DESCRIBE", "SUMMARIZE", "PRAGMA", "EXPLAIN", "(":
		return true
	}
	return false
}

func (s *session) afterStatement() {
	if s.once {
		s.once = false
		s.closeOutput()
	}
}

func (s *session) closeOutput() {
	if s.outFile != nil {
		s.outFile.Close()
		s.outFile = nil
	}
	s.out = s.stdout
}

// runScript executes every statement in text. In batch mode the first error stops it.
func (s *session) runScript(ctx context.Context, text string, stopOnError bool) error {
	var buf stmtBuffer
	for _, line := range strings.Split(text, "\n") {
		if errs := s.feed(ctx, &buf, line, stopOnError); errs != nil {
			return errs
		}
		if s.quit {
			return nil
		}
	}
	if p := buf.Pending(); p != "" && !onlyComments(p) {
		// A final statement without ';' still runs, as in the DuckDB CLI with -c.
		if err := s.run(ctx, p); err != nil {
			s.reportErr(err)
			return err
		}
	}
	return nil
}

// feed handles one input line: a dot command when no statement is pending, else SQL text.
func (s *session) feed(ctx context.Context, buf *stmtBuffer, line string, stopOnError bool) error {
	if buf.Pending() == "" && strings.HasPrefix(strings.TrimSpace(line), ".") {
		if err := s.run(ctx, line); err != nil {
			if errors.Is(err, errQuit) {
				s.quit = true
				return nil
			}
			s.reportErr(err)
			if stopOnError {
				return err
			}
		}
		return nil
	}
	for _, stmt := range buf.Add(line) {
		if err := s.run(ctx, stmt); err != nil {
			s.reportErr(err)
			if stopOnError {
				return err
			}
		}
	}
	return nil
}

// overview prints the sections of the overview report.
func (s *session) overview(ctx context.Context) error {
	secs, err := queries.Report("overview")
	if err != nil {
		return err
	}
	for _, sec := range secs {
		fmt.Fprintf(s.out, "%s\n", sec.Title)
		if err := s.run(ctx, sec.SQL); err != nil {
			return err
		}
		fmt.Fprintln(s.out)
	}
	return nil
}
