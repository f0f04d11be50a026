package engine

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// openTestDB opens an in-memory database closed at the end of the test.
func openTestDB(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustLoad(t testing.TB, db *DB, paths ...string) []LoadResult {
	t.Helper()
	res, err := db.Load(context.Background(), paths, LoadOptions{})
	if err != nil {
		t.Fatalf("load %v: %v", paths, err)
	}
	return res
}

func queryInt(t testing.TB, db *DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.SQL.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// readJSONTrace decodes a trace with encoding/json (numbers kept as text): the independent
// reference the loader is checked against.
func readJSONTrace(t testing.TB, path string) (events []map[string]json.RawMessage, isTrace bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	var top json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(top) > 0 && top[0] == '[' {
		if err := json.Unmarshal(top, &events); err != nil {
			t.Fatal(err)
		}
		// An array is a trace unless none of its first 16 elements is an event (has a ph).
		for i, ev := range events {
			if ev["ph"] != nil {
				return events, true
			} else if i == 15 {
				break
			}
		}
		return events, len(events) == 0
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(top, &obj); err != nil {
		t.Fatal(err)
	}
	raw, ok := obj["traceEvents"]
	if !ok {
		return nil, false
	}
	if err := json.Unmarshal(raw, &events); err != nil {
		t.Fatal(err)
	}
	return events, true
}

// allTraceFiles lists the *.json / *.json.gz files under dir, recursively.
func allTraceFiles(t testing.TB, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".json.gz")) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func jsonString(raw json.RawMessage) string {
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// countdownCtx is a context that is cancelled after a given number of looks at it (Err or Done), so that a
// test can cancel a long writer at each point where it checks, deterministically.
type countdownCtx struct {
	context.Context
	left atomic.Int64
	done chan struct{}
	once sync.Once
}

func newCountdownCtx(looks int64) *countdownCtx {
	c := &countdownCtx{Context: context.Background(), done: make(chan struct{})}
	c.left.Store(looks)
	return c
}

func (c *countdownCtx) tick() bool {
	if c.left.Add(-1) < 0 {
		c.once.Do(func() { close(c.done) })
		return true
	}
	return false
}

func (c *countdownCtx) Done() <-chan struct{} { c.tick(); return c.done }

func (c *countdownCtx) Err() error {
	if c.tick() {
		return context.Canceled
	}
	return nil
}

// mustExec runs statements in order, failing the test at the first error.
func mustExec(t testing.TB, db *DB, statements ...string) {
	t.Helper()
	for _, q := range statements {
		if _, err := db.SQL.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
