package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
)

// Some DuckDB values cannot be shown from what duckdb-go hands over: it has no Go type for
// TIME_NS (the scan fails), no Go map for a MAP whose keys are lists or structs (the scan fails),
// it reads TIME '24:00:00' as midnight, and it decodes JSON with encoding/json into any, which
// rounds integers beyond 2^53 (a ns timestamp), turns 1e400 and the JSON value null into NULL
// and sorts object keys. For those columns the query is run again with the column cast to
// VARCHAR inside DuckDB, which prints exactly what the DuckDB CLI prints.

// castReason says why a column of type t must be cast to be shown: "unreadable" when the driver fails
// on it, "imprecise" when it reads a wrong value, "json" for a JSON column (its VARCHAR text is the JSON
// as written), "nested json" for a LIST, STRUCT, MAP or UNION holding JSON, which is cast with to_json
// (its VARCHAR text would be DuckDB's struct syntax, not JSON), "" when the driver reads it fine. The
// renderer embeds the text of both JSON kinds as it is (see newResult). A TIME inside a LIST is left
// as it is: casting the list for its sake would turn the JSON format's array into a string.
func castReason(t *sqlType) string {
	switch {
	case unreadable(t):
		return "unreadable"
	// TIMESTAMPTZ arrives in UTC: DuckDB's text shows it in the session's TimeZone, as DuckDB's shell does.
	case t.is("TIME") || t.is("TIMESTAMPTZ") || t.is("TIMESTAMP WITH TIME ZONE"):
		return "imprecise"
	case t.is("JSON"):
		return "json"
	case holdsJSON(t):
		return "nested json"
	}
	return ""
}

