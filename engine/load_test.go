package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryTraceLoads loads every trace of the collection (the bundled testdata always, ../shared
// when present) and checks the rows per phase against an independent count made with encoding/json.
func TestEveryTraceLoads(t *testing.T) {
	files := allTraceFiles(t, filepath.Join("..", "testdata", "traces"))
	if shared, err := filepath.Abs(filepath.Join("..", "..", "shared", "traces")); err == nil {
		if more := allTraceFiles(t, shared); len(more) > 0 {
			files = append(files, more...)
		} else {
			t.Log("../shared/traces not present: checking testdata only")
		}
	}
	if testing.Short() {
		files = files[:min(len(files), 10)]
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			events, isTrace := readJSONTrace(t, path)
			db := openTestDB(t)
			_, err := db.Load(context.Background(), []string{path}, LoadOptions{})
			if !isTrace {
				if !errors.Is(err, ErrNotATrace) {
					t.Fatalf("non-trace JSON: got %v, want ErrNotATrace", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{}
			counterRows := int64(0)
			ends := int64(0) // E events: each closes its B into one events row, under the B's ev_idx
			for _, e := range events {
				ph := jsonString(e["ph"])
				switch ph {
				case "X", "B":
					want["events"]++
				case "E":
					ends++
				case "M":
					want["metadata_events"]++
				case "s", "t", "f":
					want["flows"]++
				case "C":
					// A counter with no series (no args, {}, args not an object) is kept in other_events.
					var args map[string]json.RawMessage
					if json.Unmarshal(e["args"], &args) != nil || len(args) == 0 {
						want["other_events"]++
						continue
					}
					want["counters"]++
					counterRows += int64(len(args))
				case "i", "I", "R":
					want["instants"]++
				default:
					want["other_events"]++
				}
			}
			for _, table := range []string{"events", "metadata_events", "flows", "counters", "instants", "other_events"} {
				got := queryInt(t, db, fmt.Sprintf("SELECT count(DISTINCT ev_idx) FROM %s", table))
				if got != want[table] {
					t.Errorf("%s: %d rows, want %d", table, got, want[table])
				}
			}
			if got := queryInt(t, db, "SELECT count(*) FROM counters"); got != counterRows {
				t.Errorf("counters: %d (event, key) rows, want %d", got, counterRows)
			}
			if got := queryInt(t, db, "SELECT events FROM traces"); got != int64(len(events)) {
				t.Errorf("traces.events = %d, want %d", got, len(events))
			}
			// ev_idx is the position in traceEvents: every index appears exactly once across tables.
			if got := queryInt(t, db, `SELECT count(DISTINCT ev_idx) FROM (
				SELECT ev_idx FROM events UNION ALL SELECT ev_idx FROM metadata_events UNION ALL SELECT ev_idx FROM flows
				UNION ALL SELECT ev_idx FROM counters UNION ALL SELECT ev_idx FROM instants UNION ALL SELECT ev_idx FROM other_events)
				WHERE ev_idx IS NOT NULL AND ev_idx BETWEEN 0 AND (SELECT events - 1 FROM traces)`); got != int64(len(events))-ends {
				t.Errorf("distinct ev_idx = %d, want %d", got, int64(len(events))-ends)
			}
			// The stored frame, built from the Arrow batches at load, is the frame view over the stored
			// events, row for row (DuckDB's Arrow scan once dropped a pushed-down filter).
			for _, q := range []string{
				"SELECT count(*) FROM (FROM _hta_frame_default EXCEPT ALL FROM _hta_frame_source)",
				"SELECT count(*) FROM (FROM _hta_frame_source EXCEPT ALL FROM _hta_frame_default)",
			} {
				if got := queryInt(t, db, q); got != 0 {
					t.Errorf("%s: %d rows", q, got)
				}
			}
			if got := queryInt(t, db, `SELECT count(*) FROM duckdb_views() WHERE view_name LIKE '_tracesql_load%'`); got != 0 {
				t.Errorf("%d Arrow scan views left in the database", got)
			}
			// Names and categories survive byte for byte on a sample.
			for i := 0; i < len(events); i += 1 + len(events)/50 {
				e := events[i]
				if jsonString(e["ph"]) != "X" {
					continue
				}
				var name, cat string
				err := db.SQL.QueryRow("SELECT coalesce(name, ''), coalesce(cat, '') FROM events WHERE ev_idx = ?", i).Scan(&name, &cat)
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if name != jsonString(e["name"]) || cat != jsonString(e["cat"]) {
					t.Errorf("event %d: name/cat %q/%q, want %q/%q", i, name, cat, jsonString(e["name"]), jsonString(e["cat"]))
				}
			}
		})
	}
}

// nsFromText converts decimal µs text to ns with math/big: an implementation independent of usToNs.
func nsFromText(t *testing.T, text string) int64 {
	r, ok := new(big.Rat).SetString(strings.Trim(text, `"`))
	if !ok {
		t.Fatalf("bad number %q", text)
	}
	r.Mul(r, big.NewRat(1000, 1))
	if !r.IsInt() {
		t.Fatalf("%s µs is not a whole number of ns", text)
	}
	return r.Num().Int64()
}

// TestTimestampsExact checks ts and dur of every complete event against the decimal text × 1000,
// on an integer trace, 3-decimal traces and the out-of-order trace.
func TestTimestampsExact(t *testing.T) {
	for _, path := range []string{
		"../testdata/traces/call_stack/backward_thread.json",                            // integer µs
		"../testdata/traces/ns_resolution/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", // 3 decimals
		"../testdata/traces/out_of_order/before_fix_trace.json",                         // out of order, sub-µs
		"../testdata/traces/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
	} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			events, _ := readJSONTrace(t, path)
			db := openTestDB(t)
			mustLoad(t, db, path)
			got := map[int64][2]any{}
			rows, err := db.SQL.Query("SELECT ev_idx, ts, dur FROM events")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var idx, ts int64
				var dur any
				rows.Scan(&idx, &ts, &dur)
				got[idx] = [2]any{ts, dur}
			}
			rows.Close()
			checked := 0
			for i, e := range events {
				if jsonString(e["ph"]) != "X" {
					continue
				}
				g := got[int64(i)]
				if want := nsFromText(t, string(e["ts"])); g[0] != want {
					t.Errorf("event %d: ts %v ns, want %d (text %s)", i, g[0], want, e["ts"])
				}
				if d, ok := e["dur"]; ok {
					if want := nsFromText(t, string(d)); g[1] != want {
						t.Errorf("event %d: dur %v ns, want %d (text %s)", i, g[1], want, d)
					}
				}
				checked++
			}
			if checked == 0 {
				t.Fatal("no complete events checked")
			}
		})
	}
}

