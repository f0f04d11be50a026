package sqlfuncs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"

	"tracesql/engine"
)

// TestExportReadsWhatWasLoaded: an export opens the trace file as the loader does (internal/traceio), so a gzip
// trace with zero padding after its last member, which loads, exports too (the exports' own gzip reader took the
// padding for another member's header: "gzip: invalid header"), and to the same bytes as the trace without it.
func TestExportReadsWhatWasLoaded(t *testing.T) {
	sample, err := os.ReadFile(filepath.Join("..", "cmd", "tracesql", "sample", "alexnet.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	in := t.TempDir()
	files := map[string][]byte{
		"as-is":  sample,
		"padded": append(bytes.Clone(sample), make([]byte, 1024)...),
	}
	ctx := context.Background()
	db, err := engine.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for label, b := range files {
		dir := filepath.Join(in, label)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "alexnet.json.gz")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Load(ctx, []string{p}, engine.LoadOptions{Label: label, RankFrom: engine.RankIndex}); err != nil {
			t.Fatalf("load %s: %v", p, err)
		}
	}
	var asIs, padded int64
	if err := db.SQL.QueryRow(`SELECT count(*) FILTER (label = 'as-is'), count(*) FILTER (label = 'padded') FROM events JOIN traces USING (trace_id)`).Scan(&asIs, &padded); err != nil {
		t.Fatal(err)
	}
	if asIs == 0 || padded != asIs {
		t.Fatalf("loaded %d events of the padded trace, %d of the trace as it is", padded, asIs)
	}

	out := t.TempDir()
	written := map[string][]byte{}
	for label := range files {
		var path string
		var n int64
		if err := db.SQL.QueryRow(`SELECT path, counter_events FROM export_counters_trace(0, ?, label := ?)`, out, label).Scan(&path, &n); err != nil {
			t.Fatalf("export_counters_trace of %s: %v", label, err)
		}
		if n == 0 {
			t.Errorf("%s: no counter events written", label)
		}
		written[label] = readMaybeGzip(t, path)
		if !json.Valid(written[label]) {
			t.Errorf("%s: %s is not valid JSON", label, path)
		}
	}
	if !bytes.Equal(written["padded"], written["as-is"]) {
		t.Errorf("the export of the padded trace (%d bytes) differs from the one of the trace as it is (%d bytes)",
			len(written["padded"]), len(written["as-is"]))
	}
}

func readMaybeGzip(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if b, err = io.ReadAll(zr); err != nil {
		t.Fatal(err)
	}
	return b
}
