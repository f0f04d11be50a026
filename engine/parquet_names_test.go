package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestParquetTableNames: every table of the user's with a trace_id round-trips under its own name,
// whatever the name: one with ".." in it (the import took it for a path out of the export), one that
// cannot be a file name ("/": the whole export failed), one named _* like tracesql's derived tables
// (left out without a word), and names whose encodings could collide. Each is written once with an
// integer rank (a directory of partitions) and once without (one file).
func TestParquetTableNames(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("ü/", 150) // 450 bytes: no file name can hold it, encoded or not
	for _, c := range []struct {
		name   string
		tables []string
	}{
		{"dots inside", []string{"kernels..bak"}},
		{"dots alone", []string{"..", "."}},
		{"hidden", []string{".hidden"}},
		{"slash", []string{"runs/2024"}},
		{"slash and its encoding", []string{"runs/2024", "runs%2F2024"}},
		{"backslash", []string{`back\slash`}},
		{"hive", []string{"k=v"}},
		{"control", []string{"tab\there"}},
		{"underscore", []string{"_kernels_snapshot"}},
		{"underscore like tracesql's", []string{"_hta_frame_default_copy"}},
		{"like the rules directory", []string{"rules"}},
		{"too long", []string{long, long + "x"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := openTestDB(t)
			if _, err := src.Load(ctx, []string{handTrace(t, 0), handTrace(t, 3)}, LoadOptions{}); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, name := range c.tables {
				for _, suffix := range []string{"", " ranked"} {
					cols := "trace_id, 'v' || trace_id AS v"
					if suffix != "" {
						cols = "trace_id, rank, 'v' || trace_id AS v"
					}
					if _, err := src.SQL.Exec("CREATE TABLE " + sqlIdent(name+suffix) + " AS SELECT " + cols + " FROM traces"); err != nil {
						t.Fatalf("%q: %v", name+suffix, err)
					}
					names = append(names, name+suffix)
				}
			}
			dir := filepath.Join(t.TempDir(), "export")
			var notes []string
			tables, err := src.ExportParquet(ctx, dir, func(s string) { notes = append(notes, s) })
			if err != nil {
				t.Fatal(err)
			}
			if len(notes) != 0 {
				t.Errorf("notes %q, want none", notes)
			}
			// Every table's file or directory is an entry of the export's own, and no two share one.
			bases := map[string]string{}
			for _, tb := range tables {
				b := tb.base()
				if other, ok := bases[strings.ToLower(b)]; ok {
					t.Errorf("tables %q and %q share the file name %q", other, tb.Name, b)
				}
				bases[strings.ToLower(b)] = tb.Name
				if !filepath.IsLocal(b) || strings.ContainsAny(b, `/\=`) || strings.HasPrefix(b, ".") || len(b) > 200 {
					t.Errorf("table %q: file name %q", tb.Name, b)
				}
			}
			dst := openTestDB(t)
			if n, err := dst.ImportParquet(ctx, dir, nil); err != nil || n != 2 {
				t.Fatalf("import: %d, %v", n, err)
			}
			for _, name := range names {
				q := "SELECT * FROM " + sqlIdent(name) + " ORDER BY ALL"
				if a, b := queryText(t, src, q), queryText(t, dst, q); a != b || a == "" {
					t.Errorf("table %q after the round trip:\n%s\nwant:\n%s", name, b, a)
				}
			}
			// tracesql's own derived tables are still left to the import to rebuild.
			for _, tb := range tables {
				if derivedTable(tb.Name) {
					t.Errorf("derived table %s exported", tb.Name)
				}
			}
		})
	}
}

