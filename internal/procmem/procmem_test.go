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

func TestCgroupLimit(t *testing.T) {
	write := func(root, rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		cgroup string
		files  map[string]string
		want   int64
	}{
		{"v2 limit on the process's group", "0::/job/step\n", map[string]string{"job/step/memory.max": "8589934592\n"}, 8 << 30},
		{"v2 tighter limit on a parent", "0::/job/step\n", map[string]string{"job/step/memory.max": "max\n", "job/memory.max": "4294967296\n"}, 4 << 30},
		{"v2 unlimited", "0::/job\n", map[string]string{"job/memory.max": "max\n"}, 0},
		{"v2 inside a container: its group is the root", "0::/\n", map[string]string{"memory.max": "2147483648\n"}, 2 << 30},
		{"v1 memory controller", "4:memory:/docker/abc\n3:cpu:/docker/abc\n", map[string]string{"memory/docker/abc/memory.limit_in_bytes": "1073741824\n"}, 1 << 30},
		{"v1 unlimited", "4:memory:/x\n", map[string]string{"memory/x/memory.limit_in_bytes": "9223372036854771712\n"}, 0},
		{"v1 controllers named together", "5:cpu,memory:/y\n", map[string]string{"memory/y/memory.limit_in_bytes": "3221225472\n"}, 3 << 30},
		{"no memory controller", "3:cpu:/z\n", map[string]string{"memory/z/memory.limit_in_bytes": "1024\n"}, 0},
	} {
		root := t.TempDir()
		for rel, text := range c.files {
			write(root, rel, text)
		}
		write(root, "self-cgroup", c.cgroup)
		if got := cgroupLimit(filepath.Join(root, "self-cgroup"), root); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if got := cgroupLimit(filepath.Join(t.TempDir(), "absent"), "/"); got != 0 {
		t.Errorf("no cgroup file: %d, want 0", got)
	}
}
