package queries_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"tracesql/engine"
	"tracesql/internal/htaref"
)

// ovTrace is a parsed trace file (gzip or not).
type ovTrace struct {
	top    map[string]any
	events []map[string]any
}

func ovRead(t *testing.T, path string) ovTrace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	var magic [2]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		t.Fatal(err)
	}
	f.Seek(0, 0)
	if magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		t.Fatalf("%s: not valid JSON: %v", path, err)
	}
	var out ovTrace
	out.top = top
	evs, _ := top["traceEvents"].([]any)
	for _, e := range evs {
		out.events = append(out.events, e.(map[string]any))
	}
	delete(top, "traceEvents")
	return out
}

func ovIsFlow(e map[string]any) bool { return e["cat"] == "critical_path" }

// ovFlowPairs returns the critical_path flow pairs as canonical strings without their ids, sorted,
// and checks that every id has exactly one s and one f (Perfetto binds a pair by id).
func ovFlowPairs(t *testing.T, evs []map[string]any) []string {
	t.Helper()
	byID := map[string][]map[string]any{}
	for _, e := range evs {
		if ovIsFlow(e) {
			id := fmt.Sprint(e["id"])
			byID[id] = append(byID[id], e)
		}
	}
	var out []string
	for id, p := range byID {
		if len(p) != 2 || !((p[0]["ph"] == "s" && p[1]["ph"] == "f") || (p[0]["ph"] == "f" && p[1]["ph"] == "s")) {
			t.Errorf("flow id %s: %d events, want one s and one f", id, len(p))
			continue
		}
		if p[0]["ph"] == "f" {
			p[0], p[1] = p[1], p[0]
		}
		var parts []string
		for _, e := range p {
			c := map[string]any{}
			for k, v := range e {
				if k != "id" {
					c[k] = v
				}
			}
			b, _ := json.Marshal(c)
			parts = append(parts, string(b))
		}
		out = append(out, strings.Join(parts, " → "))
	}
	sort.Strings(out)
	return out
}

// ovStats is the reference's cp_*_overlay_*_stats.json.
type ovStats struct {
	TotalEvents      int            `json:"total_events"`
	Ph               map[string]int `json:"ph"`
	CriticalMarkedX  int            `json:"critical_marked_X"`
	FlowEventsByType map[string]int `json:"flow_events_by_type"`
}

func ovStatsOf(tr ovTrace) ovStats {
	s := ovStats{TotalEvents: len(tr.events), Ph: map[string]int{}, FlowEventsByType: map[string]int{}}
	for _, e := range tr.events {
		ph := fmt.Sprint(e["ph"])
		s.Ph[ph]++
		args, _ := e["args"].(map[string]any)
		if ph == "X" && args != nil && args["critical"] != nil {
			s.CriticalMarkedX++
		}
		if ovIsFlow(e) {
			crit := "False"
			if args["critical"] == true {
				crit = "True"
			}
			s.FlowEventsByType[fmt.Sprintf("%s|%v|critical=%s", ph, args["type"], crit)]++
		}
	}
	return s
}

// ovVariants are the reference's overlay runs: only_critical = the defaults, full =
// only_show_critical_events false, all_edges = full plus show_all_edges.
var ovVariants = []struct{ name, args string }{
	{"only_critical", ""},
	{"full", ", only_show_critical_events := false"},
	{"all_edges", ", only_show_critical_events := false, show_all_edges := true"},
}

