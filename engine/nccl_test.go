package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const ncclQuirkFile = "../testdata/nccl/quirks/nccl_4242_0.json"

func loadWarn(t *testing.T, db *DB, paths ...string) ([]LoadResult, []string, error) {
	t.Helper()
	var warns []string
	res, err := db.Load(context.Background(), paths, LoadOptions{Warn: func(w string) { warns = append(warns, w) }})
	return res, warns, err
}

func TestNCCLSniff(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{ncclQuirkFile, true},
		{"../testdata/nccl/dlrm/nccl_9316512174413312871_3.json.gz", true},
		{"../testdata/traces/call_stack/backward_thread.json", false},
		// Kineto content under a plugin-like name stays Kineto.
		{write("trace_1_2.json", `{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]}`), false},
		{write("arr_1_2.json", `[{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]`), false},
		// Plugin categories under any name are plugin output.
		{write("whatever.json", `[`+"\n"+`{"name": "Group API", "cat": "GROUP_API", "ph": "b", "id": 0, "pid": 1, "tid": 1, "ts": 1.0},`), true},
		// A plugin-named file that is only the array opening (killed before finalize) goes to the NCCL loader.
		{write("dump_77_1.json", "[\n"), true},
		// Chrome async events of categories the plugin also uses, under other names, are Chrome's.
		{write("arr_gpu.json", `[{"name":"frame","cat":"GPU","ph":"b","id":1,"pid":1,"tid":1,"ts":10},{"name":"frame","cat":"GPU","ph":"e","id":1,"pid":1,"tid":1,"ts":20}]`), false},
		{write("net.json", `[{"name": "fetch", "cat": "NET", "ph": "b", "id": 1, "pid": 1, "tid": 1, "ts": 1}]`), false},
		// A plugin-like name does not make an array trace the plugin's: an empty one, or one whose first
		// event's "ph" comes after 4 KB of args.
		{write("run_1_2.json", "[]"), false},
		{write("trace_0_1700000000.json", `[{"name": "a", "args": {"x": "`+strings.Repeat("y", 5000)+`"}, "ph": "X", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]`), false},
		// The plugin's generic categories under its own names are still recognised.
		{write("kch.json", `[`+"\n"+`{"name": "KernelCh", "cat": "GPU", "ph": "b", "id": 0, "pid": 1, "tid": 1, "ts": 1.0},`), true},
	} {
		if got := IsNCCLProfile(c.path); got != c.want {
			t.Errorf("IsNCCLProfile(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}

// TestNCCLQuirks loads the hand-written older-plugin file: every quirk accepted with one warning line,
// nothing dropped, the hierarchy rebuilt from the print order.
func TestNCCLQuirks(t *testing.T) {
	db := openTestDB(t)
	res, warns, err := loadWarn(t, db, ncclQuirkFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Rank != 0 || res[0].Events != 24 {
		t.Fatalf("result %+v", res)
	}
	if len(warns) != 2 {
		t.Fatalf("want 2 warnings (quirks, unmatched), got %q", warns)
	}
	for _, w := range warns {
		if strings.Contains(w, "\n") || !strings.Contains(w, "nccl_4242_0.json") {
			t.Errorf("warning must be one line naming the file: %q", w)
		}
	}
	for _, want := range []string{`7 unquoted values (first: "datatype": ncclFloat32)`, "1 curly quotes", "2 API begins with ts 0", "1 KernelCh with StopGpuClk 0"} {
		if !strings.Contains(warns[0], want) {
			t.Errorf("quirk warning %q lacks %q", warns[0], want)
		}
	}
	if !strings.Contains(warns[1], "1 begins and 1 ends without a partner") {
		t.Errorf("unmatched warning: %q", warns[1])
	}
	if strings.Contains(warns[0], "{}") {
		t.Errorf("the trailing {} every plugin version writes is not a quirk: %q", warns[0])
	}

	type row struct {
		name, status, quirk       string
		parent, root, op, depth   int64
		ts, end                   *int64
		datatype, stream, stopClk string
	}
	rows := map[int64]row{}
	q, err := db.SQL.Query(`SELECT ev_idx, name, status, coalesce(quirk, ''), coalesce(parent_idx, -1), coalesce(root_idx, -1),
		coalesce(op_idx, -1), depth, ts, end_ts, coalesce(args->>'datatype', args->>'Datatype', ''), coalesce(args->>'Stream', ''),
		coalesce(args->>'StopGpuClk', '') FROM nccl_events ORDER BY ev_idx`)
	if err != nil {
		t.Fatal(err)
	}
	for q.Next() {
		var idx int64
		var r row
		if err := q.Scan(&idx, &r.name, &r.status, &r.quirk, &r.parent, &r.root, &r.op, &r.depth, &r.ts, &r.end, &r.datatype, &r.stream, &r.stopClk); err != nil {
			t.Fatal(err)
		}
		rows[idx] = r
	}
	q.Close()
	if len(rows) != 13 {
		t.Fatalf("want 13 intervals (11 pairs, 1 lone begin, 1 lone end), got %d", len(rows))
	}
	ns := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	// ev_idx → (name, parent, op, depth): proxy operations belong to the collective, not the KernelCh
	// they are printed inside; steps to their proxy operation; the IB event to its step.
	for idx, w := range map[int64]struct {
		name          string
		parent, op, d int64
	}{
		0: {"Group API", -1, -1, 0}, 1: {"AllReduce", 0, -1, 1}, 2: {"AllReduce", 1, 2, 2}, 3: {"KernelCh", 2, 2, 3},
		4: {"ScheduleSend", 2, 2, 3}, 6: {"ProgressSend", 2, 2, 3}, 7: {"SendGpuWait", 6, 2, 4}, 11: {"SendWait", 6, 2, 4},
		12: {"Qp", 11, 2, 5},
	} {
		r := rows[idx]
		if r.name != w.name || r.parent != w.parent || r.op != w.op || r.depth != w.d || r.root != 0 {
			t.Errorf("ev %d: got %+v, want %+v root 0", idx, r, w)
		}
	}
	if r := rows[0]; r.ts != nil || ns(r.end) != 114000 || r.quirk != "ts_zero" {
		t.Errorf("Group API with ts 0: %+v (want ts NULL, end 114 µs)", r)
	}
	if r := rows[1]; r.datatype != "ncclFloat32" || r.stream != "0x262ca50" || r.quirk != "ts_zero,unquoted_value" {
		t.Errorf("unquoted values: %+v", r)
	}
	if r := rows[2]; ns(r.ts) != 105250 || ns(r.end) != 112000 || r.datatype != "ncclFloat32" {
		t.Errorf("COLL (curly-quoted name): %+v", r)
	}
	if r := rows[3]; r.stopClk != "0" || r.quirk != "stop_gpu_clk_zero" || ns(r.end)-ns(r.ts) != 30500 {
		t.Errorf("KernelCh: %+v", r)
	}
	if r := rows[21]; r.name != "Broadcast" || r.status != "begin_only" || r.end != nil || r.parent != 20 || r.stream != "(nil)" {
		t.Errorf("lone begin: %+v", r)
	}
	if r := rows[20]; r.status != "complete" || ns(r.end) != 260000 {
		t.Errorf("group around the lone begin: %+v", r)
	}
	if r := rows[23]; r.name != "Idle" || r.status != "end_only" || r.ts != nil || ns(r.end) != 300000 {
		t.Errorf("lone end: %+v", r)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM nccl_unmatched`); n != 2 {
		t.Errorf("nccl_unmatched: %d rows, want 2", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM traces`); n != 0 {
		t.Errorf("a plugin file must not add a traces row (got %d)", n)
	}
	// Reloading is a no-op.
	res, _, err = loadWarn(t, db, ncclQuirkFile)
	if err != nil || res[0].Skipped != "already loaded" {
		t.Errorf("reload: %+v %v", res, err)
	}
}

// TestNCCLBadFiles: a broken plugin file is one clear line naming the file, and the database is unchanged.
func TestNCCLBadFiles(t *testing.T) {
	good, err := os.ReadFile(ncclQuirkFile)
	if err != nil {
		t.Fatal(err)
	}
	text := string(good)
	cut := strings.Index(text, `{"name": "SendPeerWait"`)
	for _, c := range []struct{ name, text, want string }{
		{"trunc_1_0.json", text[:cut+30], "truncated"},
		{"nobracket_1_0.json", text[:cut], "no closing ']'"},
		{"killed_1_0.json", "[\n", "truncated after 0 events"},
		{"badts_1_0.json", `[{"name": "Group API", "cat": "GROUP_API", "ph": "b", "id": 0, "pid": 1, "tid": 1, "ts": soon},{}]`, "ts is not a number"},
		{"bigts_1_0.json", `[{"name": "Group API", "cat": "GROUP_API", "ph": "b", "id": 0, "pid": 1, "tid": 1, "ts": 12345678901234567890123},{}]`, "ts 12345678901234567890123 is out of range"},
		{"notplugin_1_0.json", `[{"name": "Group API", "cat": "GROUP_API", "ph": "b", "id": 0, "pid": 1, "tid": 1, "ts": 1.0},{"hello": "world"}]`, "not a plugin event"},
		// Under the plugin's file name, content that is not the plugin's is read (and refused) as a Chrome trace.
		{"hello_1_0.json", `[{"hello": "world"}]`, "not a Chrome trace"},
		{"junk_1_0.json", "[\n{\"name\": \"Group API\", \"cat\": \"GROUP_API\", \"ph\": \"b\", \"id\": 0, \"pid\": 1, \"tid\": 1, \"ts\": 1.0}\n<<garbage>>", "expected"},
		// ranks are INTEGER columns: one that does not fit is named, not DuckDB's conversion error
		{"bigrank.json", strings.Replace(text, `"Rank": 0`, `"Rank": 99999999999`, 1), "Rank 99999999999 is out of range"},
		{"bigname_4242_99999999999.json", strings.Replace(text, `"Rank": 0`, `"Rank": "zero"`, 1), "99999999999 in the file name is out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openTestDB(t)
			mustLoad(t, db, ncclQuirkFile)
			p := filepath.Join(t.TempDir(), c.name)
			if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := loadWarn(t, db, p)
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, p) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %s and containing %q", msg, p, c.want)
			}
			if n := queryInt(t, db, `SELECT count(*) FROM nccl_events`); n != 13 {
				t.Errorf("database changed: %d nccl_events rows", n)
			}
			if n := queryInt(t, db, `SELECT count(*) FROM nccl_traces`); n != 1 {
				t.Errorf("database changed: %d nccl_traces rows", n)
			}
		})
	}
}

func TestNCCLClockOffsetSpec(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	if err := db.SetNCCLClockOffset(ctx, "trace", "1"); err == nil || !strings.Contains(err.Error(), `trace set "trace" has no NCCL profiler file loaded`) {
		t.Errorf("an offset with no plugin file loaded: %v", err)
	}
	mustLoad(t, db, "../testdata/nccl/dlrm")
	if err := db.SetNCCLClockOffset(ctx, "other", "1"); err == nil || !strings.HasSuffix(err.Error(), `trace set "other" has no NCCL profiler file loaded, whose times it would shift (--label names the set; those with NCCL files: trace)`) {
		t.Errorf("an offset for a set without plugin files, beside one with: %v", err)
	}
	if err := db.SetNCCLClockOffset(ctx, "trace", "1,9=-5"); err == nil || !strings.Contains(err.Error(), "no NCCL profiler file of a process of rank 9 (its files' Kineto ranks, nccl_clock_alignment.kineto_rank: 0-7)") {
		t.Errorf("an offset for a rank with no plugin file: %v", err)
	}
	if err := db.SetNCCLClockOffset(ctx, "trace", "1,2=-5"); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM nccl_clock_override WHERE label = 'trace'`); n != 2 {
		t.Errorf("%d override rows", n)
	}
	if err := db.SetNCCLClockOffset(ctx, "trace", "7"); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, db, `SELECT sum(offset_ns) FROM nccl_clock_override WHERE rank IS NULL`); n != 7 {
		t.Errorf("override replaced: %d", n)
	}
	// Per-rank offsets replace only the rows of the ranks they name (they replaced every row of the set):
	// rank 1's row for one communicator goes, rank 3's and the every-rank row stay.
	if _, err := db.SQL.ExecContext(ctx, `DELETE FROM nccl_clock_override; INSERT INTO nccl_clock_override VALUES
		('trace', NULL, NULL, 7), ('trace', 1, 'c1', 11), ('trace', 3, NULL, 33), ('other', 1, NULL, 99)`); err != nil {
		t.Fatal(err)
	}
	if err := db.SetNCCLClockOffset(ctx, "trace", "1=5,2=6"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(queryText(t, db, `SELECT string_agg(label || ':' || coalesce(rank::VARCHAR, '*') || ':' || coalesce(comm_hash, '*') || '=' || offset_ns, ' '
		ORDER BY label, rank NULLS FIRST) FROM nccl_clock_override`)); got != "other:1:*=99 trace:*:*=7 trace:1:*=5 trace:2:*=6 trace:3:*=33" {
		t.Errorf("after 1=5,2=6: %s", got)
	}
	for _, bad := range []string{"", "x", "1=", "a=3", "-1=4", "4611686018427387905", "2=-4611686018427387905"} {
		if err := db.SetNCCLClockOffset(ctx, "trace", bad); err == nil || !strings.Contains(err.Error(), "--nccl-clock-offset") {
			t.Errorf("spec %q: err %v", bad, err)
		}
	}
}

// TestNCCLReloadChangedFile: a plugin file that changed since it was loaded is an error, as for a
// Kineto trace (it was loaded a second time, silently).
func TestNCCLReloadChangedFile(t *testing.T) {
	good, err := os.ReadFile(ncclQuirkFile)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(ncclQuirkFile))
	if err := os.WriteFile(p, good, 0o644); err != nil {
		t.Fatal(err)
	}
	db := openTestDB(t)
	mustLoad(t, db, p)
	appendFile(t, p, "\n")
	_, err = db.Load(context.Background(), []string{p}, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "load "+p+`: changed since it was loaded as rank 0 of trace set "trace"`) {
		t.Fatalf("got %v, want a changed-file error", err)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM nccl_traces`); n != 1 {
		t.Errorf("%d nccl_traces rows, want 1", n)
	}
}

