package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONColumnsExact: a JSON column is shown as the JSON text DuckDB holds, in every format.
// duckdb-go decodes JSON with encoding/json into any, which rounded a ns timestamp to a float,
// showed 1e400 and the JSON value null as NULL, and sorted object keys.
func TestJSONColumnsExact(t *testing.T) {
	const q = `SELECT json_object('ts', 1694039959123456789) AS ts, '12345678901234567890123'::JSON AS big,
        'null'::JSON AS jnull, '1e400'::JSON AS huge, '{"b":1,"a":2}'::JSON AS keys, '"123"'::JSON AS s, NULL::JSON AS n`
	cases := []struct {
		format string
		want   string
	}{
		{"csv", "ts,big,jnull,huge,keys,s,n\n" +
			`"{""ts"":1694039959123456789}",12345678901234567890123,null,1e400,"{""b"":1,""a"":2}","""123""",` + "\n"},
		{"tsv", "ts\tbig\tjnull\thuge\tkeys\ts\tn\n" +
			`{"ts":1694039959123456789}` + "\t12345678901234567890123\tnull\t1e400\t" + `{"b":1,"a":2}` + "\t\"123\"\t\\N\n"},
		{"jsonl", `{"ts":{"ts":1694039959123456789},"big":12345678901234567890123,"jnull":null,"huge":1e400,"keys":{"b":1,"a":2},"s":"123","n":null}` + "\n"},
		{"json", `[{"ts":{"ts":1694039959123456789},"big":12345678901234567890123,"jnull":null,"huge":1e400,"keys":{"b":1,"a":2},"s":"123","n":null}]` + "\n"},
		{"line", "   ts = {\"ts\":1694039959123456789}\n  big = 12345678901234567890123\njnull = null\n huge = 1e400\n keys = {\"b\":1,\"a\":2}\n    s = \"123\"\n    n = NULL\n"},
		{"markdown", "| ts | big | jnull | huge | keys | s | n |\n|---|---|---|---|---|---|---|\n" +
			`| {"ts":1694039959123456789} | 12345678901234567890123 | null | 1e400 | {"b":1,"a":2} | "123" | NULL |` + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.format, func(t *testing.T) {
			got := mustRun(t, "", backwardJSON, "--format", tc.format, "-c", q)
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if tc.format == "json" && !json.Valid([]byte(got)) {
				t.Errorf("not valid JSON: %s", got)
			}
		})
	}
	// The table header still names the type the query has.
	got := mustRun(t, "", backwardJSON, "-c", `SELECT '{"a":1}'::JSON AS j`)
	if !strings.Contains(got, "│  json   │") || !strings.Contains(got, `│ {"a":1} │`) {
		t.Errorf("table:\n%s", got)
	}
}

// TestJSONTextCompacted: a JSON value's text is written compacted in the JSON formats: DuckDB keeps a
// ::JSON cast's input as written, and a pretty-printed document split one jsonl record over lines.
// Strings and numbers keep their text.
func TestJSONTextCompacted(t *testing.T) {
	q := `SELECT '{"a":` + "\n" + `  1e400, "b": [ "x  y" ,` + "\t" + `2 ]}'::JSON AS j, 1 AS n`
	got := mustRun(t, "", backwardJSON, "--format", "jsonl", "-c", q)
	if want := `{"j":{"a":1e400,"b":["x  y",2]},"n":1}` + "\n"; got != want {
		t.Errorf("jsonl:\n%s\nwant:\n%s", got, want)
	}
}

