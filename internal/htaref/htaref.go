// Package htaref gives tests access to HTA 0.6.1's reference outputs in ../shared/reference/hta: which trace
// directories exist, loading a directory's traces into a fresh database, reading HTA's CSV files and
// comparing numbers the way HTA rounded them. It is imported by tests only.
package htaref

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"tracesql/engine"
)

// Root returns the absolute paths of the reference directory and of the HTA traces, or skips the test
// when ../shared is not present (CI clones have it beside the repository).
func Root(t testing.TB) (ref, traces string) {
	repo := repoRoot()
	ref = filepath.Join(repo, "..", "shared", "reference", "hta")
	traces = filepath.Join(repo, "..", "shared", "traces", "hta")
	if _, err := os.Stat(ref); err != nil {
		t.Skip("../shared/reference/hta not present: skipping")
	}
	return ref, traces
}

// SharedTraces returns the absolute path of ../shared/traces/hta and whether it is present.
func SharedTraces() (string, bool) {
	p := filepath.Join(repoRoot(), "..", "shared", "traces", "hta")
	_, err := os.Stat(p)
	return p, err == nil
}

// RecordedTraces returns the absolute path of the traces recorded for this repository
// (testdata/traces/recorded; testdata/record/README.md).
func RecordedTraces() string {
	return filepath.Join(repoRoot(), "testdata", "traces", "recorded")
}

// TraceFile is one trace file of EveryTrace: Name is its path relative to the collection's root
// (../shared/traces) or "recorded/…" for the traces recorded for this repository.
type TraceFile struct{ Name, Path string }

