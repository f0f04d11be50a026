package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapshot is the row count of every raw table: a failed load must leave it unchanged.
func snapshot(t *testing.T, db *DB) string {
	var b strings.Builder
	for _, table := range []string{"traces", "events", "metadata_events", "flows", "counters", "instants", "other_events"} {
		fmt.Fprintf(&b, "%s=%d ", table, queryInt(t, db, "SELECT count(*) FROM "+table))
	}
	return b.String()
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// TestLoadErrors checks each class of bad input: a one-line message naming the file and what is
// wrong, and the database exactly as it was.
func TestLoadErrors(t *testing.T) {
	good := []byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}`)
	bigGood := []byte(`{"traceEvents":[` + strings.Repeat(`{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2},`, 20000) + `{"ph":"i","ts":1}]}`)
	bigGz := gz(bigGood)
	cases := []struct {
		name    string
		file    string
		content []byte
		want    string // substring of the error
	}{
		{"not json", "a.json", []byte("hello world"), "not JSON"},
		{"truncated json", "b.json", good[:40], "truncated JSON"},
		{"truncated gzip", "c.json.gz", bigGz[:len(bigGz)/2], "truncated gzip stream after"},
		{"corrupt gzip", "c2.json.gz", append(append([]byte{}, bigGz[:20]...), bytes.Repeat([]byte{0xff}, 400)...), "gzip"},
		{"empty file", "d.json", []byte(""), "empty file"},
		{"string top level", "e.json", []byte(`"a trace"`), "top-level value is a string"},
		{"number top level", "e2.json", []byte(`42`), "top-level value is a number"},
		{"traceEvents not array", "f.json", []byte(`{"traceEvents":{"ph":"X"}}`), "traceEvents is an object, want an array"},
		{"no traceEvents", "f2.json", []byte(`{"schemaVersion":1}`), "no traceEvents array"},
		{"event not object", "g.json", []byte(`{"traceEvents":[{"ph":"X","ts":1,"dur":1,"cat":"c","name":"n"}, 5]}`), "event 1 is a number, want an object"},
		{"non-numeric ts", "h.json", []byte(`{"traceEvents":[{"ph":"X","ts":"soon","dur":1,"cat":"c","name":"n"}]}`), `event 0 (byte 16): ts is not a number: "soon"`},
		{"negative dur", "i.json", []byte(`{"traceEvents":[{"ph":"i","ts":1},{"ph":"X","ts":1,"dur":-5,"cat":"c","name":"n"}]}`), "event 1 (byte 34): negative dur -5"},
		{"X without ts", "j.json", []byte(`{"traceEvents":[{"ph":"X","dur":1,"cat":"c","name":"n"}]}`), "complete event (ph X) without ts"},
		{"trailing garbage", "k.json", append(append([]byte{}, good...), []byte(" xyz")...), "after the end of the top-level value"},
		{"args not JSON", "m_rank77.json", []byte(`{"traceEvents":[{"ph":"X","ts":1,"dur":1,"cat":"c","name":"n","args":{""}}]}`), `event 0: args is not valid JSON: {""}`},
		{"bad separator", "l.json", []byte(`{"traceEvents":[{"ph":"X","ts":1} {"ph":"X","ts":2}]}`), "expected ',' or ']' after event 0"},
	}
	dir := t.TempDir()
	db := openTestDB(t)
	mustLoad(t, db, "../testdata/traces/alexnet")
	before := snapshot(t, db)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.file)
			if err := os.WriteFile(p, c.content, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := db.Load(context.Background(), []string{p}, LoadOptions{})
			if err == nil {
				t.Fatal("loaded without error")
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q does not contain %q", msg, c.want)
			}
			if !strings.HasPrefix(msg, "load "+p+": ") {
				t.Errorf("error %q does not start with the file", msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			if after := snapshot(t, db); after != before {
				t.Errorf("database changed: %s → %s", before, after)
			}
		})
	}
}

func TestLoadPathErrors(t *testing.T) {
	db := openTestDB(t)
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("x"), 0o644)
	unreadable := filepath.Join(t.TempDir(), "locked")
	os.Mkdir(unreadable, 0o000)
	for _, c := range []struct {
		name, path, want string
	}{
		{"missing file", "/no/such/trace.json", "load /no/such/trace.json: no such file or directory"},
		{"empty dir", empty, "no *.json or *.json.gz trace files in the directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := db.Load(context.Background(), []string{c.path}, LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	if os.Geteuid() != 0 { // root reads any directory
		_, err := db.Load(context.Background(), []string{unreadable}, LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), "cannot read directory") {
			t.Fatalf("unreadable dir: got %v", err)
		}
	}
}

// TestDuplicateRank: two files claiming one rank fail with a message naming both; the first stays.
func TestDuplicateRank(t *testing.T) {
	dir := t.TempDir()
	body := `{"distributedInfo":{"rank":3},"traceEvents":[{"ph":"X","cat":"c","name":"n","pid":1,"tid":1,"ts":1,"dur":1}]}`
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	os.WriteFile(a, []byte(body), 0o644)
	os.WriteFile(b, []byte(body), 0o644)
	db := openTestDB(t)
	_, err := db.Load(context.Background(), []string{dir}, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "load "+b) || !strings.Contains(err.Error(), "rank 3 is already loaded from "+a) {
		t.Fatalf("got %v", err)
	}
	if n := queryInt(t, db, "SELECT count(*) FROM traces"); n != 1 {
		t.Fatalf("%d traces, want 1", n)
	}
	// Another label is another trace set: the same rank is fine there.
	if _, err := db.Load(context.Background(), []string{b}, LoadOptions{Label: "test"}); err != nil {
		t.Fatal(err)
	}
	// --rank-from index numbers the files instead.
	db2 := openTestDB(t)
	if _, err := db2.Load(context.Background(), []string{dir}, LoadOptions{RankFrom: RankIndex}); err != nil {
		t.Fatal(err)
	}
	if got := queryInt(t, db2, "SELECT sum(rank) FROM traces"); got != 1 {
		t.Fatalf("ranks sum to %d, want 0+1", got)
	}
}

func TestRankDiscovery(t *testing.T) {
	for _, c := range []struct {
		name string
		rank int
		ok   bool
	}{
		{"rank3.json", 3, true},
		{"rank-12.json.gz", 12, true},
		{"rank_7.pt.trace.json", 7, true},
		{"worker5_step_12.1694128201549.pt.trace.json.gz", 5, true},
		{"worker 2.json", 2, true},
		{"RANK-4.json", 4, true},
		{"/data/rank9/trace.json", 0, false}, // directories do not count
		{"trace.json", 0, false},
		{"rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 0, true},
	} {
		r, ok := RankFromName(c.name)
		if ok != c.ok || r != c.rank {
			t.Errorf("RankFromName(%q) = %d, %v; want %d, %v", c.name, r, ok, c.rank, c.ok)
		}
	}
	// distributedInfo.rank wins over the name, and needs no space after the colon (unlike HTA's regex).
	dir := t.TempDir()
	p := filepath.Join(dir, "rank5.json")
	os.WriteFile(p, []byte(`{"distributedInfo":{"rank":2},"traceEvents":[]}`), 0o644)
	q := filepath.Join(dir, "rank6.json")
	os.WriteFile(q, []byte(`{"traceEvents":[]}`), 0o644)
	db := openTestDB(t)
	res := mustLoad(t, db, p, q)
	if res[0].Rank != 2 || res[1].Rank != 6 {
		t.Fatalf("ranks %d, %d; want 2 (distributedInfo), 6 (name)", res[0].Rank, res[1].Rank)
	}
	// The 8-rank DLRM job: ranks from distributedInfo, world_size and backend kept.
	db2 := openTestDB(t)
	mustLoad(t, db2, "../testdata/traces/dlrm_8ranks")
	if got := queryInt(t, db2, "SELECT count(DISTINCT rank) FROM traces WHERE world_size = 8 AND backend = 'nccl'"); got != 8 {
		t.Fatalf("%d distinct ranks with world_size 8, want 8", got)
	}
	if got := queryInt(t, db2, "SELECT count(*) FROM traces WHERE regexp_extract(path, 'worker(\\d+)_', 1)::INT <> rank"); got != 0 {
		t.Fatalf("%d files whose distributedInfo rank differs from the worker number", got)
	}
}

func TestReloadSkipped(t *testing.T) {
	db := openTestDB(t)
	mustLoad(t, db, "../testdata/traces/alexnet")
	res := mustLoad(t, db, "../testdata/traces/alexnet")
	if res[0].Skipped != "already loaded" {
		t.Fatalf("second load: %+v", res[0])
	}
	if n := queryInt(t, db, "SELECT count(*) FROM traces"); n != 1 {
		t.Fatalf("%d traces after reload", n)
	}
}

// TestPersistence: a --db file keeps the tables; re-opening runs no parser.
func TestPersistence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.duckdb")
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	mustLoad(t, db, "../testdata/traces/ns_resolution")
	want := queryInt(t, db, "SELECT count(*) FROM events")
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := queryInt(t, db, "SELECT count(*) FROM events"); got != want || want == 0 {
		t.Fatalf("re-opened: %d events, want %d", got, want)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM kernel_launches"); got == 0 {
		t.Fatal("views missing after re-open")
	}
}

// TestArrayForm: the plain-array Chrome format, with and without its closing bracket.
func TestArrayForm(t *testing.T) {
	dir := t.TempDir()
	full := `[{"ph":"X","cat":"c","name":"a","pid":1,"tid":1,"ts":1.5,"dur":2},{"ph":"i","name":"m","ts":2,"s":"g"}]`
	open := `[{"ph":"X","cat":"c","name":"a","pid":1,"tid":1,"ts":1.5,"dur":2},` + "\n"
	os.WriteFile(filepath.Join(dir, "full.json"), []byte(full), 0o644)
	os.WriteFile(filepath.Join(dir, "open.json"), []byte(open), 0o644)
	var warnings []string
	db := openTestDB(t)
	_, err := db.Load(context.Background(), []string{filepath.Join(dir, "full.json"), filepath.Join(dir, "open.json")},
		LoadOptions{RankFrom: RankIndex, Warn: func(w string) { warnings = append(warnings, w) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := queryInt(t, db, "SELECT count(*) FROM events WHERE ts = 1500 AND dur = 2000"); got != 2 {
		t.Fatalf("%d events, want 2", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "no closing ']'") {
		t.Fatalf("warnings %q", warnings)
	}
}