// TestTracesNamedTwice: a trace file named twice in one load (the same path twice, a file and
// its directory, .load of both) is loaded once, with a note, instead of failing as a rank clash
// with itself.
func TestTracesNamedTwice(t *testing.T) {
	const q = "SELECT label, count(*) AS n FROM traces GROUP BY 1 ORDER BY 1"
	after := outOfOrder + "/after_fix_trace.json"
	cases := []struct {
		name   string
		args   []string
		stdout string
		notes  int // "named twice, skipped" lines on stderr
	}{
		{"same file twice", []string{backwardJSON, backwardJSON}, "label,n\ntrace,1\n", 1},
		{"same directory twice", []string{"--rank-from", "index", outOfOrder, outOfOrder}, "label,n\ntrace,2\n", 2},
		{"a file then its directory", []string{"--rank-from", "index", after, outOfOrder}, "label,n\ntrace,2\n", 1},
		{"a directory then its file", []string{"--rank-from", "index", outOfOrder, "./" + after}, "label,n\ntrace,2\n", 1},
		{"other labels still load it", []string{"--label", "a", backwardJSON, "--label", "b", backwardJSON}, "label,n\na,1\nb,1\n", 0},
		{".load of a file twice", []string{backwardJSON, "-c", ".load " + after + " " + after + " --label x"}, "label,n\ntrace,1\nx,1\n", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"--format", "csv"}, tc.args...), "-c", q)
			out, errOut, code := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			if out != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, tc.stdout)
			}
			if n := strings.Count(errOut, ": named twice, skipped\n"); n != tc.notes || strings.Count(errOut, "\n") != n {
				t.Errorf("stderr has %d notes, want %d:\n%s", n, tc.notes, errOut)
			}
		})
	}
	// A directory of three ranks named twice: one line for the three, as for files already loaded.
	dir := t.TempDir()
	data, err := os.ReadFile(backwardJSON)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rank0.json", "rank1.json", "rank2.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runCLI(t, "", "--format", "csv", "--rank-from", "index", dir, dir, "-c", q)
	want := fmt.Sprintf("tracesql: 3 files named twice, skipped (%s … %s)\n", filepath.Join(dir, "rank0.json"), filepath.Join(dir, "rank2.json"))
	if code != 0 || out != "label,n\ntrace,3\n" || errOut != want {
		t.Errorf("a directory named twice: exit %d, stdout %q, stderr %q, want stderr %q", code, out, errOut, want)
	}
}

// TestHelpDefaultsOnce: no flag's help states its default twice (--label said
// "(default trace; …) (default trace)").
func TestHelpDefaultsOnce(t *testing.T) {
	cases := [][]string{{"-h"}, {"report", "-h"}, {"export-parquet", "-h"}}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, errOut, _ := runCLI(t, "", args...)
			for _, entry := range strings.Split(out+errOut, "\n  -") {
				if n := strings.Count(entry, "default"); n > 1 {
					t.Errorf("flag help names its default %d times: -%s", n, entry)
				}
			}
		})
	}
}

// TestDotLoadEmptyLabel: an empty label given to .load is refused, as an empty --label on the command
// line, instead of loading into the default set "trace".
func TestDotLoadEmptyLabel(t *testing.T) {
	cases := []struct{ name, load string }{
		{"quoted empty", ".load " + backwardJSON + " --label ''"},
		{"--label=", ".load " + backwardJSON + " --label="},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, "", "--db", filepath.Join(t.TempDir(), "x.db"), "--format", "csv", "-c", tc.load, "-c", "SELECT count(*) AS n FROM traces")
			if code != 1 || errOut != "tracesql: -c #1: .load: --label: empty label\n" || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
		})
	}
}

// TestExplainIsDrawn: EXPLAIN in the table format prints DuckDB's plan drawing as it is (a table cell escaped its
// newlines and cut it at 80 characters); other formats keep the two columns.
func TestExplainIsDrawn(t *testing.T) {
	out := mustRun(t, "", backwardJSON, "-c", "EXPLAIN SELECT count(*) FROM traces")
	if !strings.HasPrefix(out, "┌") || !strings.Contains(out, "\n│          SEQ_SCAN         │\n") || strings.Contains(out, "explain_value") {
		t.Errorf("EXPLAIN in table format:\n%s", out)
	}
	if csv := mustRun(t, "", backwardJSON, "--format", "csv", "-c", "EXPLAIN SELECT 1"); !strings.HasPrefix(csv, "explain_key,explain_value\nphysical_plan,") {
		t.Errorf("EXPLAIN in csv:\n%s", csv)
	}
}

