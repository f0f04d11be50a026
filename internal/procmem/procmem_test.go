package procmem

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBytes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "status")
	os.WriteFile(p, []byte("Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t1024 kB\n"), 0o644)
	for _, c := range []struct {
		key  string
		want int64
	}{{"VmHWM", 2048 << 10}, {"VmRSS", 1024 << 10}, {"VmSwap", 0}, {"Name", 0}} {
		if got := Bytes(p, c.key); got != c.want {
			t.Errorf("%s: %d, want %d", c.key, got, c.want)
		}
	}
	if got := Bytes(filepath.Join(t.TempDir(), "absent"), "VmHWM"); got != 0 {
		t.Errorf("absent file: %d, want 0", got)
	}
}
