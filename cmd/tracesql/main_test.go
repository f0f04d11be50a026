package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files")

// Trace paths, relative to the package directory (go test's working directory).
const (
	traceDir     = "../../testdata/traces"
	alexnetDir   = traceDir + "/alexnet"
	dlrmDir      = traceDir + "/dlrm_8ranks"
	outOfOrder   = traceDir + "/out_of_order"
	backwardJSON = traceDir + "/call_stack/backward_thread.json"
)

// asCLI, set in the environment, makes the test binary run as tracesql itself (for the terminal test).
const asCLI = "TRACESQL_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		main()
		return
	}
	flag.Parse()
	// The bundled sample is written to the user's cache directory: keep it out of the real one.
	cache, err := os.MkdirTemp("", "tracesql-test-cache")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}

// runCLI runs the whole program in-process with stdin as its (non-terminal) standard input.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

// mustRun runs the program and fails the test unless it exits 0 with nothing on stderr.
func mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, code := runCLI(t, stdin, args...)
	if code != 0 || errOut != "" {
		t.Fatalf("tracesql %q: exit %d, stderr:\n%s", args, code, errOut)
	}
	return out
}

// checkGolden compares got with testdata/NAME.golden, or rewrites that file under -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -tags duckdb_arrow ./cmd/tracesql/ -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("output differs from %s (rerun with -update if the change is intended)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

const classQuery = "SELECT cat_class, count(*) AS n, sum(dur) AS dur_ns FROM events GROUP BY 1 ORDER BY 1"

func TestGoldenFormats(t *testing.T) {
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			out := mustRun(t, "", alexnetDir, "--format", format, "-c", classQuery)
			checkGolden(t, "format_"+format, out)
		})
	}
}

func TestGoldenDotCommands(t *testing.T) {
	cases := []struct {
		golden string
		args   []string
	}{
		{"dot_tables", []string{alexnetDir, "-c", ".tables"}},
		{"dot_schema_events", []string{alexnetDir, "-c", ".schema events"}},
		{"dot_ranks_dlrm", []string{dlrmDir, "-c", ".ranks"}},
		{"dot_help", []string{backwardJSON, "-c", ".help"}},
		{"chart_events", []string{alexnetDir, "--format", "bar", "-c", "SELECT cat_class, count(*) AS events, sum(dur) / 1e3 AS total_us FROM events GROUP BY 1 ORDER BY 2 DESC, 1"}},
		{"dot_chart", []string{alexnetDir, "-c", ".chart SELECT rank, name, dur / 1e3 AS dur_us FROM kernels ORDER BY dur DESC LIMIT 5"}},
		{"dot_describe_profiler_steps", []string{backwardJSON, "-c", ".describe profiler_steps"}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			checkGolden(t, c.golden, mustRun(t, "", c.args...))
		})
	}
}

// readTrace decodes a (possibly gzipped) trace file with encoding/json, independently of the engine.
func readTrace(t *testing.T, path string) map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// usToNs converts Kineto's decimal µs text to exact integer ns.
func usToNs(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		t.Fatalf("bad number %q", n)
	}
	r.Mul(r, big.NewRat(1000, 1))
	if !r.IsInt() {
		t.Fatalf("%s µs is not a whole number of ns", n)
	}
	return r.Num().Int64()
}

func parseCSV(t *testing.T, s string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatalf("%v in\n%s", err, s)
	}
	return recs
}