// TestCPOverlayEndToEnd: critical_path/end_to_end/simple_add (annotation "", instance 0,
// data_load_events ['data_load'], HTA's end-to-end test): the full overlay equals HTA's committed
// expected output and the reference's overlaid trace event for event; flows compared as multisets
// of (s, f) pairs without ids.
func TestCPOverlayEndToEnd(t *testing.T) {
	var dir htaref.Dir
	for _, d := range htaref.Dirs(t) {
		if d.Name == "critical_path/end_to_end/simple_add/input" {
			dir = d
		}
	}
	if dir.Path == "" {
		t.Skip("reference dir critical_path/end_to_end/simple_add/input absent")
	}
	db := htaref.Open(t, dir).SQL
	out := t.TempDir()
	var path string
	var events, crit, flows, dropped int64
	if err := db.QueryRow(`SELECT path, events, critical_events, flow_pairs, dropped_events FROM export_critical_path_overlay(
		output_dir := ?, annotation := '', instance := 0, data_load_events := ['data_load'],
		only_show_critical_events := false, compat := true)`, out).Scan(&path, &events, &crit, &flows, &dropped); err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "overlaid_critical_path_trace.json.gz" || filepath.Dir(path) != out {
		t.Errorf("path %s", path)
	}
	got := ovRead(t, path)
	if int64(len(got.events)) != events || events != 1732 || crit != 624+0 || flows != 192 || dropped != 0 {
		t.Errorf("counts: events %d (file %d), critical %d, flows %d, dropped %d; HTA 1732, 624, 192, 0", events, len(got.events), crit, flows, dropped)
	}
	_, traces := htaref.Root(t)
	for _, want := range []string{
		filepath.Join(traces, "critical_path/end_to_end/simple_add/output/overlaid_critical_path_trace.json.gz"),
		dir.File("cp_full_trace_dataload_overlaid_trace.json.gz"),
	} {
		if _, err := os.Stat(want); err != nil {
			t.Logf("%s absent", want)
			continue
		}
		w := ovRead(t, want)
		if !reflect.DeepEqual(got.top, w.top) {
			t.Errorf("%s: top-level members differ", want)
		}
		var gotNF, wantNF []map[string]any
		for _, e := range got.events {
			if !ovIsFlow(e) {
				gotNF = append(gotNF, e)
			}
		}
		for _, e := range w.events {
			if !ovIsFlow(e) {
				wantNF = append(wantNF, e)
			}
		}
		if len(gotNF) != len(wantNF) {
			t.Errorf("%s: %d non-flow events, HTA %d", want, len(gotNF), len(wantNF))
		}
		bad := 0
		for i := 0; i < len(gotNF) && i < len(wantNF); i++ {
			if !reflect.DeepEqual(gotNF[i], wantNF[i]) {
				if bad < 5 {
					g, _ := json.Marshal(gotNF[i])
					h, _ := json.Marshal(wantNF[i])
					t.Errorf("%s: event %d:\n got %s\n HTA %s", want, i, g, h)
				}
				bad++
			}
		}
		gp, wp := ovFlowPairs(t, got.events), ovFlowPairs(t, w.events)
		if !reflect.DeepEqual(gp, wp) {
			t.Errorf("%s: flow pairs differ: %d vs HTA %d", want, len(gp), len(wp))
			for i := 0; i < len(gp) && i < len(wp); i++ {
				if gp[i] != wp[i] {
					t.Errorf("first difference:\n got %s\n HTA %s", gp[i], wp[i])
					break
				}
			}
		}
	}
}

// TestCPOverlayStats: every reference critical-path run with overlay stats: the three variants'
// event counts per ph, marked X events and flow events per (ph, type, critical) equal HTA's.
func TestCPOverlayStats(t *testing.T) {
	runs := cpRefRuns(t)
	n := 0
	for _, r := range runs {
		r := r
		if !r.dir.Has("cp_" + r.label + "_overlay_only_critical_stats.json") {
			continue
		}
		n++
		t.Run(r.dir.Name+"/"+r.label, func(t *testing.T) {
			db := htaref.Open(t, r.dir).SQL
			out := t.TempDir()
			for _, v := range ovVariants {
				var want ovStats
				b, err := os.ReadFile(r.file("_overlay_" + v.name + "_stats.json"))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &want); err != nil {
					t.Fatal(err)
				}
				var path string
				q := fmt.Sprintf(`SELECT path FROM export_critical_path_overlay(%s, output_dir := '%s'%s)`, r.args(), out, v.args)
				if err := db.QueryRow(q).Scan(&path); err != nil {
					t.Fatalf("%s: %v", v.name, err)
				}
				got := ovStatsOf(ovRead(t, path))
				ovFlowPairs(t, ovRead(t, path).events)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s:\n got %+v\n HTA %+v", v.name, got, want)
				}
			}
		})
	}
	if n == 0 {
		t.Skip("no overlay stats in the reference")
	}
}

