package sqlfuncs

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// rwTrace is a trace big enough (about 3 MiB) to cross traceio's read-ahead blocks (2 MiB).
func rwTrace() []byte {
	var b bytes.Buffer
	b.WriteString(`{"traceEvents":[`)
	for i := 0; i < 40000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"ph":"X","name":"aten::mm_`)
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString(`","ts":1,"dur":2}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func rwGzip(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func rwWrite(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rwUpper is a rewriter whose effect is visible: the whole trace upper-cased.
func rwUpper(r io.Reader, w *bufio.Writer) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, err = w.Write(bytes.ToUpper(b))
	return err
}

// rwNoTemp fails when dir holds anything but the names in keep (a temporary file left behind).
func rwNoTemp(t *testing.T, dir string, keep ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		found := false
		for _, k := range keep {
			found = found || e.Name() == k
		}
		if !found {
			t.Errorf("%s left behind in %s", e.Name(), dir)
		}
	}
}

// Plain and gzip input (recognised by content, not by name) to plain and gzip output.
func TestRewriteTrace(t *testing.T) {
	trace := rwTrace()
	want := bytes.ToUpper(trace)
	in := t.TempDir()
	srcs := map[string]string{
		"plain":                rwWrite(t, filepath.Join(in, "t.json"), trace),
		"gzip":                 rwWrite(t, filepath.Join(in, "t.json.gz"), rwGzip(t, trace)),
		"gzip named .json":     rwWrite(t, filepath.Join(in, "gz.json"), rwGzip(t, trace)),
		"plain named .json.gz": rwWrite(t, filepath.Join(in, "plain.json.gz"), trace),
	}
	for name, src := range srcs {
		for _, gz := range []bool{false, true} {
			out := t.TempDir()
			dst := filepath.Join(out, "o.json")
			if err := rewriteTrace(loadedFile{path: src}, dst, gz, rwUpper); err != nil {
				t.Fatalf("%s (gzip out %v): %v", name, gz, err)
			}
			got, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if isGz := len(got) > 2 && got[0] == 0x1f && got[1] == 0x8b; isGz != gz {
				t.Fatalf("%s: gzip output %v, want %v", name, isGz, gz)
			}
			if gz {
				zr, err := gzip.NewReader(bytes.NewReader(got))
				if err != nil {
					t.Fatal(err)
				}
				if got, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s (gzip out %v): %d bytes written, want the %d bytes of the upper-cased trace", name, gz, len(got), len(want))
			}
			rwNoTemp(t, out, "o.json")
		}
	}
}

func TestRewriteTraceErrors(t *testing.T) {
	in := t.TempDir()
	src := rwWrite(t, filepath.Join(in, "t.json.gz"), rwGzip(t, rwTrace()))

	t.Run("missing input", func(t *testing.T) {
		out := t.TempDir()
		missing := filepath.Join(in, "nope.json")
		err := rewriteTrace(loadedFile{path: missing}, filepath.Join(out, "o.json"), false, rwUpper)
		if err == nil || !strings.Contains(err.Error(), missing) || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("got %v, want a not-exist error naming %s", err, missing)
		}
		rwNoTemp(t, out)
	})

	t.Run("corrupt gzip header", func(t *testing.T) {
		out := t.TempDir()
		bad := rwWrite(t, filepath.Join(in, "bad.json.gz"), []byte{0x1f, 0x8b, 0, 0, 0})
		err := rewriteTrace(loadedFile{path: bad}, filepath.Join(out, "o.json"), false, rwUpper)
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Fatalf("got %v, want an error naming %s", err, bad)
		}
		rwNoTemp(t, out)
	})

	t.Run("truncated gzip", func(t *testing.T) {
		out := t.TempDir()
		gz := rwGzip(t, rwTrace())
		cut := rwWrite(t, filepath.Join(in, "cut.json.gz"), gz[:len(gz)/2])
		err := rewriteTrace(loadedFile{path: cut}, filepath.Join(out, "o.json"), false, rwUpper)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("got %v, want unexpected EOF (a truncated file must not pass for a shorter trace)", err)
		}
		rwNoTemp(t, out)
		// An output_dir the export created goes again with it (its parents too); one that existed stays.
		if err := rewriteTrace(loadedFile{path: cut}, filepath.Join(out, "new", "sub", "o.json"), false, rwUpper); err == nil {
			t.Fatal("no error")
		}
		if left, _ := os.ReadDir(out); len(left) != 0 {
			t.Errorf("the failed export left %v in %s", left, out)
		}
	})

	t.Run("output directory not writable", func(t *testing.T) {
		// A regular file where the directory should be: unwritable even for root, who ignores permission bits.
		notDir := rwWrite(t, filepath.Join(t.TempDir(), "file"), nil)
		dst := filepath.Join(notDir, "o.json")
		err := rewriteTrace(loadedFile{path: src}, dst, true, rwUpper)
		if err == nil || !strings.Contains(err.Error(), dst) {
			t.Fatalf("got %v, want an error naming %s", err, dst)
		}
		if os.Geteuid() != 0 { // permission bits only bind other users
			ro := t.TempDir()
			if err := os.Chmod(ro, 0o555); err != nil {
				t.Fatal(err)
			}
			defer os.Chmod(ro, 0o755)
			dst := filepath.Join(ro, "o.json")
			if err := rewriteTrace(loadedFile{path: src}, dst, true, rwUpper); err == nil || !strings.Contains(err.Error(), dst) {
				t.Fatalf("got %v, want an error naming %s", err, dst)
			}
			rwNoTemp(t, ro)
		}
	})

	t.Run("onto the trace itself", func(t *testing.T) {
		// Through a link to the trace's directory the path's text differs, the file does not: the trace was
		// replaced by its own rewrite.
		dir := t.TempDir()
		trace := rwWrite(t, filepath.Join(dir, "t.trace"), []byte(`{"traceEvents":[]}`))
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(dir, link); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(link, "t.trace")
		err := rewriteTrace(loadedFile{path: trace}, dst, false, rwUpper)
		if err == nil || !strings.Contains(err.Error(), "that is the trace being exported") {
			t.Fatalf("got %v, want a refusal", err)
		}
		if b, _ := os.ReadFile(trace); string(b) != `{"traceEvents":[]}` {
			t.Errorf("the trace became %q", b)
		}
	})

	t.Run("byte-order mark", func(t *testing.T) {
		for _, body := range []string{`{"traceEvents":[{"a":1}]}`, `[{"a":1}]`} {
			src := rwWrite(t, filepath.Join(t.TempDir(), "bom.json"), []byte("\xef\xbb\xbf"+body))
			var got string
			err := rewriteTrace(loadedFile{path: src}, filepath.Join(t.TempDir(), "o.json"), false, func(r io.Reader, w *bufio.Writer) error {
				b, err := io.ReadAll(r)
				got = string(b)
				return err
			})
			if err != nil || !strings.HasPrefix(got, body[:1]) {
				t.Errorf("%s: the rewriter read %q (%v), want the JSON without the mark", body, got, err)
			}
		}
	})

	t.Run("rewrite fails", func(t *testing.T) {
		out := t.TempDir()
		dst := rwWrite(t, filepath.Join(out, "o.json"), []byte("earlier output"))
		boom := errors.New("boom")
		err := rewriteTrace(loadedFile{path: src}, dst, true, func(r io.Reader, w *bufio.Writer) error {
			if _, err := io.CopyN(w, r, 100); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("got %v, want the rewriter's error", err)
		}
		if b, _ := os.ReadFile(dst); string(b) != "earlier output" {
			t.Errorf("an earlier output was changed to %q", b)
		}
		rwNoTemp(t, out, "o.json")
	})

	t.Run("rename fails", func(t *testing.T) {
		out := t.TempDir()
		dst := filepath.Join(out, "o.json")
		if err := os.Mkdir(dst, 0o755); err != nil { // a directory cannot be replaced by a file
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, "x"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		err := rewriteTrace(loadedFile{path: src}, dst, false, rwUpper)
		if err == nil || !strings.Contains(err.Error(), dst) {
			t.Fatalf("got %v, want an error naming %s", err, dst)
		}
		rwNoTemp(t, out, "o.json")
	})
}

func TestExpandHome(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	for _, c := range []struct{ in, want string }{
		{"~", "/home/u"}, {"~/out", "/home/u/out"}, {"~other/out", "~other/out"}, {"/tmp/~", "/tmp/~"}, {"out", "out"},
	} {
		if got := expandHome(c.in); got != c.want {
			t.Errorf("expandHome(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
