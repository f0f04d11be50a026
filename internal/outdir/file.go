package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

// File is an output file that appears whole or not at all: it is written to a temporary file next to its
// target and renamed onto it by Commit. A target that is a symbolic link gets the link's destination
// written (the link stays); one that is not a regular file (a device, a FIFO: -o /dev/stdout) is written in
// place, since renaming onto it would replace it.
type File struct {
	*os.File
	target string // where Commit puts the file; "" when written in place
	done   bool
}

var tmpSeq atomic.Int64

// Create opens the output file for path. A new file gets the permissions os.Create gives (0666 less the
// umask); an existing one keeps its own.
func Create(path string) (*File, error) {
	if standardStream(path) {
		// The process's own descriptor (a pipe, a terminal, a file opened for append with >>): written
		// as it stands. Resolving the link failed for a pipe, and for a file renamed a new one over it,
		// losing what a >> redirection had kept.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, err
		}
		return &File{File: f}, nil
	}
	target := path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return nil, fmt.Errorf("%s is a link to a file that does not exist", path)
		}
	}
	perm, keep := fs.FileMode(0o666), false
	fi, err := os.Stat(target)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("%s is a directory", path)
	case err == nil && !fi.Mode().IsRegular():
		f, err := os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &File{File: f}, nil
	case err == nil:
		perm, keep = fi.Mode().Perm(), true
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	dir, base := filepath.Split(target)
	for {
		tmp := filepath.Join(dir, "."+base+"."+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(tmpSeq.Add(1), 10)+".tmp")
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if keep {
			// An existing file's permissions exactly, not less the umask.
			if err := f.Chmod(perm); err != nil {
				f.Close()
				os.Remove(tmp)
				return nil, err
			}
		}
		return &File{File: f, target: target}, nil
	}
}

// Commit closes the file and puts it in place.
func (f *File) Commit() error {
	f.done = true
	if err := f.File.Close(); err != nil {
		f.remove()
		return err
	}
	if f.target == "" {
		return nil
	}
	if err := os.Rename(f.Name(), f.target); err != nil {
		f.remove()
		return err
	}
	return nil
}

// Abort closes and removes the file unless Commit ran; call it deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	f.remove()
}

func (f *File) remove() {
	if f.target != "" {
		os.Remove(f.Name())
	}
}

// standardStream reports whether path names one of the process's open descriptors: /dev/stdout,
// /dev/stderr, /dev/fd/N or /proc/self/fd/N.
func standardStream(path string) bool {
	p := filepath.Clean(path)
	return p == "/dev/stdout" || p == "/dev/stderr" || strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/")
}
