package main

import (
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"tracesql/queries"
)

func TestSplitStatements(t *testing.T) {
	cases := []struct {
		name  string
		text  string
		stmts []string
		rest  string
	}{
		{"empty", "", nil, ""},
		{"one", "SELECT 1;", []string{"SELECT 1"}, ""},
		{"two and a tail", "SELECT 1; SELECT 2;\nSELECT 3", []string{"SELECT 1", "SELECT 2"}, "\nSELECT 3"},
		{"trailing text without ;", "SELECT 1", nil, "SELECT 1"},
		{"whitespace is trimmed", "  SELECT 1 \n ;  ", []string{"SELECT 1"}, "  "},
		{"empty statements dropped", ";; ;\n; SELECT 1;;", []string{"SELECT 1"}, ""},
		{"comment-only statements dropped", "-- c\n; SELECT 1;", []string{"SELECT 1"}, ""},
		{"block-comment-only statements dropped", "/* c */; SELECT 1;", []string{"SELECT 1"}, ""},
		{"; in a string", "SELECT 'a;b'; SELECT 2;", []string{"SELECT 'a;b'", "SELECT 2"}, ""},
		{"doubled quote", "SELECT 'it''s; ok'; SELECT 2;", []string{"SELECT 'it''s; ok'", "SELECT 2"}, ""},
		{"string of doubled quotes", "SELECT ''''; SELECT '';", []string{"SELECT ''''", "SELECT ''"}, ""},
		{"; in a quoted identifier", `SELECT 1 AS "a;b"; SELECT 2;`, []string{`SELECT 1 AS "a;b"`, "SELECT 2"}, ""},
		{"doubled double quote", `SELECT 1 AS "a"";b"; SELECT 2;`, []string{`SELECT 1 AS "a"";b"`, "SELECT 2"}, ""},
		{"' in a quoted identifier", `SELECT 1 AS "it's;"; SELECT 2;`, []string{`SELECT 1 AS "it's;"`, "SELECT 2"}, ""},
		{`" in a string`, `SELECT '";'; SELECT 2;`, []string{`SELECT '";'`, "SELECT 2"}, ""},
		{"; in a -- comment", "SELECT 1 -- one; two\n, 2; SELECT 3;", []string{"SELECT 1 -- one; two\n, 2", "SELECT 3"}, ""},
		{"quote in a -- comment", "SELECT 1 -- it's\n; SELECT 2;", []string{"SELECT 1 -- it's", "SELECT 2"}, ""},
		{"; in a /* */ comment", "SELECT /* ; */ 1; SELECT 2;", []string{"SELECT /* ; */ 1", "SELECT 2"}, ""},
		{"multi-line /* */ comment", "SELECT /* a;\n' b; */ 1;", []string{"SELECT /* a;\n' b; */ 1"}, ""},
		{"/* right before ;", "SELECT 1 /**/; SELECT 2;", []string{"SELECT 1 /**/", "SELECT 2"}, ""},
		{"minus and division are not comments", "SELECT 4 - 1 / 2; SELECT 2;", []string{"SELECT 4 - 1 / 2", "SELECT 2"}, ""},
		{"unclosed string", "SELECT 1; SELECT 'a;b", []string{"SELECT 1"}, " SELECT 'a;b"},
		{"unclosed identifier", `SELECT "a;`, nil, `SELECT "a;`},
		{"unclosed -- comment", "SELECT 1 -- a;", nil, "SELECT 1 -- a;"},
		{"unclosed /* comment", "SELECT 1; /* a;", []string{"SELECT 1"}, " /* a;"},
		{"unicode", "SELECT 'µs;é' AS \"ü;\";", []string{"SELECT 'µs;é' AS \"ü;\""}, ""},
		// DuckDB's lexer: dollar quotes, escape strings, nested comments.
		{"; in $$…$$", "SELECT $$x;y$$ AS d; SELECT 2;", []string{"SELECT $$x;y$$ AS d", "SELECT 2"}, ""},
		{"; and $$ in $tag$…$tag$", "SELECT $t$a;$$;b$t$; SELECT 2;", []string{"SELECT $t$a;$$;b$t$", "SELECT 2"}, ""},
		{"quotes in $$…$$", "SELECT $$it's; \"x$$; SELECT 2;", []string{"SELECT $$it's; \"x$$", "SELECT 2"}, ""},
		{"unclosed $$", "SELECT 1; SELECT $$a;", []string{"SELECT 1"}, " SELECT $$a;"},
		{"$ in an identifier is no quote", "SELECT 1 AS a$b$; SELECT $1;", []string{"SELECT 1 AS a$b$", "SELECT $1"}, ""},
		{"escaped quote in E'…'", `SELECT E'esc\';x' AS e; SELECT 2;`, []string{`SELECT E'esc\';x' AS e`, "SELECT 2"}, ""},
		{"escaped backslash in e'…'", `SELECT e'\\'; SELECT 2;`, []string{`SELECT e'\\'`, "SELECT 2"}, ""},
		{"E at the end of a name is no escape string", `SELECT namE'\'; SELECT 2;`, []string{`SELECT namE'\'`, "SELECT 2"}, ""},
		{"unclosed E'…'", `SELECT E'a\';`, nil, `SELECT E'a\';`},
		{"nested /* */ comments", "SELECT /* a /* ; */ ; */ 1; SELECT 2;", []string{"SELECT /* a /* ; */ ; */ 1", "SELECT 2"}, ""},
		// A dot command after the last ; of a line is left as the rest, for the caller to run.
		{"dot command after ;", "SELECT 1; .mode csv\nSELECT 2;", []string{"SELECT 1"}, " .mode csv\nSELECT 2;"},
		{"a number after ; is SQL", "SELECT 1; .5 AS x;", []string{"SELECT 1", ".5 AS x"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stmts, rest := splitStatements(c.text)
			if !reflect.DeepEqual(texts(stmts), c.stmts) || rest != c.rest {
				t.Errorf("splitStatements(%q) = %q, %q; want %q, %q", c.text, texts(stmts), rest, c.stmts, c.rest)
			}
		})
	}
}

