package main

// Output formats for query results (--format / .mode), modelled on the DuckDB CLI.
//
// Values come from database/sql as whatever duckdb-go hands back, so this file
// also knows how to turn each of those Go values into DuckDB-looking text. Most
// nested values (STRUCT, UUID inside a LIST, ...) lose information on the way
// through the driver, which is why the column's DatabaseTypeName is parsed into a
// small type tree (sqlType) and passed along with every value.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/duckdb/duckdb-go/v2"
)

// Formats lists the accepted --format / .mode names.
var Formats = []string{"table", "csv", "tsv", "json", "jsonl", "markdown", "line", "list", "bar", "trash"}

// formatAliases are DuckDB shell mode names for Formats: a DuckDB user's .mode box works.
var formatAliases = map[string]string{"duckbox": "table", "box": "table", "tabs": "tsv", "jsonlines": "jsonl", "ndjson": "jsonl"}

// CanonicalFormat returns the Formats name that name (a format or a DuckDB shell alias) stands for.
func CanonicalFormat(name string) (string, bool) {
	if alias, ok := formatAliases[name]; ok {
		return alias, true
	}
	return name, slices.Contains(Formats, name)
}

// ValidFormat reports whether name is one of Formats or an alias of one.
func ValidFormat(name string) bool {
	_, ok := CanonicalFormat(name)
	return ok
}

// maxCellRunes is the widest a table cell may get, in terminal cells, before it is cut with "…".
const maxCellRunes = 80

// RenderRows writes every row of rows to w in the given format and returns the number of rows read.
// maxTableRows applies only to "table": when the result has more rows, show the first maxTableRows/2 and
// the last maxTableRows/2 with a single "…" row between them, like the DuckDB CLI's duckbox (0 = no limit).
// Other formats write each row as it is read; the Go driver has no streaming result, so DuckDB has
// produced the whole result before the first row (memory grows with it: COPY … TO streams to a file).
//
// For an odd maxTableRows the extra row goes to the head, so exactly maxTableRows rows are shown.
// The caller still owns rows and should Close it.
func RenderRows(w io.Writer, format string, rows *sql.Rows, maxTableRows int) (int64, error) {
	return renderRows(w, format, rows, maxTableRows, nil)
}

// renderRows is RenderRows with the type names shown in table headers replaced where typeNames
// has a non-empty entry: the query behind rows cast the columns the driver cannot read to
// VARCHAR (see castForDisplay), and the header shows the type the user's query has.
func renderRows(w io.Writer, format string, rows *sql.Rows, maxTableRows int, typeNames []string) (int64, error) {
	return renderRowsWidth(context.Background(), w, format, rows, maxTableRows, 0, typeNames, true)
}

