package main

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
)

// sampleTrace is HTA's critical_path/alexnet test trace (one rank, 1,408 events, NVIDIA GPU), bundled
// so that `tracesql` alone has something to show.
//
//go:embed sample/alexnet.json.gz
var sampleTrace []byte

// samplePath writes the bundled sample to the user's cache directory once and returns its path.
func samplePath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "tracesql")
	p := filepath.Join(dir, "sample-alexnet.json.gz")
	if st, err := os.Stat(p); err == nil && st.Size() == int64(len(sampleTrace)) {
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("write bundled sample: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, sampleTrace, 0o644); err != nil {
		return "", fmt.Errorf("write bundled sample: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", fmt.Errorf("write bundled sample: %w", err)
	}
	return p, nil
}
