package outdir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
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
		tmp := filepath.Join(dir, tmpName(base, os.Getpid(), tmpSeq.Add(1)))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				// (the temporary file's name is not one the user chose or would know)
				return nil, fmt.Errorf("cannot create a file in %s: %w", filepath.Clean(dir), pe.Err)
			}
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

// maxNameBytes is the longest file name most file systems take (NAME_MAX on Linux and macOS).
const maxNameBytes = 255

// tmpName is the hidden temporary file's name for base: base cut short (at a character boundary) where
// the whole would be longer than a file name may be, so that any target name that fits can be written
// (review r78 #3: a 248-byte name failed with "file name too long").
func tmpName(base string, pid int, seq int64) string {
	suffix := "." + strconv.Itoa(pid) + "-" + strconv.FormatInt(seq, 10) + ".tmp"
	if room := maxNameBytes - 1 - len(suffix); len(base) > room {
		cut := room
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	return "." + base + suffix
}

// targetError names the file the user asked for, not the temporary file, in an error about it: "write
// out.json: file too large", not a hidden name the user never chose (review r78 #4).
func targetError(err error, target string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: target, Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &fs.PathError{Op: le.Op, Path: target, Err: le.Err}
	}
	return err
}

// Write, WriteString and ReadFrom write to the file; an error names the target.
func (f *File) Write(b []byte) (int, error) {
	n, err := f.File.Write(b)
	return n, f.named(err)
}

func (f *File) WriteString(s string) (int, error) {
	n, err := f.File.WriteString(s)
	return n, f.named(err)
}

func (f *File) ReadFrom(r io.Reader) (int64, error) {
	n, err := f.File.ReadFrom(r)
	return n, f.named(err)
}

func (f *File) named(err error) error {
	if err != nil && f.target != "" {
		return targetError(err, f.target)
	}
	return err
}

// Commit closes the file and puts it in place.
func (f *File) Commit() error {
	f.done = true
	if err := f.File.Close(); err != nil {
		f.remove()
		if f.target != "" {
			err = targetError(err, f.target)
		}
		return err
	}
	if f.target == "" {
		return nil
	}
	if err := os.Rename(f.Name(), f.target); err != nil {
		f.remove()
		return targetError(err, f.target)
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
