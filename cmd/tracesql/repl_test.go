package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPipedSession feeds a script through a non-terminal stdin: no prompts, statements may span
// lines, an error is reported and the session goes on, and the exit status is 1 because one failed.
func TestPipedSession(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db") // --db: no bundled sample, no overview
	script := `-- a leading comment; with a semicolon
SELECT 1 AS a,
       'x;y' AS b,   -- trailing comment; ignored
       'it''s' AS "c;d";
.mode csv
SELECT nope FROM nowhere;
/* block ; comment */ SELECT 2 AS d; SELECT 3 AS e;
.load ` + backwardJSON + ` --label piped
SELECT label, count(*) AS n FROM traces GROUP BY 1;
SELECT count(*) AS kernels
FROM kernels
WHERE name LIKE '%cutlass%';
.quit
SELECT 4 AS never;
`
	out, errOut, code := runCLI(t, script, "--db", db)
	want := `┌─────────┬─────────┬─────────┐
│    a    │    b    │   c;d   │
│ integer │ varchar │ varchar │
├─────────┼─────────┼─────────┤
│       1 │ x;y     │ it's    │
└─────────┴─────────┴─────────┘
d
2
e
3
label,n
piped,1
kernels
1
`
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	if !regexp.MustCompile(`^tracesql: stdin:6: Catalog Error: .*nowhere.*\n$`).MatchString(errOut) {
		t.Errorf("stderr: want one line about the missing table, got:\n%s", errOut)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1 (one statement failed)", code)
	}
}

func TestPipedExitStatus(t *testing.T) {
	cases := []struct {
		name, stdin, stdout string
		code                int
	}{
		{"all ok", "SELECT 1 AS a;\nSELECT 2 AS b;\n", "a\n1\nb\n2\n", 0},
		{"last statement without ;", "SELECT 1 AS a;\nSELECT 2\n  AS b\n", "a\n1\nb\n2\n", 0},
		{"trailing comments only", "SELECT 1 AS a;\n-- bye\n/* bye */\n", "a\n1\n", 0},
		{"failing last statement without ;", "SELECT 1 AS a;\nSELEC 2", "a\n1\n", 1},
		{"failing dot command", ".bogus\nSELECT 1 AS a;", "a\n1\n", 1},
		{"failing .read goes on", ".read /nonexistent/x.sql\nSELECT 1 AS a;", "a\n1\n", 1},
		{".quit before an error", "SELECT 1 AS a;\n.quit\nSELEC;", "a\n1\n", 0},
		{"empty", "", "", 0},
		{"comment line before a dot command", "-- csv please\n.mode jsonl\nSELECT 1 AS a;", "{\"a\":1}\n", 0},
		{"empty statement before a dot command", "SELECT 1 AS a;\n;\n.mode jsonl\nSELECT 2 AS b;", "a\n1\n{\"b\":2}\n", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, c.stdin, "--db", filepath.Join(t.TempDir(), "x.db"), "--format", "csv")
			if out != c.stdout || code != c.code {
				t.Errorf("exit %d (want %d), stdout:\n%s\nwant:\n%s\nstderr:\n%s", code, c.code, out, c.stdout, errOut)
			}
			if (code == 0) != (errOut == "") {
				t.Errorf("stderr does not match the exit status %d:\n%s", code, errOut)
			}
		})
	}
}

// TestPipedWithTrace: a trace argument with piped statements prints only the results (no overview),
// so the output of `tracesql T --format csv < q.sql` is clean CSV.
func TestPipedWithTrace(t *testing.T) {
	out, errOut, code := runCLI(t, "SELECT count(*) AS n FROM events;\n", backwardJSON, "--format", "csv")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if out != "n\n7\n" {
		t.Errorf("want only the result, got:\n%s", out)
	}
}

// TestPipedLongLines: readline is quadratic in line length; the piped path must not be, nor may
// a long statement spread over many lines be.
func TestPipedLongLines(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.db")
	t.Run("300 kB line", func(t *testing.T) {
		long := strings.Repeat("x", 300_000)
		start := time.Now()
		out, errOut, code := runCLI(t, "SELECT '"+long+"' AS s;\nSELECT length('"+long+"') AS n\n", "--db", db, "--format", "csv")
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %v", d)
		}
		if code != 0 || errOut != "" {
			t.Fatalf("exit %d, stderr:\n%s", code, errOut)
		}
		if want := "s\n" + long + "\nn\n300000\n"; out != want {
			t.Errorf("stdout is %d bytes, want %d", len(out), len(want))
		}
	})
	t.Run("a line past the limit", func(t *testing.T) {
		// (limit lowered for the test; 256 MiB: "read stdin: bufio.Scanner: token too long" named neither)
		defer func(n int) { maxPipedLine = n }(maxPipedLine)
		maxPipedLine = 2 << 20
		_, errOut, code := runCLI(t, "SELECT 1;\nSELECT '"+strings.Repeat("x", 3<<20)+"';\n", "--db", db, "--format", "csv")
		if want := "tracesql: stdin:2: a line longer than 2 MiB (read the script with -f FILE, which has no such limit)\n"; code != 1 || errOut != want {
			t.Errorf("exit %d, stderr %q; want 1, %q", code, errOut, want)
		}
	})
	t.Run("20k-line statement", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("SELECT count(*) AS n, sum(a) AS s FROM (VALUES\n")
		for i := 0; i < 20_000; i++ {
			if i > 0 {
				b.WriteString(",\n")
			}
			b.WriteString("(1, 'padding padding padding padding padding padding padding padding')")
		}
		b.WriteString("\n) t(a, b);\n")
		start := time.Now()
		out, errOut, code := runCLI(t, b.String(), "--db", db, "--format", "csv")
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %v", d)
		}
		if code != 0 || out != "n,s\n20000,20000\n" {
			t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
	})
}

