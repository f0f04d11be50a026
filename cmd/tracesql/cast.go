package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"

	"tracesql/queries"
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
// renderer embeds the text of both JSON kinds as it is (see newResult). "nested time" is a LIST, STRUCT,
// MAP or UNION holding an imprecise type: it is cast to the same nested type with those leaves VARCHAR
// (leavesAsText), so that the JSON format's arrays and objects stay arrays and objects.
func castReason(t *sqlType) string {
	switch {
	case unreadable(t):
		return "unreadable"
	case imprecise(t):
		return "imprecise"
	case t.is("JSON"):
		return "json"
	case holdsJSON(t):
		return "nested json"
	case holdsImprecise(t):
		return "nested time"
	}
	return ""
}

// imprecise reports the types the driver reads, but not as DuckDB shows them: TIME '24:00:00' comes as
// midnight, TIMESTAMPTZ in UTC where DuckDB's text is in the session's TimeZone, and GEOMETRY as its WKB
// bytes where DuckDB writes WKT (POINT (1 2)).
func imprecise(t *sqlType) bool {
	return t.is("TIME") || t.is("TIMESTAMPTZ") || t.is("TIMESTAMP WITH TIME ZONE") || t.is("GEOMETRY")
}

// holdsImprecise reports an imprecise type below the top of t.
func holdsImprecise(t *sqlType) bool {
	return t != nil && slices.ContainsFunc(t.children(), func(c *sqlType) bool { return holds(c, imprecise) })
}

// holds reports a type for which is is true at any depth of t.
func holds(t *sqlType, is func(*sqlType) bool) bool {
	return t != nil && (is(t) || slices.ContainsFunc(t.children(), func(c *sqlType) bool { return holds(c, is) }))
}

// children are t's element, key and field types.
func (t *sqlType) children() []*sqlType {
	c := []*sqlType{t.elem, t.key}
	for _, f := range t.fields {
		c = append(c, f.typ)
	}
	return c
}

// leavesAsText rewrites DuckDB's text of a nested type (as duckdb_prepared_statements and DESCRIBE write
// it: STRUCT(a TIME, "b c" TIMESTAMP WITH TIME ZONE)[], MAP(VARCHAR, TIME[3])) with every imprecise leaf
// made VARCHAR and everything else as written. DuckDB's cast to it writes those leaves as its own text.
func leavesAsText(typ string) string {
	var b strings.Builder
	rest := leavesAsTextPrefix(typ, &b)
	return b.String() + rest
}

// copyPrefix copies prefix to b when s starts with it, and returns s after it.
func copyPrefix(s, prefix string, b *strings.Builder) string {
	if strings.HasPrefix(s, prefix) {
		b.WriteString(prefix)
		return s[len(prefix):]
	}
	return s
}

// leavesAsTextPrefix copies one type from the start of s to b (the grammar parseTypePrefix reads) and
// returns what follows it.
func leavesAsTextPrefix(s string, b *strings.Builder) string {
	switch {
	case strings.HasPrefix(s, "STRUCT(") || strings.HasPrefix(s, "UNION("):
		open := strings.IndexByte(s, '(')
		b.WriteString(s[:open+1])
		s = s[open+1:]
		for s != "" && s[0] != ')' {
			before := len(s)
			_, after := parseQuoted(s)
			b.WriteString(s[:len(s)-len(after)])
			s = after
			s = leavesAsTextPrefix(copyPrefix(s, " ", b), b)
			s = copyPrefix(s, ", ", b)
			if len(s) == before {
				break
			}
		}
		s = copyPrefix(s, ")", b)
	case strings.HasPrefix(s, "MAP("):
		s = leavesAsTextPrefix(copyPrefix(s, "MAP(", b), b)
		s = leavesAsTextPrefix(copyPrefix(s, ", ", b), b)
		s = copyPrefix(s, ")", b)
	default:
		end := strings.IndexAny(s, "[(,)")
		if end < 0 {
			end = len(s)
		}
		if imprecise(&sqlType{name: s[:end]}) {
			b.WriteString("VARCHAR")
		} else {
			b.WriteString(s[:end])
		}
		s = s[end:]
		if strings.HasPrefix(s, "(") { // DECIMAL(18,3)
			if c := strings.IndexByte(s, ')'); c >= 0 {
				b.WriteString(s[:c+1])
				s = s[c+1:]
			}
		}
	}
	for strings.HasPrefix(s, "[") { // INTEGER[] (LIST) or INTEGER[3] (ARRAY)
		c := strings.IndexByte(s, ']')
		if c < 0 {
			break
		}
		b.WriteString(s[:c+1])
		s = s[c+1:]
	}
	return s
}

