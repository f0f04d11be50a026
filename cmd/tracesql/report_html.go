package main

// The HTML page of the report: one <section> per report section with its charts (inline SVG), its
// SQL and its data folded in <details>, and a contents list. No scripts, fonts or external files: the
// page opens offline and prints.

import (
	"context"
	"database/sql"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"tracesql/engine"
	"tracesql/queries"
)

// maxTableRows is how many rows a section's data table shows; the SQL gets the rest.
const maxTableRows = 200

type reportPage struct {
	Title    string
	Compat   bool // the session's hta_compat was on: the numbers are HTA 0.6.1's, quirks included
	Sections []reportSection
}

type reportSection struct {
	ID, Title, About, File, Chart string
	Path                          string // the file as read (warnings name it; the page shows only File, its name)
	Source                        string
	Err                           string   // the query or the chart failed: shown as "not available"
	Empty                         bool     // the query returned no rows
	Skipped                       []string // @foreach rows whose statement failed, each with its error
	Charts                        []reportChart
	Cols                          []string
	Rows                          [][]string
	RowNote                       string // what the data table leaves out
	RowCount                      string // the result's rows, for the fold's label: "1602 rows, 200 shown"
}

type reportChart struct {
	Facet  string
	SVG    template.HTML // built by report_svg.go, every text escaped there
	Legend []legendItem
	Note   string
}

// buildReport runs every section; a failing one records its error and the others go on.
func buildReport(ctx context.Context, db *sql.DB, title string, secs []queries.ReportSection) reportPage {
	if title == "" {
		title = "tracesql report"
	}
	page := reportPage{Title: title}
	db.QueryRowContext(ctx, "SELECT hta_compat()").Scan(&page.Compat) // false when it cannot say
	ids := map[string]int{}
	colours := colourBook{}
	for _, sec := range secs {
		rs := reportSection{Title: sec.Title, About: sec.About, File: filepath.Base(sec.File), Path: sec.File, Chart: sec.Chart, Source: sec.Source}
		rs.ID = anchorID(sec.Title, ids)
		res, skipped, err := runSection(ctx, db, sec)
		rs.Skipped = skipped
		switch {
		case err != nil:
			rs.Err = oneLine(engine.RuleError(ctx, db, err))
		case len(res.rows) == 0 && sec.HideEmpty && len(skipped) == 0:
			continue
		case len(res.rows) == 0:
			rs.Empty = true
		default:
			charts, err := drawCharts(sec, res, colours)
			if err != nil {
				rs.Err = oneLine(err)
				break
			}
			for _, c := range charts {
				rs.Charts = append(rs.Charts, reportChart{Facet: c.Facet, SVG: template.HTML(c.SVG), Legend: c.Legend, Note: c.Note})
			}
			rs.Cols = res.cols
			for i, r := range res.rows {
				if i == maxTableRows {
					break
				}
				cells := make([]string, len(r))
				for j := range r {
					cells[j] = res.cell(i, j)
				}
				rs.Rows = append(rs.Rows, cells)
			}
			rs.RowCount = fmt.Sprintf("%d rows", len(rs.Rows))
			if len(rs.Rows) == 1 {
				rs.RowCount = "1 row"
			}
			switch {
			case res.truncated:
				rs.RowCount = fmt.Sprintf("more than %d rows, %d shown", maxSectionRows, len(rs.Rows))
				rs.RowNote = fmt.Sprintf("The first %d of more than %d rows are shown; run the SQL for all.", len(rs.Rows), maxSectionRows)
			case len(res.rows) > maxTableRows:
				rs.RowCount = fmt.Sprintf("%d rows, %d shown", len(res.rows), maxTableRows)
				rs.RowNote = fmt.Sprintf("The first %d of %d rows are shown; run the SQL for all.", maxTableRows, len(res.rows))
			}
		}
		page.Sections = append(page.Sections, rs)
	}
	return page
}

var nonID = regexp.MustCompile(`[^a-z0-9]+`)

// anchorID makes a unique fragment id from a title.
func anchorID(title string, seen map[string]int) string {
	id := strings.Trim(nonID.ReplaceAllString(strings.ToLower(title), "-"), "-")
	if id == "" {
		id = "section"
	}
	seen[id]++
	if n := seen[id]; n > 1 {
		id = fmt.Sprintf("%s-%d", id, n)
	}
	return id
}

