package outdir

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMakeAndRemove: Make reports exactly the directories it created; RemoveEmpty takes them back while they are
// empty and stops at the first that is not; a path under a regular file fails and leaves nothing.
func TestMakeAndRemove(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "c")
	created, err := Make(dir)
	want := []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b"), dir}
	if err != nil || !slices.Equal(created, want) {
		t.Fatalf("Make: %v, %v; want %v", created, err, want)
	}
	if again, err := Make(dir); err != nil || len(again) != 0 {
		t.Errorf("Make of an existing directory: %v, %v", again, err)
	}
	os.WriteFile(filepath.Join(root, "a", "keep"), nil, 0o644)
	RemoveEmpty(created)
	if _, err := os.Stat(filepath.Join(root, "a", "b")); err == nil {
		t.Error("a/b was not removed")
	}
	if _, err := os.Stat(filepath.Join(root, "a")); err != nil {
		t.Error("a (not empty) was removed")
	}
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o644)
	if created, err := Make(filepath.Join(file, "x", "y")); err == nil || created != nil {
		t.Errorf("under a regular file: %v, %v", created, err)
	}
}

// TestMakeDanglingLink: a directory named by a link to nothing is refused in words that say so (MkdirAll's were
// "file exists", about what ls shows as there).
func TestMakeDanglingLink(t *testing.T) {
	root := t.TempDir()
	link := filepath.Join(root, "out")
	if err := os.Symlink(filepath.Join(root, "gone"), link); err != nil {
		t.Skip(err)
	}
	if _, err := Make(link); err == nil || err.Error() != link+" is a link to "+filepath.Join(root, "gone")+", which does not exist" {
		t.Errorf("Make of a dangling link: %v", err)
	}
}