// holdsJSON reports a JSON type at any depth of t.
func holdsJSON(t *sqlType) bool {
	return holds(t, func(x *sqlType) bool { return x.is("JSON") })
}

// unreadable reports types duckdb-go fails to scan: ones it has no name for (TIME_NS), VARIANT, and MAPs
// with LIST, STRUCT, MAP or UNION keys (Go map keys must be comparable), at any depth.
func unreadable(t *sqlType) bool {
	if t == nil {
		return false
	}
	// The driver reports TIME_NS without a name; DuckDB's own type text (duckdb_prepared_statements) names it.
	if t.name == "" || t.name == "TIME_NS" || t.name == "VARIANT" || t.name == "MAP" && t.key != nil && (t.key.is("LIST") || t.key.is("STRUCT") || t.key.is("MAP") || t.key.is("UNION")) {
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
	case "SELECT", "FROM", "VALUES", "TABLE", "PIVOT", "UNPIVOT":
		return true
	}
	return false
}

// wrappable returns stmt as a statement the cast can wrap: itself when it is SELECT-like, and a
// CALL of a table function as the SELECT * FROM it is (DuckDB's CALL is that SELECT); ok is false
// for the rest (INSERT … RETURNING, EXECUTE, PRAGMA), which cannot stand in a FROM clause.
func wrappable(stmt string) (body string, ok bool) {
	if isSelectLike(stmt) {
		return stmt, true
	}
	if statementKeyword(stmt) != "CALL" {
		return "", false
	}
	end, _ := queries.LeadingComments(stmt)
	rest := strings.TrimLeft(stmt[end:], " \t\r\n")
	if !strings.EqualFold(leadingWord(rest), "CALL") || !onlyACall(rest[len("CALL"):]) {
		// CALL after an opening parenthesis, or with more after its function's arguments (which DuckDB
		// refuses, and the SELECT would have run): left to DuckDB as written
		return "", false
	}
	return "SELECT * FROM " + rest[len("CALL"):], true
}

// onlyACall reports text that is one function call, `name(args)`, with nothing after its closing
// parenthesis but white space, comments and a ;.
func onlyACall(text string) bool {
	depth, closed := 0, false
	for i := 0; i < len(text); i++ {
		end, kind := queries.TokenEnd(text, i)
		switch {
		case end < 0:
			return false
		case kind == queries.TokenLineComment || kind == queries.TokenBlockComment:
		case text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n' || text[i] == ';' && closed:
		case closed:
			return false
		case text[i] == '(':
			depth++
		case text[i] == ')':
			depth--
			closed = depth == 0
		}
		i = end
	}
	return closed
}