// TestNCCLBareOddBytes: a bare plugin value holding a byte Go's %q writes as \x.. (DEL, invalid UTF-8,
// a control character) loads as a JSON string; strconv.Quote's escapes are not JSON's, and the whole
// file was refused ("Malformed JSON … invalid escaped character").
func TestNCCLBareOddBytes(t *testing.T) {
	orig, err := os.ReadFile(ncclQuirkFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, value, want string }{
		{"del", "RI\x7fNG", "RI\x7fNG"},
		{"invalid utf-8", "RI\xffNG", "RI\uFFFDNG"},
		{"control", "RI\x01NG", "RI\x01NG"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(string(orig), `"Algorithm": RING`, `"Algorithm": `+c.value, 1)
			if text == string(orig) {
				t.Fatal("the quirks file has no bare RING")
			}
			p := filepath.Join(t.TempDir(), "nccl_4242_0.json")
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			db := openTestDB(t)
			if _, _, err := loadWarn(t, db, p); err != nil {
				t.Fatal(err)
			}
			var got string
			if err := db.SQL.QueryRow(`SELECT args->>'Algorithm' FROM nccl_events WHERE args->>'Algorithm' LIKE 'RI%' LIMIT 1`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Algorithm = %q, want %q", got, c.want)
			}
		})
	}
}