// TestCPOverlayArgs: output_dir is required (clear error, NULL included), NULL arguments take the
// defaults, and a default-mode (ns) run writes a valid file.
func TestCPOverlayArgs(t *testing.T) {
	var dir htaref.Dir
	for _, d := range htaref.Dirs(t) {
		if d.Name == "critical_path/cuda_event_sync" {
			dir = d
		}
	}
	if dir.Path == "" {
		t.Skip("reference dir absent")
	}
	db := htaref.Open(t, dir).SQL
	for _, q := range []string{
		`SELECT * FROM export_critical_path_overlay()`,
		`SELECT * FROM export_critical_path_overlay(output_dir := NULL)`,
		`SELECT * FROM export_critical_path_overlay(output_dir := '')`,
	} {
		_, err := db.Exec(q)
		if err == nil || !strings.Contains(err.Error(), "output_dir is required") {
			t.Errorf("%s: error %v, want output_dir is required", q, err)
		}
	}
	out := t.TempDir()
	var path string
	var flows int64
	if err := db.QueryRow(`SELECT path, flow_pairs FROM export_critical_path_overlay(rank := NULL, output_dir := ?, annotation := NULL,
		instance := NULL, instance_end := NULL, label := NULL, only_show_critical_events := NULL, show_all_edges := NULL,
		add_zero_weight_launch_edges := NULL, data_load_events := NULL, compat := NULL)`, out).Scan(&path, &flows); err != nil {
		t.Fatal(err)
	}
	tr := ovRead(t, path)
	if len(tr.events) == 0 || flows == 0 {
		t.Errorf("%s: %d events, %d flows", path, len(tr.events), flows)
	}
	if int64(len(ovFlowPairs(t, tr.events))) != flows {
		t.Errorf("flow pairs in file != %d", flows)
	}
	// Annotation not found: the critical path's error.
	if _, err := db.Exec(`SELECT * FROM export_critical_path_overlay(output_dir := ?, annotation := 'no such thing')`, out); err == nil {
		t.Error("missing annotation: no error")
	}
}

