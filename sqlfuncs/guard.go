package sqlfuncs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"tracesql/queries"
)

// IsInternal reports whether name (any case) is one of the Go table functions behind the public
// macros.
func IsInternal(name string) bool { return internalNames()[strings.ToLower(name)] }

// internalNames returns the Go table functions behind the public macros, lower-case; built on first
// use, since the registry fills in this package's init functions, after its variables.
var internalNames = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, n := range TableFunctions() {
		m[strings.ToLower(n)] = true
	}
	return m
})

// RefuseInternalCall returns an error when SQL text from a user (a statement, a report section, a
// what-if predicate) would call one of this package's table functions itself. duckdb-go aborts the
// whole process on a NULL argument to a table function (stack.md §1.4); the public macros never pass
// one, so only a direct call can. A statement that hands query() anything but a string literal is
// refused as well, since the SQL it runs is built at run time and cannot be checked here; a literal's
// text is checked like the statement's.
func RefuseInternalCall(text string) error {
	for i := 0; i < len(text); i++ {
		end, kind := queries.TokenEnd(text, i)
		if end < 0 {
			return nil // an unclosed quote or comment: DuckDB's error is the one to show
		}
		if name := queries.IdentName(text, i, end, kind); name != "" {
			if paren := queries.SkipBlanks(text, end+1); paren < len(text) && text[paren] == '(' {
				switch lower := strings.ToLower(name); {
				case internalNames()[lower]:
					return fmt.Errorf("%s is the internal function behind a public macro (.tables lists them): call the macro; called directly, a NULL argument would abort the process", name)
				case lower == "query":
					if err := checkQueryArg(text, paren+1); err != nil {
						return err
					}
				}
			}
		}
		i = end
	}
	return nil
}

// ErrQueryBuilt is RefuseInternalCall's error for a query() given anything but a string literal.
var ErrQueryBuilt = errors.New("query() is given SQL built when the statement runs, which tracesql cannot check for calls to its internal functions (a NULL argument to one aborts the process): pass query() a string literal, or write the statement itself")

// checkQueryArg checks the argument of a query( call whose '(' ends just before i: it must be one
// string literal, whose SQL passes RefuseInternalCall.
func checkQueryArg(text string, i int) error {
	refuse := ErrQueryBuilt
	i = queries.SkipBlanks(text, i)
	if i >= len(text) {
		return nil // cut off: DuckDB's error is the one to show
	}
	end, kind := queries.TokenEnd(text, i)
	switch {
	case end < 0:
		return nil // an unclosed quote or comment: DuckDB's error is the one to show
	case kind != queries.TokenQuoted || text[i] == '"':
		return refuse
	}
	if after := queries.SkipBlanks(text, end+1); after >= len(text) || text[after] != ')' {
		return refuse
	}
	return RefuseInternalCall(literalText(text[i : end+1]))
}

// LiteralArg returns the text of the string literal that is the first argument of a call whose name
// ends just before i (`query('…')`, `query_table('…')`), and whether there is one.
func LiteralArg(text string, i int) (string, bool) {
	paren := queries.SkipBlanks(text, i)
	if paren >= len(text) || text[paren] != '(' {
		return "", false
	}
	i = queries.SkipBlanks(text, paren+1)
	if i >= len(text) {
		return "", false
	}
	end, kind := queries.TokenEnd(text, i)
	if end < 0 || kind != queries.TokenQuoted || text[i] == '"' {
		return "", false
	}
	return literalText(text[i : end+1]), true
}

// literalText returns what a SQL string literal ('…', E'…' or $tag$…$tag$) stands for, closely
// enough to look for function calls in it: doubled quotes are undone and, in an E'…' string, the
// character after a backslash is kept as it is.
func literalText(lit string) string {
	switch {
	case lit[0] == '$':
		tag := lit[:strings.IndexByte(lit[1:], '$')+2]
		return lit[len(tag) : len(lit)-len(tag)]
	case lit[0] == 'e' || lit[0] == 'E':
		var b strings.Builder
		body := lit[2 : len(lit)-1]
		for j := 0; j < len(body); j++ {
			if body[j] == '\\' && j+1 < len(body) {
				j++
			} else if body[j] == '\'' && j+1 < len(body) && body[j+1] == '\'' {
				j++
			}
			b.WriteByte(body[j])
		}
		return b.String()
	}
	return strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
}

