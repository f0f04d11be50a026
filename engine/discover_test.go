package engine

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestNaturalLess(t *testing.T) {
	want := []string{"a.json", "r1.json", "r02.json", "r2.json", "r10.json", "r10b.json", "r011.json", "r100.json", "rx.json", "t9_0.json", "t9_10.json", "t10_2.json"}
	for i := range want {
		for j := range want {
			if got := naturalLess(want[i], want[j]); got != (i < j) {
				t.Errorf("naturalLess(%q, %q) = %v, want %v", want[i], want[j], got, i < j)
			}
		}
	}
}

// TestDiscoverNames: a directory's *.json and *.json.gz files are traces in any case (.JSON.GZ from Windows
// tools); JSON compressed another way is listed as skipped, not passed over (a rank went missing without a
// word); other files are not traces.
func TestDiscoverNames(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"rank0.JSON.GZ", "rank1.Json", "rank2.json.zst", "rank3.pt.trace.json.gz", "rank4.json.bz2", "notes.txt", "rank5.json.bak"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, _, skipped, err := Discover([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
	}
	for _, s := range skipped {
		got = append(got, filepath.Base(s.Path)+": "+s.Skipped)
	}
	want := []string{"rank0.JSON.GZ", "rank1.Json", "rank3.pt.trace.json.gz",
		"rank2.json.zst: zstd-compressed: tracesql reads .json and .json.gz (decompress it, or recompress it with gzip)",
		"rank4.json.bz2: bzip2-compressed: tracesql reads .json and .json.gz (decompress it, or recompress it with gzip)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}

	only := t.TempDir()
	os.WriteFile(filepath.Join(only, "rank0.json.zst"), nil, 0o644)
	if _, _, _, err := Discover([]string{only}); err == nil || !strings.Contains(err.Error(), "no *.json or *.json.gz trace files in the directory: rank0.json.zst is zstd-compressed") {
		t.Errorf("got %v, want an error naming the zstd file", err)
	}
}
