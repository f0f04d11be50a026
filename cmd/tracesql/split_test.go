package main

import (
	"reflect"
	"strings"
	"testing"
	"time"
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
			if !reflect.DeepEqual(stmts, c.stmts) || rest != c.rest {
				t.Errorf("splitStatements(%q) = %q, %q; want %q, %q", c.text, stmts, rest, c.stmts, c.rest)
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
				if got := b.Add(line); !reflect.DeepEqual(got, c.stmts[i]) {
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
	text := "SELECT 1 AS a, 'x;\ny' AS b; -- c;\n/* d;\n*/ SELECT \"e;\n\" FROM t;\nSELECT 'it''s'\n;\n\n;SELECT 2"
	want, rest := splitStatements(text + "\n")
	stripComments := func(stmts []string) {
		for i, s := range stmts {
			end, _ := leadingComments(s)
			stmts[i] = s[end:]
		}
	}
	var b stmtBuffer
	var got []string
	for _, line := range strings.Split(text, "\n") {
		got = append(got, b.Add(line)...)
	}
	stripComments(want)
	stripComments(got)
	if !reflect.DeepEqual(got, want) || b.Pending() != strings.TrimSpace(rest) {
		t.Errorf("line by line: %q, pending %q\nwhole text: %q, rest %q", got, b.Pending(), want, rest)
	}
}

// TestStmtBufferLinear: a statement of many lines must not be rescanned from its start on every
// line (that made a 2 MB piped script take seconds, growing quadratically).
func TestStmtBufferLinear(t *testing.T) {
	line := "(1, 'padding padding padding padding padding padding padding padding padding'),"
	start := time.Now()
	var b stmtBuffer
	b.Add("INSERT INTO t VALUES")
	for i := 0; i < 50_000; i++ {
		if s := b.Add(line); s != nil {
			t.Fatalf("line %d completed %q", i, s)
		}
	}
	stmts := b.Add("(2, 'end');")
	if len(stmts) != 1 || len(stmts[0]) < 50_000*len(line) {
		t.Fatalf("got %d statements", len(stmts))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("50k lines took %v: Add is not linear", d)
	}
}

func TestOnlyComments(t *testing.T) {
	cases := map[string]bool{
		"":                       true,
		"  \n\t":                 true,
		"-- a":                   true,
		"-- a\n  -- b\n":         true,
		"/* a */":                true,
		"/* a\n b */ -- c\n":     true,
		"/* unclosed":            true,
		"SELECT 1":               false,
		"-- a\nSELECT 1":         false,
		"/* a */ SELECT 1":       false,
		"/* a */ x /* b */":      false,
		"- 1":                    false,
		"/ 1":                    false,
		"-- a\n/* b */\n.tables": false,
		"/* a /* b */ c */":      true,
		"/* a /* b */ c":         true,
	}
	for text, want := range map[string]int{"": 0, "x": 0, " -- a\n x": 7, "/* a */x": 7, "-- a\n": 5} {
		if end, unclosed := leadingComments(text); end != want || unclosed {
			t.Errorf("leadingComments(%q) = %d, %v; want %d, false", text, end, unclosed, want)
		}
	}
	for _, text := range []string{"-- a", "/* a", "-- a\n/* b */ /*"} {
		if end, unclosed := leadingComments(text); end != len(text) || !unclosed {
			t.Errorf("leadingComments(%q) = %d, %v; want %d, true", text, end, unclosed, len(text))
		}
	}
	for text, want := range cases {
		if got := onlyComments(text); got != want {
			t.Errorf("onlyComments(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestSplitArgs(t *testing.T) {
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
	}
	for _, c := range cases {
		got, err := splitArgs(c.line)
		if (err != nil) != c.err || !reflect.DeepEqual(got, c.args) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q, error %v", c.line, got, err, c.args, c.err)
		}
	}
}