// RefuseUserStatement returns RefuseInternalCall's error for a user's statement (or report section), or
// an error when it would create, replace, drop or alter one of tracesql's own macros, views or tables
// (queries.OwnedKind). The analyses call them, and the startup install leaves a --db file's objects as
// they are when its version matches: a redefined _bool_arg returning NULL made every later
// critical_path abort the process, in that file's every session. catalogs are the databases whose main
// schema the analyses' unqualified names reach: tracesql's own and the one a USE made current. A name
// qualified with another database or schema (an ATTACHed file's events) is the user's.
func RefuseUserStatement(text string, catalogs ...string) error {
	if err := refuseOwnObjectChange(text, catalogs); err != nil {
		return err
	}
	return RefuseInternalCall(text)
}

func refuseOwnObjectChange(text string, catalogs []string) error {
	var err error
	queries.DDLTargets(text, func(verb, kind, name, qualifier string) {
		own, ok := queries.OwnedKind(name)
		if err != nil || !ok || (own == "macro") != (kind == "macro") || !reachedUnqualified(qualifier, catalogs) {
			return // tables and views share one namespace, macros another
		}
		if verb == "write" {
			// The tables a user edits (events, kernel_classes, …) have plain names; the _ ones are derived
			// at load, and the analyses trust them as stored: an edit stayed in every later session.
			if own == "table" && strings.HasPrefix(name, "_") {
				err = fmt.Errorf("%s is one of tracesql's own tables, derived from the traces when they load: the analyses read it as stored, and an edit would stay in their results; to leave traces out, use the analyses' ranks := or .unload", name)
			}
			return
		}
		what := map[string]string{"create": "redefining", "drop": "dropping", "alter": "altering"}[verb]
		err = fmt.Errorf("%s is one of tracesql's own %ss, which its analyses use: %s it would break them; give yours another name", name, own, what)
	})
	return err
}

// reachedUnqualified reports whether an object written with qualifier (DDLTargets': "", "x", "x.main") is one
// that an unqualified name can reach: in the temporary schema, which DuckDB searches first, or in the main
// schema of one of catalogs.
func reachedUnqualified(qualifier string, catalogs []string) bool {
	if qualifier == "" {
		return true
	}
	first, schema, two := strings.Cut(qualifier, ".")
	own := first == "temp" || slices.ContainsFunc(catalogs, func(c string) bool { return strings.EqualFold(c, first) })
	if !two {
		return own || first == "main"
	}
	return own && schema == "main"
}

// RefuseOwnFiles returns an error when writing to path would replace a file this session depends on: a database file
// (the --db file, its write-ahead log, or one ATTACHed) or a loaded trace. Truncating the open database corrupts it,
// and overwriting a trace breaks every later export that re-reads it; both are one mistyped -o away.
func RefuseOwnFiles(ctx context.Context, db *sql.DB, path string) error {
	rows, err := db.QueryContext(ctx, `
		SELECT 'the database file' AS what, path FROM duckdb_databases() WHERE path IS NOT NULL
		UNION ALL SELECT 'the database''s write-ahead log', path || '.wal' FROM duckdb_databases() WHERE path IS NOT NULL
		UNION ALL SELECT 'the loaded trace of rank ' || rank || ' (label ' || label || ')', path FROM traces
		UNION ALL SELECT 'the loaded NCCL profiler file of rank ' || rank || ' (label ' || label || ')', path FROM nccl_traces`)
	if err != nil {
		return fmt.Errorf("write %s: check that it is not one of the session's own files: %w", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var what, p string
		if err := rows.Scan(&what, &p); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if sameFileLocation(path, p) {
			return fmt.Errorf("write %s: that is %s; choose another file name", path, what)
		}
	}
	return rows.Err()
}

// sameFileLocation reports whether paths a and b name one file: the same file when both exist, else the same
// name in the same directory (symbolic links resolved), so that a database's write-ahead log, which exists only
// between checkpoints, is recognised before DuckDB creates it (a result written there was replayed as the log
// after a crash, and lost the committed work).
func sameFileLocation(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	if errA == nil || errB == nil {
		return false // one exists, the other not
	}
	resolved := func(p string) string {
		abs, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			return filepath.Join(dir, filepath.Base(abs))
		}
		return abs
	}
	return resolved(a) == resolved(b)
}