func TestUsToNs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false},
		{"1", 1000, false},
		{"1.5", 1500, false},
		{"1695835542514261.123", 1695835542514261123, false},
		{"1731000000123456.789", 1731000000123456789, false},
		{"-2.25", -2250, false},
		{"0.0004", 0, false},
		{"0.0005", 1, false},
		{"12.3456", 12346, false},
		{"1e3", 1000000, false},
		{"1.5E-3", 2, false},
		{"2.000", 2000, false},
		{"abc", 0, true},
		{"", 0, true},
		{"1.2.3", 0, true},
		{"99999999999999999999999", 0, true},
		{"9223372036854775.807", math.MaxInt64, false},
		{"9223372036854775.808", 0, true},
		{"-9223372036854775.808", math.MinInt64, false},
		{"-9223372036854775.809", 0, true},
		// valid JSON for zero or for less than half a nanosecond, whatever the exponent
		{"0e999", 0, false},
		{"-0.0e+12345678901234567890", 0, false},
		{"1e-400", 0, false},
		{"4e-4", 0, false},
		{"5e-4", 1, false},
		{"1e-19", 0, false},
		{"18446744073709551615e-22", 2, false}, // 1.84 ns
		{"99999999999999999999e-25", 0, false},
		{"1e999", 0, true},
		{"1e+", 0, true},
	} {
		got, err := usToNs([]byte(c.in))
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("usToNs(%q) = %d, %v; want %d, err %v", c.in, got, err, c.want, c.err)
		}
	}
}