// texts returns the statements' text.
func texts(stmts []statement) []string {
	var out []string
	for _, s := range stmts {
		out = append(out, s.text)
	}
	return out
}

// TestStatementLines: each statement carries the line its first SQL character is on, whatever
// comments, empty statements or other statements come before it on its lines.
func TestStatementLines(t *testing.T) {
	cases := []struct {
		name  string
		text  string
		lines []int // of each statement, in order
		// pending is the line PendingLine reports at the end
		pending int
	}{
		{"one per line", "SELECT 1;\nSELECT 2;\n", []int{1, 2}, 3},
		{"second starts after ; on a continuation line", "SELECT\n1; SELECT\n2;", []int{1, 2}, 3},
		{"after a multi-line comment", "/* a\nb\n*/ SELECT 1;\n", []int{3}, 4},
		{"after -- comments and blank lines", "-- a\n\n-- b\n  SELECT 1\n;\n", []int{4}, 6},
		{"comment after ; then a statement", "SELECT 1; -- x\nSELECT 2;", []int{1, 2}, 2},
		{"empty statements", ";;\n;SELECT 1;", []int{2}, 2},
		{"string over lines", "SELECT 'a\nb';\nSELECT 3;", []int{1, 3}, 3},
		{"pending tail", "SELECT 1;\n\n  SELECT", []int{1}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var whole []int
			stmts, _ := splitStatements(c.text)
			for _, s := range stmts {
				whole = append(whole, s.line)
			}
			var b stmtBuffer
			var byLine []int
			for _, line := range strings.Split(c.text, "\n") {
				for _, s := range b.Add(line) {
					byLine = append(byLine, s.line)
				}
			}
			if !reflect.DeepEqual(whole, c.lines) || !reflect.DeepEqual(byLine, c.lines) {
				t.Errorf("lines: whole text %v, line by line %v; want %v", whole, byLine, c.lines)
			}
			if got := b.PendingLine(); got != c.pending {
				t.Errorf("PendingLine() = %d, want %d", got, c.pending)
			}
		})
	}
}

