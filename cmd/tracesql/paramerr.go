package main

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	"tracesql/queries"
	"tracesql/sqlfuncs"
)

// The analysis macros check their own parameters (queries/views/01_args.sql), so a wrong-typed value is
// an error naming the macro and the parameter; what is left here are DuckDB errors whose words point
// away from what the user wrote: a Go table function's name, or a view called like a macro.

var (
	lateralArg  = regexp.MustCompile(`^Binder Error: Table function "(\w+)" does not support lateral join column parameters - cannot use column "([^"]*)"`)
	noTableFunc = regexp.MustCompile(`^Catalog Error: Table Function with name ("?)([A-Za-z_0-9]+)("?) does not exist!`)
)

// explainBindError returns err with the public macro named where DuckDB's message names the Go table
// function behind it; and, for a view or table called with arguments, says that it takes none. Any other
// error comes back as it was.
func explainBindError(ctx context.Context, db *sql.DB, stmt string, err error) error {
	msg := err.Error()
	where := "" // DuckDB's LINE n: … and caret, kept for the REPL
	if c := errorContext(err); c != nil {
		where = "\n\n" + strings.Join(c, "\n")
	}
	if m := lateralArg.FindStringSubmatch(msg); m != nil && sqlfuncs.IsInternal(m[1]) {
		// DuckDB names the Go function behind the macro the statement called.
		call := "this function"
		if calls := macroCalls(ctx, db, stmt); len(calls) == 1 {
			call = calls[0]
		}
		return fmt.Errorf("%s takes constant arguments only, not a column of another table (%s): DuckDB passes no per-row values to the Go table function behind it; write one call per value, joined with UNION ALL%s", call, m[2], where)
	}
	if m := noTableFunc.FindStringSubmatch(msg); m != nil {
		name := m[2]
		var kind string
		if db.QueryRowContext(ctx, `SELECT CASE WHEN table_type = 'VIEW' THEN 'a view' ELSE 'a table' END
			FROM information_schema.tables WHERE lower(table_name) = lower(?) AND table_schema = current_schema()
			LIMIT 1`, name).Scan(&kind) == nil {
			return fmt.Errorf("%s is %s, not a table macro: it takes no arguments (select from it and filter with WHERE)%s", name, kind, where)
		}
	}
	return err
}

// macroCalls returns the public table macros stmt calls, each once.
func macroCalls(ctx context.Context, db *sql.DB, stmt string) []string {
	var calls []string
	seen := map[string]bool{}
	for i := 0; i < len(stmt); i++ {
		end, kind := queries.TokenEnd(stmt, i)
		if end < 0 {
			break
		}
		if name := strings.ToLower(stmt[i : end+1]); kind == queries.TokenIdent && !seen[name] && !strings.HasPrefix(name, "_") && queries.ParenFollows(stmt, end+1) {
			seen[name] = true
			var n int
			if db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_functions() WHERE function_type = 'table_macro' AND function_name = ?`, name).Scan(&n) == nil && n > 0 {
				calls = append(calls, name)
			}
		}
		i = end
	}
	return calls
}