func renderReport(w io.Writer, page reportPage) error {
	return reportTemplate.Execute(w, page)
}

var reportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; margin: 0 auto; max-width: 820px; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 0 0 4px; }
h3 { font-size: 14px; margin: 12px 0 2px; color: #444; }
nav ol { columns: 2; padding-left: 20px; margin: 8px 0 16px; }
section { border-top: 1px solid #d0d7de; padding: 14px 0 6px; }
.about { color: #444; margin: 0 0 8px; }
.file { color: #777; font-size: 12px; }
svg.chart { display: block; max-width: 100%; height: auto; font: 11px system-ui, sans-serif; }
svg .grid { stroke: #e6e8eb; }
svg .domain, svg .tickmark, svg .whisker line { stroke: #555; }
svg .whisker line { stroke-width: 1.5; }
svg .tick { fill: #444; }
svg .axis-label { fill: #1f2328; font-size: 12px; font-weight: 600; }
svg polyline.mark-line { stroke-width: 1.6; }
svg path.mark, svg circle.mark { stroke: #fff; stroke-width: 1; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 4px 0 6px 78px; font-size: 12px; padding: 0; list-style: none; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 5px; vertical-align: -1px; }
.note { color: #6a4a00; font-size: 12px; }
.na { border: 1px solid #d4a72c; background: #fff8c5; padding: 8px 10px; border-radius: 4px; font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap; }
.empty { color: #666; font-style: italic; }
details { margin: 6px 0; }
summary { cursor: pointer; color: #0969da; font-size: 12px; }
pre { background: #f6f8fa; padding: 8px 10px; overflow-x: auto; font-size: 12px; border-radius: 4px; }
table { border-collapse: collapse; font-size: 12px; margin: 6px 0; }
th, td { border: 1px solid #d0d7de; padding: 2px 6px; text-align: left; vertical-align: top; max-width: 380px; overflow-wrap: break-word; }
th { background: #f6f8fa; }
.tbl { overflow-x: auto; }
/* A closed <details> shows nothing whatever its display: ::details-content opens it on paper (Chromium 131+). */
@media print { details::details-content { display: block; content-visibility: visible; } summary { color: #444; } section { break-inside: avoid; } }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Compat}}<p class="about"><strong>HTA compatibility mode</strong> (hta_compat = true): the numbers reproduce HTA 0.6.1, its quirks included (README, "Differences from HTA").</p>
{{end}}<nav><ol>{{range .Sections}}<li><a href="#{{.ID}}">{{.Title}}</a>{{if .Err}} (not available){{else if .Skipped}} (part){{end}}</li>{{end}}</ol></nav>
{{range .Sections}}<section id="{{.ID}}" data-chart="{{.Chart}}">
<h2>{{.Title}}</h2>
{{if .About}}<p class="about">{{.About}}</p>{{end}}
{{if .Err}}<div class="na">not available: {{.Err}}</div>
{{else}}{{range .Skipped}}<div class="na">left out, {{.}}</div>
{{end}}{{if .Empty}}<p class="empty">No rows: nothing of this kind in the loaded traces.</p>
{{else}}{{range .Charts}}{{if .Facet}}<h3>{{.Facet}}</h3>{{end}}
{{.SVG}}
{{if .Legend}}<ul class="legend">{{range .Legend}}<li><i style="background:{{.Colour}}"></i>{{.Label}}{{if .Value}}: {{.Value}}{{end}}</li>{{end}}</ul>{{end}}
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
{{end}}{{if eq .Chart "table"}}{{template "data" .}}{{else}}<details><summary>Data ({{.RowCount}})</summary>{{template "data" .}}</details>{{end}}
{{end}}{{end}}<details class="sql"><summary>SQL ({{.File}})</summary><pre><code>{{.Source}}</code></pre></details>
</section>
{{end}}
<p class="file">Generated by tracesql. Each chart's SQL runs as-is in tracesql (statements with @foreach run once per row of that query, after SET VARIABLE of its columns).</p>
</body>
</html>
{{define "data"}}<div class="tbl"><table><thead><tr>{{range .Cols}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table></div>{{if .RowNote}}<p class="note">{{.RowNote}}</p>{{end}}{{end}}
`))
