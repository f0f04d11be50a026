package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
// a fast step runs three times and reports its median, a failing step gets no time, the rest of the
// rows are untouched.
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
    def get_temporal_breakdown(self, visualize=False):
        with open(` + "'" + calls + "'" + `, "a") as f:
            f.write("t\n")
        time.sleep(_sleeps[self.n]); self.n += 1
    def get_idle_time_breakdown(self, visualize=False):
        raise ValueError("no GPU")
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
