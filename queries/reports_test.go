package queries

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseReport(t *testing.T) {
	src := `-- A file comment.
-- @title Temporal breakdown
-- @about First line,
-- @about second line.
-- @chart stacked_bar
-- @x label, rank
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
`
	got, err := ParseReport("r.sql", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []ReportSection{
		{File: "r.sql", Line: 1, Title: "Temporal breakdown", About: "First line, second line.", Chart: "stacked_bar",
			X:      Axis{Cols: []string{"label", "rank"}, Label: "rank"},
			Y:      Axis{Cols: []string{"idle_us", "busy_us"}, Unit: "µs", Label: "GPU time"},
			SQL:    "SELECT label, rank, idle_us, busy_us\nFROM t",
			Source: strings.Join(strings.Split(src, "\n")[:12], "\n")},
		{File: "r.sql", Line: 14, Title: "Queue", Chart: "step", Foreach: "SELECT 1 AS report_rank",
			Facet: []string{"label", "rank"}, Series: []string{"stream"},
			X: Axis{Cols: []string{"t_ms"}, Unit: "ms"}, Y: Axis{Cols: []string{"q"}},
			SQL:    "SELECT * FROM q WHERE rank = getvariable('report_rank')",
			Source: strings.Join(strings.Split(src, "\n")[13:21], "\n")},
		{File: "r.sql", Line: 22, Title: "Plain", Chart: "table", SQL: "SELECT 1", Source: "-- @title Plain\nSELECT 1;"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
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
		{"-- @title\nSELECT 1;", "f.sql:1: @title needs a value"},
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
