//go:build unix

package outdir

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
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

// TestCreateOwnDescriptor: /dev/fd/N (as /dev/stdout) is written through as it stands: a pipe gets the
// bytes (resolving its link failed), and a file opened for append keeps what it held (a rename replaced it).
func TestCreateOwnDescriptor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := Create(fmt.Sprintf("/dev/fd/%d", w.Fd()))
	if err != nil {
		t.Fatalf("a pipe: %v", err)
	}
	f.WriteString("report")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got, _ := io.ReadAll(r); string(got) != "report" {
		t.Errorf("pipe got %q", got)
	}

	path := filepath.Join(t.TempDir(), "app.log")
	if err := os.WriteFile(path, []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	f, err = Create(fmt.Sprintf("/proc/self/fd/%d", log.Fd()))
	if err != nil {
		t.Skipf("no /proc/self/fd here: %v", err)
	}
	f.WriteString("report\n")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "kept\nreport\n" {
		t.Errorf("file opened for append: %q, want %q", got, "kept\nreport\n")
	}
}

// TestCreateLongNameAndErrors: a name as long as a file name may be is written (the temporary file's longer
// name failed: review r78 #3), and errors name the file asked for or its directory, never the hidden
// temporary file (r78 #4).
func TestCreateLongNameAndErrors(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{strings.Repeat("r", 250) + ".json", strings.Repeat("é", 125) + ".j"} {
		f, err := Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%d-byte name: %v", len(name), err)
		}
		f.WriteString("x")
		if err := f.Commit(); err != nil {
			t.Fatalf("%d-byte name: %v", len(name), err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != "x" {
			t.Errorf("%d-byte name: %q %v", len(name), b, err)
		}
	}
	for _, tc := range []struct {
		base    string
		wantLen int
	}{{"a.json", 0}, {strings.Repeat("r", 300), 255}, {strings.Repeat("é", 200), 0}} {
		got := tmpName(tc.base, 12345, 7)
		if len(got) > maxNameBytes || !utf8.ValidString(got) || !strings.HasPrefix(got, ".") || !strings.HasSuffix(got, ".12345-7.tmp") {
			t.Errorf("tmpName(%d bytes) = %q (%d bytes)", len(tc.base), got, len(got))
		}
		if tc.wantLen > 0 && len(got) != tc.wantLen {
			t.Errorf("tmpName(%d bytes): %d bytes, want %d", len(tc.base), len(got), tc.wantLen)
		}
	}
	if os.Geteuid() != 0 { // (root writes anywhere)
		ro := filepath.Join(dir, "ro")
		os.Mkdir(ro, 0o555)
		_, err := Create(filepath.Join(ro, "out.json"))
		if err == nil || err.Error() != "cannot create a file in "+ro+": permission denied" {
			t.Errorf("unwritable directory: %v", err)
		}
	}
	f, err := Create(filepath.Join(dir, "closed.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.File.Close() // a write error: it names the target
	if _, err := f.WriteString("x"); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "closed.json")) || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("write error %v", err)
	}
	f.Abort()
}
