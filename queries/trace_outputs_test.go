package queries_test

// Schema-level checks that the three trace writers (export_critical_path_overlay, export_counters_trace,
// export_kernel_sequences_overlay) produce Chrome-trace JSON that Perfetto and chrome://tracing can open:
// the checks are what Perfetto's JSON importer needs, not a comparison with HTA (the *_compat tests do that).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"tracesql/engine"
)

// toFlowKey names a flow by what Perfetto binds its s and f events on.
type toFlowKey struct{ cat, id string }

// toCheckChromeTrace fails t for every way b is not a loadable Chrome trace: a top-level object with a
// traceEvents array; every event an object with a string ph, a string name, a numeric or string pid and a
// numeric ts (metadata M events may omit ts); X events with a numeric dur ≥ 0; counter C events with an
// args object of numbers only; flow s/f events with an id, one s and one f per (cat, id), s not after f.
// Flows unpaired already in the source trace are tolerated (Perfetto drops them): a writer must not add
// broken ones. It returns the number of events per ph and the problems found (the first few of each kind
// of check are enough to see what is wrong).
func toChromeTraceProblems(b []byte, srcUnpaired map[toFlowKey]bool) (map[string]int, []string) {
	var problems []string
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil, []string{fmt.Sprintf("not a JSON object: %v", err)}
	}
	raw, ok := top["traceEvents"]
	if !ok {
		return nil, []string{"no traceEvents member"}
	}
	var events []json.RawMessage
	if err := json.Unmarshal(raw, &events); err != nil {
		return nil, []string{fmt.Sprintf("traceEvents is not an array: %v", err)}
	}
	phs := map[string]int{}
	type flowEnd struct {
		ph string
		ts float64
	}
	flows := map[toFlowKey][]flowEnd{}
	fail := func(i int, e json.RawMessage, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("event %d %s: %s", i, truncate(string(e), 200), fmt.Sprintf(format, args...)))
	}
	for i, e := range events {
		d := json.NewDecoder(bytes.NewReader(e))
		d.UseNumber()
		var ev map[string]any
		if err := d.Decode(&ev); err != nil {
			fail(i, e, "not an object")
			continue
		}
		ph, ok := ev["ph"].(string)
		if !ok || ph == "" {
			fail(i, e, "ph missing or not a string")
			continue
		}
		phs[ph]++
		if _, ok := ev["name"].(string); !ok {
			fail(i, e, "name missing or not a string")
		}
		switch ev["pid"].(type) {
		case json.Number, string:
		default:
			fail(i, e, "pid missing or neither number nor string")
		}
		ts, hasTS := ev["ts"]
		if hasTS || ph != "M" {
			if _, ok := ts.(json.Number); !ok {
				fail(i, e, "ts missing or not a number")
			}
		}
		switch ph {
		case "X":
			dur, ok := ev["dur"].(json.Number)
			if !ok {
				fail(i, e, "X event without a numeric dur")
			} else if f, err := dur.Float64(); err != nil || f < 0 {
				fail(i, e, "X event with a negative or unreadable dur")
			}
		case "C":
			args, ok := ev["args"].(map[string]any)
			if !ok || len(args) == 0 {
				fail(i, e, "C event without an args object")
			}
			for k, v := range args {
				if _, ok := v.(json.Number); !ok {
					fail(i, e, "C event arg %q is not a number", k)
				}
			}
		case "s", "f":
			id, ok := ev["id"]
			if !ok {
				fail(i, e, "flow event without an id")
				continue
			}
			cat, _ := ev["cat"].(string)
			tn, _ := ts.(json.Number)
			f, _ := tn.Float64()
			k := toFlowKey{cat, fmt.Sprint(id)}
			flows[k] = append(flows[k], flowEnd{ph, f})
		}
	}
	keys := make([]toFlowKey, 0, len(flows))
	for k := range flows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].cat+"\x00"+keys[i].id < keys[j].cat+"\x00"+keys[j].id })
	for _, k := range keys {
		if srcUnpaired[k] {
			continue
		}
		p := flows[k]
		if len(p) != 2 || p[0].ph == p[1].ph {
			problems = append(problems, fmt.Sprintf("flow (cat %q, id %s): %d events, want one s and one f", k.cat, k.id, len(p)))
			continue
		}
		s, f := p[0], p[1]
		if s.ph == "f" {
			s, f = f, s
		}
		if s.ts > f.ts {
			problems = append(problems, fmt.Sprintf("flow (cat %q, id %s) finishes at %v before it starts at %v", k.cat, k.id, f.ts, s.ts))
		}
	}
	return phs, problems
}