// TestNCCLEmptyAndDuplicateFiles: a communicator that ran no operation leaves "[\n{}]" under the plugin's name,
// which loads as its nccl_traces row with no intervals (r72 #7: it was refused as "not a Chrome trace"); a
// second file of one communicator rank in a trace set (another run's dump) is refused, naming both, and
// leaves the database as it was (r72 #1: both loaded and were aligned as one sequence).
func TestNCCLEmptyAndDuplicateFiles(t *testing.T) {
	db := openTestDB(t)
	mustLoad(t, db, ncclQuirkFile)
	dir := t.TempDir()
	idle := filepath.Join(dir, "nccl_777_3.json")
	if err := os.WriteFile(idle, []byte("[\n{}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !IsNCCLProfile(idle) {
		t.Error("an idle communicator's dump is not taken for a plugin file")
	}
	if _, _, err := loadWarn(t, db, idle); err != nil {
		t.Fatalf("load of an idle communicator's dump: %v", err)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM nccl_traces WHERE comm_hash = '777' AND rank = 3 AND intervals = 0`); n != 1 {
		t.Errorf("%d nccl_traces rows for it, want 1 with no intervals", n)
	}
	for _, body := range []string{"[{}", "[{}]x", "[{\"a\": 1}]"} {
		p := filepath.Join(dir, "nccl_778_0.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if IsNCCLProfile(p) {
			t.Errorf("%q taken for a plugin file", body)
		}
	}

	data, err := os.ReadFile(ncclQuirkFile)
	if err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(dir, "run2_4242_0.json")
	if err := os.WriteFile(second, data, 0o644); err != nil {
		t.Fatal(err)
	}
	first, _ := filepath.Abs(ncclQuirkFile)
	_, _, err = loadWarn(t, db, second)
	if err == nil || !strings.Contains(err.Error(), "rank 0 of communicator 4242 is already loaded from "+first+` in trace set "trace"`) || !strings.Contains(err.Error(), second) {
		t.Errorf("second file of rank 0: %v", err)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM nccl_traces`); n != 2 {
		t.Errorf("%d nccl_traces rows, want 2", n)
	}
	if _, _, err := loadWarn(t, db, second); err == nil {
		t.Error("loaded the second time")
	}
	if _, err := db.Load(context.Background(), []string{second}, LoadOptions{Label: "run2"}); err != nil {
		t.Errorf("under another label: %v", err)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM nccl_traces WHERE label = 'run2'`); n != 1 {
		t.Errorf("under another label: %d rows, want 1", n)
	}
}

// TestNCCLClockOffsetKinetoRank: an offset's RANK is the Kineto rank of the file's process, the rank the NCCL views
// apply it by (a clock is per process). In a sub-communicator the plugin file's own rank differs (r72 #2: files of
// communicator ranks 0 and 1 in processes of global ranks 4 and 5: 4= was refused, 0= accepted and ignored).
// Offsets beyond ±2^62 ns are refused, also as the table's rows (r72 #5: they overflowed in every NCCL view).
func TestNCCLClockOffsetKinetoRank(t *testing.T) {
	dir := t.TempDir()
	for r, global := range []int{4, 5} {
		data, err := os.ReadFile(fmt.Sprintf("../testdata/nccl/warmup/kineto/rank%d.json", r))
		if err != nil {
			t.Fatal(err)
		}
		var trace map[string]any
		if err := json.Unmarshal(data, &trace); err != nil {
			t.Fatal(err)
		}
		info := trace["distributedInfo"].(map[string]any)
		info["rank"], info["world_size"] = global, 8
		out, _ := json.Marshal(trace)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("rank%d.json", global)), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := openTestDB(t)
	mustLoad(t, db, dir, "../testdata/nccl/warmup/plugin")
	ctx := context.Background()
	if err := db.SetNCCLClockOffset(ctx, "trace", "0=-1000000000"); err == nil || !strings.Contains(err.Error(), "Kineto ranks, nccl_clock_alignment.kineto_rank: 4-5)") {
		t.Errorf("an offset for communicator rank 0: %v", err)
	}
	if err := db.SetNCCLClockOffset(ctx, "trace", "4=-1000000000"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(queryText(t, db, `SELECT string_agg(rank || ':' || kineto_rank || ':' || offset_ns || ':' || source, ' ' ORDER BY rank) FROM nccl_clock_alignment`)); got != "0:4:-1000000000:override 1:5:-2000000000:estimated" {
		t.Errorf("alignment: %s", got)
	}
	if _, err := db.SQL.ExecContext(ctx, `INSERT INTO nccl_clock_override VALUES ('trace', 5, NULL, -9223372036854775808)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL.ExecContext(ctx, `SELECT count(*) FROM nccl_collectives`); err == nil || !strings.Contains(err.Error(), "offset_ns -9223372036854775808, out of range") {
		t.Errorf("an out-of-range row: %v", err)
	}
}

// TestNCCLNameDisagreesWithEvents: a plugin file whose name says another communicator or rank than its events
// loads as the name says, with a warning naming both (r72 #9: without a word).
func TestNCCLNameDisagreesWithEvents(t *testing.T) {
	data, err := os.ReadFile(ncclQuirkFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, want := range map[string]string{
		"nccl_4242_0.json":          "",
		"nccl_4242_0_copy_7_1.json": "its name says communicator 7 rank 1, its events CommHash 4242 Rank 0: loaded as the name says",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		db := openTestDB(t)
		_, warns, err := loadWarn(t, db, p)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range warns {
			if strings.Contains(w, "its name says") {
				got = append(got, w)
			}
		}
		switch {
		case want == "" && len(got) > 0:
			t.Errorf("%s: warned %q", name, got)
		case want != "" && (len(got) != 1 || !strings.Contains(got[0], want) || !strings.HasPrefix(got[0], p+": ")):
			t.Errorf("%s: warnings %q, want one with %q", name, warns, want)
		}
	}
}