// TestParquetManifestFileNames: a manifest whose table names a file outside the export's top level is
// refused, naming the table.
func TestParquetManifestFileNames(t *testing.T) {
	ctx := context.Background()
	src := openTestDB(t)
	mustLoad(t, src, handTrace(t, 0))
	if _, err := src.SQL.Exec(`CREATE TABLE "a/b" AS SELECT trace_id FROM traces`); err != nil {
		t.Fatal(err)
	}
	clean := filepath.Join(t.TempDir(), "export")
	if _, err := src.ExportParquet(ctx, clean, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, want string }{
		{"../a%2Fb", `table a/b: file name "../a%2Fb" is not a name in the export`},
		{"x/a%2Fb", `table a/b: file name "x/a%2Fb" is not a name in the export`},
		{"..", `table a/b: file name ".." is not a name in the export`},
	} {
		t.Run(c.file, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "export")
			if err := os.CopyFS(dir, os.DirFS(clean)); err != nil {
				t.Fatal(err)
			}
			if err := editManifest(func(m *parquetManifest) {
				for i := range m.Tables {
					if m.Tables[i].Name == "a/b" {
						m.Tables[i].File = c.file
					}
				}
			})(dir); err != nil {
				t.Fatal(err)
			}
			_, err := openTestDB(t).ImportParquet(ctx, dir, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestParquetUnexportedTables: a table of the user's without a trace_id column is not exported, and
// the export says so, one line per table; tracesql's own tables without one (the rules, settings and
// install marker, written elsewhere or not at all) are no news. The user's other objects (views,
// macros, sequences, schemas and their tables) are listed on one line; tracesql's own views and macros
// are not.
func TestParquetUnexportedTables(t *testing.T) {
	ctx := context.Background()
	src := openTestDB(t)
	mustLoad(t, src, handTrace(t, 0))
	if _, err := src.SQL.Exec(`CREATE TABLE notes (note VARCHAR); INSERT INTO notes VALUES ('x');
		CREATE TABLE _scratch (x INTEGER); CREATE TABLE with_id AS SELECT trace_id FROM traces;
		CREATE VIEW my_view AS SELECT 1; CREATE MACRO my_macro(a) AS a + 1, (a, b) AS a + b;
		CREATE SEQUENCE my_seq; CREATE SCHEMA side; CREATE TABLE side.runs AS SELECT trace_id FROM traces`); err != nil {
		t.Fatal(err)
	}
	var notes []string
	tables, err := src.ExportParquet(ctx, filepath.Join(t.TempDir(), "export"), func(s string) { notes = append(notes, s) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"table _scratch not exported: it has no trace_id column (an export holds per-trace tables only)",
		"table notes not exported: it has no trace_id column (an export holds per-trace tables only)",
		"not exported (an export holds the main schema's tables only; re-create these after an import): " +
			"macro my_macro, schema side, sequence my_seq, table side.runs, view my_view",
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes:\n%q\nwant:\n%q", notes, want)
	}
	if !slices.ContainsFunc(tables, func(tb ParquetTable) bool { return tb.Name == "with_id" }) {
		t.Error("with_id not exported")
	}
}

// TestParquetTextRank: a user's table whose rank column is not an integer is one file, not hive
// partitions, which read the values 'NULL' and '__HIVE_DEFAULT_PARTITION__' back as NULL (and the
// second made the export fail).
func TestParquetTextRank(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ name, ranks string }{
		{"text NULL", `['NULL', 'a', NULL]`},
		{"text hive default", `['__HIVE_DEFAULT_PARTITION__', 'a']`},
		{"text path-like", `['..', 'a/b', 'x=y', '', ' ']`},
		{"real", `[0.1, 1e300, -0.0, NULL]`},
		{"date", `['2024-01-02'::DATE, NULL]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := openTestDB(t)
			mustLoad(t, src, handTrace(t, 0))
			if _, err := src.SQL.Exec(`CREATE TABLE tags AS SELECT 0 AS trace_id, unnest(` + c.ranks + `) AS rank`); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "export")
			tables, err := src.ExportParquet(ctx, dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tb := range tables {
				if tb.Name == "tags" && tb.Layout != "single" {
					t.Errorf("layout %q, want single", tb.Layout)
				}
			}
			dst := openTestDB(t)
			if _, err := dst.ImportParquet(ctx, dir, nil); err != nil {
				t.Fatal(err)
			}
			const q = `SELECT rank, rank IS NULL, typeof(rank) FROM tags ORDER BY ALL`
			if a, b := queryText(t, src, q), queryText(t, dst, q); a != b || a == "" {
				t.Errorf("after the round trip:\n%s\nwant:\n%s", b, a)
			}
		})
	}
}

// TestParquetSettingsConflict: an export's nccl_clock_override row whose (label, rank, comm_hash) the
// database already holds with another offset is not added beside it (one of the two silently won in
// nccl_clock_alignment): the database's stays, as its rules do, and a note names both.
func TestParquetSettingsConflict(t *testing.T) {
	ctx := context.Background()
	src := openTestDB(t)
	if _, err := src.Load(ctx, []string{handTrace(t, 0)}, LoadOptions{Label: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.SQL.Exec(`INSERT INTO nccl_clock_override VALUES ('x', 3, NULL, 1000), ('x', NULL, 'c1', 7)`); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "export")
	if _, err := src.ExportParquet(ctx, dir, nil); err != nil {
		t.Fatal(err)
	}
	const q = `SELECT label, rank, comm_hash, offset_ns FROM nccl_clock_override ORDER BY ALL`
	for _, c := range []struct {
		name  string
		have  string // rows of the database before the import
		want  string // rows after
		notes []string
		held  bool // the database holds rank 1 of trace set x already
	}{
		{"empty", "", "x 3 <nil> 1000\t\nx <nil> c1 7\t\n", nil, false},
		{"same rows", "('x', 3, NULL, 1000)", "x 3 <nil> 1000\t\nx <nil> c1 7\t\n", nil, false},
		{"other comm", "('x', 3, 'c2', 5000)", "x 3 c2 5000\t\nx 3 <nil> 1000\t\nx <nil> c1 7\t\n", nil, false},
		{"other label", "('y', 3, NULL, 5000)", "x 3 <nil> 1000\t\nx <nil> c1 7\t\ny 3 <nil> 5000\t\n", nil, false},
		{"conflict", "('x', 3, NULL, 5000), ('x', NULL, 'c1', 8)", "x 3 <nil> 5000\t\nx <nil> c1 8\t\n", []string{
			"nccl_clock_override: kept this database's row for label x, rank 3, comm_hash NULL (offset_ns 5000); the export's (offset_ns 1000) is not imported",
			"nccl_clock_override: kept this database's row for label x, rank NULL, comm_hash c1 (offset_ns 8); the export's (offset_ns 7) is not imported",
		}, false},
		// The export's rows apply to the rank it brings (0), not to the database's own rank 1 of x: the
		// row for every rank becomes one for rank 0, the one for rank 3 goes.
		{"label held", "", "x 0 c1 7\t\n", []string{
			"nccl_clock_override: 1 row(s) of the export for every rank of a trace set this database held already apply to the ranks the import brings, not to the database's own",
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := openTestDB(t)
			if c.held {
				if _, err := dst.Load(ctx, []string{handTrace(t, 1)}, LoadOptions{Label: "x"}); err != nil {
					t.Fatal(err)
				}
			}
			if c.have != "" {
				if _, err := dst.SQL.Exec(`INSERT INTO nccl_clock_override VALUES ` + c.have); err != nil {
					t.Fatal(err)
				}
			}
			var notes []string
			if _, err := dst.ImportParquet(ctx, dir, func(s string) { notes = append(notes, s) }); err != nil {
				t.Fatal(err)
			}
			if got := strings.ReplaceAll(queryText(t, dst, q), "\t", " "); got != strings.ReplaceAll(c.want, "\t", " ") {
				t.Errorf("rows after the import:\n%s\nwant:\n%s", got, c.want)
			}
			if !slices.Equal(notes, c.notes) {
				t.Errorf("notes:\n%q\nwant:\n%q", notes, c.notes)
			}
		})
	}
}