// EveryTrace lists every *.json / *.json.gz file under ../shared/traces (when present) and under
// testdata/traces/recorded (always), sorted by name: the inputs of the tests that run every
// analysis on every trace.
func EveryTrace(t testing.TB) []TraceFile {
	var out []TraceFile
	walk := func(root, prefix string) {
		filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
			if err == nil && !de.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".json.gz")) {
				rel, _ := filepath.Rel(root, p)
				out = append(out, TraceFile{Name: prefix + rel, Path: p})
			}
			return nil
		})
	}
	walk(RecordedTraces(), "recorded/")
	if hta, ok := SharedTraces(); ok {
		walk(filepath.Dir(hta), "")
	} else {
		t.Log("../shared/traces not present: the recorded traces only")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Dir is one reference directory: the traces HTA loaded and where its outputs are.
type Dir struct {
	Name       string         // trace dir relative to HTA's tests/data, e.g. "critical_path/alexnet"
	Path       string         // absolute path of the reference directory
	Files      map[int]string // rank → absolute trace path
	MinTS      int64          // HTA's global min_ts, µs
	DeviceType string
}

// Ranks returns the ranks of d in ascending order.
func (d Dir) Ranks() []int {
	var r []int
	for k := range d.Files {
		r = append(r, k)
	}
	sort.Ints(r)
	return r
}

// Has reports whether the reference directory holds file name.
func (d Dir) Has(name string) bool {
	_, err := os.Stat(filepath.Join(d.Path, name))
	return err == nil
}

// File returns the absolute path of a reference output.
func (d Dir) File(name string) string { return filepath.Join(d.Path, name) }

// Dirs lists every reference directory with a load_info.json, sorted by name: those of
// ../shared/reference/hta when it is present, with those its snapshot lacks that were made here the
// same way (testdata/hta/workplace, README.md there), and always the ones recorded for this repository
// (testdata/hta/recorded, HTA run on testdata/traces/recorded; testdata/record/README.md).
func Dirs(t testing.TB) []Dir {
	repo := repoRoot()
	out := walkDirs(t, filepath.Join(repo, "testdata", "hta", "recorded"), filepath.Join(repo, "testdata", "traces"))
	ref := filepath.Join(repo, "..", "shared", "reference", "hta")
	if _, err := os.Stat(ref); err == nil {
		traces := filepath.Join(repo, "..", "shared", "traces", "hta")
		out = append(out, walkDirs(t, ref, traces)...)
		out = append(out, walkDirs(t, filepath.Join(repo, "testdata", "hta", "workplace"), traces)...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// walkDirs reads every load_info.json under ref; traces is the directory HTA's trace_dir names are
// relative to.
func walkDirs(t testing.TB, ref, traces string) []Dir {
	var out []Dir
	filepath.WalkDir(ref, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.Name() != "load_info.json" {
			return nil
		}
		var info struct {
			TraceDir   string            `json:"trace_dir"`
			TraceFiles map[string]string `json:"trace_files"`
			MinTS      float64           `json:"min_ts"`
			DeviceType string            `json:"device_type"`
		}
		b, _ := os.ReadFile(p)
		if json.Unmarshal(b, &info) != nil {
			t.Fatalf("%s: bad json", p)
		}
		d := Dir{Name: info.TraceDir, Path: filepath.Dir(p), Files: map[int]string{}, MinTS: int64(info.MinTS), DeviceType: info.DeviceType}
		for rank, rel := range info.TraceFiles {
			r, _ := strconv.Atoi(rank)
			// trace_files paths are relative to the parent of the trace dir.
			d.Files[r] = filepath.Join(traces, filepath.Dir(info.TraceDir), rel)
		}
		out = append(out, d)
		return nil
	})
	return out
}

// Open loads every trace of d into a fresh in-memory database, with its ranks as HTA numbered them.
func Open(t testing.TB, d Dir) *engine.DB {
	t.Helper()
	db, err := engine.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var paths []string
	for _, r := range d.Ranks() {
		paths = append(paths, d.Files[r])
	}
	// Ranks by position first (never a duplicate), then HTA's numbering by path.
	if _, err := db.Load(context.Background(), paths, engine.LoadOptions{RankFrom: engine.RankIndex}); err != nil {
		t.Fatalf("load %s: %v", d.Name, err)
	}
	for _, r := range d.Ranks() {
		abs, _ := filepath.Abs(d.Files[r])
		for _, q := range []string{
			`UPDATE traces SET rank = ? WHERE path = ?`,
			`UPDATE events SET rank = ? WHERE trace_id = (SELECT trace_id FROM traces WHERE path = ?)`,
		} {
			if _, err := db.SQL.Exec(q, r+1000000, abs); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, q := range []string{`UPDATE traces SET rank = rank - 1000000`, `UPDATE events SET rank = rank - 1000000`} {
		if _, err := db.SQL.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// Compat switches db into HTA-compatibility mode for the rest of the test. The variable is per
// connection, so the pool is limited to one connection.
func Compat(t testing.TB, db *engine.DB) {
	t.Helper()
	db.SQL.SetMaxOpenConns(1)
	if _, err := db.SQL.Exec(`SET VARIABLE hta_compat = true`); err != nil {
		t.Fatal(err)
	}
}

// CSV is a parsed reference file: the header and the rows as strings.
type CSV struct {
	Header []string
	Rows   [][]string
}

// Col returns the index of column name, failing the test when absent.
func (c CSV) Col(t testing.TB, name string) int {
	t.Helper()
	for i, h := range c.Header {
		if h == name {
			return i
		}
	}
	t.Fatalf("column %q not in %v", name, c.Header)
	return -1
}

// ReadCSV reads a reference CSV (gzip when the name ends in .gz).
func ReadCSV(t testing.TB, path string) CSV {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	all, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(all) == 0 {
		return CSV{}
	}
	return CSV{Header: all[0], Rows: all[1:]}
}

// Float parses a CSV cell as HTA wrote it: "" and "nan" are NaN.
func Float(s string) float64 {
	if s == "" || strings.EqualFold(s, "nan") {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// Close reports whether got equals want within a relative tolerance of 1e-9 (absolute 1e-9 near 0);
// NaN equals NaN.
func Close(got, want float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	diff := math.Abs(got - want)
	return diff <= 1e-9 || diff <= 1e-9*math.Max(math.Abs(got), math.Abs(want))
}
