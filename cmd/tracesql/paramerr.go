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

// DuckDB binds a macro's parameters where the macro's body uses them, so a wrong-typed value gets
// an error about that use ("Could not convert string 'abc' to INT32", or a binder error about
// trunc(STRING_LITERAL)) that names neither the parameter nor the macro. Checking every
// parameter's type inside the macros would cost bind time on every call of the analyses that
// must be fast; the CLI instead names the parameter when such an error comes back.

// namedArg is one `name := 'text'` argument of a call in a statement.
type namedArg struct {
	call, name, literal, value string // value: literal's text unquoted
}

// stringNamedArgs returns the named arguments given as string literals in stmt, with the function
// each is passed to ("" when the enclosing parenthesis follows no name).
func stringNamedArgs(stmt string) []namedArg {
	type token struct {
		text string
		kind queries.TokenKind
	}
	var toks []token
	for i := 0; i < len(stmt); i++ {
		end, kind := queries.TokenEnd(stmt, i)
		if end < 0 {
			break
		}
		if kind != queries.TokenLineComment && kind != queries.TokenBlockComment && !strings.ContainsRune(" \t\r\n", rune(stmt[i])) {
			toks = append(toks, token{stmt[i : end+1], kind})
		}
		i = end
	}
	var calls []string // the function name of each open parenthesis
	var args []namedArg
	for i, t := range toks {
		switch {
		case t.text == "(":
			call := ""
			if i > 0 && toks[i-1].kind == queries.TokenIdent {
				call = toks[i-1].text
			} else if i > 0 && toks[i-1].kind == queries.TokenQuoted && toks[i-1].text[0] == '"' {
				call = strings.ReplaceAll(toks[i-1].text[1:len(toks[i-1].text)-1], `""`, `"`)
			}
			calls = append(calls, call)
		case t.text == ")" && len(calls) > 0:
			calls = calls[:len(calls)-1]
		case t.kind == queries.TokenIdent && i+3 < len(toks) && toks[i+1].text == ":" && toks[i+2].text == "=" &&
			toks[i+3].kind == queries.TokenQuoted && toks[i+3].text[0] == '\'' && len(calls) > 0:
			lit := toks[i+3].text
			args = append(args, namedArg{call: calls[len(calls)-1], name: t.text, literal: lit,
				value: strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")})
		}
	}
	return args
}

var (
	conversionErr = regexp.MustCompile(`^Conversion Error: Could not convert string (?:'(.*)'|"(.*)") to ([A-Z0-9_]+)`)
	stringCallErr = regexp.MustCompile(`^Binder Error: Could not choose a best candidate function for the function call "([a-z_0-9]+)\(STRING_LITERAL\)"`)
	lateralArg    = regexp.MustCompile(`^Binder Error: Table function "(\w+)" does not support lateral join column parameters - cannot use column "([^"]*)"`)
	noTableFunc   = regexp.MustCompile(`^Catalog Error: Table Function with name ("?)([A-Za-z_0-9]+)("?) does not exist!`)
)

// wantedType says in words what a value of DuckDB's type is.
func wantedType(duckType string) string {
	switch {
	case strings.HasPrefix(duckType, "INT") || strings.HasPrefix(duckType, "UINT") || duckType == "BIGINT" ||
		duckType == "SMALLINT" || duckType == "TINYINT" || duckType == "HUGEINT" || duckType == "UBIGINT":
		return "an integer"
	case duckType == "DOUBLE" || duckType == "FLOAT" || strings.HasPrefix(duckType, "DECIMAL"):
		return "a number"
	case duckType == "BOOL" || duckType == "BOOLEAN":
		return "true or false"
	}
	return "a " + duckType
}

// explainBindError returns err with the macro parameter it is about named, where DuckDB's message
// names only a use of the value inside the macro; and, for a view or table called with arguments,
// says that it takes none. Any other error comes back as it was.
func explainBindError(ctx context.Context, db *sql.DB, stmt string, err error) error {
	msg := err.Error()
	where := "" // DuckDB's LINE n: … and caret, kept for the REPL
	if c := errorContext(err); c != nil {
		where = "\n\n" + strings.Join(c, "\n")
	}
	if m := conversionErr.FindStringSubmatch(msg); m != nil {
		value := m[1] // as written inside the quotes, '' not doubled
		if m[1] == "" {
			value = m[2]
		}
		for _, a := range stringNamedArgs(stmt) {
			if a.value == value {
				return fmt.Errorf("%s%s must be %s, not the string %s%s", callPrefix(a.call), a.name, wantedType(m[3]), a.literal, where)
			}
		}
		return err
	}
	if m := stringCallErr.FindStringSubmatch(msg); m != nil {
		// The message does not say which string: name the argument when only one could be it.
		var numeric []namedArg
		for _, a := range stringNamedArgs(stmt) {
			if !strings.EqualFold(a.name, "label") && !strings.EqualFold(a.name, "annotation") {
				numeric = append(numeric, a)
			}
		}
		if len(numeric) == 1 {
			a, want := numeric[0], "a number"
			if m[1] == "trunc" { // the macros' test that a count is whole
				want = "an integer"
			}
			return fmt.Errorf("%s%s must be %s, not the string %s%s", callPrefix(a.call), a.name, want, a.literal, where)
		}
		return err
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

// callPrefix is "call: " for an argument passed to a named call, else "".
func callPrefix(call string) string {
	if call == "" {
		return ""
	}
	return call + ": "
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
