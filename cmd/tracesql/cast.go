package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Some DuckDB values cannot be shown from what duckdb-go hands over: it has no Go type for
// TIME_NS (the scan fails), no Go map for a MAP whose keys are lists or structs (the scan fails),
// it reads TIME '24:00:00' as midnight, and it decodes JSON with encoding/json into any, which
// rounds integers beyond 2^53 (a ns timestamp), turns 1e400 and the JSON value null into NULL
// and sorts object keys. For those columns the query is run again with the column cast to
// VARCHAR inside DuckDB, which prints exactly what the DuckDB CLI prints.

// castReason says why a column of type t must be cast to VARCHAR to be shown: "unreadable" when
// the driver fails on it, "imprecise" when it reads a wrong value, "" when it reads it fine.
// A top-level TIME or JSON is "imprecise"; a LIST, STRUCT or MAP holding one is too when the output
// is text (nestedAsText: every format but json and jsonl), where DuckDB's VARCHAR cast is what the
// DuckDB CLI shows. In json and jsonl the value stays a nested array or object as the driver reads it:
// cast to text it would become a string. A JSON column's text is JSON, which the renderer embeds as it
// is (see newResult).
func castReason(t *sqlType, nestedAsText bool) string {
	if unreadable(t) {
		return "unreadable"
	}
	if t.is("TIME") || t.is("JSON") || nestedAsText && holdsImprecise(t) {
		return "imprecise"
	}
	return ""
}

// holdsImprecise reports a TIME or JSON anywhere inside t.
func holdsImprecise(t *sqlType) bool {
	if t == nil {
		return false
	}
	if t.is("TIME") || t.is("JSON") || holdsImprecise(t.elem) || holdsImprecise(t.key) {
		return true
	}
	for _, f := range t.fields {
		if holdsImprecise(f.typ) {
			return true
		}
	}
	return false
}

// unreadable reports types duckdb-go fails to scan: ones it has no name for (TIME_NS), and MAPs
// with LIST, STRUCT, MAP or UNION keys (Go map keys must be comparable), at any depth.
func unreadable(t *sqlType) bool {
	if t == nil {
		return false
	}
	if t.name == "" || t.name == "MAP" && t.key != nil && (t.key.is("LIST") || t.key.is("STRUCT") || t.key.is("MAP") || t.key.is("UNION")) {
		return true
	}
	if unreadable(t.elem) || unreadable(t.key) {
		return true
	}
	for _, f := range t.fields {
		if unreadable(f.typ) {
			return true
		}
	}
	return false
}

// isSelectLike reports statements that can be a subquery (FROM (stmt)): the ones the cast can wrap.
func isSelectLike(stmt string) bool {
	end, _ := leadingComments(stmt)
	stmt = strings.TrimLeft(stmt[end:], "( \t\r\n")
	n := 0
	for n < len(stmt) && isIdentStart(stmt[n]) {
		n++
	}
	switch strings.ToUpper(stmt[:n]) {
	case "SELECT", "WITH", "FROM", "VALUES", "TABLE":
		return true
	}
	return false
}

