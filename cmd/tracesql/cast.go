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
// Only a top-level TIME or JSON is "imprecise": casting a LIST or STRUCT to text for the sake
// of a 24:00:00 inside it would turn a JSON array into a string. A JSON column's text is JSON,
// which the renderer embeds as it is (see newResult).
func castReason(t *sqlType) string {
	if unreadable(t) {
		return "unreadable"
	}
	if t.is("TIME") || t.is("JSON") {
		return "imprecise"
	}
	return ""
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
func castForDisplay(ctx context.Context, db *sql.DB, stmt string, rows *sql.Rows) (*sql.Rows, []string, error) {
	cts, err := rows.ColumnTypes()
	if err != nil {
		return rows, nil, nil // the renderer reports it
	}
	cast := make([]bool, len(cts))
	need, unreadable := false, -1
	for i, ct := range cts {
		switch castReason(parseType(ct.DatabaseTypeName())) {
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
		if cast[i] && castReason(parseType(names[i])) == "unreadable" {
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
// it does not know without a name), from DESCRIBE, which binds stmt without running it.
func typeNameOf(ctx context.Context, db *sql.DB, stmt string, i int, cts []*sql.ColumnType) string {
	{
		var types []string
		rows, err := db.QueryContext(ctx, "DESCRIBE "+strings.TrimRight(stmt, "; \t\r\n")+"\n")
		if err == nil {
			for rows.Next() {
				var name, typ string
				var rest [4]any
				if rows.Scan(&name, &typ, &rest[0], &rest[1], &rest[2], &rest[3]) == nil {
					types = append(types, typ)
				}
			}
			rows.Close()
		}
		if len(types) == len(cts) {
			return types[i]
		}
	}
	if n := cts[i].DatabaseTypeName(); n != "" {
		return n
	}
	return "unknown"
}
