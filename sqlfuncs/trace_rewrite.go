package sqlfuncs

// The file handling shared by the three functions that write a rewritten copy of a loaded trace
// (export_critical_path_overlay, export_kernel_sequences_overlay, export_counters_trace). Each streams the original
// trace file (never decoded as a whole) through its own rewriter; rewriteTrace does the rest the same way for all
// three: the file is opened as the engine opens it to load it (through package traceio: gzip recognised by its magic
// bytes, whatever the name, and decompressed on another core), the output goes to a temporary file next to the
// destination, gzip-compressed when asked, and is renamed into place only once it is complete, so a failed export
// leaves neither a partial file nor the temporary one behind (and an earlier output of the same name stays as it was).

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	"tracesql/internal/arrayrepair"
	"tracesql/internal/outdir"
	"tracesql/internal/traceio"
)

// loadedFile is a trace file as the traces table recorded it when it was loaded. The rewriters read the file again
// and splice rows of the database into it by event position, so the file must still be the one that was loaded:
// otherwise the output would pair events with another file's rows and look fine.
type loadedFile struct {
	path  string
	bytes sql.NullInt64
	mtime sql.NullTime
	// label, rank and nameShared (nameSharedSQL) name what exportBase writes.
	label      string
	rank       int64
	nameShared bool
}

// nameSharedSQL, a column of a query over traces, says whether another loaded trace has the row's file name:
// two sets' rank-0 files are often both named the same, and one file loaded under two labels (to compare
// compat and default mode, or two windows) is that file twice.
const nameSharedSQL = `EXISTS (SELECT 1 FROM traces o WHERE o.trace_id <> traces.trace_id
	AND regexp_extract(o.path, '[^/]+$') = regexp_extract(traces.path, '[^/]+$'))`

// exportBase is the file name that the exports written from f's trace start from: the trace file's own name,
// as HTA's, or, when another loaded trace has that file name too, "<label>_rank<rank>_<name>", so that the
// exports of both, written to one directory, do not overwrite each other.
func (f loadedFile) exportBase() string {
	base := filepath.Base(f.path)
	if !f.nameShared {
		return base
	}
	label := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, f.label)
	return fmt.Sprintf("%s_rank%d_%s", label, f.rank, base)
}

// check says whether the file on disk (st) is still the one that was loaded, in the loader's words.
func (f loadedFile) check(st os.FileInfo) error {
	if !f.bytes.Valid || !f.mtime.Valid {
		return nil // not recorded (a database from before file_bytes existed): nothing to compare
	}
	mtime := st.ModTime().UTC().Truncate(time.Microsecond)
	if st.Size() == f.bytes.Int64 && mtime.Equal(f.mtime.Time) {
		return nil
	}
	const stamp = "2006-01-02 15:04:05.999999 UTC"
	return fmt.Errorf("read trace %s: changed since it was loaded (then %d bytes, modified %s; now %d bytes, modified %s), so the loaded events no longer match it: load it again with --replace (.load --replace in the REPL), into a new --db, or under another --label",
		f.path, f.bytes.Int64, f.mtime.Time.UTC().Format(stamp), st.Size(), mtime.Format(stamp))
}

// unchanged checks, before any work is done, that the file is there and still the one that was loaded.
func (f loadedFile) unchanged() error {
	st, err := os.Stat(f.path)
	if err != nil {
		return fmt.Errorf("read trace: %w", err) // the *PathError names the file
	}
	return f.check(st)
}

// rewriteTrace streams the trace file lf (which must not have changed since it was loaded) through rewrite into dst,
// gzip-compressed when gzipOut. rewrite reads the decompressed trace from r and writes the new one to w; rewriteTrace
// flushes w. rewrite's own error is returned as is (the caller knows what it was doing); file errors name the file.
func rewriteTrace(lf loadedFile, dst string, gzipOut bool, rewrite func(r io.Reader, w *bufio.Writer) error) error {
	src := lf.path
	in, err := os.Open(src)
	if err != nil {
		// the *PathError names src; a moved trace is the usual cause (r38 #3: the hint was on every
		// not-exist error, a missing output_dir's parent included)
		return fmt.Errorf("read trace (exports rewrite the trace file as loaded): %w", err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return fmt.Errorf("read trace: %w", err)
	} else if err := lf.check(st); err != nil {
		return err
	}
	// Never onto the trace itself: an output_dir that reaches its directory through a link (or a hard-linked
	// copy), with a name the export keeps (compat's counters trace of a file named without .json), replaced
	// the user's trace with its rewrite. A comparison of the paths' text let that through.
	if out, err := os.Stat(dst); err == nil && os.SameFile(out, st) {
		return fmt.Errorf("write %s: that is the trace being exported (%s); choose another output_dir", dst, src)
	}
	// Opened as the loader opens it (traceio), so the export reads the bytes that were loaded: gzip told by its
	// magic bytes, whatever the name, members read one after another, zero padding after the last one
	// accepted, a byte order mark dropped, and the file refused in the loader's words otherwise. It is
	// decompressed on another core while this one rewrites (and compresses).
	ra, err := traceio.OpenFile(in, nil)
	if err != nil {
		return fmt.Errorf("read trace %s: %w", src, err)
	}
	defer ra.Close() // closes in too (the deferred in.Close then has nothing left to do)
	pr := bufio.NewReaderSize(ra, 64<<10)
	var r io.Reader
	if arrayrepair.IsArray(peekAll(pr)) {
		r = arrayrepair.NewReader(pr)
	} else {
		r = pr
	}

	created, err := outdir.Make(filepath.Dir(dst))
	if err != nil {
		return fmt.Errorf("write %s: create output_dir: %w", dst, err)
	}
	done := false
	defer func() {
		if !done {
			outdir.RemoveEmpty(created) // a failed export leaves not even the output_dir it created
		}
	}()

	out, err := outdir.Create(dst)
	if err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	defer out.Abort()
	var sink io.Writer = out
	var zw *gzip.Writer
	if gzipOut {
		zw, err = gzip.NewWriterLevel(out, gzip.BestSpeed) // an exported trace is read once: speed over size
		if err != nil {
			return fmt.Errorf("write %s: %w", dst, err)
		}
		sink = zw
	}
	w := bufio.NewWriterSize(sink, 1<<20)
	if err := rewrite(r, w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return fmt.Errorf("write %s: %w", dst, err)
		}
	}
	if err := out.Commit(); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	done = true
	return nil
}

// expandHome reads a leading "~" of an output_dir as the user's home directory, as DuckDB's COPY does; a
// directory named "~" is what nobody means.
func expandHome(dir string) string {
	if dir != "~" && !strings.HasPrefix(dir, "~/") {
		return dir
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return dir
	}
	return filepath.Join(home, dir[1:])
}

// peekAll returns what r holds buffered (filling its buffer), without consuming it.
func peekAll(r *bufio.Reader) []byte {
	b, _ := r.Peek(r.Size())
	return b
}
