package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
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
