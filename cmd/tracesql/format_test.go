package main

import (
	"bytes"
	"database/sql"
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

const basicQuery = `SELECT 1::BIGINT AS a, 'x|y' AS b, NULL::VARCHAR AS c, 2.5::DOUBLE AS d
UNION ALL SELECT -20, 'say "hi", ok', 'tab	and
newline', 0.1::DOUBLE + 0.2::DOUBLE`

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
		{"csv", `a,b,c,d
1,x|y,,2.5
-20,"say ""hi"", ok","tab	and
newline",0.30000000000000004
`},
		{"tsv", "a\tb\tc\td\n" +
			"1\tx|y\t\t2.5\n" +
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
			"| -20 | say \"hi\", ok | tab\tand<br>newline | 0.30000000000000004 |\n"},
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
└─────────┴─────────┘
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
		name    string
		query   string
		max     int
		rows    int64
		want    string
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
	// Widths count runes, so the accented text lines up with the ASCII rows.
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
		{"table", `┌──────────────┬─────────────────────────────────────────────────┬────────────────────────────┬────────────────────────────────────────┬───────────┐
│      l       │                        s                        │             m              │                   u                    │     e     │
│  integer[]   │ struct("z" integer, "a" varchar, "q" varchar[]) │ map(varchar, decimal(2,1)[]) │                 uuid[]                 │ integer[] │
`},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			check(t, tc.format, render(t, db, q, tc.format, 40, 1), tc.want)
		})
	}
}
