package queries

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseReport(t *testing.T) {
	src := `-- A file comment.
-- @title Temporal breakdown
-- @about First line,
-- @about second line.
-- @chart stacked_bar   -- a note after a directive
-- @x label, rank --and another
-- @y idle_us, busy_us (µs)
-- @xlabel rank
-- @ylabel GPU time
SELECT label, rank, idle_us, busy_us
-- a comment inside the statement
FROM t;

-- @title Queue
-- @chart step
-- @foreach SELECT 1 AS report_rank
-- @facet label, rank
-- @series stream
-- @x t_ms (ms)
-- @y q
SELECT * FROM q WHERE rank = getvariable('report_rank');
-- @title Plain
SELECT 1;
-- @title Strings
SELECT 'x;
y' AS s; -- a comment after the last ';'
-- and a last comment line
`
	got, err := ParseReport("r.sql", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []ReportSection{
		{File: "r.sql", Line: 1, Title: "Temporal breakdown", About: "First line, second line.", Chart: "stacked_bar",
			X:      Axis{Cols: []string{"label", "rank"}, Label: "rank"},
			Y:      Axis{Cols: []string{"idle_us", "busy_us"}, Unit: "µs", Label: "GPU time"},
			SQL:    "SELECT label, rank, idle_us, busy_us\n-- a comment inside the statement\nFROM t",
			Source: strings.Join(strings.Split(src, "\n")[:12], "\n")},
		{File: "r.sql", Line: 14, Title: "Queue", Chart: "step", Foreach: "SELECT 1 AS report_rank",
			Facet: []string{"label", "rank"}, Series: []string{"stream"},
			X: Axis{Cols: []string{"t_ms"}, Unit: "ms"}, Y: Axis{Cols: []string{"q"}},
			SQL:    "SELECT * FROM q WHERE rank = getvariable('report_rank')",
			Source: strings.Join(strings.Split(src, "\n")[13:21], "\n")},
		{File: "r.sql", Line: 22, Title: "Plain", Chart: "table", SQL: "SELECT 1", Source: "-- @title Plain\nSELECT 1;"},
		{File: "r.sql", Line: 24, Title: "Strings", Chart: "table", SQL: "SELECT 'x;\ny' AS s", Source: "-- @title Strings\nSELECT 'x;\ny' AS s;"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
}

// TestParseReportLastLineComment: a -- comment on the last line of a file with no final newline is
// closed by the end of the file.
// TestParseReportBOM: a section file saved with a UTF-8 byte-order mark (Windows editors, PowerShell's Out-File)
// reads as without it (r71 #6: "statement has no -- @title" about a file whose line 1 had one).
func TestParseReportBOM(t *testing.T) {
	got, err := ParseReport("f.sql", "\ufeff-- @title A\r\n-- @chart bar\r\n-- @x k\r\n-- @y v\r\nSELECT 1 AS v, 'a' AS k;\r\n")
	if err != nil || len(got) != 1 || got[0].Title != "A" || got[0].Chart != "bar" {
		t.Errorf("%+v, %v", got, err)
	}
}

func TestParseReportLastLineComment(t *testing.T) {
	got, err := ParseReport("f.sql", "-- @title A\nSELECT 1; -- no newline at the end")
	if err != nil || len(got) != 1 || got[0].SQL != "SELECT 1" {
		t.Fatalf("got %+v, %v; want one section SELECT 1", got, err)
	}
}

func TestParseReportErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"SELECT 1;", "f.sql:1: statement has no -- @title"},
		{"-- @title A\n-- @chart donut\nSELECT 1;", "f.sql:2: @chart donut: unknown chart (want stacked_bar, bar, pie, histogram, line, step, table)"},
		{"-- @title A\n-- @colour red\nSELECT 1;", "f.sql:2: unknown directive @colour"},
		{"-- @title A\n-- @title B\nSELECT 1;", "f.sql:2: @title given twice for one statement"},
		{"-- @title A\n-- @chart bar\n-- @x a\nSELECT 1;", "f.sql:1: @chart bar needs -- @x and -- @y"},
		{"-- @title A\n-- @chart pie\n-- @x a\n-- @y b, c\nSELECT 1;", "f.sql:1: @chart pie takes one @y column and no @series"},
		{"-- @title A\n-- @chart histogram\n-- @x a\n-- @y b\nSELECT 1;", "f.sql:1: @chart histogram wants @x bin_lo, bin_hi (two columns), got 1"},
		{"-- @title A\n-- @chart bar\n-- @x a\n-- @y b\n-- @range lo\nSELECT 1;", "f.sql:5: @range wants two columns (lo, hi), got 1"},
		{"-- @title A\n-- @chart bar\n-- @x a\n-- @y b, c\n-- @series s\nSELECT 1;", "f.sql:1: @series and several @y columns cannot be combined"},
		{"-- @title A\nSELECT 1", "f.sql:1: statement does not end with ';'"},
		{"-- only a comment\n", "f.sql: no statement"},
		{"-- @title A\nSELECT 1 AS\n'a;\n", "f.sql:3: quote or comment not closed"},
		{"-- @title A\nSELECT 1;\n\n/* open; */ /* ", "f.sql:4: quote or comment not closed"},
		{"-- @title\nSELECT 1;", "f.sql:1: @title needs a value"},
		{"-- @title A\n-- @empty show\nSELECT 1;", "f.sql:2: @empty show: unknown (want hide)"},
		{"-- @title A\n-- @chart bar\n-- @x a\n-- @y b (µs\nSELECT 1;", "f.sql:4: @y b (µs: parentheses do not pair"},
		{"-- @title A\n-- @chart bar\n-- @x a)\n-- @y b\nSELECT 1;", "f.sql:3: @x a): parentheses do not pair"},
	} {
		_, err := ParseReport("f.sql", c.src)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

// TestBuiltinReports: every built-in report file parses, overview comes first, and every section of the
// HTML report (all but the overview's tables) draws a chart with axis titles or is a table.
func TestBuiltinReports(t *testing.T) {
	files := ReportFiles()
	if len(files) < 10 || files[0].Name != "overview.sql" {
		t.Fatalf("report files %v", files)
	}
	titles := map[string]bool{}
	for _, f := range files {
		secs, err := ParseReport(f.Name, f.Text)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secs {
			if titles[s.Title] {
				t.Errorf("%s: title %q used twice", f.Name, s.Title)
			}
			titles[s.Title] = true
			if s.Chart != "table" && s.Chart != "pie" && (s.X.Label == "" || s.Y.Label == "" || s.Y.Unit == "") {
				t.Errorf("%s: %q: chart without @xlabel, @ylabel or a @y unit", f.Name, s.Title)
			}
		}
	}
	// overview.sql's sections are the ones queries.Report reads for the terminal, with the same SQL.
	old, err := Report("overview")
	if err != nil {
		t.Fatal(err)
	}
	secs, _ := ParseReport(files[0].Name, files[0].Text)
	if len(old) != len(secs) {
		t.Fatalf("overview: %d sections, Report has %d", len(secs), len(old))
	}
	for i := range old {
		if old[i].Title != secs[i].Title || old[i].SQL != secs[i].SQL {
			t.Errorf("overview section %d differs: %+v vs %+v", i, old[i], secs[i])
		}
	}
}

func TestSortReportFiles(t *testing.T) {
	f := []ReportFile{{Name: "b.sql"}, {Name: "overview.sql"}, {Name: "10_a.sql"}}
	SortReportFiles(f)
	if f[0].Name != "overview.sql" || f[1].Name != "10_a.sql" || f[2].Name != "b.sql" {
		t.Errorf("order %v", f)
	}
}

// TestReadmeReportExample: the README's example of a report file, notes after directives included,
// parses as a report file.
func TestReadmeReportExample(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "```sql\n-- @title Kernel launch delay\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok {
		t.Fatal("README has no report example (```sql block starting with -- @title Kernel launch delay)")
	}
	secs, err := ParseReport("README.md", "-- @title Kernel launch delay\n"+block)
	if err != nil {
		t.Fatal(err)
	}
	if s := secs[0]; len(secs) != 1 || s.Chart != "histogram" || !reflect.DeepEqual(s.X.Cols, []string{"bin_lo_us", "bin_hi_us"}) ||
		s.X.Unit != "µs" || s.Facet[0] != "kernel_type" || !strings.HasPrefix(s.Foreach, "SELECT label AS report_label") || strings.Contains(s.Foreach, "--") {
		t.Errorf("README example parsed as %+v", secs)
	}
}
