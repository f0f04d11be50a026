package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

func openTestDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// One connection, so session settings such as TimeZone apply to every query.
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	return db
}

// render runs query and returns what RenderRows writes, checking the row count.
func render(t *testing.T, db *sql.DB, query, format string, maxTableRows int, wantRows int64) string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b bytes.Buffer
	n, err := RenderRows(&b, format, rows, maxTableRows)
	if err != nil {
		t.Fatalf("RenderRows(%s): %v", format, err)
	}
	if n != wantRows {
		t.Errorf("RenderRows(%s) = %d rows, want %d", format, n, wantRows)
	}
	return b.String()
}

func check(t *testing.T, name, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s mismatch\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

// VALUES keeps row order; chr() keeps raw tabs and newlines out of this source file.
const basicQuery = `SELECT * FROM (VALUES
	(1::BIGINT, 'x|y', NULL::VARCHAR, 2.5::DOUBLE),
	(-20, 'say "hi", ok', 'tab' || chr(9) || 'and' || chr(10) || 'newline', 0.1::DOUBLE + 0.2::DOUBLE)
) v(a, b, c, d)`

func TestRenderFormats(t *testing.T) {
	db := openTestDB(t)
	tests := []struct{ format, want string }{
		{"table", `┌────────┬──────────────┬───────────────────┬────────┐
│   a    │      b       │         c         │   d    │
│ bigint │   varchar    │      varchar      │ double │
├────────┼──────────────┼───────────────────┼────────┤
│      1 │ x|y          │ NULL              │    2.5 │
│    -20 │ say "hi", ok │ tab\tand\nnewline │    0.3 │
└────────┴──────────────┴───────────────────┴────────┘
`},
		{"csv", "a,b,c,d\n" +
			"1,x|y,,2.5\n" +
			"-20,\"say \"\"hi\"\", ok\",\"tab\tand\nnewline\",0.30000000000000004\n"},
		{"tsv", "a\tb\tc\td\n" +
			"1\tx|y\t\\N\t2.5\n" + // NULL is \N
			"-20\tsay \"hi\", ok\ttab\\tand\\nnewline\t0.30000000000000004\n"},
		{"json", `[{"a":1,"b":"x|y","c":null,"d":2.5},
{"a":-20,"b":"say \"hi\", ok","c":"tab\tand\nnewline","d":0.30000000000000004}]
`},
		{"jsonl", `{"a":1,"b":"x|y","c":null,"d":2.5}
{"a":-20,"b":"say \"hi\", ok","c":"tab\tand\nnewline","d":0.30000000000000004}
`},
		{"markdown", "| a | b | c | d |\n" +
			"|---:|---|---|---:|\n" +
			"| 1 | x\\|y | NULL | 2.5 |\n" +
			"| -20 | say \"hi\", ok | tab and<br>newline | 0.30000000000000004 |\n"},
		{"line", "a = 1\nb = x|y\nc = NULL\nd = 2.5\n\n" +
			"a = -20\nb = say \"hi\", ok\nc = tab\tand\nnewline\nd = 0.30000000000000004\n"},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			check(t, tc.format, render(t, db, basicQuery, tc.format, 40, 2), tc.want)
		})
	}
}

func TestRenderEmpty(t *testing.T) {
	db := openTestDB(t)
	const q = `SELECT 1::INTEGER AS n, 'x' AS s WHERE false`
	tests := []struct{ format, want string }{
		{"table", `┌─────────┬─────────┐
│    n    │    s    │
│ integer │ varchar │
├─────────┴─────────┤
│      0 rows       │
└───────────────────┘
`},
		{"csv", "n,s\n"},
		{"tsv", "n\ts\n"},
		{"json", "[]\n"},
		{"jsonl", ""},
		{"markdown", "| n | s |\n|---:|---|\n"},
		{"line", ""},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			check(t, tc.format, render(t, db, q, tc.format, 40, 0), tc.want)
		})
	}
}

