package queries

// Report sections: the saved queries under reports/ that `tracesql report` draws as an HTML page.
// A report file holds one or more statements; the directive comments before a statement say how its
// result is drawn, so that a user adds a section by adding a file (--reports-dir) and the SQL shown
// under each chart is exactly what produced it.

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// Chart kinds a report section can ask for.
// step is a line whose value holds until the next point (queue lengths, counters).
var ChartKinds = []string{"stacked_bar", "bar", "pie", "histogram", "line", "step", "table"}

// Axis is one @x or @y directive: the result columns it names, their unit and the axis title.
type Axis struct {
	Cols  []string
	Unit  string // from "(unit)" after the columns; "" when none
	Label string // @xlabel / @ylabel; "" = made from Cols and Unit by the renderer
}

// ReportSection is one statement of a report file and how to draw its result.
type ReportSection struct {
	File    string // file name it comes from, e.g. 10_temporal_breakdown.sql
	Line    int    // 1-based line of the statement's first directive or SQL line
	Title   string // @title
	About   string // @about: a sentence under the title
	Chart   string // one of ChartKinds; default table
	X, Y    Axis
	Series  []string // @series: one colour per distinct value (stack part, bar group, line)
	Facet   []string // @facet: one chart per distinct value
	Range   []string // @range lo, hi: whisker of a bar chart
	Foreach string   // @foreach SQL: run the statement once per row, each column SET as a variable
	// HideEmpty (@empty hide): a query that returns no rows leaves the section out (a note that only
	// some traces need), instead of showing it empty.
	HideEmpty bool
	SQL       string // the statement, without its final ';'
	Source    string // directives and statement as written: what the report shows under the chart
}

// ReportFile is one report file's name and text.
type ReportFile struct {
	Name, Text string
	// Path: where a user's file was read (errors and warnings name it); "" for a built-in one.
	Path string
}

// ReportFiles returns the built-in report files, in report order: overview.sql (the summary printed
// after loading) first, then the others by file name.
func ReportFiles() []ReportFile {
	entries, err := fs.ReadDir(files, "reports")
	if err != nil {
		panic(err) // embedded at build time
	}
	var out []ReportFile
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := files.ReadFile("reports/" + e.Name())
		if err != nil {
			panic(err)
		}
		out = append(out, ReportFile{Name: e.Name(), Text: string(b)})
	}
	SortReportFiles(out)
	return out
}

// SortReportFiles orders report files as the report shows them: overview.sql first, then by name.
func SortReportFiles(f []ReportFile) {
	sort.SliceStable(f, func(i, j int) bool {
		oi, oj := f[i].Name == "overview.sql", f[j].Name == "overview.sql"
		if oi != oj {
			return oi
		}
		return f[i].Name < f[j].Name
	})
}

// ParseReport splits a report file into sections. Errors name the file and line.
//
// Directives are comment lines before a statement:
//
//	-- @title Temporal breakdown per rank
//	-- @about Text shown under the title (repeat the line to continue it).
//	-- @chart stacked_bar|bar|pie|histogram|line|step|table   (default table)
//	-- @x col[, col…] (unit)       category columns (bar, stacked_bar, pie) or numeric x (line, step;
//	                               histogram: bin_lo, bin_hi)
//	-- @y col[, col…] (unit)       value columns (several = stacked or grouped parts)
//	-- @xlabel text / @ylabel text axis titles (default: the columns and unit)
//	-- @series col[, col…]         one colour per distinct value
//	-- @facet col[, col…]          one chart per distinct value
//	-- @range lo_col, hi_col       bar: a whisker from lo to hi
//	-- @foreach SQL                run the statement once per row of SQL, with SET VARIABLE
//	                               <column> = <value> for each column (read with getvariable)
//	-- @empty hide                 no rows: leave the section out (default: shown, saying so)
//
// A directive's value ends at " --" (a note after it). A statement ends at a ';' outside quotes and
// comments, as in the CLI; a comment after it on its line belongs to no statement. Other comment
// lines are kept in the shown source only.
func ParseReport(file, src string) ([]ReportSection, error) {
	var out []ReportSection
	// (as -f and .read: a file saved with a byte-order mark was "statement has no -- @title", r71 #6)
	src = strings.TrimPrefix(src, "\ufeff")
	if !strings.HasSuffix(src, "\n") {
		src += "\n" // the end of the file ends a -- comment on its last line
	}
	lineAt := func(pos int) int { return 1 + strings.Count(src[:pos], "\n") }
	for pos := 0; ; {
		if pos > 0 {
			// The rest of the line after a ';': a comment there is about the statement it ends.
			if nl := strings.IndexByte(src[pos:], '\n'); nl >= 0 && OnlyComments(src[pos:pos+nl]) {
				pos += nl + 1
			}
		}
		semi, resume := StatementEnd(src, pos)
		chunk := src[pos:]
		if semi >= 0 {
			chunk = src[pos:semi]
		}
		lead, unclosed := LeadingComments(chunk)
		start := pos + len(chunk) - len(strings.TrimLeft(chunk, " \t\r\n"))
		if semi < 0 {
			if unclosed || resume < len(src) {
				return nil, fmt.Errorf("%s:%d: quote or comment not closed", file, lineAt(resume))
			}
			if lead < len(chunk) {
				return nil, fmt.Errorf("%s:%d: statement does not end with ';'", file, lineAt(start))
			}
			break
		}
		if lead == len(chunk) { // an empty statement
			pos = semi + 1
			continue
		}
		cur := ReportSection{File: file, Line: lineAt(start)}
		seen := map[string]bool{}
		for k, line := range strings.Split(chunk[:lead], "\n") {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "--")
			rest = strings.TrimSpace(rest)
			if !ok || !strings.HasPrefix(rest, "@") {
				continue
			}
			at := fmt.Sprintf("%s:%d", file, lineAt(pos)+k)
			key, val, _ := strings.Cut(rest[1:], " ")
			if k := strings.Index(val, " --"); k >= 0 {
				val = val[:k] // a note after the directive
			}
			if seen[key] && key != "about" {
				return nil, fmt.Errorf("%s: @%s given twice for one statement", at, key)
			}
			seen[key] = true
			if err := cur.set(key, strings.TrimSpace(val)); err != nil {
				return nil, fmt.Errorf("%s: %v", at, err)
			}
		}
		cur.SQL = strings.TrimSpace(chunk[lead:])
		cur.Source = strings.TrimSpace(src[pos : semi+1])
		if err := cur.check(); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, cur.Line, err)
		}
		out = append(out, cur)
		pos = semi + 1
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no statement", file)
	}
	return out, nil
}