// TestGoldenContentIsRight checks what the goldens show against counts taken from the JSON directly,
// so that a golden cannot silently freeze a wrong answer.
func TestGoldenContentIsRight(t *testing.T) {
	t.Run("cat_class counts and durations", func(t *testing.T) {
		files, _ := filepath.Glob(alexnetDir + "/*.json.gz")
		if len(files) != 1 {
			t.Fatalf("want one alexnet trace, got %v", files)
		}
		class := map[string]string{"cpu_op": "cpu_op", "cuda_runtime": "runtime", "cuda_sync": "sync",
			"gpu_memcpy": "memcpy", "gpu_memset": "memset", "kernel": "kernel", "user_annotation": "user_annotation",
			"Trace": "other"}
		want := map[string][2]int64{}
		for _, e := range readTrace(t, files[0])["traceEvents"].([]any) {
			ev := e.(map[string]any)
			if ev["ph"] != "X" {
				continue
			}
			cat, _ := ev["cat"].(string)
			c, ok := class[cat]
			if !ok {
				t.Fatalf("category %q not mapped in the test", cat)
			}
			w := want[c]
			want[c] = [2]int64{w[0] + 1, w[1] + usToNs(t, ev["dur"])}
		}
		var wantCSV strings.Builder
		wantCSV.WriteString("cat_class,n,dur_ns\n")
		classes := make([]string, 0, len(want))
		for c := range want {
			classes = append(classes, c)
		}
		sort.Strings(classes)
		for _, c := range classes {
			fmt.Fprintf(&wantCSV, "%s,%d,%d\n", c, want[c][0], want[c][1])
		}
		got := mustRun(t, "", alexnetDir, "--format", "csv", "-c", classQuery)
		if got != wantCSV.String() {
			t.Errorf("got\n%s\nwant (from the JSON)\n%s", got, wantCSV.String())
		}
		if golden, err := os.ReadFile("testdata/format_csv.golden"); err == nil && string(golden) != wantCSV.String() {
			t.Errorf("testdata/format_csv.golden disagrees with the JSON:\n%s", golden)
		}
	})
	t.Run(".ranks of dlrm_8ranks", func(t *testing.T) {
		files, _ := filepath.Glob(dlrmDir + "/*.json.gz")
		if len(files) != 8 {
			t.Fatalf("want 8 dlrm traces, got %d", len(files))
		}
		got := parseCSV(t, mustRun(t, "", dlrmDir, "--format", "csv", "-c",
			"SELECT rank, regexp_extract(path, '[^/]+$') AS file, events FROM traces ORDER BY rank"))
		if len(got) != 9 {
			t.Fatalf("want a header and 8 rows, got %q", got)
		}
		byFile := map[string][]string{}
		for _, r := range got[1:] {
			byFile[r[1]] = r
		}
		for _, f := range files {
			doc := readTrace(t, f)
			rank := doc["distributedInfo"].(map[string]any)["rank"].(json.Number).String()
			events := strconv.Itoa(len(doc["traceEvents"].([]any)))
			r := byFile[filepath.Base(f)]
			if r == nil || r[0] != rank || r[2] != events {
				t.Errorf("%s: got row %q, want rank %s, events %s", filepath.Base(f), r, rank, events)
			}
		}
	})
}

