package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFatalError: DuckDB's fatal errors, as it words them, become one line naming the database, the
// innermost cause and what is kept (in the write-ahead log when there is one, else in the file: review r68
// #2 found a line pointing to a log that did not exist), and the trace file whose load met it; other
// errors pass unchanged.
func TestFatalError(t *testing.T) {
	const checkpointFailed = `FATAL Error: Failed to create checkpoint because of error: FATAL Error: Failed to create checkpoint: IO Error: Could not write file "/m/t.duckdb": No space left on device`
	const invalidated = "FATAL Error: Failed: database has been invalidated because of a previous fatal error. The database must be restarted prior to being used again.\nOriginal error: \"Failed to create checkpoint because of error: FATAL Error: Failed to create checkpoint: IO Error: Could not write file \"/m/t.duckdb\": No space left on device\""
	cause := `Could not write file "/m/t.duckdb": No space left on device`
	dir := t.TempDir()
	withWAL, noWAL := filepath.Join(dir, "w.duckdb"), filepath.Join(dir, "n.duckdb")
	if err := os.WriteFile(withWAL+".wal", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		err  error
		want []string // substrings of the message; nil: err unchanged
	}{
		{"invalidated", withWAL, errors.New(invalidated), []string{"database " + withWAL + " can no longer be used", "(" + cause + ")", withWAL + ".wal is replayed"}},
		{"invalidated, no log", noWAL, errors.New(invalidated), []string{"(" + cause + ")", "what was committed before is kept in it"}},
		{"load of a file", noWAL, &LoadError{Path: "/t/r0.json", Err: errors.New(invalidated)},
			[]string{"load /t/r0.json: database " + noWAL + " can no longer be used", "(" + cause + ")"}},
		{"checkpoint", withWAL, errors.New(checkpointFailed), []string{"(" + cause + ")"}},
		{"in memory", "", errors.New(invalidated), []string{"the in-memory database can no longer be used", "(" + cause + ")"}},
		{"checkpoint error kept", withWAL, &CheckpointError{Path: withWAL, Loaded: 2, Err: errors.New(checkpointFailed)},
			[]string{"checkpoint of " + withWAL + " after the load failed (" + cause + "); the 2 file(s) loaded are committed"}},
		{"checkpoint error, nothing loaded", noWAL, &CheckpointError{Path: noWAL, Err: errors.New(checkpointFailed)},
			[]string{"checkpoint of " + noWAL + " failed (" + cause + "); no file was loaded, and what was committed before is kept in it"}},
		{"other error", withWAL, errors.New("Binder Error: no such column"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FatalError(&DB{Path: tc.path}, tc.err)
			if tc.want == nil {
				if got != tc.err || IsFatal(got) {
					t.Fatalf("got %v, want it unchanged and not fatal", got)
				}
				return
			}
			if !IsFatal(got) {
				t.Errorf("IsFatal(%v) false", got)
			}
			msg := got.Error()
			if strings.Contains(msg, "\n") || strings.Contains(msg, "FATAL") {
				t.Errorf("%q: want one line without DuckDB's raw message", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
		})
	}
}

// TestInstallTarget: an install statement's error names the object it creates; DuckDB's message may name
// only a column or a function inside it.
func TestInstallTarget(t *testing.T) {
	for _, c := range []struct{ stmt, want string }{
		{"CREATE OR REPLACE VIEW kernels AS SELECT 1", "view kernels: "},
		{"-- a comment naming CREATE TABLE x\nCREATE OR REPLACE MACRO kernel_breakdown(num_kernels := 10) AS TABLE SELECT 1", "macro kernel_breakdown: "},
		{"CREATE TABLE IF NOT EXISTS main.events (ts BIGINT)", "table events: "},
		{"SET VARIABLE hta_compat = false", ""},
	} {
		if got := installTarget(c.stmt); got != c.want {
			t.Errorf("installTarget(%q) = %q, want %q", c.stmt, got, c.want)
		}
	}
}