func TestStmtBuffer(t *testing.T) {
	cases := []struct {
		name    string
		lines   []string
		stmts   [][]string // statements completed by each line
		pending string
	}{
		{"statement over three lines", []string{"SELECT 1", "  AS a", ";"},
			[][]string{nil, nil, {"SELECT 1\n  AS a"}}, ""},
		{"two on one line and a tail", []string{"SELECT 1; SELECT 2; SELECT"},
			[][]string{{"SELECT 1", "SELECT 2"}}, "SELECT"},
		{"tail completed later", []string{"SELECT 1; SELECT", "2;"},
			[][]string{{"SELECT 1"}, {"SELECT\n2"}}, ""},
		{"string over lines with ;", []string{"SELECT 'a;", "b;';"},
			[][]string{nil, {"SELECT 'a;\nb;'"}}, ""},
		{"string closed on a later line, ; after it", []string{"SELECT 'a", "b'", "AS s;"},
			[][]string{nil, nil, {"SELECT 'a\nb'\nAS s"}}, ""},
		{"-- comment ends at the line end", []string{"SELECT 1 -- x;", "AS a;"},
			[][]string{nil, {"SELECT 1 -- x;\nAS a"}}, ""},
		{"block comment over lines", []string{"SELECT /* ;", "; */ 1;"},
			[][]string{nil, {"SELECT /* ;\n; */ 1"}}, ""},
		{"identifier over lines", []string{`SELECT 1 AS "a;`, `b";`},
			[][]string{nil, {"SELECT 1 AS \"a;\nb\""}}, ""},
		{"comment-only lines leave nothing pending", []string{"-- just a comment; really", "/* and; */ -- more", ";", "SELECT 1;"},
			[][]string{nil, nil, nil, {"SELECT 1"}}, ""},
		{"a comment after ; leaves nothing pending", []string{"SELECT 1; -- done"}, [][]string{{"SELECT 1"}}, ""},
		{"a comment before a statement is dropped", []string{"-- about a", "SELECT 1 AS a;"}, [][]string{nil, {"SELECT 1 AS a"}}, ""},
		{"an unclosed comment stays pending", []string{"/* a;"}, [][]string{nil}, "/* a;"},
		{"empty lines and empty statements", []string{"", "  ", ";", " ; ;"}, [][]string{nil, nil, nil, nil}, ""},
		{"dollar quote over lines", []string{"SELECT $$a;", "b;$$;"}, [][]string{nil, {"SELECT $$a;\nb;$$"}}, ""},
		{"escape string over lines", []string{`SELECT E'a\';`, `b';`}, [][]string{nil, {"SELECT E'a\\';\nb'"}}, ""},
		{"a dot command after ; is pending alone", []string{"SELECT 1; .mode json"}, [][]string{{"SELECT 1"}}, ".mode json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b stmtBuffer
			for i, line := range c.lines {
				if got := texts(b.Add(line)); !reflect.DeepEqual(got, c.stmts[i]) {
					t.Errorf("Add(%q) = %q, want %q", line, got, c.stmts[i])
				}
			}
			if got := b.Pending(); got != c.pending {
				t.Errorf("Pending() = %q, want %q", got, c.pending)
			}
			b.Reset()
			if b.Pending() != "" {
				t.Errorf("Pending() after Reset = %q", b.Pending())
			}
		})
	}
}