// TestExitCodes checks exit status, stdout and the one-line error on stderr. $TMP in args is a fresh
// temporary directory holding files.
func TestExitCodes(t *testing.T) {
	cases := []struct {
		name       string
		files      map[string]string
		args       []string
		stdin      string
		code       int
		stdout     string // exact, unless "*" (anything)
		stderr     string // regexp for the whole of stderr; "" = must be empty
		stderrLine bool   // stderr must be exactly one line
	}{
		{name: "ok", args: []string{backwardJSON, "--format", "csv", "-c", "SELECT count(*) AS n FROM events"},
			stdout: "n\n7\n"},
		{name: "parser error", args: []string{backwardJSON, "-c", "SELEC 1"}, code: 1,
			stderr: `^tracesql: Parser Error: syntax error at or near "SELEC"\n$`, stderrLine: true},
		{name: "binder error is one line", args: []string{backwardJSON, "-c", "SELECT nope FROM events"}, code: 1,
			stderr: `^tracesql: Binder Error: .*nope.*\n$`, stderrLine: true},
		{name: "batch stops at the first error",
			args: []string{backwardJSON, "--format", "csv", "-c", "SELECT 1 AS a; SELEC; SELECT 2 AS b", "-c", "SELECT 3 AS c"},
			code: 1, stdout: "a\n1\n", stderr: `^tracesql: Parser Error: .*\n$`, stderrLine: true},
		{name: "unknown dot command", args: []string{backwardJSON, "-c", ".bogus"}, code: 1,
			stderr: `^tracesql: unknown command \.bogus \(try \.help\)\n$`, stderrLine: true},
		{name: "bad dot command arguments", args: []string{backwardJSON, "-c", ".timer maybe"}, code: 1,
			stderr: `^tracesql: usage: \.timer on\|off\n$`},
		{name: "bad --format", args: []string{"--format", "xml", backwardJSON, "-c", "SELECT 1"}, code: 2,
			stderr: `^tracesql: --format xml: unknown format \(want table, csv, tsv, json, jsonl, markdown, line, bar\)\n$`},
		{name: "bad --rank-from", args: []string{"--rank-from", "guess", backwardJSON, "-c", "SELECT 1"}, code: 2,
			stderr: `^tracesql: --rank-from "guess": .*\n$`, stderrLine: true},
		{name: "bad --maxrows", args: []string{"--maxrows", "-1", backwardJSON, "-c", "SELECT 1"}, code: 2,
			stderr: `^tracesql: --maxrows -1: must be >= 0\n$`},
		{name: "unknown flag", args: []string{"--bogus", "-c", "SELECT 1"}, code: 2,
			stderr: `(?s)flag provided but not defined: -bogus\n.*usage: tracesql`},
		{name: "help", args: []string{"-h"}, code: 0, stderr: `(?s)^usage: tracesql .*-rank-from`},
		{name: "missing trace path", args: []string{traceDir + "/no_such_trace.json", "-c", "SELECT 1"}, code: 1,
			stderr: `^tracesql: load \.\./\.\./testdata/traces/no_such_trace\.json: no such file or directory\n$`},
		{name: "not JSON", files: map[string]string{"garbage.json": "hello, world\n"},
			args: []string{"$TMP/garbage.json", "-c", "SELECT 1"}, code: 1,
			stderr: `^tracesql: load \S*/garbage\.json: not JSON: .*\n$`, stderrLine: true},
		{name: "truncated JSON", files: map[string]string{"cut.json": `{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2`},
			args: []string{"$TMP/cut.json", "-c", "SELECT 1"}, code: 1,
			stderr: `^tracesql: load \S*/cut\.json: .*\n$`, stderrLine: true},
		{name: "failed load leaves nothing behind",
			files: map[string]string{"garbage.json": "nope"},
			args:  []string{"--db", "$TMP/x.db", "-c", ".load $TMP/garbage.json", "-c", "SELECT 1"}, code: 1,
			stderr: `^tracesql: load \S*/garbage\.json: not JSON: .*\n$`},
		{name: "missing -f file", args: []string{backwardJSON, "-f", "$TMP/none.sql"}, code: 1,
			stderr: `^tracesql: -f \S*/none\.sql: open \S*/none\.sql: no such file or directory\n$`},
		{name: "missing .read file", args: []string{backwardJSON, "-c", ".read $TMP/none.sql"}, code: 1,
			stderr: `^tracesql: \.read: open \S*/none\.sql: no such file or directory\n$`},
		{name: "empty statements and a trailing comment",
			args:   []string{backwardJSON, "--format", "csv", "-c", ";; SELECT 1 AS a;; -- done\n/* really */"},
			stdout: "a\n1\n"},
		{name: ".quit stops the batch", args: []string{backwardJSON, "--format", "csv", "-c", "SELECT 1 AS a;\n.quit\nSELEC"},
			stdout: "a\n1\n"},
		{name: "DDL prints nothing",
			args:   []string{backwardJSON, "--format", "csv", "-c", "CREATE TABLE t AS SELECT 1 AS x; INSERT INTO t VALUES (2); SELECT sum(x) AS s FROM t"},
			stdout: "s\n3\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			for name, text := range c.files {
				if err := os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "$TMP", tmp)
			}
			out, errOut, code := runCLI(t, c.stdin, args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, errOut)
			}
			if c.stdout != "*" && out != c.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, c.stdout)
			}
			if c.stderr == "" {
				if errOut != "" {
					t.Errorf("stderr not empty:\n%s", errOut)
				}
			} else if !regexp.MustCompile(c.stderr).MatchString(errOut) {
				t.Errorf("stderr:\n%s\ndoes not match %s", errOut, c.stderr)
			}
			if c.stderrLine && strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr is not one line:\n%s", errOut)
			}
		})
	}
}

