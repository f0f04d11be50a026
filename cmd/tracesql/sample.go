package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"tracesql/internal/outdir"
)

// sampleTrace is HTA's critical_path/alexnet test trace (one rank, 1,408 events, NVIDIA GPU), bundled
// so that `tracesql` alone has something to show.
//
//go:embed sample/alexnet.json.gz
var sampleTrace []byte

const sampleName = "sample-alexnet.json.gz"

// samplePath writes the bundled sample to the user's cache directory once and returns its path. Where
// that directory cannot be written (a read-only home in a container, HOME=/nonexistent for nobody), or
// there is none, the sample goes to a directory of this user's own under the temporary directory:
// the REPL opens all the same.
func samplePath() (string, error) {
	var cacheErr error
	if dir, err := os.UserCacheDir(); err == nil {
		// (a cache directory whose parent is missing is not made: with HOME=/nonexistent, root made
		// /nonexistent/.cache/tracesql)
		if _, err := os.Stat(filepath.Dir(dir)); err != nil {
			cacheErr = err
		} else if p, err := writeSample(filepath.Join(dir, "tracesql"), false); err == nil {
			return p, nil
		} else {
			cacheErr = err
		}
	}
	// The temporary directory is shared with other users: the directory is this user's (made 0700, and
	// refused when others may write or enter it), and a sample already there is used only when it is
	// the bundled one byte for byte.
	dir := filepath.Join(os.TempDir(), "tracesql-"+strconv.Itoa(os.Getuid()))
	p, err := writeSample(dir, true)
	if err != nil {
		if cacheErr != nil {
			return "", fmt.Errorf("write bundled sample: %v (and in the temporary directory: %v)", cacheErr, err)
		}
		return "", fmt.Errorf("write bundled sample: %w", err)
	}
	return p, nil
}

// writeSample puts the bundled sample in dir, making dir if need be, unless the file there holds it
// already, and returns its path. private makes dir 0700 and refuses one that others can enter.
func writeSample(dir string, private bool) (string, error) {
	perm := os.FileMode(0o755)
	if private {
		perm = 0o700
	}
	if err := os.MkdirAll(dir, perm); err != nil {
		return "", err
	}
	if private {
		fi, err := os.Lstat(dir)
		if err != nil {
			return "", err
		}
		// (Windows reports 0777 for every directory: its temporary directory is the user's own)
		if !fi.IsDir() || runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("%s is not a directory of this user's alone (mode %v)", dir, fi.Mode())
		}
	}
	p := filepath.Join(dir, sampleName)
	if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, sampleTrace) {
		return p, nil
	}
	// A temporary file of its own, renamed into place: two first runs at once do not write into one.
	f, err := outdir.Create(p)
	if err != nil {
		return "", err
	}
	defer f.Abort()
	if _, err := f.Write(sampleTrace); err != nil {
		return "", err
	}
	if err := f.Commit(); err != nil {
		return "", err
	}
	return p, nil
}