// toCheckChromeTrace fails t with the first problems toChromeTraceProblems finds in b.
func toCheckChromeTrace(t *testing.T, what string, b []byte, srcUnpaired map[toFlowKey]bool) map[string]int {
	t.Helper()
	phs, problems := toChromeTraceProblems(b, srcUnpaired)
	for i, p := range problems {
		if i == 10 {
			t.Errorf("%s: %d problems in all", what, len(problems))
			break
		}
		t.Errorf("%s: %s", what, p)
	}
	if phs == nil {
		t.FailNow()
	}
	return phs
}

// toUnpairedFlows returns the (cat, id) flows of a source trace that are not one s plus one f.
func toUnpairedFlows(t *testing.T, b []byte) map[toFlowKey]bool {
	t.Helper()
	var tr struct {
		TraceEvents []struct {
			Ph  string `json:"ph"`
			Cat string `json:"cat"`
			ID  any    `json:"id"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	n := map[toFlowKey][2]int{}
	for _, e := range tr.TraceEvents {
		if e.Ph == "s" || e.Ph == "f" {
			k := toFlowKey{e.Cat, fmt.Sprint(e.ID)}
			c := n[k]
			if e.Ph == "s" {
				c[0]++
			} else {
				c[1]++
			}
			n[k] = c
		}
	}
	out := map[toFlowKey]bool{}
	for k, c := range n {
		if c != [2]int{1, 1} {
			out[k] = true
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// TestTraceOutputsOpenInPerfetto runs each trace writer on the alexnet trace in testdata (critical path
// over the whole trace, counters of rank 0, the aten::linear kernel sequences) and checks its output's
// schema, and that each added what it says: flows, counters, pattern args.
func TestTraceOutputsOpenInPerfetto(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("..", "testdata", "traces", "alexnet", "benchmark_result_2869224_1695835535_trace.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	db := ctOpen(t, src)
	orig := ctReadBytes(t, src, true)
	unpaired := toUnpairedFlows(t, orig)
	srcPh := toCheckChromeTrace(t, "source trace", orig, unpaired)
	ctx := context.Background()

	for _, c := range []struct {
		name, query string
		check       func(t *testing.T, phs map[string]int, b []byte)
	}{
		{"export_critical_path_overlay", `SELECT path FROM export_critical_path_overlay(rank := 0, output_dir := ?, annotation := '',
			only_show_critical_events := false)`,
			func(t *testing.T, phs map[string]int, b []byte) {
				if phs["s"] <= srcPh["s"] || phs["f"] <= srcPh["f"] {
					t.Errorf("no critical_path flows added: s %d→%d, f %d→%d", srcPh["s"], phs["s"], srcPh["f"], phs["f"])
				}
				if !bytes.Contains(b, []byte(`"critical_path"`)) {
					t.Errorf("no critical_path category in the output")
				}
			}},
		{"export_counters_trace", `SELECT path FROM export_counters_trace(0, ?)`,
			func(t *testing.T, phs map[string]int, _ []byte) {
				if phs["C"] <= srcPh["C"] {
					t.Errorf("no counter events added: %d → %d", srcPh["C"], phs["C"])
				}
				if phs["X"] != srcPh["X"] {
					t.Errorf("X events %d, source %d", phs["X"], srcPh["X"])
				}
			}},
		{"export_kernel_sequences_overlay", `SELECT path FROM export_kernel_sequences_overlay('aten::linear', ?)`,
			func(t *testing.T, phs map[string]int, b []byte) {
				if !bytes.Contains(b, []byte(`"Patterns"`)) {
					t.Errorf("no args.Patterns in the output")
				}
				if phs["X"] != srcPh["X"] {
					t.Errorf("X events %d, source %d", phs["X"], srcPh["X"])
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var path string
			if err := db.SQL.QueryRowContext(ctx, c.query, t.TempDir()).Scan(&path); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			b := ctReadBytes(t, path, false)
			phs := toCheckChromeTrace(t, filepath.Base(path), b, unpaired)
			c.check(t, phs, b)
		})
	}
}

// TestTraceOutputsKeepInvalidEscapes: the loader keeps a name with an invalid escape ("C:\Users", an unknown
// \q) as written, with a warning, so the three writers must copy such events through byte for byte, marked or
// not, as they do every other event (encoding/json, which the overlays once used to split events, refused the
// whole trace). The alexnet trace's aten::linear ops (on the critical path, each launching a kernel sequence)
// get such a name.
func TestTraceOutputsKeepInvalidEscapes(t *testing.T) {
	src := filepath.Join("..", "testdata", "traces", "alexnet", "benchmark_result_2869224_1695835535_trace.json.gz")
	const bad = `"aten::linear\q"`
	orig := bytes.ReplaceAll(ctReadBytes(t, src, true), []byte(`"aten::linear"`), []byte(bad))
	want := bytes.Count(orig, []byte(bad))
	if want == 0 {
		t.Fatal("the trace has no aten::linear to rename")
	}
	db := ctOpenJSON(t, "escapes.json", string(orig))
	ctx := context.Background()
	for _, q := range []string{
		`SELECT path FROM export_critical_path_overlay(rank := 0, output_dir := ?, annotation := '', only_show_critical_events := false)`,
		`SELECT path FROM export_counters_trace(0, ?)`,
		`SELECT path FROM export_kernel_sequences_overlay('aten::linear\q', ?)`,
	} {
		var path string
		if err := db.SQL.QueryRowContext(ctx, q, t.TempDir()).Scan(&path); err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		b := ctReadBytes(t, path, false)
		if got := bytes.Count(b, []byte(bad)); got != want {
			t.Errorf("%s: %d events named %s, the source has %d", q, got, bad, want)
		}
		if strings.Contains(q, "critical_path") && !regexp.MustCompile(`"aten::linear\\q"[^}]*"args": *\{[^}]*"critical":1`).Match(b) {
			t.Errorf("%s: no %s event marked critical", q, bad)
		}
		if strings.Contains(q, "sequences") && !regexp.MustCompile(`"aten::linear\\q"[^}]*"args": *\{[^}]*"Patterns"`).Match(b) {
			t.Errorf("%s: no %s event marked with its patterns", q, bad)
		}
	}
}

// TestTraceOutputsRefuseChangedFile: the three writers splice database rows into a fresh read of the trace file by
// event position, so a file that changed since it was loaded (another size, or only another modification time) must
// be refused with the loader's words, and nothing written, rather than produce output that pairs events wrongly.
func TestTraceOutputsRefuseChangedFile(t *testing.T) {
	orig := ctReadBytes(t, filepath.Join("..", "testdata", "traces", "alexnet", "benchmark_result_2869224_1695835535_trace.json.gz"), false)
	queries := map[string]string{
		"export_critical_path_overlay":    `SELECT path FROM export_critical_path_overlay(rank := 0, output_dir := ?, annotation := '')`,
		"export_counters_trace":           `SELECT path FROM export_counters_trace(0, ?)`,
		"export_kernel_sequences_overlay": `SELECT path FROM export_kernel_sequences_overlay('aten::linear', ?)`,
	}
	for _, change := range []struct {
		name   string
		change func(path string) error
	}{
		{"grown", func(p string) error { return os.WriteFile(p, append(orig, ' '), 0o644) }},
		{"touched", func(p string) error {
			return os.Chtimes(p, time.Now(), time.Now().Add(time.Hour))
		}},
	} {
		t.Run(change.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "trace.json")
			if err := os.WriteFile(src, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			db := ctOpen(t, src)
			if err := change.change(src); err != nil {
				t.Fatal(err)
			}
			for name, q := range queries {
				parent := t.TempDir()
				out := filepath.Join(parent, "new") // an output_dir the export would create
				var path string
				err := db.SQL.QueryRow(q, out).Scan(&path)
				if err == nil || !strings.Contains(err.Error(), "read trace "+src+": changed since it was loaded (then ") {
					t.Errorf("%s on a %s file: error %v, want the file named as changed since it was loaded", name, change.name, err)
				}
				if left, _ := os.ReadDir(parent); len(left) != 0 {
					t.Errorf("%s on a %s file left %v behind", name, change.name, left)
				}
			}
		})
	}
}

// TestTraceOutputsNameWhatIsMissing: a moved trace and an output_dir that cannot be made are told apart (r38 #3:
// both read "the overlay is written from the original trace file").
func TestTraceOutputsNameWhatIsMissing(t *testing.T) {
	orig := ctReadBytes(t, filepath.Join("..", "testdata", "traces", "alexnet", "benchmark_result_2869224_1695835535_trace.json.gz"), false)
	src := filepath.Join(t.TempDir(), "trace.json")
	if err := os.WriteFile(src, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	db := ctOpen(t, src)
	const q = `SELECT path FROM export_critical_path_overlay(rank := 0, output_dir := ?, annotation := '')`
	var path string
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := db.SQL.QueryRow(q, filepath.Join(file, "new")).Scan(&path)
	if err == nil || !strings.Contains(err.Error(), "create output_dir") || strings.Contains(err.Error(), "read trace") {
		t.Errorf("output_dir under a file: %v, want it named as the output_dir", err)
	}
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	err = db.SQL.QueryRow(q, t.TempDir()).Scan(&path)
	if err == nil || !strings.Contains(err.Error(), "read trace") || !strings.Contains(err.Error(), src+": no such file") {
		t.Errorf("a moved trace: %v, want the trace file named", err)
	}
}

// TestChromeTraceCheckerRejects: the checker itself catches each kind of broken event.
func TestChromeTraceCheckerRejects(t *testing.T) {
	for _, bad := range []string{
		`[]`,
		`{"traceEvents": {}}`,
		`{"traceEvents": [{"name": "a", "pid": 1, "ts": 1, "dur": 1}]}`,
		`{"traceEvents": [{"ph": "X", "pid": 1, "ts": 1, "dur": 1}]}`,
		`{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}]}`,
		`{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "ts": "1", "dur": 1}]}`,
		`{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "ts": 1}]}`,
		`{"traceEvents": [{"ph": "C", "name": "a", "pid": 1, "ts": 1, "args": {"v": "x"}}]}`,
		`{"traceEvents": [{"ph": "s", "cat": "c", "id": 1, "name": "a", "pid": 1, "ts": 1}]}`,
		`{"traceEvents": [{"ph": "s", "cat": "c", "id": 1, "name": "a", "pid": 1, "ts": 5},
			{"ph": "f", "cat": "c", "id": 1, "name": "a", "pid": 1, "ts": 1}]}`,
	} {
		if _, problems := toChromeTraceProblems([]byte(bad), nil); len(problems) == 0 {
			t.Errorf("accepted %s", bad)
		}
	}
	ok := `{"traceEvents": [{"ph": "M", "name": "process_name", "pid": "p", "args": {"name": "x"}},
		{"ph": "X", "name": "a", "pid": 1, "ts": 1.5, "dur": 0},
		{"ph": "C", "name": "q", "pid": 1, "ts": 2, "args": {"v": 3}},
		{"ph": "s", "cat": "c", "id": 1, "name": "a", "pid": 1, "ts": 1},
		{"ph": "f", "cat": "c", "id": 1, "name": "a", "pid": 1, "ts": 1, "bp": "e"}]}`
	phs := toCheckChromeTrace(t, "good", []byte(ok), nil)
	if phs["X"] != 1 || phs["s"] != 1 || phs["C"] != 1 {
		t.Errorf("counts %v", phs)
	}
}

// TestTraceOutputsSharedNames: two trace sets whose rank-0 files have one name (control/trace.json,
// test/trace.json), or one file loaded under two labels, exported into one directory get one file each,
// "<label>_rank<rank>_" before the name, instead of the second overwriting the first; a name no other loaded
// file has is kept as HTA writes it.
func TestTraceOutputsSharedNames(t *testing.T) {
	orig := ctReadBytes(t, filepath.Join("..", "testdata", "traces", "alexnet", "benchmark_result_2869224_1695835535_trace.json.gz"), false)
	dir := t.TempDir()
	src := map[string]string{}
	for _, label := range []string{"control", "test"} {
		src[label] = filepath.Join(dir, label, "trace.json")
		if err := os.MkdirAll(filepath.Dir(src[label]), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(src[label], orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	single := ctOpen(t, src["control"])
	db := ctOpen(t)
	ctx := context.Background()
	// "again": control's file once more, under another label (its exports had overwritten control's)
	src["again"] = src["control"]
	for _, label := range []string{"control", "test", "again"} {
		if _, err := db.Load(ctx, []string{src[label]}, engine.LoadOptions{Label: label}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ query, name string }{
		{`SELECT path FROM export_critical_path_overlay(rank := 0, output_dir := ?, annotation := '', label := ?)`, "overlaid_critical_path_%strace.json"},
		{`SELECT path FROM export_counters_trace(0, ?, label := ?)`, "%strace_with_counters.json"},
		{`SELECT path FROM export_kernel_sequences_overlay('aten::linear', ?, label := ?)`, "overlaid_%strace.json"},
	} {
		out := t.TempDir()
		var path string
		if err := single.SQL.QueryRowContext(ctx, c.query, out, "").Scan(&path); err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(out, fmt.Sprintf(c.name, "")); path != want {
			t.Errorf("one set: wrote %s, want %s", path, want)
		}
		out = t.TempDir()
		for _, label := range []string{"control", "test", "again"} {
			if err := db.SQL.QueryRowContext(ctx, c.query, out, label).Scan(&path); err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(out, fmt.Sprintf(c.name, label+"_rank0_")); path != want {
				t.Errorf("label %s: wrote %s, want %s", label, path, want)
			}
		}
		if ents, _ := os.ReadDir(out); len(ents) != 3 {
			t.Errorf("%s: %d files in the output directory, want 3", c.query, len(ents))
		}
	}
}
