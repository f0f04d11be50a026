//go:build unix

package engine

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDiscoverRefusesPipes: a FIFO (also /dev/stdin on a pipe, or a shell's <(…)) or a device is an error naming
// it, before anything opens it: a FIFO without a writer blocked the load in open() beyond Ctrl-C's reach (r42 #4).
func TestDiscoverRefusesPipes(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "t.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for path, kind := range map[string]string{fifo: "a pipe", os.DevNull: "a character device"} {
		_, _, _, err := Discover([]string{path})
		want := "load " + path + ": not a regular file (" + kind + "): tracesql reads a trace file more than once; save it to a file first"
		if err == nil || err.Error() != want {
			t.Errorf("Discover(%s): %v, want %q", path, err, want)
		}
	}
}