// Report returns the sections of the built-in report queries/reports/NAME.sql.
func Report(name string) ([]ReportSection, error) {
	b, err := files.ReadFile("reports/" + name + ".sql")
	if err != nil {
		return nil, err
	}
	return ParseReport(name+".sql", string(b))
}

func (s *ReportSection) set(key, val string) error {
	need := func() error {
		if val == "" {
			return fmt.Errorf("@%s needs a value", key)
		}
		return nil
	}
	if err := need(); err != nil {
		return err
	}
	switch key {
	case "title":
		s.Title = val
	case "empty":
		if val != "hide" {
			return fmt.Errorf("@empty %s: unknown (want hide)", val)
		}
		s.HideEmpty = true
	case "about": // may span several lines
		s.About = strings.TrimSpace(s.About + " " + val)
	case "chart":
		for _, k := range ChartKinds {
			if val == k {
				s.Chart = val
				return nil
			}
		}
		return fmt.Errorf("@chart %s: unknown chart (want %s)", val, strings.Join(ChartKinds, ", "))
	case "x", "y", "series", "facet", "range":
		// a parenthesis left open would end up in a column's name, which the result then lacks
		if strings.Count(val, "(") != strings.Count(val, ")") {
			return fmt.Errorf("@%s %s: parentheses do not pair (a unit is written after the columns: b (µs))", key, val)
		}
		cols, unit := parseCols(val)
		switch key {
		case "x":
			s.X.Cols, s.X.Unit = cols, unit
		case "y":
			s.Y.Cols, s.Y.Unit = cols, unit
		case "series":
			s.Series = cols
		case "facet":
			s.Facet = cols
		case "range":
			s.Range = cols
			if len(s.Range) != 2 {
				return fmt.Errorf("@range wants two columns (lo, hi), got %d", len(s.Range))
			}
		}
	case "xlabel":
		s.X.Label = val
	case "ylabel":
		s.Y.Label = val
	case "foreach":
		s.Foreach = val
	default:
		return fmt.Errorf("unknown directive @%s (want title, about, chart, x, y, xlabel, ylabel, series, facet, range, foreach)", key)
	}
	return nil
}

// parseCols reads "a, b (unit)".
func parseCols(v string) (cols []string, unit string) {
	if i := strings.LastIndexByte(v, '('); i >= 0 && strings.HasSuffix(v, ")") {
		unit = strings.TrimSpace(v[i+1 : len(v)-1])
		v = v[:i]
	}
	for _, c := range strings.Split(v, ",") {
		if c = strings.TrimSpace(c); c != "" {
			cols = append(cols, c)
		}
	}
	return cols, unit
}

// check validates what a chart needs from its directives; the columns themselves are checked against
// the result when the section runs.
func (s *ReportSection) check() error {
	if s.Title == "" {
		return fmt.Errorf("statement has no -- @title")
	}
	if s.Chart == "" {
		s.Chart = "table"
	}
	if s.Chart == "table" {
		return nil
	}
	if len(s.X.Cols) == 0 || len(s.Y.Cols) == 0 {
		return fmt.Errorf("@chart %s needs -- @x and -- @y", s.Chart)
	}
	switch s.Chart {
	case "pie":
		if len(s.Y.Cols) != 1 || len(s.Series) > 0 {
			return fmt.Errorf("@chart pie takes one @y column and no @series")
		}
	case "histogram":
		if len(s.X.Cols) != 2 {
			return fmt.Errorf("@chart histogram wants @x bin_lo, bin_hi (two columns), got %d", len(s.X.Cols))
		}
	case "line", "step":
		if len(s.X.Cols) != 1 {
			return fmt.Errorf("@chart line wants one numeric @x column, got %d", len(s.X.Cols))
		}
	}
	if len(s.Series) > 0 && len(s.Y.Cols) > 1 {
		return fmt.Errorf("@series and several @y columns cannot be combined (use one or the other)")
	}
	if len(s.Range) > 0 && (s.Chart != "bar" || len(s.Y.Cols) != 1 || len(s.Series) > 0) {
		return fmt.Errorf("@range needs @chart bar with one @y column and no @series")
	}
	return nil
}