// castForDisplay checks the columns of rows, the open result of stmt. When every column can be
// shown it returns rows as they are. Otherwise it closes rows and returns the result of stmt run
// again with the columns that need it cast to VARCHAR, and the type names to show in headers.
// A statement that cannot be wrapped (INSERT … RETURNING, PRAGMA) gets an error naming the
// column, before anything is printed, or, if the driver only reads it imprecisely, its rows as
// they are.
func castForDisplay(ctx context.Context, db *sql.DB, stmt string, rows *sql.Rows, nestedAsText bool) (*sql.Rows, []string, error) {
	cts, err := rows.ColumnTypes()
	if err != nil {
		return rows, nil, nil // the renderer reports it
	}
	cast := make([]bool, len(cts))
	need, unreadable := false, -1
	// duckdb-go names a JSON inside a LIST, STRUCT or MAP VARCHAR (and decodes it, sorting its keys and
	// rounding big integers): DuckDB's own type names, from DESCRIBE, tell which ones are JSON.
	var described []string
	for _, ct := range cts {
		if t := parseType(ct.DatabaseTypeName()); nestedAsText && isSelectLike(stmt) && nestedVarchar(t) {
			described = describeTypes(ctx, db, stmt, len(cts))
			break
		}
	}
	for i, ct := range cts {
		reason := castReason(parseType(ct.DatabaseTypeName()), nestedAsText)
		if reason == "" && described != nil {
			// (the driver's name alone tells what it cannot read: it has none for TIME_NS)
			reason = castReason(parseType(described[i]), nestedAsText)
		}
		switch reason {
		case "unreadable":
			if unreadable < 0 {
				unreadable = i
			}
			cast[i], need = true, true
		case "imprecise":
			cast[i], need = true, true
		}
	}
	if !need {
		return rows, nil, nil
	}
	if !isSelectLike(stmt) {
		if unreadable < 0 {
			return rows, nil, nil
		}
		rows.Close()
		what := "its type"
		if n := cts[unreadable].DatabaseTypeName(); n != "" {
			what = n
		}
		return nil, nil, fmt.Errorf("column %q: the DuckDB Go driver cannot read %s; cast it to VARCHAR", cts[unreadable].Name(), what)
	}
	rows.Close()
	names := make([]string, len(cts))
	for i, ct := range cts {
		names[i] = ct.DatabaseTypeName()
		if described != nil {
			names[i] = described[i]
		} else if cast[i] && castReason(parseType(names[i]), false) == "unreadable" {
			names[i] = typeNameOf(ctx, db, stmt, i, cts)
		}
	}
	var sel, alias strings.Builder
	for i, ct := range cts {
		if i > 0 {
			sel.WriteString(", ")
			alias.WriteString(", ")
		}
		col := fmt.Sprintf("c%d", i+1)
		alias.WriteString(col)
		if cast[i] {
			col = "CAST(" + col + " AS VARCHAR)"
		}
		sel.WriteString(col + " AS " + quoteIdent(ct.Name()))
	}
	// The newline ends a -- comment that stmt may end with.
	q := "SELECT " + sel.String() + " FROM (" + strings.TrimRight(stmt, "; \t\r\n") + "\n) AS _tracesql_cast(" + alias.String() + ")"
	rows, err = db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, fmt.Errorf("show column %q as text: %w", cts[max(unreadable, 0)].Name(), err)
	}
	return rows, names, nil
}

// typeNameOf returns DuckDB's name for the type of column i of stmt (duckdb-go reports the types
// it does not know without a name), from DESCRIBE.
func typeNameOf(ctx context.Context, db *sql.DB, stmt string, i int, cts []*sql.ColumnType) string {
	if types := describeTypes(ctx, db, stmt, len(cts)); types != nil {
		return types[i]
	}
	if n := cts[i].DatabaseTypeName(); n != "" {
		return n
	}
	return "unknown"
}

// describeTypes returns DuckDB's names for the types of stmt's n columns, from DESCRIBE, which binds
// stmt without running it; nil if that fails.
func describeTypes(ctx context.Context, db *sql.DB, stmt string, n int) []string {
	var types []string
	rows, err := db.QueryContext(ctx, "DESCRIBE "+strings.TrimRight(stmt, "; \t\r\n")+"\n")
	if err != nil {
		return nil
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ string
		var rest [4]any
		if rows.Scan(&name, &typ, &rest[0], &rest[1], &rest[2], &rest[3]) == nil {
			types = append(types, typ)
		}
	}
	if len(types) != n {
		return nil
	}
	return types
}

// nestedVarchar reports a VARCHAR inside a LIST, STRUCT or MAP: what duckdb-go calls a nested JSON.
func nestedVarchar(t *sqlType) bool {
	if t == nil {
		return false
	}
	inner := func(c *sqlType) bool { return c != nil && (c.is("VARCHAR") || nestedVarchar(c)) }
	if inner(t.elem) || inner(t.key) {
		return true
	}
	for _, f := range t.fields {
		if inner(f.typ) {
			return true
		}
	}
	return false
}