// callsAFunction reports text (an EXECUTE's arguments) that calls a function, `name(`: evaluating it
// once more to learn the result's column names would repeat what it does (nextval()).
func callsAFunction(text string) bool {
	for i := 0; i < len(text); i++ {
		end, kind := queries.TokenEnd(text, i)
		if end < 0 {
			return true
		}
		if kind == queries.TokenIdent && strings.HasPrefix(strings.TrimLeft(text[end+1:], " \t\r\n"), "(") {
			return true
		}
		i = end
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
	warning   string // printed before the rows (driverTextWarning)
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
// are known only once it is bound, so a statement the cast can wrap is first prepared (DuckDB's PREPARE
// binds and plans it; duckdb_prepared_statements() has its result types) and then executed as prepared, or,
// when a column needs the cast, run again wrapped in the cast: either way its work is done once (before, a
// JSON column, such as every SELECT * over events, made the whole query run twice, nextval() included).
// An EXECUTE is wrapped through the statement it executes (executeForDisplay). Other statements run
// directly, and castForDisplay sees to the rare ones whose columns need the cast.
func queryForDisplay(ctx context.Context, db *sql.DB, stmt string) (*displayRows, error) {
	wrapped, ok := wrappable(stmt)
	if !ok {
		if statementKeyword(stmt) == "EXECUTE" {
			return executeForDisplay(ctx, db, stmt)
		}
		return runForDisplay(ctx, db, stmt, func() {})
	}
	// One connection for all of it: the prepared statement, and the session's TEMP tables, live there.
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	closeConn := func() { conn.Close() }
	body := strings.TrimRight(wrapped, "; \t\r\n") + "\n" // the newline ends a -- comment that stmt may end with
	if _, err := conn.ExecContext(ctx, "PREPARE "+preparedName+" AS "+body); err != nil {
		// Run as it is, for the error in the user's own words (PREPARE's would quote the prepared text).
		return runForDisplay(ctx, conn, stmt, closeConn)
	}
	deallocate := func() {
		conn.ExecContext(context.WithoutCancel(ctx), "DEALLOCATE "+preparedName)
		conn.Close()
	}
	var listed any // a list, or NULL
	if err := conn.QueryRowContext(ctx, `SELECT result_types FROM duckdb_prepared_statements() WHERE name = ?`, preparedName).Scan(&listed); err != nil {
		deallocate()
		return runForDisplay(ctx, db, stmt, func() {})
	}
	types, _ := listed.([]any)
	if listed == nil {
		// A statement DuckDB binds again at each execution (now(), current_date) lists no result types:
		// DESCRIBE gives them.
		_, described, err := describe(ctx, conn, body)
		if err != nil {
			deallocate()
			return runForDisplay(ctx, db, stmt, func() {})
		}
		for _, t := range described {
			types = append(types, t)
		}
	}
	cast, need := castReasons(types)
	if !need {
		rows, err := conn.QueryContext(ctx, "EXECUTE "+preparedName)
		if err != nil {
			deallocate()
			return nil, err
		}
		// A type whose DuckDB text castReason does not know (a new one) is still caught here, at the
		// price of running the statement again.
		return castForDisplay(ctx, conn, stmt, rows, deallocate)
	}
	conn.ExecContext(ctx, "DEALLOCATE "+preparedName)
	names, typeNames, err := describe(ctx, conn, body)
	if err != nil || len(names) != len(cast) {
		return runForDisplay(ctx, conn, stmt, closeConn)
	}
	rows, err := conn.QueryContext(ctx, castQuery(body, names, cast, typeNames))
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

// castReasons returns the castReason of each of types (DuckDB's type texts) and whether any has one.
func castReasons(types []any) (cast []string, need bool) {
	cast = make([]string, len(types))
	for i, t := range types {
		name, _ := t.(string)
		cast[i] = castReason(parseType(name))
		need = need || cast[i] != ""
	}
	return cast, need
}

// runForDisplay runs stmt as it is on q, then lets castForDisplay check its columns; release is called
// when the rows are closed, or at once on an error.
func runForDisplay(ctx context.Context, q queryer, stmt string, release func()) (*displayRows, error) {
	rows, err := q.QueryContext(ctx, stmt)
	if err != nil {
		release()
		return nil, err
	}
	return castForDisplay(ctx, q, stmt, rows, release)
}

// executeForDisplay runs `EXECUTE name(args)`. DuckDB keeps the text of the statement it executes
// (duckdb_prepared_statements().statement); when that is a query with a column the driver cannot show
// as it is, the query is prepared again wrapped in the cast and executed with the same arguments, so
// it runs once and shows what the same SELECT shows. Its column names come from the wrapped query
// executed with LIMIT 0 (DESCRIBE cannot bind a statement with parameters).
func executeForDisplay(ctx context.Context, db *sql.DB, stmt string) (*displayRows, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	closeConn := func() { conn.Close() }
	name, args, ok := executeCall(stmt)
	if !ok {
		return runForDisplay(ctx, conn, stmt, closeConn)
	}
	var body string
	var listed any
	// (DuckDB keeps an unquoted name's case: PREPARE Foo is "Foo")
	if err := conn.QueryRowContext(ctx, `SELECT statement, result_types FROM duckdb_prepared_statements()
		WHERE lower(name) = lower($1) ORDER BY name = $1 DESC LIMIT 1`, name).Scan(&body, &listed); err != nil {
		return runForDisplay(ctx, conn, stmt, closeConn) // an unknown name: DuckDB's own error
	}
	types, _ := listed.([]any)
	cast, need := castReasons(types)
	// (DuckDB lists no result types for a statement it binds again at each execution: the LIMIT 0 run
	// below gives them)
	if !need && listed != nil || !isSelectLike(body) || callsAFunction(args) {
		return runForDisplay(ctx, conn, stmt, closeConn)
	}
	body = strings.TrimRight(body, "; \t\r\n") + "\n"
	namesOnly := preparedName + "_names"
	var names []string
	if _, err := conn.ExecContext(ctx, "PREPARE "+namesOnly+" AS SELECT * FROM ("+body+") LIMIT 0"); err == nil {
		if rows, err := conn.QueryContext(ctx, "EXECUTE "+namesOnly+args); err == nil {
			names, _ = rows.Columns()
			if listed == nil {
				cts, _ := rows.ColumnTypes()
				types = make([]any, len(cts))
				for i, ct := range cts {
					types[i] = ct.DatabaseTypeName()
				}
				cast, need = castReasons(types)
			}
			rows.Close()
		}
		conn.ExecContext(ctx, "DEALLOCATE "+namesOnly)
	}
	if !need || len(names) != len(cast) {
		return runForDisplay(ctx, conn, stmt, closeConn)
	}
	typeTexts := make([]string, len(types))
	for i, t := range types {
		typeTexts[i], _ = t.(string)
	}
	if _, err := conn.ExecContext(ctx, "PREPARE "+preparedName+" AS "+castQuery(body, names, cast, typeTexts)); err != nil {
		return runForDisplay(ctx, conn, stmt, closeConn)
	}
	deallocate := func() {
		conn.ExecContext(context.WithoutCancel(ctx), "DEALLOCATE "+preparedName)
		conn.Close()
	}
	rows, err := conn.QueryContext(ctx, "EXECUTE "+preparedName+args)
	if err != nil {
		deallocate()
		return nil, err
	}
	typeNames := make([]string, len(cast))
	for i := range cast {
		if cast[i] != "" {
			typeNames[i], _ = types[i].(string)
		}
	}
	return &displayRows{Rows: rows, typeNames: typeNames, release: deallocate}, nil
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
// castReason come out as DuckDB's VARCHAR text (of to_json, for a "nested json"; in the type of
// leavesAsText, for a "nested time"), under the names given; types are the columns' DuckDB type texts.
func castQuery(body string, names, cast, types []string) string {
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
		case "nested time":
			col = "CAST(" + col + " AS " + leavesAsText(types[i]) + ")"
		default:
			col = "CAST(" + col + " AS VARCHAR)"
		}
		sel.WriteString(col + " AS " + quoteIdent(name))
	}
	return "SELECT " + sel.String() + " FROM (" + body + ") AS _tracesql_cast(" + alias.String() + ")"
}

// castForDisplay checks the columns of rows, the open result of stmt, and returns what to show; release
// is called when they are closed, or at once on an error. When every column can be shown it returns
// rows as they are. Otherwise it closes rows and returns the result of stmt run again with the columns
// that need it cast to VARCHAR, and the type names to show in headers. A statement that cannot be
// wrapped (INSERT … RETURNING, PRAGMA) gets an error naming the column, before anything is printed, or,
// if the driver only reads it imprecisely, its rows as they are and a warning naming the columns.
func castForDisplay(ctx context.Context, db queryer, stmt string, rows *sql.Rows, release func()) (*displayRows, error) {
	cts, err := rows.ColumnTypes()
	if err != nil {
		return &displayRows{Rows: rows, release: release}, nil // the renderer reports it
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
		return &displayRows{Rows: rows, release: release}, nil
	}
	body, ok := wrappable(stmt)
	if !ok {
		if unreadable < 0 {
			return &displayRows{Rows: rows, release: release, warning: driverTextWarning(cts, cast)}, nil
		}
		rows.Close()
		release()
		what := "its type"
		if n := cts[unreadable].DatabaseTypeName(); n != "" {
			what = n
		}
		return nil, fmt.Errorf("column %q: the DuckDB Go driver cannot read %s; cast it to VARCHAR", cts[unreadable].Name(), what)
	}
	rows.Close()
	body = strings.TrimRight(body, "; \t\r\n") + "\n"
	names := make([]string, len(cts))
	for i, ct := range cts {
		names[i] = ct.DatabaseTypeName()
		if cast[i] == "unreadable" {
			names[i] = typeNameOf(ctx, db, body, i, cts)
		}
	}
	colNames := make([]string, len(cts))
	for i, ct := range cts {
		colNames[i] = ct.Name()
	}
	rows, err = db.QueryContext(ctx, castQuery(body, colNames, cast, names))
	if err != nil {
		release()
		return nil, fmt.Errorf("show column %q as text: %w", cts[max(unreadable, 0)].Name(), err)
	}
	return &displayRows{Rows: rows, typeNames: names, release: release}, nil
}

// driverTextWarning names the columns of a statement that cannot be wrapped whose values are shown as
// the driver reads them: a JSON value decoded and encoded again (integers past 2^53 rounded, keys
// sorted, the JSON null as NULL), a TIMESTAMPTZ in UTC, TIME '24:00:00' as midnight.
func driverTextWarning(cts []*sql.ColumnType, cast []string) string {
	var cols []string
	for i, ct := range cts {
		if cast[i] != "" {
			cols = append(cols, fmt.Sprintf("%q (%s)", ct.Name(), ct.DatabaseTypeName()))
		}
	}
	what, them := "column "+cols[0]+" is", "it"
	if len(cols) > 1 {
		what, them = "columns "+strings.Join(cols, ", ")+" are", "them"
	}
	return fmt.Sprintf("tracesql: warning: %s shown as the DuckDB Go driver reads %s, which can differ from DuckDB's text (JSON re-encoded, TIMESTAMPTZ in UTC, TIME 24:00:00 as 00:00:00, GEOMETRY as WKB bytes), as this statement cannot be wrapped in a cast: cast in the statement (x::VARCHAR, also in a RETURNING list) or SELECT the rows", what, them)
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
