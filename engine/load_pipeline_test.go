package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"tracesql/internal/procmem"
)

// dlrmFiles are the eight rank files of testdata/traces/dlrm_8ranks.
func dlrmFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "traces", "dlrm_8ranks", "*.json.gz"))
	if len(files) != 8 {
		t.Fatalf("%d dlrm files", len(files))
	}
	return files
}

// TestPipelinedLoadMatchesOneByOne: eight ranks loaded in one call (each file parsed while the one
// before it is inserted) give the same rows in every table as eight calls of one file each.
func TestPipelinedLoadMatchesOneByOne(t *testing.T) {
	ctx := context.Background()
	files := dlrmFiles(t)
	piped := openTestDB(t)
	if _, err := piped.Load(ctx, files, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	single := openTestDB(t)
	for i, f := range files {
		// --rank-from index would number every lone file 0: these files name their rank.
		res, err := single.Load(ctx, []string{f}, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].TraceID != i {
			t.Fatalf("trace id %d for file %d", res[0].TraceID, i)
		}
	}
	want, got := tableFingerprints(t, single), tableFingerprints(t, piped)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: pipelined %s, one by one %s", k, got[k], w)
		}
	}
}

// TestPipelinedLoadGoesPastBadFiles: a bad file (parsed ahead while the one before it is inserted) leaves
// nothing behind, the files after it still load, and the error names every bad file, in file order, each as
// its own *LoadError.
func TestPipelinedLoadGoesPastBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join("..", "testdata", "traces", "alexnet", "benchmark_result_2869224_1695835535_trace.json.gz")
	bad1 := filepath.Join(dir, "rank1.json")
	os.WriteFile(bad1, []byte(`{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1, "dur": 2}, {"ph": "X", "ts": "soon"}]}`), 0o644)
	third := filepath.Join(dir, "rank2.json")
	os.WriteFile(third, []byte(`{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}`), 0o644)
	bad2 := filepath.Join(dir, "rank3.json")
	os.WriteFile(bad2, []byte(`{"traceEvents": [`), 0o644)
	db := openTestDB(t)
	res, err := db.Load(context.Background(), []string{good, bad1, third, bad2}, LoadOptions{RankFrom: RankIndex})
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %v, want the two bad files' errors joined", err)
	}
	var paths []string
	for _, e := range joined.Unwrap() {
		var le *LoadError
		if !errors.As(e, &le) {
			t.Fatalf("%v is not a *LoadError", e)
		}
		paths = append(paths, le.Path)
	}
	if !reflect.DeepEqual(paths, []string{bad1, bad2}) {
		t.Errorf("failed files %v, want %v", paths, []string{bad1, bad2})
	}
	if len(res) != 2 || res[0].Rank != 0 || res[1].Rank != 2 {
		t.Errorf("results %+v, want ranks 0 and 2", res)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM traces`); got != 2 {
		t.Errorf("%d traces, want 2", got)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM events WHERE name = 'a'`); n != 1 {
		t.Errorf("%d events of the good file after the bad one, want 1", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM events WHERE name = 'b'`); n != 0 {
		t.Errorf("%d events of the bad file", n)
	}
}

// TestMemorySettings: DuckDB gets a memory limit below its own default and a temp directory it can
// write, the limit can be overridden, and a load far above the limit spills and completes.
func TestMemorySettings(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "t.duckdb")
	t.Setenv(MemoryLimitEnv, "56MB")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var limit, tmp string
	if err := db.SQL.QueryRow(`SELECT current_setting('memory_limit'), current_setting('temp_directory')`).Scan(&limit, &tmp); err != nil {
		t.Fatal(err)
	}
	if limit != "53.4 MiB" || tmp != path+".tmp" {
		t.Errorf("memory_limit %q, temp_directory %q; want 53.4 MiB and %s.tmp", limit, tmp, path)
	}
	// 10 steps of ns_resolution: 137k events, 24.5 MB of JSON, a database that holds more than the
	// limit while the frame is stored: DuckDB evicts to the file and spills the rest (48 MB fails since
	// the stored GPU frame's sorts and windows run at load).
	src := filepath.Join("..", "testdata", "traces", "ns_resolution", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
	paths, err := Inflate(ctx, src, InflateOptions{Ranks: 1, Steps: 10, Seed: 1, OutDir: filepath.Join(dir, "in")})
	if err != nil {
		t.Fatal(err)
	}
	res := mustLoad(t, db, paths...)
	if res[0].Events < 130_000 || queryInt(t, db, `SELECT count(*) FROM _hta_frame_default`) < 50_000 {
		t.Errorf("load under a 48 MB limit: %+v", res)
	}

	db.Close()
	if _, err := os.Stat(path + ".tmp"); err == nil {
		t.Errorf("%s.tmp left behind after Close", path)
	}

	t.Setenv(MemoryLimitEnv, "")
	if usable := procmem.Usable(); usable > 0 {
		got := memorySettings("", false)
		if want := fmt.Sprintf("%dMiB", usable/2>>20); got["memory_limit"] != want || !strings.HasPrefix(got["temp_directory"], os.TempDir()) {
			t.Errorf("default settings %v, want memory_limit %s", got, want)
		}
		t.Setenv(MemoryLimitEnv, "25%")
		if limit, source := MemoryLimit(); limit != fmt.Sprintf("%dMiB", usable/4>>20) || source != MemoryLimitEnv+"=25%" {
			t.Errorf("%s=25%%: memory_limit %s (%s), want a quarter of %d bytes", MemoryLimitEnv, limit, source, usable)
		}
	}
	// (DuckDB took a negative size for its own default, 80 % of RAM: more than tracesql's)
	for _, bad := range []string{"lots", "-5GB"} {
		t.Setenv(MemoryLimitEnv, bad)
		if _, err := Open(context.Background(), ""); err == nil || !strings.Contains(err.Error(), MemoryLimitEnv+`="`+bad+`" is not a memory size`) {
			t.Errorf("%s=%s: %v, want an error naming the variable", MemoryLimitEnv, bad, err)
		}
	}
	// A load that cannot fit says which limit stopped it and how to raise it, on the error's first line
	// (DuckDB's own words name neither, and its "Possible solutions" paragraph is not shown).
	t.Setenv(MemoryLimitEnv, "20MB")
	small, err := Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	_, err = small.Load(ctx, paths, LoadOptions{})
	first, _, _ := strings.Cut(fmt.Sprint(MemoryError(ctx, small, err)), "\n")
	if !strings.Contains(first, "Out of Memory Error") || !strings.Contains(first, "(memory_limit is 19.0 MiB, from "+MemoryLimitEnv+"=20MB: raise it with") {
		t.Errorf("load over a 20MB limit: %q", first)
	}
	if other := errors.New("x"); MemoryError(ctx, small, other) != other {
		t.Errorf("MemoryError changed another error")
	}
	t.Setenv(MemoryLimitEnv, "")
	// Readers of one file spill apart: DuckDB names its spill files alike in every process, so a shared
	// directory let two readers overwrite each other's data (a crash, or a wrong sum), and the first to
	// close removed it under the other.
	ro := memorySettings(path, true)["temp_directory"]
	if ro == memorySettings(path, false)["temp_directory"] || !strings.HasPrefix(ro, os.TempDir()) || !strings.Contains(ro, strconv.Itoa(os.Getpid())) {
		t.Errorf("read-only spill directory %s: want one of this process under %s", ro, os.TempDir())
	}
}

// TestUnorderedInsertKeepsRows: an in-memory load inserts without keeping row order when DuckDB has
// room (unorderedInsertFactor); every table then holds the same rows as a database file's ordered
// load. A tight memory_limit falls back to the ordered insert and still completes.
func TestUnorderedInsertKeepsRows(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join("..", "testdata", "traces", "ns_resolution", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
	paths, err := Inflate(ctx, src, InflateOptions{Ranks: 1, Steps: 10, Seed: 1, OutDir: filepath.Join(dir, "in")})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	// Every public table (tableFingerprints) and the stored frames, built after the unordered inserts.
	digest := func(db *DB) map[string]string {
		out := tableFingerprints(t, db)
		for _, tbl := range []string{"_hta_frame_default", "_gpu_frame_default", "_trace_summary", "_type_segments", "_compat_fixups"} {
			var n int64
			var h string
			q := `SELECT count(*), coalesce(sum(hash(x))::VARCHAR, '0') FROM ` + tbl + ` x`
			if err := db.SQL.QueryRow(q).Scan(&n, &h); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			out[tbl] = fmt.Sprint(n, " ", h)
		}
		return out
	}

	mem := openTestDB(t)
	if room := mem.memoryRoom(ctx); room <= unorderedInsertFactor*st.Size() {
		t.Fatalf("memory room %d: the in-memory load would not take the unordered insert", room)
	}
	mustLoad(t, mem, paths...)
	file, err := Open(ctx, filepath.Join(dir, "t.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	mustLoad(t, file, paths...)
	if got, want := digest(mem), digest(file); !maps.Equal(got, want) {
		t.Errorf("in memory (unordered insert):\n%v\ndatabase file (ordered):\n%v", got, want)
	}

	t.Setenv(MemoryLimitEnv, "56MB") // below what the unordered insert of this file needs in memory
	tight := openTestDB(t)
	mustLoad(t, tight, paths...)
	if got, want := digest(tight), digest(file); !maps.Equal(got, want) {
		t.Errorf("in memory under a 56 MB limit:\n%v\nwant:\n%v", got, want)
	}
}

func TestParseDuckDBSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"11.2 GiB", 12025908428, true},
		{"53.4 MiB", 55993958, true},
		{"512 bytes", 512, true},
		{"2 KiB", 2048, true},
		{"1.5 TiB", 1649267441664, true},
		{"", 0, false},
		{"12GB", 12000000000, true},
		{"100mb", 100000000, true},
		{"5000MiB", 5242880000, true},
		{"-1 MiB", 0, false},
		{"3 parsecs", 0, false},
	} {
		got, ok := parseDuckDBSize(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("parseDuckDBSize(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestCancelledLoadSaysWhatWasLeft: a cancelled load stops, and its error says how many files were not tried
// after the one it stopped in (the command line would otherwise print "the other N file(s) loaded" alone).
func TestCancelledLoadSaysWhatWasLeft(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := 0; i < 3; i++ {
		p := filepath.Join(dir, fmt.Sprintf("rank%d.json", i))
		os.WriteFile(p, []byte(`[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]`), 0o644)
		paths = append(paths, p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := openTestDB(t)
	// Cancelled once the second file is being read (ahead, while the first is inserted): the file in hand
	// fails, and the error counts the ones after it.
	res, err := db.Load(ctx, paths, LoadOptions{Progress: func(p Progress) {
		if p.Path == paths[1] {
			cancel()
		}
	}})
	want := fmt.Sprintf("load cancelled: %d more file(s) not loaded, from %s on", 2-len(res), paths[len(res)+1])
	if len(res) > 1 || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("results %+v, error %v; want %q", res, err, want)
	}
	// Every file in the database is among the results (a commit done under the cancel was not).
	if n := queryInt(t, db, `SELECT count(*) FROM traces`); n != int64(len(res)) {
		t.Errorf("%d files in the database, %d in the results", n, len(res))
	}
}

// TestLoadPutsThreadsBack: a load runs its small inserts on one DuckDB thread (threadSwitch), a
// database-wide setting: after a load, failed or not, threads is what it was before.
func TestLoadPutsThreadsBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	good := filepath.Join("..", "testdata", "traces", "alexnet", "benchmark_result_2869224_1695835535_trace.json.gz")
	bad := filepath.Join(dir, "bad.json")
	// fails in DuckDB (args that are not JSON), after the side tables went in on one thread
	os.WriteFile(bad, []byte(`{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2, "args": {""}}]}`), 0o644)
	db := openTestDB(t)
	if _, err := db.SQL.ExecContext(ctx, "SET threads = 3"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Load(ctx, []string{good}, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, db, `SELECT current_setting('threads')`); n != 3 {
		t.Errorf("threads %d after a load, want 3", n)
	}
	if _, err := db.Load(ctx, []string{bad}, LoadOptions{Label: "bad"}); err == nil {
		t.Errorf("loaded %s", bad)
	}
	if n := queryInt(t, db, `SELECT current_setting('threads')`); n != 3 {
		t.Errorf("threads %d after a failed load, want 3", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM traces WHERE label = 'bad'`); n != 0 {
		t.Errorf("%d traces of the failed load", n)
	}
}