// renderRowsWidth is renderRows whose table fits in screenWidth terminal cells (0 = any width): as DuckDB's
// duckbox does, wide columns are narrowed and, if that is not enough, middle columns are left out, a "…"
// column in their place. headers false leaves out the header line of csv, tsv and list (.headers off); the
// table, markdown, line and JSON formats name the columns whatever it says, as in DuckDB's shell. Cancelling
// ctx stops the writing of rows already read (the table format reads all before it writes: a Ctrl-C while
// 8 million rows printed was ignored).
func renderRowsWidth(ctx context.Context, w io.Writer, format string, rows *sql.Rows, maxTableRows, screenWidth int, typeNames []string, headers bool) (int64, error) {
	format, ok := CanonicalFormat(format)
	if !ok {
		return 0, fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
	}
	r, err := newResult(rows, typeNames)
	if err != nil {
		return 0, err
	}
	r.screenWidth, r.noHeader, r.ctx = screenWidth, !headers, ctx
	bw := bufio.NewWriter(w)
	var n int64
	switch format {
	case "table":
		n, err = r.table(bw, maxTableRows)
	case "csv":
		n, err = r.csv(bw)
	case "tsv":
		n, err = r.tsv(bw)
	case "json":
		n, err = r.json(bw, true)
	case "jsonl":
		n, err = r.json(bw, false)
	case "markdown":
		n, err = r.markdown(bw)
	case "line":
		n, err = r.line(bw)
	case "list":
		n, err = r.list(bw)
	case "trash":
		// DuckDB's .mode trash: the rows are read (the query runs in full, for timing) and not shown.
		n, err = r.each(func(int64) error { return nil })
	case "bar":
		if r.hasBarValues() {
			n, err = r.bar(bw)
		} else {
			// Nothing to draw (.tables, SHOW TABLES, DESCRIBE): shown as a table.
			n, err = r.table(bw, maxTableRows)
		}
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return n, err
}

// result holds a query's metadata and the scan buffers reused for every row.
type result struct {
	rows    *sql.Rows
	names   []string
	dbTypes []string   // DatabaseTypeName as reported, e.g. `STRUCT("a" INTEGER)[]`
	types   []*sqlType // dbTypes parsed
	numeric []bool     // right-align in table / markdown
	rawJSON []bool     // a JSON column cast to VARCHAR by castForDisplay: its text is the JSON
	vals    []any
	ptrs    []any
	buf     []byte // scratch for one cell or one output line
	// screenWidth, if > 0, is the terminal's width, which the table format fits.
	screenWidth int
	ctx         context.Context // its cancel stops the table format writing the rows it read
	noHeader    bool            // csv, tsv and list write no header line
}

func newResult(rows *sql.Rows, typeNames []string) (*result, error) {
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	r := &result{rows: rows}
	for i, ct := range cts {
		t := parseType(ct.DatabaseTypeName())
		r.names = append(r.names, ct.Name())
		if i < len(typeNames) && typeNames[i] != "" {
			r.dbTypes = append(r.dbTypes, typeNames[i])
		} else {
			r.dbTypes = append(r.dbTypes, ct.DatabaseTypeName())
		}
		// A JSON column (or one holding JSON) castForDisplay read as VARCHAR holds DuckDB's own JSON
		// text: each scans it as []byte, which appendText and appendJSON copy as it is.
		raw := false
		if t.is("VARCHAR") && i < len(typeNames) && typeNames[i] != "" {
			reason := castReason(parseType(typeNames[i]))
			raw = reason == "json" || reason == "nested json"
		}
		if raw {
			t = parseType("JSON")
		}
		r.rawJSON = append(r.rawJSON, raw)
		r.types = append(r.types, t)
		r.numeric = append(r.numeric, t.numeric())
	}
	r.vals = make([]any, len(cts))
	r.ptrs = make([]any, len(cts))
	for i := range r.vals {
		r.ptrs[i] = &r.vals[i]
	}
	return r, nil
}

// each scans every row into r.vals and calls fn; it stops at the first error.
func (r *result) each(fn func(row int64) error) (int64, error) {
	var n int64
	for r.rows.Next() {
		if err := r.rows.Scan(r.ptrs...); err != nil {
			return n, err
		}
		for i, raw := range r.rawJSON {
			if s, ok := r.vals[i].(string); raw && ok {
				r.vals[i] = []byte(s)
			}
		}
		n++
		if err := fn(n - 1); err != nil {
			return n, err
		}
	}
	return n, r.rows.Err()
}

// text returns column i of the current row as display text.
func (r *result) text(i int, mode textMode) string {
	r.buf = appendText(r.buf[:0], r.vals[i], r.types[i], mode)
	return string(r.buf)
}

// ---- table ----------------------------------------------------------------

// table buffers rows because column widths depend on every shown cell. With a
// limit only the head and a ring of the tail are kept, so memory stays bounded.
func (r *result) table(w *bufio.Writer, maxRows int) (int64, error) {
	if len(r.names) == 0 { // nothing to draw; still read and count the rows
		return r.each(func(int64) error { return nil })
	}
	maxRows = max(maxRows, 0)
	headN, tailN := maxRows-maxRows/2, maxRows/2
	var head, tail [][]string
	n, err := r.each(func(row int64) error {
		cells := make([]string, len(r.vals))
		for i := range cells {
			cells[i] = tableCell(r.text(i, textTable))
		}
		switch {
		case maxRows == 0 || row < int64(headN):
			head = append(head, cells)
		case tailN > 0 && len(tail) < tailN:
			tail = append(tail, cells)
		case tailN > 0:
			tail[(row-int64(headN))%int64(tailN)] = cells
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	elided := maxRows > 0 && n > int64(maxRows)
	if elided && tailN > 0 { // unroll the ring: the oldest kept row sits at the next write slot
		k := int((n - int64(headN)) % int64(tailN))
		tail = append(tail[k:], tail[:k]...)
	}

	names := make([]string, len(r.names))
	types := make([]string, len(r.names))
	widths := make([]int, len(r.names))
	for i := range names {
		names[i] = tableCell(r.names[i])
		types[i] = tableCell(lowerType(r.dbTypes[i]))
		widths[i] = max(displayWidth(names[i]), displayWidth(types[i]), 1) // 1 fits "…"
	}
	valueWidths := make([]int, len(r.names))
	for _, rows := range [][][]string{head, tail} {
		for _, cells := range rows {
			for i, c := range cells {
				valueWidths[i] = max(valueWidths[i], displayWidth(c))
			}
		}
	}
	for i, vw := range valueWidths {
		widths[i] = max(widths[i], vw)
	}
	shown := fitColumns(widths, valueWidths, r.numeric, r.screenWidth)
	if slices.Contains(shown, -1) {
		// Middle columns left out: a "…" column stands for them.
		pick := func(cells []string, fill string) []string {
			out := make([]string, 0, len(shown))
			for _, i := range shown {
				if i < 0 {
					out = append(out, fill)
				} else {
					out = append(out, cells[i])
				}
			}
			return out
		}
		numeric := r.numeric
		r.numeric = make([]bool, 0, len(shown))
		newWidths := make([]int, 0, len(shown))
		for _, i := range shown {
			if i < 0 {
				r.numeric, newWidths = append(r.numeric, false), append(newWidths, 1)
			} else {
				r.numeric, newWidths = append(r.numeric, numeric[i]), append(newWidths, widths[i])
			}
		}
		defer func() { r.numeric = numeric }()
		names, types, widths = pick(names, "…"), pick(types, ""), newWidths
		for k := range head {
			head[k] = pick(head[k], "…")
		}
		for k := range tail {
			tail[k] = pick(tail[k], "…")
		}
		defer fmt.Fprintf(w, "%d columns (%d shown)\n", len(r.names), len(shown)-1)
	}
	for i, wd := range widths {
		names[i], types[i] = truncateWidth(names[i], wd), truncateWidth(types[i], wd)
		for _, rows := range [][][]string{head, tail} {
			for _, cells := range rows {
				cells[i] = truncateWidth(cells[i], wd)
			}
		}
	}

	rule := func(l, mid, r string) {
		w.WriteString(l)
		for i, wd := range widths {
			if i > 0 {
				w.WriteString(mid)
			}
			w.WriteString(strings.Repeat("─", wd+2))
		}
		w.WriteString(r + "\n")
	}
	line := func(cells []string, align func(i int) byte) {
		for i, c := range cells {
			w.WriteString("│ ")
			pad := widths[i] - displayWidth(c)
			left := 0
			switch align(i) {
			case 'r':
				left = pad
			case 'c':
				left = pad / 2
			}
			w.WriteString(strings.Repeat(" ", left) + c + strings.Repeat(" ", pad-left) + " ")
		}
		w.WriteString("│\n")
	}
	center := func(int) byte { return 'c' }
	data := func(i int) byte {
		if r.numeric[i] {
			return 'r'
		}
		return 'l'
	}

	const noRows = "0 rows"
	inner := func() int { // the box's width inside its outer lines
		w := len(widths) - 1
		for _, wd := range widths {
			w += wd + 2
		}
		return w
	}
	if n == 0 && len(widths) > 0 && inner() < len(noRows)+2 {
		widths[len(widths)-1] += len(noRows) + 2 - inner()
	}
	rule("┌", "┬", "┐")
	line(names, center)
	line(types, center)
	if n == 0 && len(widths) == 0 {
		rule("└", "┴", "┘")
		return n, nil
	}
	if n == 0 {
		// as DuckDB's box: the header, then one line across the columns saying there are no rows
		rule("├", "┴", "┤")
		pad := inner() - len(noRows)
		w.WriteString("│" + strings.Repeat(" ", pad/2) + noRows + strings.Repeat(" ", pad-pad/2) + "│\n")
		w.WriteString("└" + strings.Repeat("─", inner()) + "┘\n")
		return n, nil
	}
	rule("├", "┼", "┤")
	for k, cells := range head {
		if k%1024 == 1023 && r.ctx.Err() != nil {
			return n, r.ctx.Err()
		}
		line(cells, data)
	}
	if elided {
		dots := make([]string, len(widths))
		for i := range dots {
			dots[i] = "…"
		}
		line(dots, center)
	}
	for _, cells := range tail {
		line(cells, data)
	}
	rule("└", "┴", "┘")
	if elided {
		fmt.Fprintf(w, "%d rows (%d shown)\n", n, maxRows)
	}
	return n, nil
}

// tableCell makes s safe for a one-line box cell: control characters are shown
// as escapes (a raw newline would break the box) and long text is cut with "…".
func tableCell(s string) string {
	return truncateWidth(escapeControls(s), maxCellRunes)
}

// escapeControls shows control characters as escapes, so that a value stays on its line and sends
// nothing to the terminal (an ESC sequence would).
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return s
	}
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02X`, c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// lowerType lower-cases a DuckDB type name except quoted struct field names.
func lowerType(s string) string {
	b := []byte(s)
	quoted := false
	for i, c := range b {
		if c == '"' {
			quoted = !quoted
		} else if !quoted && 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// ---- streaming formats ----------------------------------------------------

// csv writes RFC 4180 CSV (quoting as encoding/csv does). As in the DuckDB CLI, NULL is an empty
// field and the empty string is "", so that the two can be told apart.
func (r *result) csv(w *bufio.Writer) (int64, error) {
	var line []byte
	for i, name := range r.names {
		if i > 0 {
			line = append(line, ',')
		}
		line = appendCSVField(line, name)
	}
	if r.noHeader {
		line = line[:0]
	} else if _, err := w.Write(append(line, '\n')); err != nil {
		return 0, err
	}
	return r.each(func(int64) error {
		line = line[:0]
		for i, v := range r.vals {
			if i > 0 {
				line = append(line, ',')
			}
			if v != nil {
				line = appendCSVField(line, r.text(i, 0))
			}
		}
		_, err := w.Write(append(line, '\n'))
		return err
	})
}

// appendCSVField appends s, quoted when encoding/csv would quote it (a comma, quote or line
// break inside, a leading space or tab, or \. alone) and when it is empty.
func appendCSVField(b []byte, s string) []byte {
	if s != "" && s != `\.` && s[0] != ' ' && s[0] != '\t' && !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// tsvEscaper keeps one record per line and one field per tab. The backslash is
// escaped too so the escapes can be undone unambiguously (as in PostgreSQL's text COPY).
var tsvEscaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

// tsv writes tab-separated values with a header line. NULL is \N, as in PostgreSQL's text COPY
// whose escapes tsvEscaper follows, so that it differs from the empty string (an empty field).
func (r *result) tsv(w *bufio.Writer) (int64, error) {
	for i, name := range r.names {
		if r.noHeader {
			break
		}
		if i > 0 {
			w.WriteByte('\t')
		}
		tsvEscaper.WriteString(w, name)
	}
	if !r.noHeader {
		w.WriteByte('\n')
	}
	var line []byte
	return r.each(func(int64) error {
		line = line[:0]
		for i, v := range r.vals {
			if i > 0 {
				line = append(line, '\t')
			}
			if v == nil {
				line = append(line, `\N`...)
			} else {
				line = append(line, tsvEscaper.Replace(r.text(i, 0))...)
			}
		}
		_, err := w.Write(append(line, '\n'))
		return err
	})
}

// list writes DuckDB's list mode: a header line, then one line per row, values separated by '|' as they
// are (no quoting), NULL as NULL.
func (r *result) list(w *bufio.Writer) (int64, error) {
	if !r.noHeader {
		w.WriteString(strings.Join(r.names, "|") + "\n")
	}
	var line []byte
	return r.each(func(int64) error {
		line = line[:0]
		for i, v := range r.vals {
			if i > 0 {
				line = append(line, '|')
			}
			if v == nil {
				line = append(line, "NULL"...)
			} else {
				line = append(line, r.text(i, 0)...)
			}
		}
		_, err := w.Write(append(line, '\n'))
		return err
	})
}

// json writes one object per row with columns in query order. As the DuckDB CLI
// does, the array form puts each object on its own line: `[{...},\n{...}]`.
func (r *result) json(w *bufio.Writer, array bool) (int64, error) {
	keys := make([][]byte, len(r.names)) // `"name":` prefixes, escaped once
	for i, name := range uniqueNames(r.names) {
		if i > 0 {
			keys[i] = append(keys[i], ',')
		}
		keys[i] = append(appendJSONString(keys[i], name), ':')
	}
	var line []byte
	n, err := r.each(func(row int64) error {
		line = line[:0]
		switch {
		case !array:
		case row == 0:
			line = append(line, '[')
		default:
			line = append(line, ",\n"...)
		}
		line = append(line, '{')
		for i, v := range r.vals {
			line = append(line, keys[i]...)
			line = appendJSON(line, v, r.types[i])
		}
		line = append(line, '}')
		if !array {
			line = append(line, '\n')
		}
		_, err := w.Write(line)
		return err
	})
	if err == nil && array {
		if n == 0 {
			w.WriteString("[")
		}
		w.WriteString("]\n")
	}
	return n, err
}

// uniqueNames renames a repeated column (two trace_id after a join, say) as DuckDB names the columns of a
// subquery, a then a_1, so that a JSON object keeps every value: parsers keep only the last of two equal keys.
func uniqueNames(names []string) []string {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		seen[n] = true
	}
	out := make([]string, len(names))
	first := make(map[string]bool, len(names))
	for i, n := range names {
		if !first[n] {
			first[n], out[i] = true, n
			continue
		}
		k := 1
		for seen[n+"_"+strconv.Itoa(k)] {
			k++
		}
		out[i] = n + "_" + strconv.Itoa(k)
		seen[out[i]] = true
	}
	return out
}

// mdEscape protects GitHub table syntax: a pipe ends a cell and a newline ends the row. A backslash
// is escaped too: GFM reads `\\` as one escaped backslash, so a value's `\` right before a pipe would
// leave the pipe bare (and `\\` renders as `\` anywhere). A tab renders as white space anyway, but a
// raw one misaligns the table's source and is lost or expanded by editors and terminals; a space
// renders the same. The punctuation of CommonMark's inline syntax is escaped (a backslash before any
// ASCII punctuation is always allowed), so that a value renders as it is: Python frames such as
// `__enter__` rendered bold, `_foreach_add_` italic (67 of the 452 names of a recorded trace changed), a
// C++ kernel's `<float>` was an HTML tag that GitHub drops, and backticks, `[a](b)`, `~~x~~` and `&lt;`
// made code, links, strike-through and entities. An underscore between two letters or digits is left
// as it is (`cpu_op`): CommonMark never reads one there as emphasis.
func mdEscape(s string) string {
	if !strings.ContainsAny(s, "\\|<>*_`[]~&\r\n\t") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '|', '<', '>', '*', '`', '[', ']', '~', '&':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '_':
			prev, _ := utf8.DecodeLastRuneInString(s[:i])
			next, _ := utf8.DecodeRuneInString(s[i+1:])
			if !alnum(prev) || !alnum(next) {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			b.WriteString("<br>")
		case '\n':
			b.WriteString("<br>")
		case '\t':
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// alnum: a letter or digit of any script, what CommonMark counts as neither space nor punctuation.
func alnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// markdown writes a GitHub pipe table. Columns are not padded so rows can stream.
func (r *result) markdown(w *bufio.Writer) (int64, error) {
	w.WriteString("|")
	for _, name := range r.names {
		w.WriteString(" " + mdEscape(name) + " |")
	}
	w.WriteString("\n|")
	for i := range r.names {
		if r.numeric[i] {
			w.WriteString("---:|")
		} else {
			w.WriteString("---|")
		}
	}
	w.WriteString("\n")
	var line []byte
	return r.each(func(int64) error {
		line = append(line[:0], '|')
		for i := range r.vals {
			line = append(line, ' ')
			line = append(line, mdEscape(r.text(i, 0))...)
			line = append(line, " |"...)
		}
		_, err := w.Write(append(line, '\n'))
		return err
	})
}

// line writes `name = value` per column, a blank line between rows. Names are
// right-aligned to the longest one so the "=" signs line up, as in the DuckDB CLI
// (which additionally pads names to at least 5 characters; we do not).
func (r *result) line(w *bufio.Writer) (int64, error) {
	width := 0
	for _, name := range r.names {
		width = max(width, displayWidth(name))
	}
	var line []byte
	return r.each(func(row int64) error {
		line = line[:0]
		if row > 0 {
			line = append(line, '\n')
		}
		for i, name := range r.names {
			line = append(line, strings.Repeat(" ", width-displayWidth(name))...)
			line = append(line, name...)
			line = append(line, " = "...)
			line = appendText(line, r.vals[i], r.types[i], 0)
			line = append(line, '\n')
		}
		_, err := w.Write(line)
		return err
	})
}

// ---- SQL types --------------------------------------------------------------

// sqlType is a parsed duckdb-go DatabaseTypeName such as `STRUCT("a" INTEGER, "b" UUID[])[]`.
// duckdb-go hands STRUCTs over as Go maps (field order lost) and UUIDs as bare []byte,
// so formatting needs the declared type alongside the value.
type sqlType struct {
	name   string     // base name: "INTEGER", "DECIMAL", "LIST", "STRUCT", "MAP", "UNION", "JSON", ...
	elem   *sqlType   // LIST/ARRAY element, MAP value
	key    *sqlType   // MAP key
	fields []sqlField // STRUCT fields / UNION members in declaration order
}

type sqlField struct {
	name string
	typ  *sqlType
}

// parseType never fails: unknown or malformed input degrades to a plain named type.
func parseType(s string) *sqlType {
	t, _ := parseTypePrefix(s)
	return t
}

func parseTypePrefix(s string) (*sqlType, string) {
	t := &sqlType{}
	switch {
	case strings.HasPrefix(s, "STRUCT(") || strings.HasPrefix(s, "UNION("):
		open := strings.IndexByte(s, '(')
		t.name, s = s[:open], s[open+1:]
		for s != "" && s[0] != ')' {
			before := len(s)
			var f sqlField
			f.name, s = parseQuoted(s)
			f.typ, s = parseTypePrefix(strings.TrimPrefix(s, " "))
			t.fields = append(t.fields, f)
			s = strings.TrimPrefix(s, ", ")
			if len(s) == before {
				break
			}
		}
		s = strings.TrimPrefix(s, ")")
	case strings.HasPrefix(s, "MAP("):
		t.name = "MAP"
		t.key, s = parseTypePrefix(s[len("MAP("):])
		t.elem, s = parseTypePrefix(strings.TrimPrefix(s, ", "))
		s = strings.TrimPrefix(s, ")")
	default:
		end := strings.IndexAny(s, "[(,)")
		if end < 0 {
			end = len(s)
		}
		t.name, s = s[:end], s[end:]
		if strings.HasPrefix(s, "(") { // DECIMAL(18,3)
			if c := strings.IndexByte(s, ')'); c >= 0 {
				s = s[c+1:]
			}
		}
	}
	for strings.HasPrefix(s, "[") { // INTEGER[] (LIST) or INTEGER[3] (ARRAY)
		c := strings.IndexByte(s, ']')
		if c < 0 {
			break
		}
		t, s = &sqlType{name: "LIST", elem: t}, s[c+1:]
	}
	return t, s
}

// parseQuoted reads a `"na""me"` identifier as written by duckdb-go; an unquoted
// name runs to the next space.
func parseQuoted(s string) (string, string) {
	if !strings.HasPrefix(s, `"`) {
		sp := strings.IndexByte(s, ' ')
		if sp < 0 {
			return s, ""
		}
		return s[:sp], s[sp:]
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '"' {
			if i+1 < len(s) && s[i+1] == '"' {
				b.WriteByte('"')
				i++
				continue
			}
			return b.String(), s[i+1:]
		}
		b.WriteByte(s[i])
	}
	return b.String(), ""
}

func (t *sqlType) is(name string) bool { return t != nil && t.name == name }

func (t *sqlType) numeric() bool {
	switch t.name {
	case "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
		"UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
		"FLOAT", "DOUBLE", "DECIMAL", "BIGNUM":
		return true
	}
	return false
}

// child returns the element type of a LIST/ARRAY (nil when unknown).
func (t *sqlType) child() *sqlType {
	if t == nil {
		return nil
	}
	return t.elem
}

// field returns the type of a STRUCT field / UNION member (nil when unknown).
func (t *sqlType) field(name string) *sqlType {
	if t != nil {
		for _, f := range t.fields {
			if f.name == name {
				return f.typ
			}
		}
	}
	return nil
}

// structKeys orders a STRUCT's keys as declared; keys the type does not list
// (or all of them, for JSON objects) come after in sorted order, for determinism.
func (t *sqlType) structKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	if t != nil {
		for _, f := range t.fields {
			if _, ok := m[f.name]; ok {
				keys = append(keys, f.name)
			}
		}
	}
	if len(keys) == len(m) {
		return keys
	}
	var rest []string
	for k := range m {
		if !slices.Contains(keys, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(keys, rest...)
}

// ---- values as text ---------------------------------------------------------

type textMode uint8

const (
	textNested textMode = 1 << iota // inside a LIST/STRUCT/MAP: quote strings like DuckDB
	textTable                       // table display: round long float fractions
)

// appendText appends v as DuckDB would print it (its VARCHAR cast), NULL as "NULL".
// Deliberate differences: floats use Go's shortest round-trip text ("2", not "2.0";
// see appendFloat) and TIMESTAMPTZ is always shown in UTC ("+00").
func appendText(b []byte, v any, t *sqlType, mode textMode) []byte {
	if t.is("JSON") { // duckdb-go has already decoded the JSON; print it back as JSON text
		switch v := v.(type) {
		case nil:
			return append(b, "NULL"...)
		case []byte: // JSON text as DuckDB wrote it (castForDisplay)
			return append(b, v...)
		}
		return appendJSON(b, v, t)
	}
	switch v.(type) {
	case nil, []any, map[string]any, duckdb.OrderedMap, duckdb.Map, duckdb.Union:
	default:
		if mode&textNested != 0 { // a nested scalar: quote its text where DuckDB would
			start := len(b)
			b = appendText(b, v, t, mode&^textNested)
			return appendNestedString(b[:start], string(b[start:]))
		}
	}
	switch v := v.(type) {
	case nil:
		return append(b, "NULL"...)
	case bool:
		return strconv.AppendBool(b, v)
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return appendInteger(b, v)
	case float32:
		return appendFloat(b, float64(v), 32, mode&textTable != 0)
	case float64:
		return appendFloat(b, v, 64, mode&textTable != 0)
	case *big.Int:
		return v.Append(b, 10)
	case duckdb.Decimal:
		return appendDecimal(b, v)
	case string:
		return append(b, v...)
	case []byte:
		if t.is("UUID") && len(v) == 16 {
			return appendUUID(b, v)
		}
		return appendBlob(b, v)
	case duckdb.UUID: // not what Scan into any yields (that is []byte), but cheap to support
		return appendUUID(b, v[:])
	case time.Time:
		return appendTime(b, v, t)
	case duckdb.Interval:
		return appendInterval(b, v)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendText(b, e, t.child(), mode|textNested)
		}
		return append(b, ']')
	case map[string]any: // STRUCT: {'k': v}, keys always quoted
		b = append(b, '{')
		for i, k := range t.structKeys(v) {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendQuoted(b, k)
			b = append(b, ": "...)
			b = appendText(b, v[k], t.field(k), mode|textNested)
		}
		return append(b, '}')
	case duckdb.OrderedMap: // MAP: {k=v}
		keys, vals := v.Keys(), v.Values()
		return appendMapText(b, keys, vals, t, mode)
	case duckdb.Map:
		keys, vals := sortedMap(v)
		return appendMapText(b, keys, vals, t, mode)
	case duckdb.Union:
		return appendText(b, v.Value, t.field(v.Tag), mode)
	case fmt.Stringer:
		return append(b, v.String()...)
	default:
		return fmt.Append(b, v)
	}
}

func appendMapText(b []byte, keys, vals []any, t *sqlType, mode textMode) []byte {
	var kt, vt *sqlType
	if t.is("MAP") {
		kt, vt = t.key, t.elem
	}
	b = append(b, '{')
	for i := range keys {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendText(b, keys[i], kt, mode|textNested)
		b = append(b, '=')
		b = appendText(b, vals[i], vt, mode|textNested)
	}
	return append(b, '}')
}

// sortedMap orders a (deprecated, unordered) duckdb.Map by key text so output is deterministic.
func sortedMap(m duckdb.Map) (keys, vals []any) {
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	for _, k := range keys {
		vals = append(vals, m[k])
	}
	return keys, vals
}

func appendInteger(b []byte, v any) []byte {
	switch v := v.(type) {
	case int8:
		return strconv.AppendInt(b, int64(v), 10)
	case int16:
		return strconv.AppendInt(b, int64(v), 10)
	case int32:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case uint8:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case uint:
		return strconv.AppendUint(b, uint64(v), 10)
	}
	return b
}

// appendFloat writes the shortest text that round-trips, in plain notation
// (strconv 'f', -1) except for magnitudes below 1e-6 or from 1e21 up, which use
// exponent notation the way encoding/json does, so 1e300 is not 301 digits. The
// result is always a valid JSON number; NaN/±Inf use DuckDB's "nan"/"inf"/"-inf".
//
// In table mode a fraction longer than 6 digits (0.30000000000000004) is rounded
// to 6 significant digits, at least 6 after the point, and trailing zeros
// trimmed ("0.3", "0.0000015", 1234.56789 → "1234.56789"): plain notation is only
// used from 1e-6 up, so no value loses more than its seventh significant digit.
// Exponent notation keeps 6 significant digits (3.33333e-08, 1.23457e+25).
func appendFloat(b []byte, f float64, bits int, table bool) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "nan"...)
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		if !table {
			return strconv.AppendFloat(b, f, 'e', -1, bits)
		}
		// 6 significant digits here too, trailing zeros of the mantissa trimmed: 3.33333e-08
		start := len(b)
		b = strconv.AppendFloat(b, f, 'e', 5, bits)
		e := start + slices.Index(b[start:], 'e')
		m := e
		for b[m-1] == '0' {
			m--
		}
		if b[m-1] == '.' {
			m--
		}
		return append(b[:m], b[e:]...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'f', -1, bits)
	digits := 6
	if abs := math.Abs(f); abs != 0 && abs < 0.1 {
		digits = 5 - int(math.Floor(math.Log10(abs))) // 6 significant digits
	}
	if dot := slices.Index(b[start:], '.'); table && dot >= 0 && len(b)-start-dot-1 > digits {
		b = strconv.AppendFloat(b[:start], f, 'f', digits, bits)
		for b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
		if b[len(b)-1] == '.' {
			b = b[:len(b)-1]
		}
	}
	return b
}

// appendDecimal keeps the declared scale ("1.50", like DuckDB), which
// duckdb.Decimal.String() would trim to "1.5".
func appendDecimal(b []byte, d duckdb.Decimal) []byte {
	if d.Value == nil {
		return append(b, "NULL"...)
	}
	digits := new(big.Int).Abs(d.Value).String()
	scale := int(d.Scale)
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	if d.Value.Sign() < 0 {
		b = append(b, '-')
	}
	b = append(b, digits[:len(digits)-scale]...)
	if scale > 0 {
		b = append(b, '.')
		b = append(b, digits[len(digits)-scale:]...)
	}
	return b
}

// appendNestedString quotes the text of a value inside a LIST/STRUCT/MAP only when
// DuckDB would: it is empty, spells NULL, has outer whitespace or a syntax
// character (so '2020-01-01 10:00:00' is quoted for its colons, 2020-01-01 is not).
func appendNestedString(b []byte, s string) []byte {
	if s != "" && !strings.EqualFold(s, "null") && !isSpace(s[0]) && !isSpace(s[len(s)-1]) &&
		!strings.ContainsAny(s, `,'"[]{}():=`) {
		return append(b, s...)
	}
	return appendQuoted(b, s)
}

func isSpace(c byte) bool { return c == ' ' || ('\t' <= c && c <= '\r') }

// appendQuoted writes 's' with backslash escapes, as DuckDB prints struct keys.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '\'')
}

// appendBlob prints printable ASCII as is and every other byte (and the
// backslash) as \xHH, which is DuckDB's BLOB text form.
func appendBlob(b []byte, v []byte) []byte {
	const digits = "0123456789ABCDEF"
	for _, c := range v {
		if c >= 0x20 && c < 0x7f && c != '\\' {
			b = append(b, c)
		} else {
			b = append(b, '\\', 'x', digits[c>>4], digits[c&15])
		}
	}
	return b
}

func appendUUID(b []byte, u []byte) []byte {
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:], u[10:16])
	return append(b, s[:]...)
}

