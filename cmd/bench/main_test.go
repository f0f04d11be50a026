package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestQuick runs the bench's smoke preset end to end (2 ranks × 1 step of the repository's
// ns_resolution trace): inputs generated, loaded, every analysis timed, the table printed.
func TestQuick(t *testing.T) {
	t.Setenv("HTA_SRC", "")
	var out, errOut bytes.Buffer
	if rc := run(context.Background(), []string{"-quick", "-o", t.TempDir()}, &out, &errOut); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errOut.String())
	}
	s := out.String()
	for _, want := range []string{
		"# tracesql bench ", "machine: ", "HTA not available: HTA_SRC is not set",
		"## quick: 2 file(s), ", "| step | tracesql ms | note |", "| load | ",
		"| temporal_breakdown | ", "| idle_time_breakdown | ", "| critical_path hta | ", "| critical_path ctda | ",
		"| export_counters_trace | ", "| frequent_kernel_sequences | ", "| reopen + temporal_breakdown | ",
		"peak RSS during the analyses: ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	// Every analysis but the ctda critical path (being built) must run without error.
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, "| error |") && !strings.Contains(line, "ctda") {
			t.Errorf("failed: %s", line)
		}
	}
	if t.Failed() {
		t.Log(s)
	}
}

func TestMacroParams(t *testing.T) {
	params, rest := macroParams("operator_name, min_pattern_len := 3, label := coalesce(x, (1)))  AS TABLE SELECT 1")
	if len(params) != 3 || params[0] != "operator_name" || params[2] != "label := coalesce(x, (1))" || !strings.HasPrefix(strings.TrimSpace(rest), "AS TABLE") {
		t.Errorf("params %q, rest %q", params, rest)
	}
}