// TestStmtBufferMatchesSplit: feeding text line by line gives the statements splitStatements gives
// for the whole text, up to comments before a statement, which the buffer may drop.
func TestStmtBufferMatchesSplit(t *testing.T) {
	text := "SELECT 1 AS a, 'x;\ny' AS b; -- c;\n/* d;\n*/ SELECT \"e;\n\" FROM t;\nSELECT 'it''s'\n;\n\n;SELECT 2;" +
		"/* a /* b;\n*/ c;\n*/ SELECT E'x\\'\n;' AS e, $t$ $ ;\n$x$;$t$ AS d;\nSELECT 'a' -- x'\n;SELECT 3"
	want, rest := splitStatements(text + "\n")
	stripComments := func(stmts []statement) {
		for i, s := range stmts {
			end, _ := queries.LeadingComments(s.text)
			stmts[i].text = s.text[end:]
		}
	}
	var b stmtBuffer
	var got []statement
	for _, line := range strings.Split(text, "\n") {
		got = append(got, b.Add(line)...)
	}
	stripComments(want)
	stripComments(got)
	if !reflect.DeepEqual(got, want) || b.Pending() != strings.TrimSpace(rest) {
		t.Errorf("line by line: %q, pending %q\nwhole text: %q, rest %q", texts(got), b.Pending(), texts(want), rest)
	}
}

// TestStmtBufferMatchesSplitRandom: the same as TestStmtBufferMatchesSplit on texts put together at
// random from pieces that open, close and nest quotes and comments across lines.
func TestStmtBufferMatchesSplitRandom(t *testing.T) {
	pieces := []string{"SELECT 1", ";", "\n", "\n", "\n", "'", "''", "\"", "E'", `\'`, `\`, "$t$", "$$", "/*", "/*", "*/",
		"*/", "--", "x", ".5"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 20000; n++ {
		var sb strings.Builder
		for k := rng.IntN(40); k >= 0; k-- {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := sb.String()
		want, rest := splitStatements(text + "\n")
		var b stmtBuffer
		var got []statement
		for _, line := range strings.Split(text, "\n") {
			got = append(got, b.Add(line)...)
		}
		norm := func(stmts []statement) []string {
			var out []string
			for _, s := range stmts {
				end, _ := queries.LeadingComments(s.text)
				out = append(out, s.text[end:])
			}
			return out
		}
		strip := func(s string) string {
			end, _ := queries.LeadingComments(s)
			return strings.TrimSpace(s[end:])
		}
		if !reflect.DeepEqual(norm(got), norm(want)) || strip(b.Pending()) != strip(rest) {
			t.Fatalf("%q\nline by line: %q, pending %q\nwhole text: %q, rest %q", text, norm(got), b.Pending(), norm(want), rest)
		}
	}
}

// TestStmtBufferLinear: a statement, quote or comment of many lines must not be rescanned from its
// start on every line (a 2 MB piped script took seconds; a 200,000-line comment took minutes).
func TestStmtBufferLinear(t *testing.T) {
	const n = 50_000
	pad := "padding padding padding padding padding padding padding padding padding"
	for _, c := range []struct {
		name, first, line, last string
	}{
		{"values", "INSERT INTO t VALUES", "(1, '" + pad + "'),", "(2, 'end');"},
		{"block comment", "/*", pad, "*/ SELECT 1;"},
		{"nested comment", "/* /*", pad + " /* */", "*/ */ SELECT 1;"},
		{"string", "SELECT '", pad + " it''s", "' AS s;"},
		{"E string", "SELECT E'", pad + ` \' `, "' AS s;"},
		{"dollar quote", "SELECT $body$", pad + " $ $b$", "$body$ AS s;"},
		{"comment then SQL", "/* c */ SELECT", "1 + ", "1;"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			var b stmtBuffer
			b.Add(c.first)
			for i := 0; i < n; i++ {
				if s := b.Add(c.line); s != nil {
					t.Fatalf("line %d completed %q", i, texts(s))
				}
			}
			stmts := b.Add(c.last)
			if len(stmts) != 1 || b.Pending() != "" {
				t.Fatalf("got %d statements, pending %.40q", len(stmts), b.Pending())
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("%d lines took %v: Add is not linear", n, d)
			}
		})
	}
}

