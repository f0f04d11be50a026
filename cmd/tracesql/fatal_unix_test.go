//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestFileSizeLimit: a --db that outgrows the file size limit (ulimit -f) ends in one line per failed
// file and one for the failed checkpoint, exit 1. The process was killed by SIGXFSZ without a word
// (exit 153); and a checkpoint that failed after every file had committed left DuckDB's raw "FATAL
// Error … database has been invalidated" as the only line, with no file named. What the checkpoint
// line says is loaded is what a later open finds.
func TestFileSizeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	traces, err := filepath.Abs("../../testdata/traces/dlrm_8ranks")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(traces, "worker[0-2]_*"))
	if len(files) != 3 {
		t.Fatalf("want 3 dlrm traces, have %v", files)
	}
	loadedLine := regexp.MustCompile(`the (\d+) file\(s\) loaded are committed`)
	// One file: its commit's automatic checkpoint failed without a word before Load checkpointed after
	// a single file too; 2600 KB holds that file's log but not its checkpoint.
	for _, c := range []struct {
		kb    int
		files []string
	}{{1500, files}, {3000, files}, {2600, files[:1]}} {
		t.Run(fmt.Sprintf("%dKB_%dfiles", c.kb, len(c.files)), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "u.duckdb")
			args := append([]string{"-c", `ulimit -f ` + strconv.Itoa(c.kb) + `; exec "$0" "$@"`, bin, "--db", db}, c.files...)
			cmd := exec.Command("bash", append(args, "-c", "SELECT 1")...)
			cmd.Env = append(os.Environ(), asCLI+"=1")
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("want exit 1, got %v:\n%s", err, out)
			}
			text := strings.TrimRight(string(out), "\n")
			for _, line := range strings.Split(text, "\n") {
				if !strings.HasPrefix(line, "tracesql: ") || strings.Contains(line, "FATAL") {
					t.Errorf("line %q: want one tracesql line per failure, not DuckDB's raw message", line)
				}
			}
			if !strings.Contains(text, "File too large") || !strings.Contains(text, "checkpoint of "+db) {
				t.Errorf("want the cause and the checkpoint of %s named:\n%s", db, text)
			}
			// What the line says is committed is there once the limit is gone.
			want := 0
			if m := loadedLine.FindStringSubmatch(text); m != nil {
				want, _ = strconv.Atoi(m[1])
			}
			got := mustRun(t, "", "--db", db, "--format", "csv", "-c", "SELECT count(*) FROM traces")
			if strings.TrimSpace(got) != "count_star()\n"+strconv.Itoa(want) {
				t.Errorf("after the limit: %q, want %d traces as the message said:\n%s", got, want, text)
			}
		})
	}
}