// appendTime formats by the column type, since duckdb-go returns DATE, TIME and
// all TIMESTAMP kinds as time.Time. Fractions are trimmed, up to nanoseconds
// (TIMESTAMP_NS); other kinds only carry microseconds anyway.
func appendTime(b []byte, v time.Time, t *sqlType) []byte {
	name := ""
	if t != nil {
		name = t.name
	}
	if inf, ok := infinities[name]; ok {
		switch {
		case v.Equal(inf[0]):
			return append(b, "infinity"...)
		case v.Equal(inf[1]):
			return append(b, "-infinity"...)
		}
	}
	switch name {
	case "DATE":
		return appendDate(b, v)
	case "TIME":
		return v.AppendFormat(b, "15:04:05.999999999")
	case "TIMETZ":
		if v.Day() == 2 { // 24:00:00, which duckdb-go builds as midnight of the next day
			return appendOffset(append(b, "24:00:00"...), v)
		}
		return appendOffset(v.AppendFormat(b, "15:04:05.999999999"), v)
	case "TIMESTAMPTZ":
		return append(v.UTC().AppendFormat(appendDate(b, v.UTC()), " 15:04:05.999999999"), "+00"...)
	default:
		return v.UTC().AppendFormat(appendDate(b, v.UTC()), " 15:04:05.999999999")
	}
}