func TestSplitArgs(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip(err)
	}
	cases := []struct {
		line string
		args []string
		err  bool
	}{
		{"load a b", []string{"load", "a", "b"}, false},
		{"  load\ta  ", []string{"load", "a"}, false},
		{`load "a b" 'c d'`, []string{"load", "a b", "c d"}, false},
		{`once "it's.txt"`, []string{"once", "it's.txt"}, false},
		{`mode ""`, []string{"mode", ""}, false},
		{`read "x`, nil, true},
		{`read my\ query.sql`, []string{"read", "my query.sql"}, false},
		{`read it\'s\\x \q`, []string{"read", `it's\x`, `\q`}, false}, // (other backslashes are kept)
		{`read ~/q.sql ~ '~/q' a~ ~b`, []string{"read", home + "/q.sql", home, "~/q", "a~", "~b"}, false},
	}
	// Other commands' arguments keep ~ and backslashes as typed (a label, a LIKE pattern).
	if got, err := splitArgs(`tables ~ a\\b`, false); err != nil || !reflect.DeepEqual(got, []string{"tables", "~", `a\\b`}) {
		t.Errorf("splitArgs of a non-file command: %q, %v", got, err)
	}
	for _, c := range cases {
		got, err := splitArgs(c.line, true)
		if (err != nil) != c.err || !reflect.DeepEqual(got, c.args) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q, error %v", c.line, got, err, c.args, c.err)
		}
	}
}

// TestLeavesRulesUnchanged: the statements after which the session skips the check of the stored results
// against kernel_classes are writes to a user's object named in them; anything that names kernel_classes
// or a tracesql table, or that the reading cannot follow, is checked.
func TestLeavesRulesUnchanged(t *testing.T) {
	for _, c := range []struct {
		stmt string
		want bool
	}{
		{"INSERT INTO ins VALUES (1, 'a')", true},
		{"insert or replace into main.ins SELECT * FROM kernel_classes", true},
		{"INSERT OR IGNORE INTO \"my table\" VALUES (1)", true},
		{"/* c */ -- d\n UPDATE ins SET a = 2 FROM kernel_classes", true},
		{"DELETE FROM db.main.ins WHERE a = 1", true},
		{"TRUNCATE TABLE ins", true},
		{"CREATE TABLE t AS SELECT * FROM kernel_classes", true},
		{"CREATE OR REPLACE TEMP VIEW v AS SELECT 1", true},
		{"CREATE MACRO m(x) AS x + 1", true},
		{"CREATE TABLE IF NOT EXISTS t(a INT)", true},
		{"WITH x AS (SELECT 1) INSERT INTO ins SELECT * FROM x", true},

		{"INSERT INTO kernel_classes VALUES (0, 'x', 'COMMUNICATION', 'all')", false},
		{"INSERT INTO main.\"Kernel_Classes\" VALUES (0, 'x', 'COMMUNICATION', 'all')", false},
		{"UPDATE o.kernel_classes SET priority = 1", false},
		{"DELETE FROM kernel_classes", false},
		{"DELETE FROM _trace_summary", false},
		{"TRUNCATE kernel_classes", false},
		{"COPY kernel_classes FROM 'rules.csv'", false},
		{"COPY FROM DATABASE a TO b", false},
		{"CREATE TEMP TABLE kernel_classes AS SELECT * FROM main.kernel_classes", false},
		{"CREATE OR REPLACE TABLE kernel_classes(a INT)", false},
		{"CREATE SCHEMA s", false},
		{"WITH x AS (SELECT 1) DELETE FROM kernel_classes", false},
		{"CREATE UNIQUE INDEX i ON t(a)", false},
		{"COPY ins FROM 'x.csv'", false},
		{"INSERT INTO 'ins.csv' VALUES (1)", false},
		{"INSERT INTO", false},
		{"DROP TABLE ins", false},
		{"ALTER TABLE ins RENAME TO kernel_classes", false},
		{"EXECUTE q", false},
		{"COMMIT", false},
		{"ATTACH 'o.duckdb' AS o", false},
		{".load x.json", false},
	} {
		if got := leavesRulesUnchanged(c.stmt); got != c.want {
			t.Errorf("leavesRulesUnchanged(%q) = %v, want %v", c.stmt, got, c.want)
		}
	}
}
