// Package outdir creates outputs that can be taken back, so that a failed command leaves nothing behind: the
// directories a writer made (an export, the trace inflator) are removed again, and a File appears whole or
// not at all.
package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Make creates dir and its missing parents and returns those it created, outermost first. When MkdirAll fails
// after making some parents, they are removed again.
func Make(dir string) (created []string, err error) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) || d == filepath.Dir(d) {
			break
		}
		created = append([]string{d}, created...)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		RemoveEmpty(created)
		if errors.Is(err, fs.ErrExist) {
			// MkdirAll's "mkdir d: file exists" about a path that ls shows: a link to nothing (r72 #9)
			if fi, lerr := os.Lstat(dir); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				if dest, rerr := os.Readlink(dir); rerr == nil {
					return nil, fmt.Errorf("%s is a link to %s, which does not exist", dir, dest)
				}
			}
		}
		return nil, err
	}
	return created, nil
}

// RemoveEmpty removes the directories Make created, deepest first, as long as they are empty.
func RemoveEmpty(created []string) {
	for i := len(created) - 1; i >= 0; i-- {
		if os.Remove(created[i]) != nil {
			return
		}
	}
}