// TestStatements covers how statements, files and flags combine; outputs are exact (csv).
func TestStatements(t *testing.T) {
	cases := []struct {
		name   string
		files  map[string]string
		args   []string
		stdin  string
		stdout string
		stderr string // regexp; "" = must be empty
		outs   map[string]string
	}{
		{name: "several statements in one -c",
			args:   []string{backwardJSON, "--format", "csv", "-c", "SELECT 1 AS a; SELECT 2 AS b;\nSELECT 3 AS c;"},
			stdout: "a\n1\nb\n2\nc\n3\n"},
		{name: "final statement without ;",
			args:   []string{backwardJSON, "--format", "csv", "-c", "SELECT 1 AS a; SELECT 'x;' AS b"},
			stdout: "a\n1\nb\nx;\n"},
		{name: "-c repeated",
			args:   []string{backwardJSON, "--format", "csv", "-c", "SELECT 1 AS a", "-c", "SELECT 2 AS b"},
			stdout: "a\n1\nb\n2\n"},
		{name: "-c state carries over",
			args:   []string{backwardJSON, "--format", "csv", "-c", "CREATE TABLE t(x INT)", "-c", "INSERT INTO t VALUES (5)", "-c", "SELECT x FROM t"},
			stdout: "x\n5\n"},
		{name: "-f FILE", files: map[string]string{"q.sql": "-- a saved query\nSELECT count(*) AS n\nFROM events\nWHERE cat = 'cpu_op';\n"},
			args: []string{backwardJSON, "--format", "csv", "-f", "$TMP/q.sql"}, stdout: "n\n3\n"},
		{name: "-f - reads stdin", stdin: "SELECT 1 AS a;\nSELECT 2 AS b",
			args: []string{backwardJSON, "--format", "csv", "-f", "-"}, stdout: "a\n1\nb\n2\n"},
		{name: "-f and -c run in command-line order", files: map[string]string{"m.sql": "CREATE MACRO twice(x) AS 2 * x;"},
			args: []string{backwardJSON, "--format", "csv", "-f", "$TMP/m.sql", "-c", "SELECT twice(21) AS y"}, stdout: "y\n42\n"},
		{name: "flags after the trace path",
			args:   []string{backwardJSON, "-c", "SELECT count(*) AS n FROM events", "--format", "csv"},
			stdout: "n\n7\n"},
		{name: "flags between trace paths",
			args:   []string{traceDir + "/out_of_order/after_fix_trace.json", "--format", "csv", traceDir + "/out_of_order/before_fix_trace.json", "-c", "SELECT count(*) AS n FROM traces"},
			stdout: "n\n2\n"},
		{name: ".mode switches format, .mode alone prints it",
			args:   []string{backwardJSON, "-c", "SELECT 1 AS a;\n.mode jsonl\nSELECT 2 AS b;\n.mode\n.mode markdown\nSELECT 3 AS c"},
			stdout: "┌─────────┐\n│    a    │\n│ integer │\n├─────────┤\n│       1 │\n└─────────┘\n{\"b\":2}\njsonl\n| c |\n|---:|\n| 3 |\n"},
		{name: ".timer on prints Run Time", args: []string{backwardJSON, "--format", "csv", "-c", ".timer on\nSELECT 1 AS a;\n.timer off\nSELECT 2 AS b"},
			stdout: "a\n1\nb\n2\n", stderr: `^Run Time: \d+\.\d{3} s\n$`},
		{name: ".read FILE", files: map[string]string{"r.sql": ".mode csv\nSELECT 'from file' AS src;\n"},
			args: []string{backwardJSON, "-c", ".read $TMP/r.sql\nSELECT 2 AS b"}, stdout: "src\nfrom file\nb\n2\n"},
		{name: ".output FILE and back", args: []string{backwardJSON, "--format", "csv", "-c",
			".output $TMP/o.csv\nSELECT 1 AS a;\nSELECT 2 AS b;\n.output\nSELECT 3 AS c"},
			stdout: "c\n3\n", outs: map[string]string{"o.csv": "a\n1\nb\n2\n"}},
		{name: ".once FILE", args: []string{backwardJSON, "--format", "csv", "-c", ".once $TMP/o.csv\nSELECT 1 AS a;\nSELECT 2 AS b"},
			stdout: "b\n2\n", outs: map[string]string{"o.csv": "a\n1\n"}},
		{name: ".once applies to a dot command's output", args: []string{backwardJSON, "--format", "csv", "-c", ".once $TMP/o.txt\n.mode\nSELECT 2 AS b"},
			stdout: "b\n2\n", outs: map[string]string{"o.txt": "csv\n"}},
		{name: ".load DIR --label", args: []string{backwardJSON, "--format", "csv", "-c",
			".load " + outOfOrder + " --label test\nSELECT label, count(*) AS files, sum(events) AS events FROM traces GROUP BY 1 ORDER BY 1;\nSELECT DISTINCT label FROM traces WHERE label = 'test'"},
			stdout: "label,files,events\ntest,2,150\ntrace,1,7\nlabel\ntest\n"},
		{name: "--label", args: []string{outOfOrder, "--label", "control", "--format", "csv", "-c", "SELECT DISTINCT label FROM traces"},
			stdout: "label\ncontrol\n"},
		{name: "--rank-from index", args: []string{dlrmDir, "--rank-from", "index", "--format", "csv", "-c",
			"SELECT min(rank) AS lo, max(rank) AS hi, count(DISTINCT rank) AS n FROM traces"}, stdout: "lo,hi,n\n0,7,8\n"},
		{name: "--maxrows", args: []string{backwardJSON, "--maxrows", "2", "-c", "SELECT * FROM range(5) t(i)"},
			stdout: "┌────────┐\n│   i    │\n│ bigint │\n├────────┤\n│      0 │\n│   …    │\n│      4 │\n└────────┘\n5 rows (2 shown)\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			for name, text := range c.files {
				if err := os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "$TMP", tmp)
			}
			out, errOut, code := runCLI(t, c.stdin, args...)
			if code != 0 {
				t.Errorf("exit %d; stderr:\n%s", code, errOut)
			}
			if out != c.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, c.stdout)
			}
			if c.stderr == "" && errOut != "" || c.stderr != "" && !regexp.MustCompile(c.stderr).MatchString(errOut) {
				t.Errorf("stderr:\n%s\nwant match for %q", errOut, c.stderr)
			}
			for name, want := range c.outs {
				got, err := os.ReadFile(filepath.Join(tmp, name))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != want {
					t.Errorf("%s:\n%s\nwant:\n%s", name, got, want)
				}
			}
		})
	}
}

