//go:build unix

package outdir

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestCreate: a new file appears only on Commit, with 0666 less the umask; an existing one keeps its
// permissions; a link's destination is written and the link stays; Abort leaves nothing; a directory is refused.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	write := func(path, text string) error {
		f, err := Create(path)
		if err != nil {
			return err
		}
		defer f.Abort()
		if _, err := f.WriteString(text); err != nil {
			return err
		}
		if _, err := os.Stat(path); err == nil && text == "new" {
			t.Errorf("%s exists before Commit", path)
		}
		return f.Commit()
	}
	umask := syscall.Umask(0o022)
	syscall.Umask(umask)
	fresh := filepath.Join(dir, "fresh.html")
	if err := write(fresh, "new"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o666&^fs.FileMode(umask) {
		t.Errorf("new file: mode %v, want %v", fi.Mode().Perm(), 0o666&^fs.FileMode(umask))
	}
	kept := filepath.Join(dir, "kept.html")
	os.WriteFile(kept, []byte("old"), 0o600)
	os.Chmod(kept, 0o640)
	if err := write(kept, "replaced"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(kept); fi.Mode().Perm() != 0o640 {
		t.Errorf("replaced file: mode %v, want 0640", fi.Mode().Perm())
	}
	link := filepath.Join(dir, "link.html")
	os.Symlink("kept.html", link)
	if err := write(link, "through the link"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(kept); string(b) != "through the link" {
		t.Errorf("link destination holds %q", b)
	}
	f, err := Create(filepath.Join(dir, "aborted.html"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("x")
	f.Abort()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"fresh.html", "kept.html", "link.html"}) {
		t.Errorf("directory holds %v", names)
	}
	if _, err := Create(dir); err == nil {
		t.Error("a directory was accepted")
	}
	os.Symlink("nowhere", filepath.Join(dir, "dangling"))
	if _, err := Create(filepath.Join(dir, "dangling")); err == nil {
		t.Error("a dangling link was accepted")
	}
}