// appendDate writes v's date as DuckDB does: a year before 1 as the year BC with " (BC)" (DuckDB's
// 0044-03-15 (BC) is Go's year -43, which printed as -0043-03-15).
func appendDate(b []byte, v time.Time) []byte {
	if y := v.Year(); y <= 0 {
		return fmt.Appendf(b, "%04d-%02d-%02d (BC)", 1-y, int(v.Month()), v.Day())
	}
	return v.AppendFormat(b, "2006-01-02")
}

// infinities are the values duckdb-go makes of DuckDB's infinity and -infinity, by type: the
// largest and smallest counts of the type's unit (±(2^63-1), dates ±(2^31-1) days) converted as
// they come, which gives dates in far years (294247-01-10 04:00:54.775807 for TIMESTAMP).
var infinities = func() map[string][2]time.Time {
	const maxI64 = math.MaxInt64
	us := [2]time.Time{time.UnixMicro(maxI64).UTC(), time.UnixMicro(-maxI64).UTC()}
	return map[string][2]time.Time{
		"TIMESTAMP":    us,
		"TIMESTAMPTZ":  us,
		"TIMESTAMP_NS": {time.Unix(0, maxI64).UTC(), time.Unix(0, -maxI64).UTC()},
		"TIMESTAMP_MS": {time.UnixMilli(maxI64).UTC(), time.UnixMilli(-maxI64).UTC()},
		"TIMESTAMP_S":  {time.Unix(maxI64, 0).UTC(), time.Unix(-maxI64, 0).UTC()},
		"DATE": {time.Date(5881580, time.July, 11, 0, 0, 0, 0, time.UTC),
			time.Date(-5877641, time.June, 24, 0, 0, 0, 0, time.UTC)},
	}
}()

