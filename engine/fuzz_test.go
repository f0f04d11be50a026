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

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// FuzzParse feeds arbitrary bytes to the parser and the derived-column pass: they must return
// batches or a syntax/event/gzip error, never panic or hang. (Rollback of a failed load is covered
// by TestLoadErrors; DuckDB inside Go's fuzz workers stalled the fuzzer, so the database stays out.)
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
	f.Add([]byte(`[{"ph":"B","ts":1,"name":"b","pid":1,"tid":"t","args":{"a":1}},{"ph":"E","ts":3,"pid":1,"tid":"t","args":{"a":[2]}},{"ph":"E","ts":0,"pid":1,"tid":1},{"ph":"B","ts":5,"pid":2}]`))
	f.Add([]byte(`{"traceEvents":[{"ph":"C","name":"q","ts":"1.5","args":{"v":1,"w":"x"}},{"ph":"M","name":"thread_name","args":{"name":"\u00e9"}}]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "fuzz.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pf, err := parseFile(context.Background(), p, int64(len(data)), LoadOptions{})
		// Guessed event ends (splitter.guessEnd) change nothing: same events or the same error as
		// exact ones.
		exact, _, exactErr := parseFileSplit(context.Background(), p, int64(len(data)), LoadOptions{}, false)
		switch {
		case (err == nil) != (exactErr == nil) || err != nil && err.Error() != exactErr.Error():
			t.Fatalf("parse: %v; with exact event ends: %v", err, exactErr)
		case err == nil && (pf.events != exact.events || pf.jsonBytes != exact.jsonBytes):
			t.Fatalf("parse: %d events of %d bytes; with exact event ends: %d of %d", pf.events, pf.jsonBytes, exact.events, exact.jsonBytes)
		}
		if exact != nil {
			exact.release()
		}
		if err != nil {
			var se *SyntaxError
			var ee *EventError
			if !errors.As(err, &se) && !errors.As(err, &ee) && !errors.Is(err, ErrNotATrace) &&
				!strings.Contains(err.Error(), "gzip") {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		defer pf.release()
		var rows int64
		for _, b := range pf.batches {
			rows += int64(b.count)
		}
		if rows != pf.events {
			t.Fatalf("%d events in batches, %d counted", rows, pf.events)
		}
		for _, r := range derive(pf.batches, memory.DefaultAllocator) { // must not panic on any parsed input
			r.Release()
		}
		readMetadata(pf.meta) // nor the checks of the typed metadata
		// The up-front rank check reads the same start as the parse did.
		if h, err := readHead(p); err != nil || !(h.events || h.arrayForm) || h.arrayForm != pf.arrayForm {
			t.Fatalf("parsed, but the head says events %v, array %v (parse: array %v), error %v", h.events, h.arrayForm, pf.arrayForm, err)
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