func TestRenderTableElided(t *testing.T) {
	db := openTestDB(t)
	tests := []struct {
		name  string
		query string
		max   int
		rows  int64
		want  string
	}{
		{"even", "SELECT * FROM range(100)", 10, 100, `┌────────┐
│ range  │
│ bigint │
├────────┤
│      0 │
│      1 │
│      2 │
│      3 │
│      4 │
│   …    │
│     95 │
│     96 │
│     97 │
│     98 │
│     99 │
└────────┘
100 rows (10 shown)
`},
		{"odd puts the extra row in the head", "SELECT * FROM range(10)", 5, 10, `┌────────┐
│ range  │
│ bigint │
├────────┤
│      0 │
│      1 │
│      2 │
│   …    │
│      8 │
│      9 │
└────────┘
10 rows (5 shown)
`},
		{"exactly at the limit", "SELECT * FROM range(4)", 4, 4, `┌────────┐
│ range  │
│ bigint │
├────────┤
│      0 │
│      1 │
│      2 │
│      3 │
└────────┘
`},
		{"text stays left-aligned", "SELECT range AS i, 'r' || range AS s FROM range(7)", 2, 7, `┌────────┬─────────┐
│   i    │    s    │
│ bigint │ varchar │
├────────┼─────────┤
│      0 │ r0      │
│   …    │    …    │
│      6 │ r6      │
└────────┴─────────┘
7 rows (2 shown)
`},
		{"no rows in a narrow column: the box widens", "SELECT 1::BIT AS b WHERE false", 10, 0, `┌────────┐
│   b    │
│  bit   │
├────────┤
│ 0 rows │
└────────┘
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check(t, tc.name, render(t, db, tc.query, "table", tc.max, tc.rows), tc.want)
		})
	}

	// No limit: every row is shown and there is no footer.
	out := render(t, db, "SELECT * FROM range(100)", "table", 0, 100)
	if got := strings.Count(out, "\n"); got != 5+100 { // 3 header lines, 2 rules, 100 rows
		t.Errorf("unlimited table has %d lines, want 105", got)
	}
	if strings.Contains(out, "shown") || !strings.Contains(out, "│     50 │") {
		t.Errorf("unlimited table looks wrong:\n%s", out)
	}
}

func TestRenderUnicodeWidth(t *testing.T) {
	db := openTestDB(t)
	// Widths count display cells, so the accented text lines up with the ASCII rows.
	got := render(t, db, `SELECT * FROM (VALUES ('héllo wörld', 'ü'), ('abc', 'ñandú')) v("naïve", "x")`, "table", 40, 2)
	check(t, "table", got, `┌─────────────┬─────────┐
│    naïve    │    x    │
│   varchar   │ varchar │
├─────────────┼─────────┤
│ héllo wörld │ ü       │
│ abc         │ ñandú   │
└─────────────┴─────────┘
`)
	got = render(t, db, `SELECT 'é' AS a, 2 AS "ñame", 3 AS "longer_name"`, "line", 0, 1)
	check(t, "line", got, "          a = é\n       ñame = 2\nlonger_name = 3\n")

	// Widths are terminal cells: CJK and emoji take two, combining marks none.
	got = render(t, db, `SELECT * FROM (VALUES ('日本語テキスト', 'e'||chr(769)||'te'), ('😀 ok', 'abcd'), ('abc', '한국')) v(k, c)`, "table", 40, 3)
	// COMBINED stands for e and U+0301 (combining acute), which editors like to precompose.
	check(t, "wide table", strings.ReplaceAll(got, "e\u0301", "COMBINED"), `┌────────────────┬─────────┐
│       k        │    c    │
│    varchar     │ varchar │
├────────────────┼─────────┤
│ 日本語テキスト │ COMBINEDte     │
│ 😀 ok          │ abcd    │
│ abc            │ 한국    │
└────────────────┴─────────┘
`)
	got = render(t, db, `SELECT * FROM (VALUES ('日本', 2), ('ab', 1)) v(k, n)`, "bar", 0, 2)
	check(t, "wide bar labels", got, "n\n日本 │"+strings.Repeat("█", 40)+" 2\nab   │"+strings.Repeat("█", 20)+" 1\n")
	// Negative values diverge from an axis: a -20 is not drawn like a +20.
	got = render(t, db, `SELECT * FROM (VALUES ('a', 10), ('b', -20), ('c', NULL)) v(k, d)`, "bar", 0, 3)
	check(t, "negative bars", got, "d\na │"+strings.Repeat(" ", 20)+"┊"+strings.Repeat("█", 10)+" 10\n"+
		"b │"+strings.Repeat("█", 20)+"┊ -20\nc │"+strings.Repeat(" ", 20)+"┊ NULL\n")
	// Near the largest float the two halves still get bars (twice the scale was +Inf), and the values
	// are printed in exponent notation, not as 309-digit numbers.
	got = render(t, db, `SELECT * FROM (VALUES ('x', -1e308), ('y', 1e308)) v(k, d)`, "bar", 0, 2)
	check(t, "bars near MaxFloat64", got, "d\nx │"+strings.Repeat("█", 20)+"┊ -1e+308\ny │"+strings.Repeat(" ", 20)+"┊"+strings.Repeat("█", 20)+" 1e+308\n")
	got = render(t, db, `SELECT repeat('日', 50) AS k`, "table", 0, 1)
	// 39 wide characters and "…": a 40th would not fit in the 80 cells.
	if line := strings.Split(got, "\n")[4]; line != "│ "+strings.Repeat("日", 39)+"… │" {
		t.Errorf("long wide cell not cut to %d cells: %q (%d)", maxCellRunes, line, displayWidth(line))
	}
}

func TestDisplayWidth(t *testing.T) {
	cases := []struct {
		s     string
		width int
	}{
		{"", 0}, {"abc", 3}, {"é", 1}, {"e\u0301", 1}, {"日本", 4}, {"한국", 4}, {"ｆｕｌｌ", 8},
		{"😀", 2}, {"a\u200db", 2}, {"µs", 2}, {"…", 1}, {"█▏", 2},
		// grapheme clusters drawn as one emoji: a skin tone, a ZWJ family, a ZWJ sign with its selector
		{"👍🏽x", 3}, {"👨\u200d👩\u200d👧", 2}, {"🏃\u200d♀\ufe0f", 2}, {"🏽", 2}, {"🇩🇪", 2},
		{"a🏽", 3}, {"a\u200d日", 3}, {"😀\u200d日", 4},
	}
	for _, c := range cases {
		if got := displayWidth(c.s); got != c.width {
			t.Errorf("displayWidth(%q) = %d, want %d", c.s, got, c.width)
		}
	}
	for _, c := range []struct {
		s     string
		width int
		want  string
	}{
		{"abcdef", 4, "abc…"}, {"abc", 3, "abc"}, {"日本語", 4, "日…"}, {"日本語", 5, "日本…"}, {"e\u0301e\u0301e", 2, "e\u0301…"},
		{"👍🏽👍🏽", 3, "👍🏽…"}, {"👨\u200d👩\u200d👧ab", 3, "👨\u200d👩\u200d👧…"},
	} {
		if got := truncateWidth(c.s, c.width); got != c.want {
			t.Errorf("truncateWidth(%q, %d) = %q, want %q", c.s, c.width, got, c.want)
		}
	}
}

func TestRenderTableTruncatesLongCells(t *testing.T) {
	db := openTestDB(t)
	got := render(t, db, `SELECT repeat('x', 100) AS s`, "table", 40, 1)
	cell := strings.Repeat("x", maxCellRunes-1) + "…"
	bar := strings.Repeat("─", maxCellRunes+2)
	pad := strings.Repeat(" ", (maxCellRunes-1)/2)
	padT := strings.Repeat(" ", (maxCellRunes-7)/2)
	want := "┌" + bar + "┐\n" +
		"│ " + pad + "s" + pad + "  │\n" +
		"│ " + padT + "varchar" + padT + "  │\n" +
		"├" + bar + "┤\n" +
		"│ " + cell + " │\n" +
		"└" + bar + "┘\n"
	check(t, "table", got, want)
	// Other formats never truncate.
	check(t, "csv", render(t, db, `SELECT repeat('x', 100) AS s`, "csv", 40, 1), "s\n"+strings.Repeat("x", 100)+"\n")
}

func TestRenderJSONColumn(t *testing.T) {
	db := openTestDB(t)
	// duckdb-go decodes JSON values itself; they must come out as JSON, not as quoted text.
	// A JSON string stays a string even if its content looks like JSON ("123").
	const q = `SELECT '{"a":1}'::JSON AS j, '"123"'::JSON AS s, '[1,{"b":null}]'::JSON AS l, NULL::JSON AS n`
	tests := []struct{ format, want string }{
		{"json", `[{"j":{"a":1},"s":"123","l":[1,{"b":null}],"n":null}]` + "\n"},
		{"jsonl", `{"j":{"a":1},"s":"123","l":[1,{"b":null}],"n":null}` + "\n"},
		{"csv", "j,s,l,n\n\"{\"\"a\"\":1}\",\"\"\"123\"\"\",\"[1,{\"\"b\"\":null}]\",\n"},
		{"line", "j = {\"a\":1}\ns = \"123\"\nl = [1,{\"b\":null}]\nn = NULL\n"},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			check(t, tc.format, render(t, db, q, tc.format, 40, 1), tc.want)
		})
	}
}

func TestRenderNested(t *testing.T) {
	db := openTestDB(t)
	// Struct fields keep their declared order (z before a) although duckdb-go returns a Go map;
	// strings inside nested values are quoted only where DuckDB quotes them.
	const q = `SELECT [1, 2, NULL] AS l, {'z': 1, 'a': 'x y', 'q': ['a,b', '', 'it''s']} AS s,
		MAP {'k': [1.5]} AS m, ['00112233-4455-6677-8899-aabbccddeeff'::UUID] AS u, []::INTEGER[] AS e`
	tests := []struct{ format, want string }{
		{"line", `l = [1, 2, NULL]
s = {'z': 1, 'a': x y, 'q': ['a,b', '', 'it\'s']}
m = {k=[1.5]}
u = [00112233-4455-6677-8899-aabbccddeeff]
e = []
`},
		{"jsonl", `{"l":[1,2,null],"s":{"z":1,"a":"x y","q":["a,b","","it's"]},"m":{"k":[1.5]},"u":["00112233-4455-6677-8899-aabbccddeeff"],"e":[]}
`},
		{"table", `┌──────────────┬─────────────────────────────────────────────────┬──────────────────────────────┬────────────────────────────────────────┬───────────┐
│      l       │                        s                        │              m               │                   u                    │     e     │
│  integer[]   │ struct("z" integer, "a" varchar, "q" varchar[]) │ map(varchar, decimal(2,1)[]) │                 uuid[]                 │ integer[] │
├──────────────┼─────────────────────────────────────────────────┼──────────────────────────────┼────────────────────────────────────────┼───────────┤
│ [1, 2, NULL] │ {'z': 1, 'a': x y, 'q': ['a,b', '', 'it\'s']}   │ {k=[1.5]}                    │ [00112233-4455-6677-8899-aabbccddeeff] │ []        │
└──────────────┴─────────────────────────────────────────────────┴──────────────────────────────┴────────────────────────────────────────┴───────────┘
`},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			check(t, tc.format, render(t, db, q, tc.format, 40, 1), tc.want)
		})
	}
}

// TestRenderMatchesDuckDBText checks the Go-side text conversion against DuckDB's
// own VARCHAR cast, which is what the DuckDB CLI prints, for every non-float type.
func TestRenderMatchesDuckDBText(t *testing.T) {
	db := openTestDB(t)
	exprs := []string{
		`42::TINYINT`, `-7::SMALLINT`, `2147483647::INTEGER`, `'-9223372036854775808'::BIGINT`,
		`255::UTINYINT`, `18446744073709551615::UBIGINT`,
		`'-170141183460469231731687303715884105728'::HUGEINT`, `340282366920938463463374607431768211455::UHUGEINT`,
		`1.50::DECIMAL(10,2)`, `-0.05::DECIMAL(10,2)`, `123456789012345678901234.5::DECIMAL(38,1)`, `7::DECIMAL(4,0)`,
		`true`, `'plain text'`, `'abc'::ENUM('abc', 'def')`,
		`DATE '2024-02-29'`, `DATE '0044-03-15'`, `TIME '01:02:03.5'`, `TIME '23:59:59'`,
		`TIMESTAMP '2024-01-02 03:04:05.123456'`, `TIMESTAMP '2024-01-02 03:04:05'`,
		`TIMESTAMP_NS '2024-01-01 00:00:00.123456789'`, `TIMESTAMP_MS '2024-01-01 00:00:00.123'`, `TIMESTAMP_S '2024-01-01 10:00:00'`,
		`TIMESTAMPTZ '2024-01-02 03:04:05.25+02'`, `TIMETZ '01:02:03+05:30'`, `TIMETZ '01:02:03-08'`,
		`INTERVAL '1 year 2 months 3 days 04:05:06.5'`, `INTERVAL '-1 month -2 days -00:00:01'`, `INTERVAL '0 seconds'`,
		`INTERVAL '100 hours 0.000001 seconds'`, `INTERVAL '2 years 1 month -1 day'`,
		`'\x5Cab\x00\x7F ~\xC3\xA9'::BLOB`, `'00112233-4455-6677-8899-aabbccddeeff'::UUID`,
		`[1, NULL, 3]`, `['a', 'b c', NULL, 'it''s', '', ' lead', 'NULL', 'x,y', 'a\b', '{q}', 'é']`,
		`{'z': 1, 'a': 'x y', 'n': NULL}`, `{'k''x': ' v'}`, `{'a': {'b': [DATE '2020-01-01']}}`,
		`[{'a': [TIMESTAMP '2020-01-01 10:00:00']}]`, `[INTERVAL '1 day 2 hours', INTERVAL '3 days']`, `[TIME '10:00:00']`, `MAP {'a b': 'c,d', '': 'x'}`,
		`[1, 2]::INTEGER[2]`, `[['00112233-4455-6677-8899-aabbccddeeff'::UUID]]`, `['ab'::BLOB]`,
		`union_value(num := 2)::UNION(num INTEGER, str VARCHAR)`, `union_value(str := 'q')::UNION(num INTEGER, str VARCHAR)`,
		`'101'::BIT`, `12345678901234567890123::BIGNUM`,
		// Infinities, which duckdb-go hands over as dates in far years.
		`'infinity'::TIMESTAMP`, `'-infinity'::TIMESTAMP`, `'infinity'::TIMESTAMPTZ`, `'-infinity'::TIMESTAMPTZ`,
		`'infinity'::TIMESTAMP_NS`, `'-infinity'::TIMESTAMP_NS`, `'infinity'::TIMESTAMP_MS`, `'-infinity'::TIMESTAMP_MS`,
		`'infinity'::TIMESTAMP_S`, `'-infinity'::TIMESTAMP_S`, `'infinity'::DATE`, `'-infinity'::DATE`,
		`['infinity'::TIMESTAMP, '-infinity'::TIMESTAMP]`, `DATE '5881580-07-10'`, `TIMESTAMP '294247-01-10 04:00:54.775806'`,
		`TIMETZ '24:00:00+05'`,
		// before year 1: Go's year -43 printed as -0043-03-15
		`DATE '0044-03-15 (BC)'`, `DATE '0001-01-01' - 1`, `(DATE '0044-03-15 (BC)')::TIMESTAMP + INTERVAL 90 MINUTE`,
		`(DATE '0044-03-15 (BC)')::TIMESTAMPTZ`, `[DATE '0001-01-01' - 1]`,
	}
	for _, e := range exprs {
		got := render(t, db, "SELECT "+e+" AS v", "csv", 0, 1)
		want := render(t, db, "SELECT ("+e+")::VARCHAR AS v", "csv", 0, 1)
		if got != want {
			t.Errorf("%s: got %q, DuckDB prints %q", e, got, want)
		}
	}
}

func TestRenderFloats(t *testing.T) {
	db := openTestDB(t)
	const q = `SELECT * FROM (VALUES (0.1::DOUBLE + 0.2::DOUBLE), (100.0), (1e300), (-1e-9), (1.0000005),
		('-0.0'::DOUBLE), ('nan'::DOUBLE), ('-inf'::DOUBLE), (123456789.123), (1 / 3e7), (1.23456789e25)) v(d)`
	tests := []struct{ format, want string }{
		// Table rounds fractions longer than 6 digits; tiny and huge values use exponents.
		{"table", `┌───────────────┐
│       d       │
│    double     │
├───────────────┤
│           0.3 │
│           100 │
│        1e+300 │
│        -1e-09 │
│      1.000001 │
│            -0 │
│           nan │
│          -inf │
│ 123456789.123 │
│   3.33333e-08 │
│   1.23457e+25 │
└───────────────┘
`},
		{"jsonl", `{"d":0.30000000000000004}
{"d":100}
{"d":1e+300}
{"d":-1e-09}
{"d":1.0000005}
{"d":-0}
{"d":null}
{"d":null}
{"d":123456789.123}
{"d":3.3333333333333334e-08}
{"d":1.23456789e+25}
`},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			check(t, tc.format, render(t, db, q, tc.format, 0, 11), tc.want)
		})
	}
	check(t, "float32", render(t, db, `SELECT 1.1::FLOAT AS f`, "csv", 0, 1), "f\n1.1\n")
}

// TestRenderJSONNonFinite: NaN and ±Inf have no JSON form; they are null wherever they are, in
// a column or nested in lists, arrays, structs, maps and unions, while text formats keep DuckDB's
// spelling.
func TestRenderJSONNonFinite(t *testing.T) {
	db := openTestDB(t)
	tests := []struct{ name, expr, json, csv string }{
		{"double nan", `'nan'::DOUBLE`, `null`, "nan"},
		{"double inf", `'inf'::DOUBLE`, `null`, "inf"},
		{"double -inf", `'-inf'::DOUBLE`, `null`, "-inf"},
		{"float nan", `'nan'::FLOAT`, `null`, "nan"},
		{"float -inf", `'-inf'::FLOAT`, `null`, "-inf"},
		{"finite", `1.5::DOUBLE`, `1.5`, "1.5"},
		{"list", `[1.0, 'nan'::DOUBLE, NULL, '-inf']`, `[1,null,null,null]`, `"[1, nan, NULL, -inf]"`},
		{"array", `[1.0, 'inf'::DOUBLE]::DOUBLE[2]`, `[1,null]`, `"[1, inf]"`},
		{"struct", `{'x': 'inf'::DOUBLE, 'y': 2.5::DOUBLE}`, `{"x":null,"y":2.5}`, `"{'x': inf, 'y': 2.5}"`},
		{"map", `MAP {'k': 'nan'::FLOAT}`, `{"k":null}`, "{k=nan}"},
		{"deep", `[{'l': ['nan'::DOUBLE]}]`, `[{"l":[null]}]`, "[{'l': [nan]}]"},
		{"union", `union_value(f := 'nan'::DOUBLE)::UNION(f DOUBLE, s VARCHAR)`, `null`, "nan"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := "SELECT " + tc.expr + " AS v"
			got := render(t, db, q, "jsonl", 0, 1)
			check(t, "jsonl", got, `{"v":`+tc.json+"}\n")
			if !json.Valid([]byte(got)) {
				t.Errorf("jsonl is not JSON: %s", got)
			}
			check(t, "json", render(t, db, q, "json", 0, 1), `[{"v":`+tc.json+"}]\n")
			check(t, "csv", render(t, db, q, "csv", 0, 1), "v\n"+tc.csv+"\n")
		})
	}
}

// TestRenderMarkdownCells: a markdown cell or header holds no raw tab or line break, which would
// break the row, and no bare pipe, which would end the cell.
func TestRenderMarkdownCells(t *testing.T) {
	db := openTestDB(t)
	tests := []struct{ name, expr, want string }{
		{"tab", `'a' || chr(9) || 'b'`, "a b"},
		{"two tabs", `chr(9) || chr(9) || 'x'`, "  x"},
		{"newline", `'a' || chr(10) || 'b'`, "a<br>b"},
		{"crlf", `'a' || chr(13) || chr(10) || 'b'`, "a<br>b"},
		{"cr", `'a' || chr(13) || 'b'`, "a<br>b"},
		{"pipe", `'a|b'`, `a\|b`},
		{"backslash before a pipe", `'a\|b'`, `a\\\|b`},
		{"backslash", `'C:\dir'`, `C:\\dir`},
		{"all at once", `'|' || chr(9) || chr(10) || '|'`, `\| <br>\|`},
		{"nested", `['a' || chr(9) || 'b']`, `\[a b\]`},
		{"a C++ template is not an HTML tag", `'add<float, 4>(a<b)'`, `add\<float, 4\>(a\<b)`},
		{"a line break next to one", `'a<' || chr(10) || 'b'`, `a\<<br>b`},
		// CommonMark's inline syntax renders as written (Python frames' names were bold or italic)
		{"python frame names", `'<built-in method __enter__ of _thread.lock object>'`, `\<built-in method \_\_enter\_\_ of \_thread.lock object\>`},
		{"emphasis, code, strike-through", "'a*b*c `x` ~~s~~'", "a\\*b\\*c \\`x\\` \\~\\~s\\~\\~"},
		{"link and entity", `'[l](u) a&lt;b'`, `\[l\](u) a\&lt;b`},
		{"an underscore inside a word stays", `'cpu_op é_é →_x_←'`, `cpu_op é_é →\_x\_←`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := render(t, db, "SELECT "+tc.expr+" AS v", "markdown", 0, 1)
			check(t, "markdown", got, "| v |\n|---|\n| "+tc.want+" |\n")
		})
	}
	// A column name goes through the same escaping.
	got := render(t, db, `SELECT 1 AS "a`+"\t"+`b|c"`, "markdown", 0, 1)
	check(t, "header", got, "| a b\\|c |\n|---:|\n| 1 |\n")
}

func TestValidFormat(t *testing.T) {
	for _, f := range Formats {
		if !ValidFormat(f) {
			t.Errorf("ValidFormat(%q) = false", f)
		}
	}
	for _, f := range []string{"", "TABLE", "xml", "json ", "Box"} {
		if ValidFormat(f) {
			t.Errorf("ValidFormat(%q) = true", f)
		}
	}
	// DuckDB's shell mode names stand for ours.
	for alias, want := range map[string]string{"box": "table", "duckbox": "table", "tabs": "tsv", "jsonlines": "jsonl", "ndjson": "jsonl", "csv": "csv"} {
		if got, ok := CanonicalFormat(alias); !ok || got != want {
			t.Errorf("CanonicalFormat(%q) = %q, %v; want %q", alias, got, ok, want)
		}
	}
}

func TestRenderRowsUnknownFormat(t *testing.T) {
	db := openTestDB(t)
	rows, err := db.Query("SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b bytes.Buffer
	if _, err := RenderRows(&b, "xml", rows, 0); err == nil || b.Len() != 0 {
		t.Errorf("RenderRows(xml) = %v, wrote %q; want an error and no output", err, b.String())
	}
}

type failingWriter struct{ writes int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	return 0, errors.New("broken pipe")
}

// A dead output (e.g. `tracesql ... | head`) must stop the scan instead of reading every row.
func TestRenderRowsStopsOnWriteError(t *testing.T) {
	db := openTestDB(t)
	for _, format := range Formats {
		if format == "trash" {
			continue // writes nothing: it reads every row by design
		}
		rows, err := db.Query("SELECT range AS i, 'some text' AS s FROM range(1000000)")
		if err != nil {
			t.Fatal(err)
		}
		w := &failingWriter{}
		n, err := RenderRows(w, format, rows, 40)
		rows.Close()
		if err == nil {
			t.Errorf("%s: no error from a failing writer", format)
		}
		if format != "table" && n > 10000 {
			t.Errorf("%s: read %d rows after the writer failed", format, n)
		}
	}
}

func TestBarLengthProportional(t *testing.T) {
	cases := []struct {
		v, scale float64
		eighths  int
	}{
		{100, 100, chartWidth * 8}, {50, 100, chartWidth * 4}, {-25, 100, chartWidth * 2}, {10, 1000, 3}, {1, 1000, 0}, {0, 100, 0}, {5, 0, 0},
	}
	for _, c := range cases {
		got := 0
		for _, r := range barOf(c.v, c.scale, chartWidth) {
			if r == '█' {
				got += 8
			} else {
				got += slices.Index(eighths, r) + 1
			}
		}
		if got != c.eighths {
			t.Errorf("barOf(%v, %v) = %d eighths, want %d", c.v, c.scale, got, c.eighths)
		}
	}
}

// TestBarFitsTheScreen: on a terminal the bar format (and so .chart) shortens its bars and labels so that every
// line fits the screen (an 80-column terminal got 98-column lines: r43 #5); without a terminal the bars keep
// their 40 cells.
func TestBarFitsTheScreen(t *testing.T) {
	db := openTestDB(t)
	q := `SELECT 'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>' || i AS name,
		i * 1234567.891 AS sum_us, (i - 3) * 10.5 AS diff FROM range(1, 6) t(i)`
	for _, width := range []int{80, 60, 40} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := renderRowsWidth(context.Background(), &b, "bar", rows, 40, width, nil, true); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			if w := displayWidth(line); w > width {
				t.Errorf("width %d: a line of %d cells: %q", width, w, line)
			}
		}
	}
	got := render(t, db, q, "bar", 40, 5)
	if !strings.Contains(got, strings.Repeat("█", chartWidth)+" 6172839.46") {
		t.Errorf("without a terminal the longest bar is %d cells:\n%s", chartWidth, got)
	}
}

// TestRenderNullVersusEmpty: csv and tsv keep NULL and the empty string apart (csv as the DuckDB
// CLI does: NULL empty, the empty string quoted; tsv as PostgreSQL's text COPY: NULL \N, the
// empty string empty).
func TestRenderNullVersusEmpty(t *testing.T) {
	db := openTestDB(t)
	const q = `SELECT NULL::VARCHAR AS n, '' AS e, ''::BLOB AS b, 'x' AS x, ' s' AS s, '\N' AS bs, 'a"b,c' AS q`
	check(t, "csv", render(t, db, q, "csv", 0, 1), "n,e,b,x,s,bs,q\n,\"\",\"\",x,\" s\",\\N,\"a\"\"b,c\"\n")
	check(t, "tsv", render(t, db, q, "tsv", 0, 1), "n\te\tb\tx\ts\tbs\tq\n\\N\t\t\tx\t s\t\\\\N\ta\"b,c\n")
}

// TestTableFitsScreen: on a terminal the table format fits the screen as DuckDB's duckbox does: wide
// columns are narrowed (down to minFitWidth, cut with "…"), then middle columns are left out with a "…"
// column in their place and a line that says how many are shown. Without a width nothing changes.
func TestTableFitsScreen(t *testing.T) {
	db := openTestDB(t)
	const q = `SELECT 1 AS a, 'a rather long text value here' AS b, 3 AS c, 4 AS d, 5 AS e, 6 AS f, 7 AS g, 8 AS h, 9 AS i`
	show := func(width int) string { return renderTable(t, db, q, width) }
	full := show(0)
	if w := displayWidth(strings.SplitN(full, "\n", 2)[0]); w != 113 {
		t.Fatalf("unfitted table is %d cells wide, want 113:\n%s", w, full)
	}
	for _, c := range []struct {
		width int
		want  string
	}{
		{113, full},
		{110, "" +
			"┌─────────┬────────────────────────────┬─────────┬─────────┬─────────┬─────────┬─────────┬─────────┬─────────┐\n" +
			"│    a    │             b              │    c    │    d    │    e    │    f    │    g    │    h    │    i    │\n" +
			"│ integer │          varchar           │ integer │ integer │ integer │ integer │ integer │ integer │ integer │\n" +
			"├─────────┼────────────────────────────┼─────────┼─────────┼─────────┼─────────┼─────────┼─────────┼─────────┤\n" +
			"│       1 │ a rather long text value … │       3 │       4 │       5 │       6 │       7 │       8 │       9 │\n" +
			"└─────────┴────────────────────────────┴─────────┴─────────┴─────────┴─────────┴─────────┴─────────┴─────────┘\n"},
		{60, "" +
			"┌─────────┬──────────────┬─────────┬───┬─────────┬─────────┐\n" +
			"│    a    │      b       │    c    │ … │    h    │    i    │\n" +
			"│ integer │   varchar    │ integer │   │ integer │ integer │\n" +
			"├─────────┼──────────────┼─────────┼───┼─────────┼─────────┤\n" +
			"│       1 │ a rather lo… │       3 │ … │       8 │       9 │\n" +
			"└─────────┴──────────────┴─────────┴───┴─────────┴─────────┘\n" +
			"9 columns (5 shown)\n"},
		{95, ""}, {40, ""}, {30, ""}, // (one middle column left out: that too must fit)
	} {
		got := show(c.width)
		if c.want != "" {
			check(t, "width "+strconv.Itoa(c.width), got, c.want)
		}
		for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
			if w := displayWidth(line); w > c.width {
				t.Errorf("width %d: a line of %d cells: %s", c.width, w, line)
			}
		}
	}
}

// TestTableStopsOnCancel (review r74 #1): the table format reads every row before it writes one; a cancel
// (Ctrl-C) while it writes stops it (8 million rows printed after a Ctrl-C, for 11 s).
func TestTableStopsOnCancel(t *testing.T) {
	db := openTestDB(t)
	rows, err := db.Query(`SELECT range AS i FROM range(100000)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var b bytes.Buffer
	if _, err := renderRowsWidth(ctx, &b, "table", rows, 0, 0, nil, true); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want the cancel", err)
	}
	if lines := strings.Count(b.String(), "\n"); lines > 2000 {
		t.Errorf("%d lines written after the cancel", lines)
	}
}

// renderTable is q's result in the table format fitted to width cells (0: any), 40 rows at most.
func renderTable(t *testing.T, db *sql.DB, q string, width int) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b bytes.Buffer
	if _, err := renderRowsWidth(context.Background(), &b, "table", rows, 40, width, nil, true); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestTableFitNarrowScreen (r69 #8): on a screen too narrow for the first and the last column, the first
// columns and the "…" column are shown (a 30-cell screen got a 35-cell table that wrapped); where even
// that does not fit, every column is (a 3-cell column was left out of an 89-cell table on a 40-cell
// screen, hiding data and fitting no better).
func TestTableFitNarrowScreen(t *testing.T) {
	db := openTestDB(t)
	show := func(q string, width int) string { return renderTable(t, db, q, width) }
	narrow := show(`SELECT 'aten::addmm with a long name' AS name, 'cpu_op' AS cat, 'X' AS ph, 123456789 AS ts, 10 AS dur, '{"a": "a long argument"}' AS args`, 30)
	check(t, "30 cells", narrow, ""+
		"┌──────────────┬─────────┬───┐\n"+
		"│     name     │   cat   │ … │\n"+
		"│   varchar    │ varchar │   │\n"+
		"├──────────────┼─────────┼───┤\n"+
		"│ aten::addmm… │ cpu_op  │ … │\n"+
		"└──────────────┴─────────┴───┘\n"+
		"6 columns (2 shown)\n")
	const huge = `SELECT 123456789012345678901234567890123456789::HUGEINT AS h, 'abc' AS s, 123456789012345678901234567890123456789::HUGEINT AS h2`
	if got, want := show(huge, 40), show(huge, 0); got != want {
		t.Errorf("numbers wider than the screen: columns left out:\n%s\nwant every column:\n%s", got, want)
	}
}

// TestTableFitKeepsNumbers: narrowing cuts text, never a number ("12345678901…" reads as a number).
func TestTableFitKeepsNumbers(t *testing.T) {
	db := openTestDB(t)
	rows, err := db.Query(`SELECT 'a rather long text value, longer than the screen' AS a, 1234567890123456789 AS n, 2.5::DOUBLE AS d`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b bytes.Buffer
	if _, err := renderRowsWidth(context.Background(), &b, "table", rows, 40, 50, nil, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, " 1234567890123456789 │") || !strings.Contains(out, "a rather long …") {
		t.Errorf("the number was cut, or the text was not:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := displayWidth(line); w > 50 {
			t.Errorf("a line of %d cells: %s", w, line)
		}
	}
}

// TestBarEscapesControls: a bar label or value with a newline, tab or ESC stays on its row and sends
// nothing to the terminal, as the table format's cells.
func TestBarEscapesControls(t *testing.T) {
	out := mustRun(t, "", "--format", "bar", "-c",
		`SELECT E'multi\nline' AS name, 5 AS v UNION ALL SELECT 'esc' || chr(27) || '[2J', 3 UNION ALL SELECT E'tab\there', 1`)
	if strings.ContainsAny(out, "\t\x1b") || strings.Count(out, "\n") != 4 {
		t.Errorf("raw control characters in:\n%q", out)
	}
	for _, want := range []string{`multi\nline`, `esc\x1B[2J`, `tab\there`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