// TestDBPersistence loads into a --db file once; later runs use it without the trace files.
func TestDBPersistence(t *testing.T) {
	tmp := t.TempDir()
	traces := filepath.Join(tmp, "traces")
	if err := os.MkdirAll(traces, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"after_fix_trace.json", "before_fix_trace.json"} {
		b, err := os.ReadFile(filepath.Join(outOfOrder, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(traces, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(tmp, "t.db")
	const counts = "SELECT (SELECT count(*) FROM traces) AS traces, (SELECT count(*) FROM events) AS events"
	const want = "traces,events\n2,18\n"

	if out := mustRun(t, "", "--db", db, traces, "--format", "csv", "-c", counts); out != want {
		t.Fatalf("first load: got\n%s\nwant\n%s", out, want)
	}

	// Re-opening must not re-parse: with the trace files gone, the data is still all there.
	moved := traces + ".away"
	if err := os.Rename(traces, moved); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, "", "--db", db, "--format", "csv", "-c", counts); out != want {
		t.Errorf("re-open: got\n%s\nwant\n%s", out, want)
	}
	// --db alone: no bundled sample, no overview; piped stdin empty.
	if out := mustRun(t, "", "--db", db); out != "" {
		t.Errorf("--db with empty stdin printed:\n%s", out)
	}
	if err := os.Rename(moved, traces); err != nil {
		t.Fatal(err)
	}

	// Loading the same files again skips them.
	out, errOut, code := runCLI(t, "", "--db", db, traces, "--format", "csv", "-c", counts)
	if code != 0 || out != want {
		t.Errorf("reload: exit %d, got\n%s\nwant\n%s", code, out, want)
	}
	skipped := regexp.MustCompile(`(?m)^tracesql: \S+/traces/(after|before)_fix_trace\.json: already loaded, skipped$`)
	if n := len(skipped.FindAllString(errOut, -1)); n != 2 || strings.Count(errOut, "\n") != 2 {
		t.Errorf("reload: want two 'already loaded, skipped' lines, got:\n%s", errOut)
	}
	// The same through .load in a piped session: a skip is not a failure.
	out, errOut, code = runCLI(t, ".load "+traces+"\n"+counts+";\n", "--db", db, "--format", "csv")
	if code != 0 || out != want || len(skipped.FindAllString(errOut, -1)) != 2 {
		t.Errorf("piped .load: exit %d, stdout\n%s\nstderr\n%s", code, out, errOut)
	}
}

// TestBundledSample: no trace and no --db loads the bundled sample and prints the overview.
func TestBundledSample(t *testing.T) {
	out, errOut, code := runCLI(t, "")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	at := 0
	for _, want := range []string{"Traces\n", "sample-alexnet.json.gz", "1408", "Events by class\n",
		"│ kernel          │     79 │", "Top kernels by GPU time\n", "ampere_sgemm_32x32_sliced1x4_tn"} {
		i := strings.Index(out[at:], want)
		if i < 0 {
			t.Fatalf("overview lacks %q after byte %d:\n%s", want, at, out)
		}
		at += i + len(want)
	}
	if !strings.HasPrefix(out, "Traces\n") {
		t.Errorf("overview does not start with the Traces section:\n%s", out)
	}
}
