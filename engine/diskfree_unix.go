//go:build linux || darwin

package engine

import (
	"os"
	"path/filepath"
	"syscall"
)

// diskFree returns the bytes free to an unprivileged writer on the file system that holds dir, or
// the nearest existing directory above it; -1 when it cannot tell.
func diskFree(dir string) int64 {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			var fs syscall.Statfs_t
			// A file system of no blocks (proc, sysfs, some FUSE mounts) has no size to tell,
			// not 0 bytes free.
			if syscall.Statfs(d, &fs) != nil || fs.Blocks == 0 {
				return -1
			}
			return int64(fs.Bavail) * int64(fs.Bsize)
		}
		if d == filepath.Dir(d) {
			return -1
		}
	}
}