// holdsJSON reports a JSON type at any depth of t.
func holdsJSON(t *sqlType) bool {
	if t == nil {
		return false
	}
	if t.is("JSON") || holdsJSON(t.elem) || holdsJSON(t.key) {
		return true
	}
	for _, f := range t.fields {
		if holdsJSON(f.typ) {
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
	// The driver reports TIME_NS without a name; DuckDB's own type text (duckdb_prepared_statements) names it.
	if t.name == "" || t.name == "TIME_NS" || t.name == "MAP" && t.key != nil && (t.key.is("LIST") || t.key.is("STRUCT") || t.key.is("MAP") || t.key.is("UNION")) {
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
	switch statementKeyword(stmt) {
	case "SELECT", "FROM", "VALUES", "TABLE":
		return true
	}
	return false
}

// queryer runs a query: a *sql.DB, or the *sql.Conn a display query is pinned to.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// preparedName is the name under which queryForDisplay prepares a statement to learn its result types
// (with the process id: a user's own prepared statement cannot be named so by chance).
var preparedName = fmt.Sprintf("_tracesql_display_%d", os.Getpid())

// displayRows is a statement's result to show: rows, the type names the headers show where a column was
// cast (see castForDisplay), and what to release after rows.
type displayRows struct {
	*sql.Rows
	typeNames []string
	release   func()
}

// Close closes the rows, then releases the connection and prepared statement behind them.
func (d *displayRows) Close() error {
	err := d.Rows.Close()
	if d.release != nil {
		d.release()
		d.release = nil
	}
	return err
}

// queryForDisplay runs stmt once and returns its rows ready to show. A query whose columns the driver
// cannot show as they are (castReason) must be run with those columns cast to VARCHAR; its result types
// are known only once it is bound, so a SELECT-like statement is first prepared (DuckDB's PREPARE binds
// and plans it; duckdb_prepared_statements() has its result types) and then executed as prepared, or, when
// a column needs the cast, run again wrapped in the cast: either way its work is done once (before, a JSON
// column, such as every SELECT * over events, made the whole query run twice, nextval() included). Other
// statements run directly, and castForDisplay sees to the rare ones whose columns need the cast.
func queryForDisplay(ctx context.Context, db *sql.DB, stmt string) (*displayRows, error) {
	direct := func(q queryer, release func()) (*displayRows, error) {
		rows, err := q.QueryContext(ctx, stmt)
		if err != nil {
			release()
			return nil, err
		}
		rows, typeNames, err := castForDisplay(ctx, q, stmt, rows)
		if err != nil {
			release()
			return nil, err
		}
		return &displayRows{Rows: rows, typeNames: typeNames, release: release}, nil
	}
	if !isSelectLike(stmt) {
		return direct(db, func() {})
	}
	// One connection for all of it: the prepared statement, and the session's TEMP tables, live there.
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	closeConn := func() { conn.Close() }
	body := strings.TrimRight(stmt, "; \t\r\n") + "\n" // the newline ends a -- comment that stmt may end with
	if _, err := conn.ExecContext(ctx, "PREPARE "+preparedName+" AS "+body); err != nil {
		// Run as it is, for the error in the user's own words (PREPARE's would quote the prepared text).
		return direct(conn, closeConn)
	}
	deallocate := func() {
		conn.ExecContext(context.WithoutCancel(ctx), "DEALLOCATE "+preparedName)
		conn.Close()
	}
	var listed any // a list, or NULL
	if err := conn.QueryRowContext(ctx, `SELECT result_types FROM duckdb_prepared_statements() WHERE name = ?`, preparedName).Scan(&listed); err != nil {
		deallocate()
		return direct(db, func() {})
	}
	types, _ := listed.([]any)
	if listed == nil {
		// A statement DuckDB binds again at each execution (now(), current_date) lists no result types:
		// DESCRIBE gives them.
		_, described, err := describe(ctx, conn, body)
		if err != nil {
			deallocate()
			return direct(db, func() {})
		}
		for _, t := range described {
			types = append(types, t)
		}
	}
	cast := make([]string, len(types))
	need := false
	for i, t := range types {
		name, _ := t.(string)
		cast[i] = castReason(parseType(name))
		need = need || cast[i] != ""
	}
	if !need {
		rows, err := conn.QueryContext(ctx, "EXECUTE "+preparedName)
		if err != nil {
			deallocate()
			return nil, err
		}
		// A type whose DuckDB text castReason does not know (a new one) is still caught here, at the
		// price of running the statement again.
		rows, typeNames, err := castForDisplay(ctx, conn, body, rows)
		if err != nil {
			deallocate()
			return nil, err
		}
		return &displayRows{Rows: rows, typeNames: typeNames, release: deallocate}, nil
	}
	conn.ExecContext(ctx, "DEALLOCATE "+preparedName)
	names, typeNames, err := describe(ctx, conn, body)
	if err != nil || len(names) != len(cast) {
		return direct(conn, closeConn)
	}
	rows, err := conn.QueryContext(ctx, castQuery(body, names, cast))
	if err != nil {
		closeConn()
		return nil, err
	}
	for i := range typeNames {
		if cast[i] == "" {
			typeNames[i] = "" // the driver's own name, as for any other column
		}
	}
	return &displayRows{Rows: rows, typeNames: typeNames, release: closeConn}, nil
}

// describe returns the names and DuckDB type names of the result columns of stmt, from DESCRIBE, which
// binds stmt without running it.
func describe(ctx context.Context, q queryer, stmt string) (names, types []string, err error) {
	rows, err := q.QueryContext(ctx, "DESCRIBE "+stmt)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ string
		var rest [4]any
		if err := rows.Scan(&name, &typ, &rest[0], &rest[1], &rest[2], &rest[3]); err != nil {
			return nil, nil, err
		}
		names, types = append(names, name), append(types, typ)
	}
	return names, types, rows.Err()
}

// castQuery wraps body (a SELECT-like statement ending in a newline) so that the columns with a
// castReason come out as DuckDB's VARCHAR text (of to_json, for a "nested json"), under the names given.
func castQuery(body string, names []string, cast []string) string {
	var sel, alias strings.Builder
	for i, name := range names {
		if i > 0 {
			sel.WriteString(", ")
			alias.WriteString(", ")
		}
		col := fmt.Sprintf("c%d", i+1)
		alias.WriteString(col)
		switch cast[i] {
		case "":
		case "nested json":
			col = "CAST(to_json(" + col + ") AS VARCHAR)"
		default:
			col = "CAST(" + col + " AS VARCHAR)"
		}
		sel.WriteString(col + " AS " + quoteIdent(name))
	}
	return "SELECT " + sel.String() + " FROM (" + body + ") AS _tracesql_cast(" + alias.String() + ")"
}

// castForDisplay checks the columns of rows, the open result of stmt. When every column can be
// shown it returns rows as they are. Otherwise it closes rows and returns the result of stmt run
// again with the columns that need it cast to VARCHAR, and the type names to show in headers.
// A statement that cannot be wrapped (INSERT … RETURNING, PRAGMA) gets an error naming the
// column, before anything is printed, or, if the driver only reads it imprecisely, its rows as
// they are.
func castForDisplay(ctx context.Context, db queryer, stmt string, rows *sql.Rows) (*sql.Rows, []string, error) {
	cts, err := rows.ColumnTypes()
	if err != nil {
		return rows, nil, nil // the renderer reports it
	}
	cast := make([]string, len(cts))
	need, unreadable := false, -1
	for i, ct := range cts {
		cast[i] = castReason(parseType(ct.DatabaseTypeName()))
		if cast[i] == "unreadable" && unreadable < 0 {
			unreadable = i
		}
		need = need || cast[i] != ""
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
		if cast[i] == "unreadable" {
			names[i] = typeNameOf(ctx, db, stmt, i, cts)
		}
	}
	colNames := make([]string, len(cts))
	for i, ct := range cts {
		colNames[i] = ct.Name()
	}
	q := castQuery(strings.TrimRight(stmt, "; \t\r\n")+"\n", colNames, cast)
	rows, err = db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, fmt.Errorf("show column %q as text: %w", cts[max(unreadable, 0)].Name(), err)
	}
	return rows, names, nil
}

// typeNameOf returns DuckDB's name for the type of column i of stmt (duckdb-go reports the types
// it does not know without a name), from DESCRIBE, which binds stmt without running it.
func typeNameOf(ctx context.Context, db queryer, stmt string, i int, cts []*sql.ColumnType) string {
	if _, types, err := describe(ctx, db, strings.TrimRight(stmt, "; \t\r\n")+"\n"); err == nil && len(types) == len(cts) {
		return types[i]
	}
	if n := cts[i].DatabaseTypeName(); n != "" {
		return n
	}
	return "unknown"
}