// tmuxSession drives the built binary in a real terminal.
type tmuxSession struct {
	t    *testing.T
	sock string
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is the pane with its scrollback, trailing spaces and blank lines removed.
func (s *tmuxSession) screen() string {
	s.t.Helper()
	lines := strings.Split(s.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "t"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// waitFor polls the pane until it matches re. The deadline is generous: on a loaded 2-core machine a
// completion once took more than 10 s to show (the same step takes 50 ms alone).
func (s *tmuxSession) waitFor(re string) string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(30 * time.Second)
	for {
		scr := s.screen()
		if rx.MatchString(scr) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s; screen:\n%s", re, scr)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// typeText types text literally. It goes as hex bytes: tmux would take an argument ending in ';'
// as a command separator.
func (s *tmuxSession) typeText(text string) {
	s.t.Helper()
	args := []string{"send-keys", "-t", "t", "-H"}
	for _, b := range []byte(text) {
		args = append(args, fmt.Sprintf("%02x", b))
	}
	s.tmux(args...)
}

// paste pastes text as a terminal does when the application asked for bracketed pastes (tmux
// brackets it only then: -p), its line breaks sent as carriage returns.
func (s *tmuxSession) paste(text string) {
	s.t.Helper()
	f := filepath.Join(s.t.TempDir(), "paste")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.tmux("load-buffer", "-b", "p", f)
	s.tmux("paste-buffer", "-p", "-d", "-b", "p", "-t", "t")
}

func (s *tmuxSession) key(k string) { s.t.Helper(); s.tmux("send-keys", "-t", "t", k) }

// TestTerminalREPL runs the REPL in tmux: prompts, a two-line statement, Tab completion, Ctrl-C at
// the prompt, .quit, and the history file.
func TestTerminalREPL(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	trace, err := filepath.Abs(alexnetDir)
	if err != nil {
		t.Fatal(err)
	}
	s := startTmuxCLI(t, home, 160, trace)

	s.waitFor(`(?m)^tracesql>$`)

	// A statement over two lines: the continuation prompt, then the result.
	s.typeText("SELECT 40 +")
	s.key("Enter")
	s.waitFor(`\n     \.\.\.>$`)
	s.typeText("2 AS answer;")
	s.key("Enter")
	s.waitFor(`│\s+42 │\n└─+┘\ntracesql>$`)

	// Tab completes a view name ("kernel_launch" alone is ambiguous with kernel_launch_stats).
	s.typeText("SELECT count(*) AS n FROM kernel_launche")
	s.waitFor(`kernel_launche$`) // a Tab read in one burst with typed text is taken as pasted (kept as a tab)
	s.key("Tab")
	s.waitFor(`tracesql> SELECT count\(\*\) AS n FROM kernel_launches$`)
	s.typeText(";")
	s.key("Enter")
	s.waitFor(`│\s+98 │\n└─+┘\ntracesql>$`)

	// Ctrl-C at the continuation prompt drops the pending text; the session goes on.
	s.typeText("SELECT 'dropped' AS x,")
	s.key("Enter")
	s.waitFor(`\n     \.\.\.>$`)
	s.key("C-c")
	s.waitFor(`\^C\ntracesql>$`)
	s.typeText("SELECT 7 AS seven;")
	s.key("Enter")
	scr := s.waitFor(`│\s+7 │\n└─+┘\ntracesql>$`)
	if strings.Contains(scr, "Error") || strings.Contains(scr, "│ dropped") {
		t.Errorf("the interrupted statement was not dropped:\n%s", scr)
	}

	// Ctrl-C during a running query stops it with one plain line; the session goes on.
	s.typeText("SELECT count(*) FROM range(100000000000) a(x) WHERE x % 7 = 3;")
	s.key("Enter")
	time.Sleep(300 * time.Millisecond)
	s.key("C-c")
	s.waitFor(`\^C\ntracesql: query cancelled \(Ctrl-C\)\ntracesql>$`)

	// Ctrl-C on a half-typed line at the main prompt clears it.
	s.typeText("SELECT junk")
	s.key("C-c")
	s.waitFor(`tracesql> SELECT junk\^C\ntracesql>$`)

	// A -- comment ended by a line break is kept in history as /* */, so that the line runs again.
	s.typeText("SELECT 5 AS five -- note")
	s.key("Enter")
	s.waitFor(`\n     \.\.\.>$`)
	s.typeText(";")
	s.key("Enter")
	s.waitFor(`│\s+5 │\n└─+┘\ntracesql>$`)

	// An error names the place in the statement, as DuckDB's shell does (batch runs keep one line).
	s.typeText("SELECT 1 + FROM x;")
	s.key("Enter")
	s.waitFor(`tracesql: Parser Error: syntax error at or near "FROM"\nLINE 1: SELECT 1 \+ FROM x\n\s+\^\ntracesql>$`)

	// A result wider than the screen is fitted to it, as with -c on a terminal.
	var cols []string
	for i := 1; i <= 25; i++ {
		cols = append(cols, fmt.Sprintf("repeat('x', 12) AS c%02d", i))
	}
	s.typeText("SELECT " + strings.Join(cols, ", ") + ";")
	s.key("Enter")
	scr = s.waitFor(`columns \(\d+ shown\)\ntracesql>$`)
	for _, line := range strings.Split(scr, "\n") {
		if strings.HasPrefix(line, "│") && len([]rune(line)) > 160 {
			t.Errorf("a table line wider than the 160-column screen: %q", line)
		}
	}

	// A pasted tab is kept (readline took every tab for Tab, and dropped it where nothing completed).
	s.typeText("SELECT length('a\tb') AS n,\tlength('x\t\ty') AS m;")
	s.key("Enter")
	s.waitFor(`│\s+3 │\s+4 │\n└─+┴─+┘\ntracesql>$`)

	// A bracketed paste goes into the line at once: a 20,000-character line took 22 s rune by rune
	// (readline redraws the line for each). Its tabs and line breaks are kept, a control character is
	// dropped (not taken for a key: Ctrl-C cleared the line), and its last line waits for the rest.
	s.typeText("SELECT ")
	s.paste("length('" + strings.Repeat("abcdefghij", 2000) + "') AS long_line,\n\tlength('p\tq\x03') AS pasted;\nSELECT 6 AS")
	s.waitFor(`tracesql> SELECT 6 AS$`)
	s.typeText(" six;")
	s.key("Enter")
	scr = s.waitFor(`│\s+six\s+│\n│\s+integer\s+│\n├─+┤\n│\s+6 │\n└─+┘\ntracesql>$`)
	if !regexp.MustCompile(`│\s+20000 │\s+3 │`).MatchString(scr) {
		t.Errorf("the pasted statement gave another result:\n%s", scr)
	}

	// Completion keeps the case typed; .mode completes its formats.
	s.typeText("sel")
	s.waitFor(`tracesql> sel$`)
	s.key("Tab")
	s.waitFor(`tracesql> select$`)
	s.key("C-c")
	s.waitFor(`\^C\ntracesql>$`)
	s.typeText(".mode ma")
	s.waitFor(`tracesql> \.mode ma$`)
	s.key("Tab")
	s.waitFor(`tracesql> \.mode markdown$`)
	s.key("C-c")
	s.waitFor(`\^C\ntracesql>$`)

	// Ctrl-D at the continuation prompt does not run the statement typed so far (a DELETE whose WHERE
	// was still to come ran): it goes to the history, and the session ends.
	s.typeText("SELECT 9 AS nine")
	s.key("Enter")
	s.waitFor(`\n     \.\.\.>$`)
	s.key("C-d")
	scr = s.waitFor(`EXIT=\d+`)
	if regexp.MustCompile(`│\s+nine\s+│`).MatchString(scr) || !strings.Contains(scr, "tracesql: the statement not ended by ';' was not run") {
		t.Errorf("Ctrl-D ran the pending statement, or said nothing:\n%s", scr)
	}
	if !strings.Contains(scr, "EXIT=0") {
		t.Errorf("exit status not 0:\n%s", scr)
	}
	for _, want := range []string{"Traces", "Events by class", `Enter ".help" for usage hints`,
		"tracesql> SELECT 40 +\n     ...> 2 AS answer;\n", "answer"} {
		if !strings.Contains(scr, want) {
			t.Errorf("screen lacks %q:\n%s", want, scr)
		}
	}

	histFile := filepath.Join(home, ".tracesql_history")
	hist, err := os.ReadFile(histFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(histFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("history file mode %v (%v), want 0600: it holds every statement typed", fi.Mode(), err)
	}
	wantHist := "SELECT 40 + 2 AS answer;\nSELECT count(*) AS n FROM kernel_launches ;\nSELECT 7 AS seven;\nSELECT count(*) FROM range(100000000000) a(x) WHERE x % 7 = 3;\nSELECT 5 AS five /* note */ ;\nSELECT 1 + FROM x;\nSELECT " + strings.Join(cols, ", ") + ";\n" +
		"SELECT length('a\tb') AS n,\tlength('x\t\ty') AS m;\n" +
		"SELECT length('" + strings.Repeat("abcdefghij", 2000) + "') AS long_line, \tlength('p\tq') AS pasted;\nSELECT 6 AS six;\n" +
		"SELECT 9 AS nine\n"
	if string(hist) != wantHist {
		t.Errorf("history:\n%s\nwant:\n%s", hist, wantHist)
	}
}

func TestHistoryLine(t *testing.T) {
	cases := []struct{ entry, want string }{
		{"SELECT 1;", "SELECT 1;"},
		{"SELECT 1\n  AS a;", "SELECT 1   AS a;"},
		{"SELECT 1 AS a -- comment\n;", "SELECT 1 AS a /* comment */ ;"},
		{"SELECT 1 -- a */ b /* c\n, 2;", "SELECT 1 /* a * / b / * c */ , 2;"},
		{"SELECT '--x' AS \"--y\", $$--z$$;", "SELECT '--x' AS \"--y\", $$--z$$;"},
		{"SELECT E'\\'--' AS e -- c\n;", "SELECT E'\\'--' AS e /* c */ ;"},
		{"SELECT 1; -- done", "SELECT 1; /* done */"},
		{"SELECT /* a\n-- b */ 1;", "SELECT /* a -- b */ 1;"},
		{"SELECT 'a\nb';", "SELECT 'a b';"},
		{".tables", ".tables"},
		// (a dot command's -- are flags: /*label=ctl */ made the recalled line load a file of that name)
		{".load 'a b/r1.json' --label=ctl --replace", ".load 'a b/r1.json' --label=ctl --replace"},
		{"  .unload --label test", ".unload --label test"},
	}
	for _, c := range cases {
		if got := historyLine(c.entry); got != c.want {
			t.Errorf("historyLine(%q) = %q, want %q", c.entry, got, c.want)
		}
	}
	// Recalling the line runs the statements the entry ran.
	for _, c := range cases[:8] {
		var entry, line stmtBuffer
		var fromEntry, fromLine []string
		for _, l := range strings.Split(c.entry, "\n") {
			fromEntry = append(fromEntry, texts(entry.Add(l))...)
		}
		fromLine = texts(line.Add(historyLine(c.entry)))
		if len(fromEntry) != len(fromLine) || line.Pending() != "" {
			t.Errorf("%q: entry ran %q, its history line %q (pending %q)", c.entry, fromEntry, fromLine, line.Pending())
		}
	}
}

// TestCompletionHidesInternals: completion offers the public names (critical_path…, tables, columns), the
// internal _ ones only to a word that starts with _, and the Go table functions never.
func TestCompletionHidesInternals(t *testing.T) {
	db := openReportDB(t, backwardJSON)
	c := &completer{s: &session{db: db}}
	complete := func(word string) []string {
		cands, _ := c.Do([]rune(word), len(word))
		var out []string
		for _, suffix := range cands { // readline gets what follows the word typed so far
			out = append(out, word+strings.TrimSpace(string(suffix)))
		}
		return out
	}
	cp := complete("SELECT * FROM critical_pa")
	if !slices.Contains(cp, "SELECT * FROM critical_path") || !slices.Contains(cp, "SELECT * FROM critical_path_summary") {
		t.Errorf("critical_pa completes to %q", cp)
	}
	// scalar and aggregate functions too (only table functions and macros were offered)
	if got := complete("SELECT regexp_ext"); !slices.Contains(got, "SELECT regexp_extract") {
		t.Errorf("regexp_ext completes to %q", got)
	}
	if got := complete("SELECT approx_quan"); !slices.Contains(got, "SELECT approx_quantile") {
		t.Errorf("approx_quan completes to %q", got)
	}
	for _, word := range []string{"SELECT * FROM c", "SELECT * FROM h", "SELECT * FROM l"} {
		for _, s := range complete(word) {
			if strings.Contains(s, "FROM _") {
				t.Errorf("%q offers the internal %q", word, s)
			}
		}
	}
	if under := complete("SELECT * FROM _hta_fr"); !slices.Contains(under, "SELECT * FROM _hta_frame_default") {
		t.Errorf("_hta_fr completes to %q, want the internal _hta_frame_default still reachable when asked for", under)
	}
	if under := complete("SELECT * FROM _cp_pa"); len(under) > 0 {
		t.Errorf("_cp_pa completes to %q, want nothing: a statement that calls a Go table function is refused", under)
	}
}

// TestCompletionDotArguments: the arguments of the dot commands complete (r69 #8): object names after
// .describe, .schema and .tables (documented analyses and the user's own tables, not the internal ones),
// on/off, command names after .help, flags after .load and .unload, and SQL after .chart.
func TestCompletionDotArguments(t *testing.T) {
	db := openReportDB(t, backwardJSON)
	if _, err := db.SQL.Exec(`CREATE TABLE job_meta(rank INT); CREATE MACRO job_macro() AS TABLE SELECT 1`); err != nil {
		t.Fatal(err)
	}
	c := &completer{s: &session{db: db}}
	for _, tc := range []struct {
		line string
		want []string // completions, the line as it reads after each
		not  []string
	}{
		{line: ".describe critical_pa", want: []string{".describe critical_path", ".describe critical_path_summary", ".describe critical_path_whatif"}},
		{line: ".describe kernel_break", want: []string{".describe kernel_breakdown"}},
		{line: ".describe job_", want: []string{".describe job_macro", ".describe job_meta"}},
		{line: ".desc temporal", want: []string{".desc temporal_breakdown"}},
		{line: ".schema even", want: []string{".schema events"}},
		{line: ".tables kernel_l", want: []string{".tables kernel_launch_stats", ".tables kernel_launches"}},
		{line: ".describe _hta_fr", want: []string{".describe _hta_frame_default"}},
		{line: ".describe ", not: []string{".describe _hta_frame_default", ".describe _cp_path", ".describe ts"}},
		{line: ".headers o", want: []string{".headers off", ".headers on"}},
		{line: ".timer of", want: []string{".timer off"}},
		{line: ".help sch", want: []string{".help schema"}},
		{line: ".load x.json --la", want: []string{".load x.json --label"}},
		{line: ".load x.json --r", want: []string{".load x.json --replace"}},
		{line: ".unload --", want: []string{".unload --label"}},
		{line: ".chart SELECT * FROM temporal_brea", want: []string{".chart SELECT * FROM temporal_breakdown"}},
		// the loaded trace sets after --label (r74 #7)
		{line: ".unload --label ", want: []string{".unload --label trace"}},
		{line: ".unload --label tr", want: []string{".unload --label trace"}},
		{line: ".load x.json --label t", want: []string{".load x.json --label trace"}},
	} {
		cands, _ := c.Do([]rune(tc.line), len([]rune(tc.line)))
		var got []string
		for _, rest := range cands { // readline gets what follows the word typed so far
			got = append(got, strings.TrimSpace(tc.line+string(rest)))
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q completes to %q, want %q among them", tc.line, got, w)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("%q offers %q", tc.line, w)
			}
		}
		if len(tc.not) > 0 && len(got) == 0 {
			t.Errorf("%q completes to nothing", tc.line)
		}
	}
}

// TestCompletionQuoting: a completed name reads back as the file or table it names. A file name with a
// space completed to `.read my query.sql` (then "usage: .read FILE"), nothing completed inside '…' or
// "…", a table that needs quotes to `FROM My Table`, and ~ was not the home directory.
func TestCompletionQuoting(t *testing.T) {
	db := openReportDB(t, backwardJSON)
	if _, err := db.SQL.Exec(`CREATE TABLE "My Table"(x INT)`); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, f := range []string{"my query.sql", "it's.sql"} {
		if err := os.WriteFile(filepath.Join(home, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(home, "dir with space"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &completer{s: &session{db: db}}
	for _, tc := range []struct {
		line string
		want []string // the completed lines
		arg  string   // what the dot command reads from the first, "" for SQL
	}{
		{".read " + home + "/my", []string{".read " + home + `/my\ query.sql`}, home + "/my query.sql"},
		{".read '" + home + "/my", []string{".read '" + home + "/my query.sql'"}, home + "/my query.sql"},
		{".read " + home + "/it", []string{".read " + home + `/it\'s.sql`}, home + "/it's.sql"},
		{`.read "` + home + "/it", []string{`.read "` + home + `/it's.sql"`}, home + "/it's.sql"},
		{".read '" + home + "/it", nil, ""}, // (' cannot be written inside '…')
		{".load ~/di", []string{`.load ~/dir\ with\ space/`}, home + "/dir with space/"},
		{".once ~/my", []string{`.once ~/my\ query.sql`}, home + "/my query.sql"},
		{`SELECT * FROM "My`, []string{`SELECT * FROM "My Table" `}, ""},
		{`SELECT * FROM "my t`, []string{`SELECT * FROM "my table" `}, ""},
	} {
		cands, n := c.Do([]rune(tc.line), len([]rune(tc.line)))
		var got []string
		for _, suffix := range cands {
			got = append(got, tc.line+string(suffix))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q completes to %q, want %q", tc.line, got, tc.want)
			continue
		}
		if n < 0 || n > len([]rune(tc.line)) {
			t.Errorf("%q: prefix length %d", tc.line, n)
		}
		if tc.arg != "" {
			args, err := splitArgs(got[0], true)
			if err != nil || len(args) != 2 || args[1] != tc.arg {
				t.Errorf("%q reads as %q (%v), want the argument %q", got[0], args, err, tc.arg)
			}
		}
	}
	// A name that needs quotes is not offered without them: `FROM My Table` is not SQL.
	cands, _ := c.Do([]rune("SELECT * FROM My"), len("SELECT * FROM My"))
	for _, suffix := range cands {
		if strings.Contains(string(suffix), " ") && strings.TrimSpace(string(suffix)) != "" {
			t.Errorf("SELECT * FROM My offers %q", suffix)
		}
	}
}

// TestLoadReplacesSample: a session started on the bundled sample drops it when the user's first
// traces load (kept, the sample's events were summed with theirs and its rank 0 clashed with
// theirs in the critical path); a load that fails keeps it.
func TestLoadReplacesSample(t *testing.T) {
	script := `SELECT label, count(*) AS files FROM traces GROUP BY 1;
.load /nonexistent/trace.json
SELECT label, count(*) AS files FROM traces GROUP BY 1;
.load ` + backwardJSON + `
SELECT label, count(*) AS files FROM traces GROUP BY 1;
SELECT count(*) AS kernels FROM kernels;
SELECT count(DISTINCT trace_id) AS traces FROM events;
SELECT count(*) AS paths FROM critical_path_summary(annotation := '', instance := 0) WHERE label = 'trace';
`
	out, errOut, code := runCLI(t, script, "--format", "csv")
	want := "label,files\nsample,1\nlabel,files\nsample,1\nlabel,files\ntrace,1\nkernels\n1\ntraces\n1\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("stdout:\n%s\nwant it to start with:\n%s", out, want)
	}
	if code != 1 || !strings.Contains(errOut, "/nonexistent/trace.json") ||
		strings.Count(errOut, "unloaded the bundled sample") != 1 || strings.Count(errOut, "the session still holds only the bundled sample") != 1 {
		t.Errorf("exit %d (want 1: the failed load), stderr:\n%s", code, errOut)
	}
	if strings.Contains(errOut, "several labels") {
		t.Errorf("the sample's rank clashed with the loaded trace's:\n%s", errOut)
	}
}

// TestCtrlCStopsPipedScript: Ctrl-C (SIGINT) during a statement read from piped input cancels it and stops the
// script, as DuckDB's shell does (the REPL goes on at its prompt instead: TestTerminalREPL); the exit status is
// 130, a shell's for SIGINT.
func TestCtrlCStopsPipedScript(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	for _, c := range []struct{ name, script string }{
		{"a statement", "SELECT 1 AS started;\nSELECT sum(hash(range)) AS s FROM range(100000000000);\nSELECT 2 AS after;\n"},
		{"inside .read", "SELECT 1 AS started;\n.read $TMP/long.sql\nSELECT 2 AS after;\n"},
		{"the last statement, without ;", "SELECT 1 AS started;\nSELECT sum(hash(range)) AS s FROM range(100000000000)"},
		// (a .load had no handler: the signal killed the process, the session lost)
		{".load", "SELECT 1 AS started;\n.load $TMP/big.json --label big\nSELECT 2 AS after;\n"},
	} {
		t.Run(c.name, func(t *testing.T) { ctrlCScript(t, c.script) })
	}
}

func ctrlCScript(t *testing.T, script string) {
	tmp := t.TempDir()
	if err := os.WriteFile(filepath.Join(tmp, "long.sql"), []byte("SELECT sum(hash(range)) AS s FROM range(100000000000);\nSELECT 3 AS inner_after;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(script, "big.json") {
		// ~100 MB of kernels: a load that is still under way when the signal comes
		var b bytes.Buffer
		b.WriteString(`{"traceEvents": [`)
		for i := 0; b.Len() < 100<<20; i++ {
			fmt.Fprintf(&b, `{"ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": 7, "ts": %d.5, "dur": 1.25, "args": {"stream": 7, "correlation": %d}},`+"\n", i%50, i*2, i)
		}
		b.WriteString(`{"ph": "X", "cat": "kernel", "name": "last", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]}`)
		if err := os.WriteFile(filepath.Join(tmp, "big.json"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd, out, errOut := startCLI(t, strings.NewReader(strings.ReplaceAll(script, "$TMP", tmp)), backwardJSON, "--format", "csv")
	// The first result is printed when the long statement starts; give it a moment to be under way.
	rd := bufio.NewReader(out)
	var got strings.Builder
	for !strings.Contains(got.String(), "started\n1\n") {
		line, err := rd.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			cmd.Process.Kill()
			t.Fatalf("no first result: %q, %v; stderr %s", got.String(), err, errOut.String())
		}
	}
	if strings.Contains(script, "big.json") {
		time.Sleep(150 * time.Millisecond)
	} else {
		time.Sleep(500 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(rd)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("exit %v, want status 130", err)
	}
	want := "query cancelled (Ctrl-C)"
	if strings.Contains(script, ".load") { // said of the load, not of a query
		want = "tracesql: stdin:2: load cancelled (Ctrl-C): the file it was loading left nothing behind\n"
	}
	if len(rest) != 0 || !strings.Contains(errOut.String(), want) {
		t.Errorf("after Ctrl-C: stdout %q, stderr %q; want the script stopped there", rest, errOut.String())
	}
}

// TestCtrlCWhileLoading: Ctrl-C while a new --db opens and loads ends the run with 130 and one line
// (SIGTERM: 143, and the line names SIGTERM, not Ctrl-C), and leaves no half-made database: either no file, or one whose every trace is complete (a file's load is
// one transaction). Before, the signal killed the process and left the file behind.
func TestCtrlCWhileLoading(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	perTrace := []string{"--format", "csv", "-c", "SELECT path, (SELECT count(*) FROM events e WHERE e.trace_id = t.trace_id) AS n FROM traces t"}
	full := mustRun(t, "", append([]string{"../../testdata/traces/dlrm_8ranks"}, perTrace...)...)
	for _, c := range []struct {
		wait   time.Duration
		signal os.Signal
		status int
		name   string
	}{{0, os.Interrupt, 130, "(Ctrl-C)"}, {150 * time.Millisecond, os.Interrupt, 130, "(Ctrl-C)"}, {50 * time.Millisecond, syscall.SIGTERM, 143, "(SIGTERM)"}} {
		wait := c.wait
		db := filepath.Join(t.TempDir(), "new.duckdb")
		cmd := exec.Command(bin, "--db", db, "../../testdata/traces/dlrm_8ranks", "-c", "SELECT 1")
		cmd.Env = append(os.Environ(), asCLI+"=1")
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The database file appears once the signal handler is in place (it is set up before the open).
		deadline := time.Now().Add(10 * time.Second)
		for _, err := os.Stat(db); err != nil && time.Now().Before(deadline); _, err = os.Stat(db) {
			time.Sleep(2 * time.Millisecond)
		}
		time.Sleep(wait)
		cmd.Process.Signal(c.signal)
		err := cmd.Wait()
		var exit *exec.ExitError
		if err == nil {
			t.Logf("wait %v: the load finished before the signal", wait)
			continue
		}
		if !errors.As(err, &exit) || exit.ExitCode() != c.status || !strings.HasPrefix(errOut.String(), "tracesql: ") ||
			strings.Count(errOut.String(), "\n") != 1 || !strings.Contains(errOut.String(), c.name) {
			t.Fatalf("%v after %v: %v, stderr %q; want exit %d and one line naming %s", c.signal, wait, err, errOut.String(), c.status, c.name)
		}
		if _, err := os.Stat(db); err != nil {
			continue // removed: nothing had loaded
		}
		out, errOut2, code := runCLI(t, "", append([]string{"--db", db}, perTrace...)...)
		if code != 0 {
			t.Fatalf("wait %v: the database left behind: exit %d, %s", wait, code, errOut2)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			if !strings.Contains(full, line+"\n") {
				t.Errorf("wait %v: a trace left half loaded: %s (complete loads:\n%s)", wait, line, full)
			}
		}
	}
}

// TestBatchTerminationSignal: SIGTERM or SIGHUP while a batch statement runs cancels it as Ctrl-C does (a file
// an export was writing is removed: review r78 #2 found an export's hidden temporary file left behind, the
// process killed by the signal) and ends the run with the shell's status for the signal and one line.
func TestBatchTerminationSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	for _, c := range []struct {
		signal syscall.Signal
		status int
		line   string
	}{{syscall.SIGTERM, 143, "tracesql: stopped by SIGTERM\n"}, {syscall.SIGHUP, 129, "tracesql: stopped by SIGHUP\n"}} {
		cmd, out, errOut := startCLI(t, nil, backwardJSON, "--format", "csv", "--no-header", "-c", "SELECT 1 AS started", "-c", "SELECT count(*) FROM range(1000000000000)")
		first := make([]byte, 2)
		if _, err := io.ReadFull(out, first); err != nil || string(first) != "1\n" {
			t.Fatalf("first statement: %q %v", first, err)
		}
		time.Sleep(100 * time.Millisecond) // inside the long statement
		cmd.Process.Signal(c.signal)
		rest, _ := io.ReadAll(out)
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != c.status || errOut.String() != c.line || len(rest) != 0 {
			t.Errorf("%v: %v, stdout %q, stderr %q; want exit %d and %q", c.signal, err, rest, errOut.String(), c.status, c.line)
		}
	}
}

// TestConcurrentNewDB: two runs start together on a --db file that does not exist yet. One creates it;
// the other finds it locked (or, later, loads into it). Either way the file stays with the first
// run's trace: the loser used to remove the file it found locked, which it took for its own
// half-made database (it had not been there at its first look), and the winner's load was lost.
func TestConcurrentNewDB(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for try := 0; try < 3; try++ {
		db := filepath.Join(t.TempDir(), "race.duckdb")
		var cmds []*exec.Cmd
		for range 2 {
			cmd := exec.Command(bin, "--db", db, backwardJSON, "-c", "SELECT 1")
			cmd.Env = append(os.Environ(), asCLI+"=1")
			cmds = append(cmds, cmd)
		}
		for _, cmd := range cmds {
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
		}
		ok := 0
		for _, cmd := range cmds {
			if cmd.Wait() == nil {
				ok++
			}
		}
		if ok == 0 {
			t.Fatalf("try %d: both runs failed", try)
		}
		if got := mustRun(t, "", "--db", db, "--format", "csv", "-c", "SELECT count(*) AS n FROM traces"); got != "n\n1\n" {
			t.Fatalf("try %d: the database after two runs holds %q, want its one trace", try, got)
		}
	}
}

// chunkReader hands out its chunks one per Read, as a terminal delivers input.
type chunkReader struct{ chunks []string }

func (c *chunkReader) Read(b []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(b, c.chunks[0])
	if n < len(c.chunks[0]) {
		c.chunks[0] = c.chunks[0][n:]
	} else {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

func (c *chunkReader) Close() error { return nil }

// TestPasteBrackets checks what readline gets from bracketed pastes (one mark per pasted line, Enter
// between lines) and what the listener puts in their place, with brackets cut between reads.
func TestPasteBrackets(t *testing.T) {
	const mark = string(pasteMark)
	cases := []struct {
		name       string
		chunks     []string
		wantInput  string
		wantPieces []string
	}{
		{"typed", []string{"SELECT 1;\r"}, "SELECT 1;\r", nil},
		{"one line", []string{"SELECT \x1b[200~1 AS a\x1b[201~;\r"}, "SELECT " + mark + ";\r", []string{"1 AS a"}},
		{"lines", []string{"\x1b[200~a,\r\tb;\r\nc\r\x1b[201~"}, mark + "\r" + mark + "\r" + mark + "\r", []string{"a,", "\tb;", "c"}},
		{"cut brackets", []string{"x\x1b[2", "00~ab", "c\x1b[20", "1~y"}, "x" + mark + "y", []string{"abc"}},
		{"control characters", []string{"\x1b[200~'\x03a\x1b[31m\x7f'\x1b[201~"}, mark, []string{"'a[31m'"}},
		{"arrow key and Esc", []string{"\x1b[A", "\x1b", "b"}, "\x1b[A\x1bb", nil},
		{"empty paste", []string{"\x1b[200~\x1b[201~z"}, "z", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &pasteAwareStdin{r: &chunkReader{chunks: slices.Clone(tc.chunks)}}
			got, err := io.ReadAll(p)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.wantInput {
				t.Errorf("readline gets %q, want %q", got, tc.wantInput)
			}
			var texts []string
			for _, piece := range p.pieces {
				texts = append(texts, piece.text)
				if piece.paste != 1 {
					t.Errorf("piece %q of paste %d, want paste 1", piece.text, piece.paste)
				}
			}
			if !slices.Equal(texts, tc.wantPieces) {
				t.Errorf("queued %q, want %q", texts, tc.wantPieces)
			}
		})
	}

	// The listener replaces the mark readline just inserted, and leaves other keys alone.
	// The line records the paste it took text from (the REPL drops the rest of a paste whose statement Ctrl-C
	// cancelled).
	p := &pasteAwareStdin{pieces: []pastedLine{{"pasted", 4}, {"lost", 4}}}
	line := []rune("ab" + mark + "cd")
	if _, _, ok := p.insertPaste(line, 3, 'x'); ok || p.lineFrom.Load() != 0 {
		t.Error("a typed key changed the line")
	}
	out, pos, ok := p.insertPaste(line, 3, pasteMark)
	if !ok || string(out) != "abpastedcd" || pos != 8 || p.lineFrom.Load() != 4 {
		t.Errorf("insertPaste = %q, %d, %v, paste %d; want \"abpastedcd\", 8, true, paste 4", string(out), pos, ok, p.lineFrom.Load())
	}
	// In Ctrl-R search the mark is not in the line: nothing is inserted, and the piece is used up.
	if _, _, ok := p.insertPaste([]rune("abcd"), 2, pasteMark); ok || len(p.pieces) != 0 {
		t.Errorf("search mode: changed %v, pieces left %v", ok, p.pieces)
	}
}

// TestDotTablesFitScreen: a dot command's table is fitted to the terminal as a SELECT's is (its output went
// through a write-checking wrapper, which the width test took for a file: r37 #6).
func TestDotTablesFitScreen(t *testing.T) {
	db := openReportDB(t, backwardJSON)
	var out bytes.Buffer
	s := &session{db: db, out: &out, stdout: &out, errOut: io.Discard, format: "table", screen: func() int { return 40 }}
	for _, stmt := range []string{".ranks", "SELECT label, rank, path, events FROM traces"} {
		out.Reset()
		if err := s.run(context.Background(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		for _, line := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
			if w := displayWidth(line); w > 40 {
				t.Errorf("%s: a line %d cells wide on a 40-cell screen: %q", stmt, w, line)
			}
		}
	}
}

// TestSessionStateSurvivesTableFunctions: a session's SET VARIABLE and TEMP tables live on its connection.
// The Go table functions' own queries (a compat frame's, on a goroutine) ran on the same pool and could hand
// a connection back after the session's; the next statement then ran without hta_compat and the TEMP table
// (review r77 #1: on this trace, in 5 of 8 runs of a --db session).
func TestSessionStateSurvivesTableFunctions(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	db := filepath.Join(t.TempDir(), "nq.duckdb")
	mustRun(t, "", "--db", db, "../../testdata/traces/negative_queue", "-c", "SELECT 1")
	round := "SELECT count(*) >= 0 AS a FROM frequent_kernel_sequences('aten::mm', min_pattern_len := 3);\n" +
		"SELECT x, coalesce(getvariable('hta_compat')::VARCHAR, 'lost') AS v FROM mine;\n"
	script := "CREATE TEMP TABLE mine AS SELECT 42 AS x; SET VARIABLE hta_compat = true;\n" + strings.Repeat(round, 6)
	want := strings.Repeat("true\n42,true\n", 6)
	for run := range 3 {
		if out := mustRun(t, "", "--db", db, "--readonly", "--format", "csv", "--no-header", "-c", script); out != want {
			t.Fatalf("run %d:\n%s\nwant every round to see the TEMP table and hta_compat", run, out)
		}
	}
}

// startCLI starts the test binary as the CLI with args, stdin (nil: none) as its input; it returns the
// command, its standard output to read and its standard error, filled as it runs.
func startCLI(t *testing.T, stdin io.Reader, args ...string) (*exec.Cmd, io.ReadCloser, *bytes.Buffer) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	cmd.Stdin = stdin
	errOut := &bytes.Buffer{}
	cmd.Stderr = errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out, errOut
}