// TestSchemaOfMacro: .schema NAME shows a table macro that .tables lists (it said "no table or view"), with its
// parameters and body; an unknown name says what was looked for; a bare .schema still lists tables and views only.
func TestSchemaOfMacro(t *testing.T) {
	out := mustRun(t, "", backwardJSON, "-c", ".schema idle_time_breakdown")
	if !strings.HasPrefix(out, "CREATE MACRO idle_time_breakdown(consecutive_kernel_delay := 30, ranks := NULL, streams := NULL, hta_compat := NULL) AS TABLE ") {
		t.Errorf(".schema idle_time_breakdown:\n%.300s", out)
	}
	if all := mustRun(t, "", backwardJSON, "-c", ".schema"); strings.Contains(all, "CREATE MACRO") || !strings.Contains(all, "CREATE TABLE traces(") ||
		strings.Contains(all, "CREATE VIEW _") {
		t.Errorf("bare .schema (tables and views, no internal _ ones):\n%.300s", all)
	}
	// (r69 #8: not an error, as in DuckDB's shell, where .tables and .schema disagreed)
	for _, cmd := range []string{".schema nope", ".tables nope"} {
		if out, errOut, code := runCLI(t, "", backwardJSON, "-c", cmd); code != 0 || out != "" || errOut != "note: no table, view or macro named like \"nope\" (.tables lists them)\n" {
			t.Errorf("%s: %d %q %q", cmd, code, out, errOut)
		}
	}
	// A LIKE pattern, as DuckDB's shell takes, and names in any case, as SQL takes them.
	if out := mustRun(t, "", backwardJSON, "-c", ".schema KERNELS"); out != "CREATE VIEW kernels AS SELECT * FROM events WHERE (cat_class = 'kernel');\n" {
		t.Errorf(".schema KERNELS:\n%s", out)
	}
	out = mustRun(t, "", backwardJSON, "-c", ".schema kernel_l%")
	if !strings.HasPrefix(out, "CREATE MACRO kernel_launch_stats(") || !strings.Contains(out, "\nCREATE VIEW kernel_launches AS ") || strings.Count(out, "\nCREATE ") != 1 {
		t.Errorf(".schema kernel_l%%:\n%.500s", out)
	}
}

// TestBadRulePatternNamed: a pattern in kernel_classes that is not a regular expression makes every analysis fail
// with RE2's bare "missing ): (": the error now names the rule. The next load loads, with a warning (it failed, and
// after an upgrade so did opening the file, which left no way to delete the row).
func TestBadRulePatternNamed(t *testing.T) {
	const hint = `(kernel_classes rule of priority 1: pattern "(" is not a regular expression; correct or delete that row)`
	// A rule turned off (NULL priority and pattern: their scan stopped the search), and an error DuckDB
	// follows with the statement's context (the name went after it, and the one-line error left both out).
	dbPath := filepath.Join(t.TempDir(), "k.duckdb")
	_, errOut, code := runCLI(t, "INSERT INTO kernel_classes VALUES (1, '(', 'COMMUNICATION', 'all'), (NULL, NULL, 'MEMORY', 'all');\n"+
		"SELECT * FROM kernel_type_breakdown();\nSELECT * FROM critical_path_summary();\n.load "+outOfOrder+"/after_fix_trace.json --label other\n",
		"--db", dbPath, backwardJSON)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code != 1 || len(lines) != 3 || !strings.HasPrefix(lines[0], "tracesql: stdin:2: Invalid Input Error: missing ): (") ||
		!strings.HasSuffix(lines[0], hint) || !strings.HasPrefix(lines[1], "tracesql: stdin:3: Binder Error: ") || !strings.HasSuffix(lines[1], hint) ||
		!strings.HasSuffix(lines[2], "after_fix_trace.json: loaded, but kernel_classes holds a rule that cannot apply: the analyses that type kernels fail, naming it, until it is corrected or deleted") {
		t.Errorf("exit %d, stderr:\n%s\nwant two lines ending %s and the load's warning", code, errOut, hint)
	}
	// The report's sections that fail on it name it too.
	_, errOut, code = runCLI(t, "", "report", "--db", dbPath, "-o", filepath.Join(t.TempDir(), "r.html"))
	if !strings.Contains(errOut, `report section "Kernel types" (30_kernel_types.sql): Invalid Input Error: missing ): ( `+hint) || code != 0 {
		t.Errorf("report: exit %d, stderr:\n%s\nwant the kernel types section's warning to end %s", code, errOut, hint)
	}
}
