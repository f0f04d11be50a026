package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// perFileDigest describes every per-file table (perFileTables) by its rows without trace_id and the
// traces row's load time, in a fixed order: two databases that hold the same files in any trace ids
// have the same digest.
func perFileDigest(t *testing.T, db *DB) string {
	t.Helper()
	tables, err := db.perFileTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, table := range tables {
		exclude := "trace_id"
		if table == "traces" {
			exclude = "trace_id, loaded_at"
		}
		var n int64
		var digest string
		q := fmt.Sprintf(`SELECT count(*), coalesce(md5(string_agg(r, '|' ORDER BY r)), '') FROM
			(SELECT (x::VARCHAR) AS r FROM (SELECT * EXCLUDE (%s) FROM %s) x)`, exclude, sqlIdent(table))
		if err := db.SQL.QueryRow(q).Scan(&n, &digest); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		fmt.Fprintf(&b, "%s=%d:%s\n", table, n, digest)
	}
	return b.String()
}

// dlrmRankFile is the dlrm_8ranks trace file of rank r.
func dlrmRankFile(t *testing.T, r int) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join("..", "testdata", "traces", "dlrm_8ranks", fmt.Sprintf("worker%d_*.json.gz", r)))
	if err != nil || len(m) != 1 {
		t.Fatalf("worker%d: %v %v", r, m, err)
	}
	return m[0]
}

func copyTestFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReplaceChangedFile: with LoadOptions.Replace, a file that changed since it was loaded takes its
// older version's place: the database then holds exactly what a fresh load of the new files gives, in
// every per-file table (stored frames included), even when the new version has another rank. A new
// version that fails to load, or whose rank another file of the set holds, leaves the old one and the
// database as they were.
func TestReplaceChangedFile(t *testing.T) {
	ctx := context.Background()
	rankFile := func(r int) string { return dlrmRankFile(t, r) }
	for _, c := range []struct {
		name    string
		newRank int    // the rank whose file replaces b.json.gz (b was rank 1)
		newBody []byte // or this content
		wantErr string // "" = replaced
	}{
		{"same rank, new content", 1, nil, ""},
		{"another rank", 2, nil, ""},
		// (review r68 #6: the line says what the database still holds)
		{"truncated", -1, []byte(`{"traceEvents":[{"ph":"X","cat":"c","name":"n","pid":1,`), "at byte 55; its older version stays loaded"},
		{"rank of another file", 0, nil, "rank 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a.json.gz"), filepath.Join(dir, "b.json.gz")
			copyTestFile(t, rankFile(0), a)
			copyTestFile(t, rankFile(1), b)
			db, err := Open(ctx, filepath.Join(dir, "t.duckdb"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			mustLoad(t, db, dir)
			before := perFileDigest(t, db)

			if c.newBody != nil {
				if err := os.WriteFile(b, c.newBody, 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				copyTestFile(t, rankFile(c.newRank), b)
			}
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(b, later, later); err != nil {
				t.Fatal(err)
			}
			res, err := db.Load(ctx, []string{dir}, LoadOptions{Replace: true})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), b) {
					t.Fatalf("error %v: want one naming %s and %q", err, b, c.wantErr)
				}
				if after := perFileDigest(t, db); after != before {
					t.Errorf("database changed by a failed replacement:\n%s→\n%s", before, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var replaced, skipped int
			for _, r := range res {
				if r.Replaced {
					replaced++
					if r.Path != b || r.Rank != c.newRank {
						t.Errorf("replaced %s as rank %d, want %s as rank %d", r.Path, r.Rank, b, c.newRank)
					}
				}
				if r.Skipped == "already loaded" {
					skipped++
				}
			}
			if replaced != 1 || skipped != 1 {
				t.Errorf("results %+v: want one replaced, one already loaded", res)
			}
			fresh, err := Open(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			mustLoad(t, fresh, dir)
			if got, want := perFileDigest(t, db), perFileDigest(t, fresh); got != want {
				t.Errorf("after the replacement:\n%s\na fresh load:\n%s", got, want)
			}
			// The replacement is loaded like any file: loading again skips it.
			res, err = db.Load(ctx, []string{b}, LoadOptions{Replace: true})
			if err != nil || len(res) != 1 || res[0].Skipped != "already loaded" {
				t.Errorf("load again: %+v, %v", res, err)
			}
		})
	}
}

// TestReplaceMovedRanks: with Replace, changed files whose ranks swapped or shifted onto another changed file's
// older rank all load (the older version in the way goes with the file that takes its rank), whatever the
// file order; the database then holds what a fresh load gives. A file whose rank comes from its place in the
// file order keeps its older version's rank when named alone. A database the user ATTACHed, with a table of
// the same name as one of tracesql's, is left alone.
func TestReplaceMovedRanks(t *testing.T) {
	ctx := context.Background()
	rankFile := func(r int) string { return dlrmRankFile(t, r) }
	for _, c := range []struct {
		name      string
		before    []int // rank of the file in names[i]
		after     []int
		names     []string
		attachFoo bool
	}{
		{"swap", []int{0, 1}, []int{1, 0}, []string{"a.json.gz", "b.json.gz"}, false},
		{"shift up", []int{1, 2}, []int{2, 3}, []string{"x.json.gz", "y.json.gz"}, false},
		{"shift down", []int{1, 2}, []int{0, 1}, []string{"x.json.gz", "y.json.gz"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			set := filepath.Join(dir, "set")
			if err := os.Mkdir(set, 0o755); err != nil {
				t.Fatal(err)
			}
			for i, n := range c.names {
				copyTestFile(t, rankFile(c.before[i]), filepath.Join(set, n))
			}
			db, err := Open(ctx, filepath.Join(dir, "t.duckdb"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			mustLoad(t, db, set)
			if c.attachFoo {
				other := filepath.Join(dir, "other.duckdb")
				if _, err := db.SQL.Exec(fmt.Sprintf(`ATTACH '%s' AS o; CREATE TABLE o.foo(trace_id INT); INSERT INTO o.foo VALUES (0), (1)`, other)); err != nil {
					t.Fatal(err)
				}
			}
			later := time.Now().Add(time.Hour)
			for i, n := range c.names {
				p := filepath.Join(set, n)
				copyTestFile(t, rankFile(c.after[i]), p)
				if err := os.Chtimes(p, later, later); err != nil {
					t.Fatal(err)
				}
			}
			res, err := db.Load(ctx, []string{set}, LoadOptions{Replace: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != len(c.names) {
				t.Errorf("results %+v", res)
			}
			// every file says it replaced its older version, the one whose version went with another's too
			for _, r := range res {
				if !r.Replaced || r.Skipped != "" {
					t.Errorf("%s: replaced %t, skipped %q; want replaced", filepath.Base(r.Path), r.Replaced, r.Skipped)
				}
			}
			fresh, err := Open(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			mustLoad(t, fresh, set)
			if got, want := perFileDigest(t, db), perFileDigest(t, fresh); got != want {
				t.Errorf("after the replacement:\n%s\na fresh load:\n%s", got, want)
			}
			if c.attachFoo {
				if n := queryInt(t, db, `SELECT count(*) FROM o.foo`); n != 2 {
					t.Errorf("the attached database's table foo has %d rows, want its 2", n)
				}
			}
		})
	}

	t.Run("rank from file order, named alone", func(t *testing.T) {
		dir := t.TempDir()
		for _, n := range []string{"after_fix_trace.json", "before_fix_trace.json"} {
			copyTestFile(t, filepath.Join("..", "testdata", "traces", "out_of_order", n), filepath.Join(dir, n))
		}
		db, err := Open(ctx, filepath.Join(dir, "t.duckdb"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		mustLoad(t, db, dir)
		p := filepath.Join(dir, "before_fix_trace.json")
		was := queryInt(t, db, `SELECT rank FROM traces WHERE path = ?`, p)
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(p, later, later); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Load(ctx, []string{p}, LoadOptions{Replace: true}); err != nil {
			t.Fatalf("replace %s alone: %v", p, err)
		}
		if now := queryInt(t, db, `SELECT rank FROM traces WHERE path = ?`, p); now != was || queryInt(t, db, `SELECT count(*) FROM traces`) != 2 {
			t.Errorf("rank %d → %d, %d traces", was, now, queryInt(t, db, `SELECT count(*) FROM traces`))
		}
	})
}

// TestReplaceSwapOneFails: two changed files swapped ranks and one new version is bad. If the bad file
// comes first, its older version keeps its rank, so the good file cannot take it: both older versions stay
// and the good file's error says why. If the good file comes first, it has already taken the bad file's
// rank (its older version went with it): the bad file's error says that nothing of it is loaded now.
func TestReplaceSwapOneFails(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name              string
		bad               string // which of a.json.gz, b.json.gz has a bad new version
		wantErr           []string
		wantRanks         string // path:rank of traces afterwards
		unchangedDatabase bool
	}{
		{"bad file first", "a.json.gz",
			[]string{"load " + "A: not gzip", "load B: rank 0 is still held by the older version of A, whose new version failed to load in this run"},
			"a.json.gz:0 b.json.gz:1", true},
		{"good file first", "b.json.gz",
			[]string{"load B: not gzip", "its older version is no longer loaded either: A took its rank 1 before this file failed"},
			"a.json.gz:1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			set := filepath.Join(dir, "set")
			if err := os.Mkdir(set, 0o755); err != nil {
				t.Fatal(err)
			}
			a, b := filepath.Join(set, "a.json.gz"), filepath.Join(set, "b.json.gz")
			copyTestFile(t, dlrmRankFile(t, 0), a)
			copyTestFile(t, dlrmRankFile(t, 1), b)
			db, err := Open(ctx, filepath.Join(dir, "t.duckdb"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			mustLoad(t, db, set)
			before := perFileDigest(t, db)
			later := time.Now().Add(time.Hour)
			for _, f := range []struct {
				path string
				rank int
			}{{a, 1}, {b, 0}} {
				if filepath.Base(f.path) == c.bad {
					if err := os.WriteFile(f.path, []byte("not a gzip file"), 0o644); err != nil {
						t.Fatal(err)
					}
				} else {
					copyTestFile(t, dlrmRankFile(t, f.rank), f.path)
				}
				if err := os.Chtimes(f.path, later, later); err != nil {
					t.Fatal(err)
				}
			}
			_, err = db.Load(ctx, []string{set}, LoadOptions{Replace: true})
			if err == nil {
				t.Fatal("no error")
			}
			msg := strings.NewReplacer(a, "A", b, "B").Replace(err.Error())
			for _, w := range c.wantErr {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q\nlacks %q", msg, w)
				}
			}
			var got []string
			rows, err := db.SQL.Query(`SELECT path, rank FROM traces ORDER BY path`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var p string
				var r int
				if err := rows.Scan(&p, &r); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%s:%d", filepath.Base(p), r))
			}
			if g := strings.Join(got, " "); g != c.wantRanks {
				t.Errorf("traces %q, want %q", g, c.wantRanks)
			}
			if c.unchangedDatabase {
				if after := perFileDigest(t, db); after != before {
					t.Errorf("the database changed:\n%s\nwas:\n%s", after, before)
				}
			}
		})
	}
}

// TestReplaceRederivesOlderLoads: files an older loader derived (traces.loader_version NULL, as in
// a database written before it existed) are reported by StaleTraces, skipped by a plain load, and
// loaded again by Replace although they did not change, which puts the current derivation back.
func TestReplaceRederivesOlderLoads(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "rank0.json.gz"), filepath.Join(dir, "rank1.json.gz")}
	copyTestFile(t, "../testdata/traces/ns_resolution/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", files[0])
	copyTestFile(t, dlrmRankFile(t, 1), files[1])
	path := filepath.Join(dir, "t.duckdb")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Load(ctx, files, LoadOptions{RankFrom: RankIndex}); err != nil {
		t.Fatal(err)
	}
	want := perFileDigest(t, db)
	if n, _, _, err := db.StaleTraces(ctx); err != nil || n != 0 {
		t.Fatalf("fresh load: %d stale traces, %v", n, err)
	}
	mustExec(t, db,
		`ALTER TABLE traces DROP COLUMN loader_version`,
		`UPDATE events SET depth = depth + 1`, // what an older derivation left
		`DROP TABLE _tracesql_install`)
	db.Close()

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, first, label, err := db.StaleTraces(ctx); err != nil || n != 2 || first != files[0] || label != "trace" {
		t.Fatalf("after migration: StaleTraces = %d, %q, %q, %v; want 2, %q, trace", n, first, label, err, files[0])
	}
	res, err := db.Load(ctx, files, LoadOptions{RankFrom: RankIndex})
	if err != nil || len(res) != 2 || res[0].Skipped != "already loaded" || res[1].Skipped != "already loaded" {
		t.Fatalf("plain load: %+v, %v; want both already loaded", res, err)
	}
	res, err = db.Load(ctx, files, LoadOptions{RankFrom: RankIndex, Replace: true})
	if err != nil || len(res) != 2 {
		t.Fatalf("replace: %+v, %v", res, err)
	}
	for _, r := range res {
		if r.Skipped != "" || !r.Replaced || !r.Rederived {
			t.Errorf("replace %s: %+v, want replaced and rederived", r.Path, r)
		}
	}
	if n, _, _, err := db.StaleTraces(ctx); err != nil || n != 0 {
		t.Errorf("after replace: %d stale traces, %v", n, err)
	}
	if got := perFileDigest(t, db); got != want {
		t.Errorf("after replace:\n%s\nwant\n%s", got, want)
	}
	// Now current: Replace skips them.
	res, err = db.Load(ctx, files, LoadOptions{RankFrom: RankIndex, Replace: true})
	if err != nil || res[0].Skipped != "already loaded" || res[1].Skipped != "already loaded" {
		t.Errorf("replace of current files: %+v, %v; want both already loaded", res, err)
	}
}

// TestRankOfAGoneFile: the loaded file of a rank is no longer there and a new file has its rank (a
// re-profiled job, whose new file Kineto names after its time): the error says the old file is gone and
// how to unload it, not to remove "the extra file", which is the new one.
func TestRankOfAGoneFile(t *testing.T) {
	dir := t.TempDir()
	old, renewed := filepath.Join(dir, "worker0_step_12.json.gz"), filepath.Join(dir, "worker0_step_13.json.gz")
	copyTestFile(t, dlrmRankFile(t, 0), old)
	db := openTestDB(t)
	mustLoad(t, db, dir)
	if err := os.Rename(old, renewed); err != nil {
		t.Fatal(err)
	}
	_, err := db.Load(context.Background(), []string{dir}, LoadOptions{Replace: true})
	want := fmt.Sprintf("is already loaded from %s in trace set \"trace\", a file that is no longer there: unload it (.unload %s)", old, old)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
}