// TestCPOverlayArrayForm: a trace in the plain array form (the events alone) gets the same overlay as the
// same events in the object form, written in the object form; so does one that the profiler stopped writing
// inside an event after them (the loader leaves the cut event out, and so does the overlay).
func TestCPOverlayArrayForm(t *testing.T) {
	src := "../testdata/traces/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var whole struct {
		TraceEvents json.RawMessage `json:"traceEvents"`
	}
	err = json.NewDecoder(zr).Decode(&whole)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	object := filepath.Join(dir, "object.json")
	array := filepath.Join(dir, "array.json")
	cut := filepath.Join(dir, "cut.json")
	cutText := append(bytes.Clone(bytes.TrimSuffix(bytes.TrimSpace(whole.TraceEvents), []byte("]"))), `,
  {"ph": "X", "cat": "kernel", "name": "cut], {", "pid": 0, "tid": 7, "ts": 1`...)
	for p, text := range map[string][]byte{object: append(append([]byte(`{"traceEvents": `), whole.TraceEvents...), '}'), array: whole.TraceEvents, cut: cutText} {
		if err := os.WriteFile(p, text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var events [3][]map[string]any
	for i, p := range []string{object, array, cut} {
		db, err := engine.Open(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Load(context.Background(), []string{p}, engine.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, fmt.Sprint(i))
		var path string
		if err := db.SQL.QueryRow(`SELECT path FROM export_critical_path_overlay(output_dir := ?, annotation := '')`, out).Scan(&path); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		events[i] = ovRead(t, path).events
	}
	a, _ := json.Marshal(events[0])
	b, _ := json.Marshal(events[1])
	c, _ := json.Marshal(events[2])
	if len(events[0]) == 0 || !bytes.Equal(a, b) || !bytes.Equal(a, c) {
		t.Errorf("overlays differ: object form %d events, array form %d, cut array form %d", len(events[0]), len(events[1]), len(events[2]))
	}
}

// TestCPOverlayFlowsAtTheirEvents: in default mode a flow endpoint sits exactly at its node, its event's start or end
// (a GPU event's end less min(1 µs, dur), inside the kernel). HTA truncates them to whole µs (compat keeps that): on
// the PyTorch 2.11 trace, whose times carry ns, 127 of 246 starts fell before their events and 17 endpoints outside
// every slice of their thread, so Perfetto bound the arrows to the parent slice or to none.
func TestCPOverlayFlowsAtTheirEvents(t *testing.T) {
	trace := "../testdata/traces/recorded/control/rank0.control.pt.trace.json.gz"
	db := ctOpen(t, trace).SQL
	var path string
	if err := db.QueryRow(`SELECT path FROM export_critical_path_overlay(output_dir := ?, instance := 1)`, t.TempDir()).Scan(&path); err != nil {
		t.Fatal(err)
	}
	got := ovRead(t, path)
	rat := func(v any) *big.Rat {
		r, ok := new(big.Rat).SetString(fmt.Sprint(v))
		if !ok {
			t.Fatalf("not a number: %v", v)
		}
		return r
	}
	type lane struct{ pid, tid string }
	type span struct{ lo, hi *big.Rat }
	slices := map[lane][]span{}
	for _, e := range got.events {
		if e["ph"] == "X" && !ovIsFlow(e) {
			lo := rat(e["ts"])
			hi := new(big.Rat).Add(lo, rat(e["dur"]))
			k := lane{fmt.Sprint(e["pid"]), fmt.Sprint(e["tid"])}
			slices[k] = append(slices[k], span{lo, hi})
		}
	}
	oneUS := big.NewRat(1, 1)
	var flows, atEvent int
	for _, e := range got.events {
		if !ovIsFlow(e) {
			continue
		}
		flows++
		ts := rat(e["ts"])
		for _, s := range slices[lane{fmt.Sprint(e["pid"]), fmt.Sprint(e["tid"])}] {
			// a node is its event's start or end (a GPU event's end: less min(1 µs, dur))
			if ts.Cmp(s.lo) == 0 || ts.Cmp(s.hi) == 0 || ts.Cmp(s.lo) >= 0 && ts.Cmp(s.hi) < 0 && new(big.Rat).Add(ts, oneUS).Cmp(s.hi) >= 0 {
				atEvent++
				break
			}
		}
	}
	if flows == 0 || atEvent != flows {
		t.Errorf("%d of %d flow endpoints at their event's start or end", atEvent, flows)
	}
}

// TestCPOverlayFlowsAtNodeTimes: the flow arrows are placed at the graph's node times, as critical_path's rows
// give them, not rebuilt from the raw event's ts and dur (r72 #3, #4): a B event has no dur (its end arrow sat
// at its start, 289 µs back in time), a "ts" string was written as 0, and a negative time ending in .25 µs was
// written half a µs early. Each trace's path: a launch delay 20 → 50 µs, a sync dependency from K2's end (less
// the 1 µs that keeps an arrow inside its kernel) to the sync's end, a dependency on to the next op.
func TestCPOverlayFlowsAtNodeTimes(t *testing.T) {
	for _, c := range []struct {
		trace  string
		exact  []string // default mode: "s ts → f ts" per flow, in id order
		compat []string
	}{
		{"begin_end.json",
			[]string{"1700000000000020 → 1700000000000050", "1700000000000699 → 1700000000000710", "1700000000000710 → 1700000000000720"},
			[]string{"1700000000000020 → 1700000000000050", "1700000000000699 → 1700000000000710", "1700000000000710 → 1700000000000720"}},
		{"string_ts.json",
			[]string{"1700000000000020 → 1700000000000050", "1700000000000699 → 1700000000000710", "1700000000000710 → 1700000000000720"},
			[]string{"1700000000000020 → 1700000000000050", "1700000000000699 → 1700000000000710", "1700000000000710 → 1700000000000720"}},
		{"negative_ts.json",
			[]string{"-979.750 → -949.750", "-300.750 → -289.750", "-289.750 → -279.750"},
			[]string{"-979 → -949", "-300 → -289", "-289 → -279"}},
	} {
		db := ctOpen(t, "../testdata/traces/overlay_cases/"+c.trace).SQL
		for _, compat := range []bool{false, true} {
			want := c.exact
			if compat {
				want = c.compat
			}
			var path string
			if err := db.QueryRow(`SELECT path FROM export_critical_path_overlay(output_dir := ?, hta_compat := ?)`, t.TempDir(), compat).Scan(&path); err != nil {
				t.Fatal(err)
			}
			flows := map[string][2]string{}
			for _, e := range ovRead(t, path).events {
				if ovIsFlow(e) {
					id, f := fmt.Sprint(e["id"]), flows[fmt.Sprint(e["id"])]
					f[map[any]int{"s": 0, "f": 1}[e["ph"]]] = fmt.Sprint(e["ts"])
					flows[id] = f
				}
			}
			var got []string
			for i := range len(flows) {
				f := flows[strconv.Itoa(i)]
				got = append(got, f[0]+" → "+f[1])
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, compat %v: flows\n%q\nwant\n%q", c.trace, compat, got, want)
			}
		}
	}
}

// TestCPOverlayDuplicateArgs: an event whose args key is written twice gets args.critical in the last args, the
// one the loader, Python and HTA read (r72 #8: it went into the first, and a viewer showed one critical event
// fewer than the function counted).
func TestCPOverlayDuplicateArgs(t *testing.T) {
	db := ctOpen(t, "../testdata/traces/overlay_cases/duplicate_args.json").SQL
	var path string
	var critical int
	if err := db.QueryRow(`SELECT path, critical_events FROM export_critical_path_overlay(output_dir := ?)`, t.TempDir()).Scan(&path, &critical); err != nil {
		t.Fatal(err)
	}
	marked := 0
	for _, e := range ovRead(t, path).events { // (encoding/json keeps a key's last value, as Python)
		if args, _ := e["args"].(map[string]any); !ovIsFlow(e) && args != nil && fmt.Sprint(args["critical"]) == "1" {
			marked++
		}
	}
	if critical == 0 || marked != critical {
		t.Errorf("%d events marked critical as a reader sees them, %d counted", marked, critical)
	}
}

// TestCPOverlayOfOverlay: overlaying a trace that an earlier overlay wrote marks the new path only. The
// earlier marks stayed (review r78 #1: 3537 events marked where the new path has 1768), so a viewer
// showed two paths as one; the events they were on keep their other args.
func TestCPOverlayOfOverlay(t *testing.T) {
	src := "../testdata/traces/recorded/control/rank0.control.pt.trace.json.gz"
	var first string
	if err := ctOpen(t, src).SQL.QueryRow(`SELECT path FROM export_critical_path_overlay(output_dir := ?, instance := 0, only_show_critical_events := false)`,
		t.TempDir()).Scan(&first); err != nil {
		t.Fatal(err)
	}
	var second string
	var critical int
	if err := ctOpen(t, first).SQL.QueryRow(`SELECT path, critical_events FROM export_critical_path_overlay(output_dir := ?, instance := 1, only_show_critical_events := false)`,
		t.TempDir()).Scan(&second, &critical); err != nil {
		t.Fatal(err)
	}
	before, after := ovRead(t, first).events, ovRead(t, second).events
	marked, unmarked := 0, 0
	for _, e := range after {
		args, _ := e["args"].(map[string]any)
		if ovIsFlow(e) || args == nil {
			continue
		}
		if _, ok := args["critical"]; ok {
			marked++
		}
	}
	for _, e := range before {
		args, _ := e["args"].(map[string]any)
		if _, ok := args["critical"]; ok && !ovIsFlow(e) && len(args) > 1 {
			unmarked++ // marked by the first overlay, with args of its own
		}
	}
	if critical == 0 || marked != critical {
		t.Errorf("%d events carry args.critical, the new path has %d", marked, critical)
	}
	// Every slice of the first file is in the second, with the same args but critical.
	byKey := map[string]map[string]any{}
	for _, e := range after {
		if e["ph"] == "X" {
			byKey[fmt.Sprint(e["ph"], e["name"], e["pid"], e["tid"], e["ts"])], _ = e["args"].(map[string]any)
		}
	}
	lost := 0
	for _, e := range before {
		args, _ := e["args"].(map[string]any)
		if e["ph"] != "X" || args == nil {
			continue
		}
		got := byKey[fmt.Sprint(e["ph"], e["name"], e["pid"], e["tid"], e["ts"])]
		for k, v := range args {
			if k != "critical" && fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Logf("%v: %s=%v, now %v", e["name"], k, v, got[k])
				lost++
				break
			}
		}
	}
	if unmarked == 0 || lost > 0 {
		t.Errorf("%d events the first overlay marked had other args; %d events lost or changed an arg", unmarked, lost)
	}
}
