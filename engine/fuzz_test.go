package engine

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the loader: it must return rows or an error, never panic, and
// a failed load must leave the database empty.
func FuzzParse(f *testing.F) {
	for _, p := range []string{
		"../testdata/traces/out_of_order/before_fix_trace.json",
		"../testdata/traces/call_stack/backward_thread.json",
		"../testdata/traces/triton/trace.json.gz",
		"../testdata/traces/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
	} {
		b, err := readMaybeGz(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[{"ph":"X","ts":1,"dur":1,"cat":"c","name":"n","pid":"a","tid":"b","args":{"stream":4294967295}}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"C","name":"q","ts":"1.5","args":{"v":1,"w":"x"}},{"ph":"M","name":"thread_name","args":{"name":"\u00e9"}}]}`))
	db := openTestDB(f)
	dir := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		n++
		p := filepath.Join(dir, "fuzz.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := db.Load(context.Background(), []string{p}, LoadOptions{Label: "fuzz", RankFrom: RankIndex})
		if err != nil {
			var se *SyntaxError
			var ee *EventError
			if !errors.As(err, &se) && !errors.As(err, &ee) && !errors.Is(err, ErrNoTraceEvents) &&
				!strings.Contains(err.Error(), "gzip") {
				t.Fatalf("unexpected error kind: %v", err)
			}
			if c := queryInt(t, db, "SELECT count(*) FROM traces WHERE label = 'fuzz'"); c != 0 {
				t.Fatalf("failed load left %d trace rows", c)
			}
			return
		}
		// Clean up so each input is checked alone (and duplicate-rank checks do not interfere).
		for _, table := range []string{"events", "metadata_events", "flows", "counters", "instants", "other_events", "traces"} {
			if _, err := db.SQL.Exec("DELETE FROM "+table+" WHERE trace_id = ?", res[0].TraceID); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func readMaybeGz(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(p, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		r = zr
	}
	return io.ReadAll(r)
}