// appendOffset writes a UTC offset as DuckDB does: +05:30, -08, +00.
func appendOffset(b []byte, v time.Time) []byte {
	_, off := v.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	b = fmt.Appendf(b, "%c%02d", sign, off/3600)
	if off%3600 != 0 {
		b = fmt.Appendf(b, ":%02d", off%3600/60)
	}
	if off%60 != 0 {
		b = fmt.Appendf(b, ":%02d", off%60)
	}
	return b
}

// appendInterval mirrors DuckDB's text: "1 year 2 months -3 days 04:05:06.5".
func appendInterval(b []byte, iv duckdb.Interval) []byte {
	start := len(b)
	part := func(n int64, unit string) {
		if n == 0 {
			return
		}
		if len(b) > start {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, n, 10)
		b = append(b, ' ')
		b = append(b, unit...)
		if n != 1 && n != -1 {
			b = append(b, 's')
		}
	}
	part(int64(iv.Months/12), "year")
	part(int64(iv.Months%12), "month")
	part(int64(iv.Days), "day")
	if iv.Micros == 0 && len(b) > start {
		return b
	}
	if len(b) > start {
		b = append(b, ' ')
	}
	us := iv.Micros
	if us < 0 {
		b = append(b, '-')
	}
	u := uint64(us)
	if us < 0 {
		u = uint64(-(us + 1)) + 1 // no overflow for MinInt64
	}
	b = fmt.Appendf(b, "%02d:%02d:%02d", u/3_600_000_000, u/60_000_000%60, u/1_000_000%60)
	if frac := u % 1_000_000; frac != 0 {
		b = append(b, '.')
		b = append(b, strings.TrimRight(fmt.Sprintf("%06d", frac), "0")...)
	}
	return b
}