// TestOneLine: an error note stays one Markdown cell: '|' escaped, cut between characters.
func TestOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Binder Error:\n  a || b", `Binder Error: a \|\| b`},
		{strings.Repeat("é", 95), strings.Repeat("é", 90) + "…"},
		{strings.Repeat("x", 89) + "→→", strings.Repeat("x", 89) + "→…"},
	} {
		got := oneLine(errors.New(c.in))
		if got != c.want || !utf8.ValidString(got) {
			t.Errorf("oneLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestPythonEnv: HTA_SRC goes first on PYTHONPATH, an existing PYTHONPATH stays behind it.
func TestPythonEnv(t *testing.T) {
	sep := string(os.PathListSeparator)
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h"}, "PYTHONPATH=/hta"},
		{[]string{"PYTHONPATH=/site", "HOME=/h"}, "PYTHONPATH=/hta" + sep + "/site"},
		{[]string{"PYTHONPATH="}, "PYTHONPATH=/hta"},
	} {
		got := pythonEnv(c.env, "/hta")
		n := 0
		for _, kv := range got {
			if strings.HasPrefix(kv, "PYTHONPATH=") {
				n++
				if kv != c.want {
					t.Errorf("%v: %s, want %s", c.env, kv, c.want)
				}
			}
		}
		if n != 1 {
			t.Errorf("%v: %d PYTHONPATH entries in %v", c.env, n, got)
		}
	}
}

// TestHTAScriptMedian runs the HTA side's script against a stand-in hta package (no pandas needed):
// a fast step runs three times and reports its median, a failing step gets no time and its error in the
// note, the rest of the rows are untouched.
func TestHTAScriptMedian(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not found")
	}
	src := t.TempDir()
	calls := filepath.Join(src, "calls.txt")
	stub := `import time
_sleeps = [0.3, 0.02, 0.1]
class TraceAnalysis:
    def __init__(self, trace_dir):
        self.n = 0
        self.t = type("Trace", (), {"traces": {1: None, 0: None}})()
    def get_temporal_breakdown(self, visualize=False):
        with open(` + "'" + calls + "'" + `, "a") as f:
            f.write("t\n")
        time.sleep(_sleeps[self.n]); self.n += 1
    def get_idle_time_breakdown(self, ranks=None, visualize=False):
        raise ValueError("no GPU | ranks %s" % ranks)
    def __getattr__(self, name):
        return lambda *a, **k: None
`
	if err := os.MkdirAll(filepath.Join(src, "hta"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"hta/__init__.py": "", "hta/trace_analysis.py": stub} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rows := []row{{name: "temporal_breakdown"}, {name: "idle_time_breakdown"}, {name: "no such step"}}
	var errOut bytes.Buffer
	htaRunner{src: src}.run(context.Background(), []string{filepath.Join(src, "rank0.json")}, 3, rows, &errOut)
	b, _ := os.ReadFile(calls)
	if n := strings.Count(string(b), "t\n"); n != 3 {
		t.Errorf("temporal_breakdown ran %d times, want 3 (%s)", n, errOut.String())
	}
	if ms := rows[0].htaMS; ms < 90 || ms >= 250 {
		t.Errorf("temporal_breakdown: %.1f ms, want the median run's ~100 ms", ms)
	}
	if rows[1].htaMS != 0 || rows[2].htaMS != 0 {
		t.Errorf("a failed or absent step got a time: %+v", rows[1:])
	}
	// the step HTA failed says so in its row (the table showed only "–"), its '|' escaped for the
	// Markdown table; it ran on every rank, as tracesql's row
	if !strings.Contains(rows[1].note, `HTA: ValueError('no GPU \| ranks [0, 1]')`) {
		t.Errorf("failed step's note %q", rows[1].note)
	}
}

// TestPythonError: the exception of a traceback, also when its message has several lines (the last line
// was reported).
func TestPythonError(t *testing.T) {
	for _, c := range []struct{ out, want string }{
		{"Traceback (most recent call last):\n  File \"x\", line 1, in <module>\n    f()\nRuntimeError: first line\nsecond line\n", "RuntimeError: first line"},
		{"Traceback (most recent call last):\n  File \"x\", line 1\nKeyError: 'a'", "KeyError: 'a'"},
		{"killed\n", "killed"},
	} {
		if got := pythonError(c.out); got != c.want {
			t.Errorf("pythonError(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{5}, 5}, {[]float64{9, 1, 4}, 4}, {[]float64{3, 1}, 3}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestUsageErrors: a positional argument or a limit that cannot work is refused up front with exit status 2
// and a line that says what is wrong, before the source is looked at (here it does not exist) or anything is
// generated.
func TestUsageErrors(t *testing.T) {
	work := filepath.Join(t.TempDir(), "work")
	missing := filepath.Join(t.TempDir(), "missing.json")
	for _, c := range []struct {
		args []string
		want []string // lines stderr must hold
	}{
		{[]string{"foo"}, []string{`bench: unexpected argument "foo": bench takes flags only (-src TRACE names the trace to inflate)`, "usage: go run -tags duckdb_arrow ./cmd/bench "}},
		{[]string{"-quick", "trace.json", "-runs", "1"}, []string{`bench: unexpected argument "trace.json"`, "usage: "}},
		{[]string{"-timeout", "0s"}, []string{"bench: -timeout must be positive, not 0s"}},
		{[]string{"-timeout", "-1m"}, []string{"bench: -timeout must be positive, not -1m0s"}},
		{[]string{"-hta-timeout", "-1s"}, []string{"bench: -hta-timeout must be positive, or 0 for none, not -1s"}},
		{[]string{"-runs", "0"}, []string{"bench: -runs must be at least 1, not 0"}},
		{[]string{"-quick", "-size", "nonsense"}, []string{"bench: -quick and -size cannot be combined"}},
		{[]string{"-size", "1GB-single,huge"}, []string{`bench: unknown -size "huge" (1GB-single, 64x50MB, 3GB-single, quick)`}},
	} {
		var out, errOut bytes.Buffer
		args := append([]string{"-o", work, "-src", missing}, c.args...)
		rc := run(context.Background(), args, &out, &errOut)
		lines := strings.Split(errOut.String(), "\n")
		if rc != 2 || out.Len() != 0 {
			t.Errorf("%v: rc %d, stdout %q; want rc 2 and nothing", c.args, rc, out.String())
		}
		for i, w := range c.want {
			if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
				t.Errorf("%v: stderr %q; want line %d to start with %q", c.args, errOut.String(), i+1, w)
			}
		}
	}
	if _, err := os.Stat(work); err == nil {
		t.Error("a refused run created its work directory")
	}
	// 0 is -hta-timeout's "none", not an error.
	var out, errOut bytes.Buffer
	if rc := run(context.Background(), []string{"-o", work, "-src", missing, "-hta-timeout", "0"}, &out, &errOut); rc != 1 || !strings.HasPrefix(errOut.String(), "bench: source trace: ") {
		t.Errorf("-hta-timeout 0: rc %d, stderr %q; want the missing source's error", rc, errOut.String())
	}
}

// TestInputsPerSource: inputs made from one source are never reused for another of the same base name, are
// reused for the same source, and are made again when the source is rewritten.
func TestInputsPerSource(t *testing.T) {
	ctx := context.Background()
	orig, err := os.ReadFile(filepath.Join("..", "..", "testdata", "traces", "call_stack", "backward_thread.json"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	a, b := filepath.Join(root, "a", "trace.json"), filepath.Join(root, "b", "trace.json")
	for p, text := range map[string]string{a: string(orig), b: strings.ReplaceAll(string(orig), "aten::mm", "aten::bmm")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config{workdir: t.TempDir()}
	made := func(src string) ([]string, string) {
		t.Helper()
		cfg.src = src
		paths, err := inputs(ctx, cfg, presets["quick"])
		if err != nil || len(paths) != 2 {
			t.Fatalf("inputs of %s: %v, %v", src, paths, err)
		}
		text, err := os.ReadFile(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		return paths, string(text)
	}
	pa, ta := made(a)
	pb, tb := made(b)
	if filepath.Dir(pa[0]) == filepath.Dir(pb[0]) || !strings.Contains(tb, "aten::bmm") || strings.Contains(ta, "aten::bmm") {
		t.Errorf("b's inputs %v are not made from b (a's: %v)", pb, pa)
	}
	if again, _ := made(a); !slices.Equal(again, pa) {
		t.Errorf("a's inputs made again: %v, then %v", pa, again)
	}
	// A cached file that is gone (a tmp cleaner): the set is made again, not a load of a missing file.
	if err := os.Remove(pa[1]); err != nil {
		t.Fatal(err)
	}
	if again, _ := made(a); !slices.Equal(again, pa) {
		t.Errorf("a's inputs after one was removed: %v, want %v", again, pa)
	} else if _, err := os.Stat(pa[1]); err != nil {
		t.Errorf("the removed input was not made again: %v", err)
	}
	// Rewritten in place (another size, a later time): its inputs are made anew.
	if err := os.WriteFile(a, []byte(strings.ReplaceAll(string(orig), "aten::mm", "aten::addmm")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, text := made(a); !strings.Contains(text, "aten::addmm") {
		t.Error("the rewritten source's old inputs were reused")
	}
}

// TestProbeSizesPlainJSON: a preset sized by bytes takes its step count from a plain-JSON probe, whatever -gzip
// says, so that a -gzip run and a plain one make inputs of one size (r71 #2: one probe name served both, its
// size taken ×10 under -gzip: after a -gzip run, a plain one made 7.4× too many steps).
func TestProbeSizesPlainJSON(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join("..", "..", "testdata", "traces", "call_stack", "backward_thread.json")
	cfg := config{workdir: t.TempDir(), src: src}
	probe, err := inputs(ctx, cfg, preset{name: "one", ranks: 1, steps: 1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(probe[0])
	if err != nil {
		t.Fatal(err)
	}
	p := preset{name: "sized", ranks: 1, perRank: 3 * st.Size()}
	var dirs []string
	for _, gz := range []bool{true, false, true} {
		cfg.gzip = gz
		paths, err := inputs(ctx, cfg, p)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, filepath.Base(filepath.Dir(paths[0])))
	}
	for i, d := range dirs {
		if !strings.HasPrefix(d, "sized-r1-s3-") {
			t.Errorf("run %d (gzip %v): inputs %s, want 3 steps", i+1, i != 1, d)
		}
	}
}