// TestDiscoverLinks: a symbolic (or hard) link to a trace already named is the same file, skipped with a note
// naming it, not a second rank that doubles every total; a link to a directory that is named like a trace
// is left out of a directory's files.
func TestDiscoverLinks(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	if err := os.WriteFile(a, []byte(`[{"ph":"X","cat":"cpu_op","name":"x","pid":1,"tid":1,"ts":1,"dur":2}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, link := range []func() error{
		func() error { return os.Symlink("a.json", filepath.Join(dir, "b.json")) },
		func() error { return os.Link(a, filepath.Join(dir, "c.json")) },
		func() error { return os.Mkdir(filepath.Join(dir, "sub"), 0o755) },
		func() error { return os.Symlink("sub", filepath.Join(dir, "x.json")) },
	} {
		if err := link(); err != nil {
			t.Fatal(err)
		}
	}
	files, _, repeated, err := Discover([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []LoadResult{{Path: filepath.Join(dir, "b.json"), Skipped: "the same file as " + a},
		{Path: filepath.Join(dir, "c.json"), Skipped: "the same file as " + a}}
	if !slices.Equal(files, []string{a}) || !slices.Equal(repeated, want) {
		t.Errorf("files %v, repeated %+v; want [%s] and %+v", files, repeated, a, want)
	}
	db := openTestDB(t)
	if _, err := db.Load(context.Background(), []string{a, filepath.Join(dir, "b.json")}, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM traces`); n != 1 {
		t.Errorf("%d traces from one file and a link to it", n)
	}
}

// TestFlowID2: flows (and other events) that carry the Chrome format's id2 instead of id keep it, scoped, so that
// they can be paired (id was NULL): {"local": "0x1"} → local:0x1, {"global": 7} → global:7; a plain id wins.
func TestFlowID2(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.json")
	os.WriteFile(p, []byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":5},
		{"ph":"s","cat":"c","name":"f","pid":1,"tid":1,"ts":2,"id2":{"local":"0x1"}},
		{"ph":"f","bp":"e","cat":"c","name":"f","pid":1,"tid":1,"ts":4,"id2":{"local":"0x1"}},
		{"ph":"s","cat":"c","name":"g","pid":1,"tid":1,"ts":2,"id2":{"global":7}},
		{"ph":"s","cat":"c","name":"h","pid":1,"tid":1,"ts":2,"id":"9","id2":{"global":7}}]}`), 0o644)
	db := openTestDB(t)
	mustLoad(t, db, p)
	if got := queryText(t, db, "SELECT name, ph, id FROM flows ORDER BY ev_idx"); got != "f\ts\tlocal:0x1\t\nf\tf\tlocal:0x1\t\ng\ts\tglobal:7\t\nh\ts\t9\t\n" {
		t.Errorf("flow ids:\n%s", got)
	}
}

// TestStripRanks: inflate names its outputs after the source without the source's rank, and keeps what is around it
// (the rank pattern once took the character before it too: gpu0rank3 became gpu_rank…).
func TestStripRanks(t *testing.T) {
	for in, want := range map[string]string{
		"gpu0rank3": "gpu0", "worker5_step_12": "_step_12", "job.rank3.trace": "job..trace", "frank7": "frank7", "a_rank1_rank2": "a__",
	} {
		if got := stripRanks(in); got != want {
			t.Errorf("stripRanks(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDiscoverSkipsExports: the files the exports write (overlays, counters traces) are copies of a trace with
// its rank; in the trace's directory they are skipped, with why, and load when named.
func TestDiscoverSkipsExports(t *testing.T) {
	dir := t.TempDir()
	trace := `{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"x","pid":1,"tid":1,"ts":1,"dur":2}]}`
	for _, n := range []string{"rank0.json", "rank0_with_counters.json", "overlaid_critical_path_rank0.json", "overlaid_rank0.json"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(trace), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := openTestDB(t)
	res, err := db.Load(context.Background(), []string{dir}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var loaded, skipped []string
	for _, r := range res {
		if r.Skipped != "" {
			skipped = append(skipped, filepath.Base(r.Path)+": "+r.Skipped)
		} else {
			loaded = append(loaded, filepath.Base(r.Path))
		}
	}
	want := []string{
		"overlaid_critical_path_rank0.json: written by export_critical_path_overlay (name the file to load it)",
		"overlaid_rank0.json: written by export_kernel_sequences_overlay (name the file to load it)",
		"rank0_with_counters.json: written by export_counters_trace (name the file to load it)",
	}
	if fmt.Sprint(loaded) != "[rank0.json]" || fmt.Sprint(skipped) != fmt.Sprint(want) {
		t.Errorf("loaded %v, skipped %q", loaded, skipped)
	}
	// Named, an export loads (as another label: it has the trace's rank).
	if _, err := db.Load(context.Background(), []string{filepath.Join(dir, "overlaid_rank0.json")}, LoadOptions{Label: "overlay"}); err != nil {
		t.Fatal(err)
	}
	// A directory holding exports only is an error, as an empty one is: loading nothing and going on ran the
	// queries on an empty database with exit status 0.
	if err := os.Remove(filepath.Join(dir, "rank0.json")); err != nil {
		t.Fatal(err)
	}
	_, err = db.Load(context.Background(), []string{dir}, LoadOptions{Label: "exports"})
	if want := "load " + dir + ": no trace files in the directory, only 3 file(s) written by tracesql's exports (name one to load it)"; err == nil || err.Error() != want {
		t.Errorf("exports only: %v, want %q", err, want)
	}
}
