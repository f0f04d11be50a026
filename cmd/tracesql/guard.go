package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"

	"tracesql/queries"
	"tracesql/sqlfuncs"
)

// refuseOwnFiles returns an error when writing to path would replace a file this session depends on: a database file
// (the --db file, its write-ahead log, or one ATTACHed) or a loaded trace. Truncating the open database corrupts it,
// and overwriting a trace breaks every later export that re-reads it; both are one mistyped -o away.
func refuseOwnFiles(ctx context.Context, db *sql.DB, path string) error {
	target, err := os.Stat(path)
	if err != nil {
		return nil // nothing there yet: nothing to lose
	}
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
		if st, err := os.Stat(p); err == nil && os.SameFile(st, target) {
			return fmt.Errorf("write %s: that is %s; choose another file name", path, what)
		}
	}
	return rows.Err()
}

// internalTableFunctions are the Go table functions behind the public macros, lower-case.
var internalTableFunctions = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range sqlfuncs.TableFunctions() {
		m[strings.ToLower(n)] = true
	}
	return m
}()

// refuseInternalCall returns an error when stmt calls one of the Go table functions itself: a NULL
// argument to one aborts the whole process inside duckdb-go (stack.md §1.4), and the session with it. The
// public macros never pass one. A call built at run time (query('…')) is beyond a look at the text.
func refuseInternalCall(stmt string) error {
	for i := 0; i < len(stmt); i++ {
		end, kind := queries.TokenEnd(stmt, i)
		if end < 0 {
			return nil // an unclosed quote or comment: DuckDB's error is the one to show
		}
		name := ""
		switch {
		case kind == queries.TokenIdent:
			name = stmt[i : end+1]
		case kind == queries.TokenQuoted && stmt[i] == '"':
			name = strings.ReplaceAll(stmt[i+1:end], `""`, `"`)
		}
		if name != "" && internalTableFunctions[strings.ToLower(name)] && nextIsParen(stmt, end+1) {
			return fmt.Errorf("%s is the internal function behind a public macro (.tables lists them): call the macro; called directly, a NULL argument would abort the process", name)
		}
		i = end
	}
	return nil
}

// nextIsParen reports whether the first token at or after i, past spaces and comments, is '('.
func nextIsParen(stmt string, i int) bool {
	for ; i < len(stmt); i++ {
		switch end, kind := queries.TokenEnd(stmt, i); {
		case kind == queries.TokenLineComment || kind == queries.TokenBlockComment:
			if end < 0 {
				return false
			}
			i = end
		case stmt[i] == ' ' || stmt[i] == '\t' || stmt[i] == '\n' || stmt[i] == '\r':
		default:
			return stmt[i] == '('
		}
	}
	return false
}