// TestPrefetch: a Load takes over the parse that StartPrefetch began for its first file, with the same rows
// as a load without it; a prefetch of another file, or one that no Load takes, is stopped and freed.
func TestPrefetch(t *testing.T) {
	ctx := context.Background()
	files := dlrmFiles(t)
	plain := openTestDB(t)
	mustLoad(t, plain, files...)

	pre := StartPrefetch(ctx, files, LoadOptions{})
	if pre == nil || pre.p == nil {
		t.Fatal("no prefetch")
	}
	fetched := openTestDB(t)
	if _, err := fetched.Load(ctx, files, LoadOptions{Prefetch: pre}); err != nil {
		t.Fatal(err)
	}
	if pre.p != nil {
		t.Error("the load did not take the prefetch over")
	}
	if got, want := tableFingerprints(t, fetched), tableFingerprints(t, plain); !maps.Equal(got, want) {
		t.Errorf("with prefetch:\n%v\nwithout:\n%v", got, want)
	}

	other := StartPrefetch(ctx, files[1:], LoadOptions{})
	db := openTestDB(t)
	if _, err := db.Load(ctx, files[:1], LoadOptions{Prefetch: other}); err != nil {
		t.Fatal(err)
	}
	if other.p != nil {
		t.Error("a prefetch of another file was not stopped")
	}
	StartPrefetch(ctx, files, LoadOptions{}).Stop()
	var none *Prefetch
	none.Stop()
	if p := StartPrefetch(ctx, []string{filepath.Join(t.TempDir(), "missing.json")}, LoadOptions{}); p != nil {
		t.Error("a prefetch of a missing file")
	}
}