// ---- values as JSON -------------------------------------------------------

// appendJSON writes v as a JSON value: numbers and booleans bare, NULL as null,
// LIST as array, STRUCT and MAP as objects (STRUCT in declared field order),
// everything else (dates, UUIDs, blobs, intervals) as its text in a string.
//
// NaN and ±Inf are null, at any depth: JSON has no such numbers, and a string such as
// "nan" in a numeric column breaks consumers that expect a number or null. The DuckDB
// CLI's json mode writes NaN as null too (duckdb#14905); to_json writes bare NaN and
// Infinity, which are not JSON.
//
// duckdb-go decodes JSON-typed columns itself (encoding/json into any), so a JSON
// column arrives as map/slice/float64/string/bool/nil and is written back as JSON
// from that; object keys come out sorted. A JSON string value is a Go string that
// we must quote: embedding it raw would turn the JSON string "123" into the number 123.
// Raw text is only embedded when it arrives as []byte and is valid JSON.
func appendJSON(b []byte, v any, t *sqlType) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return appendInteger(b, v)
	case *big.Int:
		return v.Append(b, 10)
	case duckdb.Decimal:
		return appendDecimal(b, v)
	case float32:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return append(b, "null"...)
		}
		return appendFloat(b, float64(v), 32, false)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return append(b, "null"...)
		}
		return appendFloat(b, v, 64, false)
	case string:
		return appendJSONString(b, v)
	case []byte:
		if t.is("JSON") {
			if json.Valid(v) {
				// Compacted: DuckDB keeps a ::JSON value's text as written, and a pretty-printed
				// document's line breaks split a jsonl record over several lines. (Compact leaves
				// numbers' text as it is.)
				if bytes.ContainsAny(v, "\n\r\t ") {
					var c bytes.Buffer
					if json.Compact(&c, v) == nil {
						return append(b, c.Bytes()...)
					}
				}
				return append(b, v...)
			}
			return appendJSONString(b, string(v)) // not through appendText, which would come back here
		}
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e, t.child())
		}
		return append(b, ']')
	case map[string]any:
		b = append(b, '{')
		for i, k := range t.structKeys(v) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendJSONString(b, k), ':')
			b = appendJSON(b, v[k], t.field(k))
		}
		return append(b, '}')
	case duckdb.OrderedMap:
		return appendJSONMap(b, v.Keys(), v.Values(), t)
	case duckdb.Map:
		keys, vals := sortedMap(v)
		return appendJSONMap(b, keys, vals, t)
	case duckdb.Union:
		return appendJSON(b, v.Value, t.field(v.Tag))
	}
	return appendJSONString(b, string(appendText(nil, v, t, 0)))
}

// appendJSONMap writes a MAP as an object keyed by each key's text (as DuckDB's to_json does).
func appendJSONMap(b []byte, keys, vals []any, t *sqlType) []byte {
	var kt, vt *sqlType
	if t.is("MAP") {
		kt, vt = t.key, t.elem
	}
	b = append(b, '{')
	for i := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, string(appendText(nil, keys[i], kt, 0))), ':')
		b = appendJSON(b, vals[i], vt)
	}
	return append(b, '}')
}

// appendJSONString quotes s per RFC 8259 without encoding/json's HTML escaping;
// invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', byte(c))
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c < 0x20:
			b = fmt.Appendf(b, `\u%04x`, c)
		default:
			b = utf8.AppendRune(b, c)
		}
	}
	return append(b, '"')
}
