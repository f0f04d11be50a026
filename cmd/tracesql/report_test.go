package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"image/png"
	"io"
	"io/fs"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"tracesql/engine"
	"tracesql/queries"
)

// rpMark is one drawn mark of a chart, read back from the SVG.
type rpMark struct {
	kind        string // rect, path, circle, polyline
	cat, series string
	fill        string // the mark's colour (a line's stroke)
	value       float64
	x, y, w, h  float64
	d           string       // path data (pie slices)
	points      [][2]float64 // polyline
	values      []float64    // polyline data-values
}

type rpTick struct{ value, pos float64 }

// rpChart is one parsed <svg> of the report.
type rpChart struct {
	kind           string
	xLabel, yLabel string
	yTicks         []rpTick
	marks          []rpMark
}

// rpSection is one <section> of the report.
type rpSection struct {
	title, chart, na, sql string
	leftOut               []string // @foreach rows left out, with their errors
	empty                 bool
	facets                []string
	charts                []rpChart
}

var (
	rpSectionRE = regexp.MustCompile(`(?s)<section id="[^"]*" data-chart="([^"]*)">(.*?)</section>`)
	rpTitleRE   = regexp.MustCompile(`(?s)<h2>(.*?)</h2>`)
	rpNARE      = regexp.MustCompile(`(?s)<div class="na">not available: (.*?)</div>`)
	rpLeftOutRE = regexp.MustCompile(`(?s)<div class="na">left out, (.*?)</div>`)
	rpCellRE    = regexp.MustCompile(`<td>(.*?)</td>`)
	rpSQLRE     = regexp.MustCompile(`(?s)<details class="sql"><summary>[^<]*</summary><pre><code>(.*?)</code></pre>`)
	rpSVGRE     = regexp.MustCompile(`(?s)<svg .*?</svg>`)
	rpFacetRE   = regexp.MustCompile(`<h3>(.*?)</h3>`)
)

// rpParse splits a report into its sections and parses every chart's SVG as XML.
func rpParse(t *testing.T, page string) map[string]rpSection {
	t.Helper()
	out := map[string]rpSection{}
	for _, m := range rpSectionRE.FindAllStringSubmatch(page, -1) {
		body := m[2]
		var s rpSection
		s.chart = m[1]
		tm := rpTitleRE.FindStringSubmatch(body)
		if tm == nil {
			t.Fatalf("section without <h2>: %.200s", body)
		}
		s.title = html.UnescapeString(tm[1])
		if na := rpNARE.FindStringSubmatch(body); na != nil {
			s.na = html.UnescapeString(na[1])
		}
		for _, lo := range rpLeftOutRE.FindAllStringSubmatch(body, -1) {
			s.leftOut = append(s.leftOut, html.UnescapeString(lo[1]))
		}
		if sq := rpSQLRE.FindStringSubmatch(body); sq != nil {
			s.sql = html.UnescapeString(sq[1])
		}
		s.empty = strings.Contains(body, `<p class="empty">`)
		for _, f := range rpFacetRE.FindAllStringSubmatch(body, -1) {
			s.facets = append(s.facets, html.UnescapeString(f[1]))
		}
		for _, svg := range rpSVGRE.FindAllString(body, -1) {
			s.charts = append(s.charts, rpParseSVG(t, s.title, svg))
		}
		if _, dup := out[s.title]; dup {
			t.Errorf("section %q twice", s.title)
		}
		out[s.title] = s
	}
	return out
}

func rpAttr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func rpFloat(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// rpTickValue reads an axis label back: "2.5k" → 2500.
func rpTickValue(s string) float64 {
	mul := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		mul, s = 1e3, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mul, s = 1e6, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mul, s = 1e9, strings.TrimSuffix(s, "G")
	}
	return rpFloat(s) * mul
}

func rpParseSVG(t *testing.T, title, svg string) rpChart {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var c rpChart
	var stack []xml.StartElement
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("%s: SVG is not well-formed XML: %v", title, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			stack = append(stack, e)
			text.Reset()
			if e.Name.Local == "svg" {
				c.kind = rpAttr(e, "data-chart")
			}
			class := rpAttr(e, "class")
			if class == "mark" || class == "mark-line" {
				m := rpMark{kind: e.Name.Local, cat: rpAttr(e, "data-cat"), series: rpAttr(e, "data-series"),
					value: rpFloat(rpAttr(e, "data-value")), x: rpFloat(rpAttr(e, "x")), y: rpFloat(rpAttr(e, "y")),
					w: rpFloat(rpAttr(e, "width")), h: rpFloat(rpAttr(e, "height")), d: rpAttr(e, "d"),
					fill: rpAttr(e, "fill") + rpAttr(e, "stroke")}
				if e.Name.Local == "polyline" {
					for _, p := range strings.Fields(rpAttr(e, "points")) {
						xy := strings.Split(p, ",")
						m.points = append(m.points, [2]float64{rpFloat(xy[0]), rpFloat(xy[1])})
					}
					for _, v := range strings.Fields(rpAttr(e, "data-values")) {
						m.values = append(m.values, rpFloat(v))
					}
				}
				c.marks = append(c.marks, m)
			}
		case xml.CharData:
			text.Write(e)
		case xml.EndElement:
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if e.Name.Local != "text" {
				continue
			}
			switch rpAttr(top, "class") {
			case "axis-label axis-label-x":
				c.xLabel = text.String()
			case "axis-label axis-label-y":
				c.yLabel = text.String()
			case "tick":
				if len(stack) > 0 && rpAttr(stack[len(stack)-1], "class") == "axis axis-y" {
					c.yTicks = append(c.yTicks, rpTick{rpTickValue(text.String()), rpFloat(rpAttr(top, "y"))})
				}
			}
		}
	}
	return c
}

// pxPerUnit is the value axis's scale read from its first and last tick labels and positions.
func (c rpChart) pxPerUnit(t *testing.T) (perUnit, zero float64) {
	t.Helper()
	if len(c.yTicks) < 2 {
		t.Fatalf("%s chart: %d y ticks", c.kind, len(c.yTicks))
	}
	a, b := c.yTicks[0], c.yTicks[len(c.yTicks)-1]
	perUnit = (a.pos - b.pos) / (b.value - a.value)
	return perUnit, a.pos + a.value*perUnit
}

// rpExpect is what an independent query says a chart must show: value by (category, series).
type rpExpect map[[2]string]float64

func rpQuery(t *testing.T, db *sql.DB, q string, args ...any) [][]any {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		v := make([]any, len(cols))
		p := make([]any, len(cols))
		for i := range v {
			p[i] = &v[i]
		}
		if err := rows.Scan(p...); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func rpF(t *testing.T, v any) float64 {
	f, ok := toFloat(v)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	return f
}

// checkBars checks that the rect marks of the charts are exactly the expected (category, series)
// values and that each bar's length is its value on the chart's own axis (±0.05 px, the SVG's
// rounding). Stacked parts are checked by their height alone.
func checkBars(t *testing.T, sec rpSection, want rpExpect) {
	t.Helper()
	got := rpExpect{}
	for _, c := range sec.charts {
		per, _ := c.pxPerUnit(t)
		for _, m := range c.marks {
			if m.kind != "rect" {
				continue
			}
			k := [2]string{html.UnescapeString(m.cat), html.UnescapeString(m.series)}
			got[k] = m.value
			w, ok := want[k]
			if !ok {
				t.Errorf("%s: unexpected bar %v = %v", sec.title, k, m.value)
				continue
			}
			if math.Abs(w-m.value) > 1e-6*math.Max(1, math.Abs(w)) {
				t.Errorf("%s: bar %v has data-value %v, query says %v", sec.title, k, m.value, w)
			}
			if math.Abs(m.h-math.Abs(w)*per) > 0.05 {
				t.Errorf("%s: bar %v is %.2f px long, %v on the axis is %.2f px", sec.title, k, m.h, w, math.Abs(w)*per)
			}
		}
	}
	for k, w := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("%s: no bar for %v = %v", sec.title, k, w)
		}
	}
}

func openReportDB(t *testing.T, paths ...string) *engine.DB {
	t.Helper()
	db, err := engine.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Load(context.Background(), paths, engine.LoadOptions{Label: "trace"}); err != nil {
		t.Fatal(err)
	}
	return db
}

// renderTestReport writes the built-in report of db and parses it.
func renderTestReport(t *testing.T, db *sql.DB) (map[string]rpSection, string, string) {
	t.Helper()
	secs, err := reportSections("")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	var warn bytes.Buffer
	if err := writeReportFile(context.Background(), db, out, "", secs, &warn); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	parsed := rpParse(t, page)
	// Every section is there, with its SQL as written, and every chart has axis titles with units.
	for _, s := range secs {
		p, ok := parsed[s.Title]
		if !ok && !s.HideEmpty {
			t.Errorf("section %q missing", s.Title)
		}
		if !ok {
			continue
		}
		if p.sql != s.Source {
			t.Errorf("%s: shown SQL differs from the section's source:\n%s", s.Title, p.sql)
		}
		if p.na != "" || p.empty {
			continue
		}
		if s.Chart != "table" && len(p.charts) == 0 {
			t.Errorf("%s: no chart", s.Title)
		}
		for _, c := range p.charts {
			if c.kind != s.Chart || c.xLabel == "" || (c.kind != "pie" && c.yLabel == "") {
				t.Errorf("%s: chart %q, axis titles x %q y %q", s.Title, c.kind, c.xLabel, c.yLabel)
			}
			if u := s.Y.Unit; u != "" && !strings.Contains(c.yLabel+c.xLabel, "("+u+")") {
				t.Errorf("%s: axis titles %q / %q do not give the unit %s", s.Title, c.xLabel, c.yLabel, u)
			}
			if s.X.Unit != "" && !strings.Contains(c.xLabel, "("+s.X.Unit+")") {
				t.Errorf("%s: x axis title %q does not give the unit %s", s.Title, c.xLabel, s.X.Unit)
			}
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http://") && !strings.Contains(page, `xmlns="http://www.w3.org/2000/svg"`) ||
		regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(page) {
		t.Errorf("report is not self-contained (script or external reference)")
	}
	if strings.Contains(page, "ZgotmplZ") {
		t.Errorf("html/template rejected a value (ZgotmplZ in the page)")
	}
	return parsed, page, warn.String()
}

// TestReportTwoRanks renders the report of two DLRM ranks and checks each chart against queries written
// here (not the sections' own SQL).
func TestReportTwoRanks(t *testing.T) {
	db := openReportDB(t, dlrmDir+"/worker0_step_12.1694128201545.pt.trace.json.gz", dlrmDir+"/worker1_step_12.1694128201556.pt.trace.json.gz")
	secs, page, warn := renderTestReport(t, db.SQL)
	// Two of world_size 8: the report says which ranks it lacks, not only the load's warning on stderr.
	if _, ok := secs["Ranks missing"]; !ok || !strings.Contains(page, "<td>2, 3, 4, 5, 6, 7</td>") {
		t.Errorf("no 'Ranks missing' section naming ranks 2-7")
	}
	for _, s := range secs {
		if s.na != "" && !strings.Contains(s.title, "CTDA") {
			t.Errorf("%s: not available: %s", s.title, s.na)
		}
	}
	if n := strings.Count(warn, "\n"); n != strings.Count(warn, "tracesql: warning: report section") {
		t.Errorf("warnings are not one line each:\n%s", warn)
	}

	want := rpExpect{}
	for _, r := range rpQuery(t, db.SQL, `SELECT rank, idle_time_us, compute_time_us, non_compute_time_us FROM temporal_breakdown`) {
		for i, col := range []string{"idle_time_us", "compute_time_us", "non_compute_time_us"} {
			want[[2]string{fmt.Sprint(r[0]), col}] = rpF(t, r[i+1])
		}
	}
	checkBars(t, secs["Temporal breakdown per rank"], want)

	want = rpExpect{}
	for _, r := range rpQuery(t, db.SQL, `SELECT rank, stream, idle_category, idle_time_us FROM idle_time_breakdown()`) {
		want[[2]string{fmt.Sprintf("%v · %v", r[0], r[1]), fmt.Sprint(r[2])}] += rpF(t, r[3])
	}
	checkBars(t, secs["Idle time per stream"], want)

	want = rpExpect{}
	for _, r := range rpQuery(t, db.SQL, `SELECT rank, comp_comm_overlap_pct FROM comm_comp_overlap WHERE comp_comm_overlap_pct IS NOT NULL`) {
		want[[2]string{fmt.Sprint(r[0]), "comp_comm_overlap_pct"}] = rpF(t, r[1])
	}
	if len(want) != 2 {
		t.Fatalf("overlap rows %v", want)
	}
	checkBars(t, secs["Communication–computation overlap per rank"], want)

	// Top kernels: one chart per kernel type; the bar is the mean, over the ranks that ran it, of the
	// kernel's total on the rank, for the five largest of each type, counted from the GPU events
	// (kernel_breakdown's top-k per rank left out the ranks where a kernel ranked lower).
	tk := secs["Top kernels per type"]
	perType := map[string]int{}
	want = rpExpect{}
	for _, r := range rpQuery(t, db.SQL, `SELECT k.kernel_type, g.name, avg(g.s) AS a
		FROM (SELECT rank, name, sum(dur) / 1e3 AS s FROM gpu_events WHERE cat_class IN ('kernel', 'memcpy', 'memset') GROUP BY ALL) g
		JOIN kernel_types k USING (name) GROUP BY ALL ORDER BY 1, a DESC, 2`) {
		if typ := fmt.Sprint(r[0]); perType[typ] < 5 {
			perType[typ]++
			want[[2]string{fmt.Sprint(r[1]), "mean_rank_us"}] = rpF(t, r[2])
		}
	}
	if len(tk.facets) != len(perType) {
		t.Errorf("top kernels: facets %v, kernel types %v", tk.facets, perType)
	}
	checkBars(t, tk, want)

	// Kernel types: each slice's angle is its share of the total.
	pie := secs["Kernel types"]
	rows := rpQuery(t, db.SQL, `SELECT kernel_type, sum_us, sum_us / sum(sum_us) OVER () FROM kernel_type_breakdown()`)
	if len(pie.charts) != 1 || len(pie.charts[0].marks) != len(rows) {
		t.Fatalf("kernel types: %d charts, want one with %d slices", len(pie.charts), len(rows))
	}
	for _, r := range rows {
		found := false
		for _, m := range pie.charts[0].marks {
			if html.UnescapeString(m.cat) != r[0] {
				continue
			}
			found = true
			if got, w := sliceAngle(t, m), 360*rpF(t, r[2]); math.Abs(got-w) > 0.05 {
				t.Errorf("kernel types: slice %v spans %.3f°, its share is %.3f°", r[0], got, w)
			}
		}
		if !found {
			t.Errorf("kernel types: no slice for %v", r[0])
		}
	}

	// Launch delays: every launch of each rank is counted once, bins have one width.
	ld := secs["Kernel launch delay"]
	counts := map[string]float64{}
	for _, r := range rpQuery(t, db.SQL, `SELECT rank, count(*) FROM kernel_launch_stats() GROUP BY rank`) {
		counts["rank "+fmt.Sprint(r[0])] = rpF(t, r[1])
	}
	checkHistogram(t, ld, counts)
	counts = map[string]float64{}
	for _, r := range rpQuery(t, db.SQL, `SELECT rank, count(*) FROM kernel_launch_stats() WHERE short_kernel GROUP BY rank`) {
		counts["rank "+fmt.Sprint(r[0])] = rpF(t, r[1])
	}
	checkHistogram(t, secs["Short kernels"], counts)

	// Queue length: one step chart per rank, one line per stream; the highest point is the longest queue.
	ql := secs["Queue length over time"]
	maxq := rpQuery(t, db.SQL, `SELECT rank, stream, max(queue_length) FROM queue_length GROUP BY ALL ORDER BY ALL`)
	if len(ql.charts) != 2 || len(ql.facets) != 2 || ql.facets[0] != "rank 0" {
		t.Fatalf("queue length: %d charts, facets %v", len(ql.charts), ql.facets)
	}
	for _, r := range maxq {
		c := ql.charts[int(rpF(t, r[0]))]
		per, zero := c.pxPerUnit(t)
		found := false
		for _, m := range c.marks {
			if m.series != "stream "+fmt.Sprint(r[1]) {
				continue
			}
			found = true
			top := 0.0
			for i, v := range m.values {
				top = math.Max(top, v)
				// Data points are every other vertex of a step line.
				if p := m.points[2*i]; math.Abs(p[1]-(zero-v*per)) > 0.05 {
					t.Errorf("queue length rank %v stream %v: point %d at y %.2f, %v on the axis is %.2f", r[0], r[1], i, p[1], v, zero-v*per)
				}
			}
			if top != rpF(t, r[2]) {
				t.Errorf("queue length rank %v stream %v: highest point %v, longest queue %v", r[0], r[1], top, r[2])
			}
		}
		if !found {
			t.Errorf("queue length: no line for rank %v stream %v", r[0], r[1])
		}
	}

	// Critical path (HTA): per rank, each bound_by bucket's time.
	want = rpExpect{}
	for rank := 0; rank < 2; rank++ {
		for _, r := range rpQuery(t, db.SQL, `SELECT bound_by, duration_us, cpcr FROM critical_path_summary(rank := ?) WHERE bound_by <> ''`, rank) {
			want[[2]string{fmt.Sprintf("%d (CPCR %.2f)", rank, rpF(t, r[2])), fmt.Sprint(r[0])}] = rpF(t, r[1])
		}
	}
	checkBars(t, secs["Critical path by cause (HTA algorithm)"], want)
	// CTDA (issue 5): the same, when it is available; else a visible not-available box.
	if s := secs["Critical path by cause (CTDA algorithm)"]; s.na == "" {
		want = rpExpect{}
		for rank := 0; rank < 2; rank++ {
			for _, r := range rpQuery(t, db.SQL, `SELECT bound_by, duration_us, cpcr FROM critical_path_summary(rank := ?, algorithm := 'ctda') WHERE bound_by <> ''`, rank) {
				want[[2]string{fmt.Sprintf("%d (CPCR %.2f)", rank, rpF(t, r[2])), fmt.Sprint(r[0])}] = rpF(t, r[1])
			}
		}
		checkBars(t, s, want)
	}
}

// sliceAngle reads a pie slice's angle (degrees) from its path "M cx cy L x1 y1 A r r 0 large 1 x2 y2 Z".
func sliceAngle(t *testing.T, m rpMark) float64 {
	t.Helper()
	if m.kind == "circle" {
		return 360
	}
	f := strings.Fields(strings.NewReplacer("M", " ", "L", " ", "A", " ", "Z", " ").Replace(m.d))
	if len(f) != 11 {
		t.Fatalf("slice path %q", m.d)
	}
	v := make([]float64, len(f))
	for i := range f {
		v[i] = rpFloat(f[i])
	}
	a1 := math.Atan2(v[3]-v[1], v[2]-v[0])
	a2 := math.Atan2(v[10]-v[1], v[9]-v[0])
	d := math.Mod(a2-a1+4*math.Pi, 2*math.Pi) * 180 / math.Pi
	if v[7] == 1 && d < 180 { // large-arc flag
		d += 360
	}
	if d < 1e-9 && m.value > 0 {
		d = 360
	}
	return d
}

// checkHistogram: per series the bins add up to want, each bin's height is its count on the axis,
// and all bins are one width.
func checkHistogram(t *testing.T, sec rpSection, want map[string]float64) {
	t.Helper()
	if len(sec.charts) != 1 {
		t.Fatalf("%s: %d charts", sec.title, len(sec.charts))
	}
	c := sec.charts[0]
	per, _ := c.pxPerUnit(t)
	got := map[string]float64{}
	width := -1.0
	for _, m := range c.marks {
		got[m.series] += m.value
		if math.Abs(m.h-m.value*per) > 0.05 {
			t.Errorf("%s: bin %s %s is %.2f px high, %v on the axis is %.2f px", sec.title, m.cat, m.series, m.h, m.value, m.value*per)
		}
		if width < 0 {
			width = m.w
		} else if math.Abs(m.w-width) > 0.02 {
			t.Errorf("%s: bin %s is %.2f px wide, others %.2f", sec.title, m.cat, m.w, width)
		}
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: series %s counts %v in its bins, the query %v", sec.title, k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: series %v, want %v", sec.title, got, want)
	}
}

// TestReportOneRank: the alexnet trace (one rank, no ProfilerStep): sections that need more than it has
// say so, the rest draw; labels drop the constant rank.
func TestReportOneRank(t *testing.T) {
	db := openReportDB(t, alexnetDir)
	secs, _, _ := renderTestReport(t, db.SQL)
	if _, ok := secs["Ranks missing"]; ok {
		t.Error("a 'Ranks missing' section for a lone rank")
	}
	want := rpExpect{}
	for _, r := range rpQuery(t, db.SQL, `SELECT idle_time_us, compute_time_us, non_compute_time_us FROM temporal_breakdown`) {
		for i, col := range []string{"idle_time_us", "compute_time_us", "non_compute_time_us"} {
			want[[2]string{"0", col}] = rpF(t, r[i])
		}
	}
	checkBars(t, secs["Temporal breakdown per rank"], want)
	want = rpExpect{}
	for _, r := range rpQuery(t, db.SQL, `SELECT stream, idle_category, idle_time_us FROM idle_time_breakdown()`) {
		want[[2]string{fmt.Sprint(r[0]), fmt.Sprint(r[1])}] += rpF(t, r[2])
	}
	checkBars(t, secs["Idle time per stream"], want)
	// No ProfilerStep: the critical path covers the whole trace.
	want = rpExpect{}
	for _, r := range rpQuery(t, db.SQL, `SELECT bound_by, duration_us, cpcr FROM critical_path_summary(rank := 0, annotation := '') WHERE bound_by <> ''`) {
		want[[2]string{fmt.Sprintf("0 (CPCR %.2f)", rpF(t, r[2])), fmt.Sprint(r[0])}] = rpF(t, r[1])
	}
	checkBars(t, secs["Critical path by cause (HTA algorithm)"], want)
	// One cause, one colour, in both critical-path charts (each chart coloured its causes in its own order).
	fills := map[string]string{}
	for _, title := range []string{"Critical path by cause (HTA algorithm)", "Critical path by cause (CTDA algorithm)"} {
		for _, m := range secs[title].charts[0].marks {
			if f, ok := fills[m.series]; ok && f != m.fill {
				t.Errorf("%s: %s is %s, earlier %s", title, m.series, m.fill, f)
			}
			fills[m.series] = m.fill
		}
	}
	if len(fills) < 2 {
		t.Errorf("critical path causes %v: want at least 2", fills)
	}
	// alexnet has no communication: the overlap is NULL, so no bar.
	if s := secs["Communication–computation overlap per rank"]; len(s.charts) != 1 || len(s.charts[0].marks) != 0 {
		t.Errorf("overlap without communication: %+v", s)
	}
}

func TestColourBook(t *testing.T) {
	book := colourBook{}
	for _, c := range []struct {
		names []string
		want  []int // palette positions
	}{
		{[]string{"a", "b", "c"}, []int{0, 1, 2}},
		{[]string{"c", "a"}, []int{2, 0}}, // booked colours kept whatever the order
		{[]string{"d", "b"}, []int{0, 1}}, // d takes the first colour b leaves free
		{[]string{"d", "a"}, []int{0, 1}}, // a's colour is d's (d comes first): a takes the first free one
		{[]string{"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10"}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0}},
	} {
		got := book.pick(c.names)
		for i, w := range c.want {
			if got[i] != palette[w] {
				t.Errorf("pick(%v) = %v, want palette positions %v", c.names, got, c.want)
				break
			}
		}
	}
	if got := colourBook(nil).pick([]string{"a", "b"}); got[0] != palette[0] || got[1] != palette[1] {
		t.Errorf("nil book: %v", got)
	}
}

// TestReportUserSections: --reports-dir adds sections and replaces a built-in one by name; a failing
// section and one naming a missing column become not-available boxes with one warning each, the CLI
// still exits 0, and user text is escaped.
func TestReportUserSections(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"90_bad.sql": "-- @title Broken\nSELECT * FROM no_such_table;\n",
		// a direct call of a Go table function with NULL would abort the process, the report lost
		"90_internal.sql": "-- @title Internal\nSELECT * FROM _longest_path(NULL);\n",
		"91_nocol.sql":    "-- @title No column\n-- @chart bar\n-- @x rank\n-- @y missing_us (µs)\nSELECT rank FROM traces;\n",
		"92_escape.sql": "-- @title Escaped <script>alert(1)</script> & co\n-- @chart bar\n-- @x k\n-- @y v (a<b)\n" +
			"SELECT * FROM (VALUES ('<b>\"x\" & ''y''</b>', 2.5), ('</svg><script>', 5), ('nul' || chr(0) || chr(1) || 'byte', 1)) t(k, v);\n",
		"10_temporal_breakdown.sql": "-- @title My temporal\n-- @chart bar\n-- @x rank\n-- @y idle_time_us (µs)\nSELECT rank, idle_time_us FROM temporal_breakdown;\n",
	}
	for n, s := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "r.html")
	stdout, stderr, code := runCLI(t, "", "report", alexnetDir, "-o", out, "--reports-dir", dir)
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		// DuckDB's hint is kept on the same line (which table it suggests depends on the catalog).
		`(?m)^tracesql: warning: report section "Broken" \(\S+/90_bad\.sql\): Catalog Error: Table with name no_such_table does not exist! Did you mean "\w+"\?$`,
		`(?m)^tracesql: warning: report section "No column" \(\S+/91_nocol\.sql\): column missing_us is not in the result \(columns: rank\)$`,
		`(?m)^tracesql: warning: report section "Internal" \(\S+/90_internal\.sql\): _longest_path is the internal function behind a public macro .*$`,
	} {
		if len(regexp.MustCompile(want).FindAllString(stderr, -1)) != 1 {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "tracesql: warning: report section ") && l != "tracesql: report written to "+out {
			t.Errorf("unexpected stderr line %q", l)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	secs := rpParse(t, page)
	if secs["Broken"].na == "" || secs["No column"].na == "" || secs["Internal"].na == "" {
		t.Errorf("failed sections not marked: %+v %+v", secs["Broken"], secs["No column"])
	}
	if _, ok := secs["Temporal breakdown per rank"]; ok {
		t.Errorf("built-in 10_temporal_breakdown.sql not replaced")
	}
	if _, ok := secs["My temporal"]; !ok {
		t.Errorf("replacement section missing")
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "<b>") {
		t.Errorf("user text not escaped")
	}
	esc := secs[`Escaped <script>alert(1)</script> & co`]
	// The SVG parsed as XML (rpParse): a NUL or another C0 control in a name is U+FFFD there.
	if len(esc.charts) != 1 || len(esc.charts[0].marks) != 3 {
		t.Fatalf("escape section: %+v", esc)
	}
	if c := html.UnescapeString(esc.charts[0].marks[0].cat); c != `<b>"x" & 'y'</b>` {
		t.Errorf("category read back as %q", c)
	}
	if esc.charts[0].yLabel != "v (a<b)" {
		t.Errorf("y label %q", esc.charts[0].yLabel)
	}

	// A bad directive is a usage error naming file and line; nothing is written.
	os.WriteFile(filepath.Join(dir, "93_typo.sql"), []byte("-- @title T\n-- @chart donut\nSELECT 1;\n"), 0o644)
	out2 := filepath.Join(t.TempDir(), "r.html")
	_, stderr, code = runCLI(t, "", "report", alexnetDir, "-o", out2, "--reports-dir", dir)
	if code != 1 || !strings.Contains(stderr, filepath.Join(dir, "93_typo.sql")+":2: @chart donut: unknown chart") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Errorf("report written despite the bad section file")
	}
	_, stderr, code = runCLI(t, "", "report", "--reports-dir", filepath.Join(dir, "90_bad.sql"), "-o", out2)
	if code != 1 || !strings.Contains(stderr, "not a directory") {
		t.Errorf("reports-dir file: exit %d, stderr %q", code, stderr)
	}
	// -o in a directory that is not there fails before anything loads (here, a trace that is not there
	// either: review r78 #5, the report failed only after loading and running every section).
	_, stderr, code = runCLI(t, "", "report", filepath.Join(dir, "no-trace.json"), "-o", "/nonexistent-dir/r.html")
	if code != 1 || stderr != "tracesql: report: write /nonexistent-dir/r.html: cannot create a file in /nonexistent-dir: no such file or directory\n" {
		t.Errorf("-o in a missing directory: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "", "report", "--reports-dir", filepath.Join(dir, "none"), "-o", out2)
	if code != 1 || !strings.Contains(stderr, "--reports-dir: stat "+filepath.Join(dir, "none")+": no such file or directory") {
		t.Errorf("missing reports-dir: exit %d, stderr %q", code, stderr)
	}
}

// TestReportDotCommand: .report FILE in a session writes the report of what is loaded.
func TestReportDotCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	_, stderr, code := runCLI(t, ".report '"+out+"'\n.report\n.report /nonexistent-dir/r.html\n", alexnetDir)
	if code != 1 || !strings.Contains(stderr, "report written to "+out) || !strings.Contains(stderr, "usage: .report FILE") ||
		!strings.Contains(stderr, "tracesql: stdin:3: .report: write /nonexistent-dir/r.html: cannot create a file in /nonexistent-dir: no such file or directory\n") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(b), "<h2>Temporal breakdown per rank</h2>") {
		t.Errorf("report file: %v, %d bytes", err, len(b))
	}
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
		want   string
	}{
		{0, 18749, 5, "0 5k 10k 15k 20k"},
		{0, 26, 5, "0 10 20 30"},
		{0, 19.9, 8, "0 2.5 5.0 7.5 10.0 12.5 15.0 17.5 20.0"},
		{0, 0, 5, "0 0.2 0.4 0.6 0.8 1.0"},
		{-3, 7, 5, "-4 -2 0 2 4 6 8"},
		{0, 43294205, 5, "0 10M 20M 30M 40M 50M"},
		{0, 0.0042, 5, "0 0.001 0.002 0.003 0.004 0.005"},
		{0, 2e29, 4, "0 5e+28 1e+29 1.5e+29 2e+29"},             // (a HUGEINT sum: 50000000000000004512668450816G)
		{-1e308, 1.7976931348623157e308, 5, "-1e+308 1.8e+308"}, // rounded out, past float64: its own ends
	} {
		ticks, step := niceTicks(c.lo, c.hi, c.n)
		if got := strings.Join(tickLabels(ticks, step), " "); got != c.want {
			t.Errorf("[%v, %v]: %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}

// TestReportScreenshot opens a report in headless Chromium (when installed) and checks that the charts
// were drawn: the page renders without network access and the first series colour fills many pixels.
func TestReportScreenshot(t *testing.T) {
	var browser string
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium: screenshot test skipped")
	}
	db := openReportDB(t, alexnetDir)
	secs, err := reportSections("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := writeReportFile(context.Background(), db.SQL, page, "", secs, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=860,2400", "--screenshot="+shot, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() != 860 || b.Dy() != 2400 {
		t.Errorf("screenshot %v", b)
	}
	blue := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r>>8, 0x4e) && near(g>>8, 0x79) && near(bl>>8, 0xa7) {
				blue++
			}
		}
	}
	if blue < 5000 {
		t.Errorf("only %d pixels of the first series colour: the charts did not render", blue)
	}
}

func near(a uint32, b int) bool { return math.Abs(float64(int(a)-b)) <= 3 }

// TestReportSectionsParse: the built-in sections resolve, so a typo in one is a test failure, not a
// runtime warning.
func TestReportSectionsParse(t *testing.T) {
	secs, err := reportSections("")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range queries.ReportFiles() {
		s, _ := queries.ParseReport(f.Name, f.Text)
		n += len(s)
	}
	if len(secs) != n || secs[0].Title != "Traces" {
		t.Errorf("%d sections (want %d), first %q", len(secs), n, secs[0].Title)
	}
}

// TestKeyLabels: bar labels keep the key columns that tell rows apart.
func TestKeyLabels(t *testing.T) {
	cols := []string{"label", "rank", "device", "stream"}
	for _, c := range []struct {
		name string
		rows [][]any
		want []string
	}{
		{"one GPU per rank: the device goes",
			[][]any{{"a", 0, 0, 7}, {"a", 0, 0, 20}, {"a", 1, 1, 7}},
			[]string{"0 · 7", "0 · 20", "1 · 7"}},
		{"two GPUs in a rank: the device stays",
			[][]any{{"a", 0, 0, 7}, {"a", 0, 1, 7}, {"a", 1, 2, 8}},
			[]string{"0 · 0 · 7", "0 · 1 · 7", "1 · 2 · 8"}},
		{"one stream per rank: the last column stays",
			[][]any{{"a", 0, 0, 7}, {"a", 1, 1, 8}},
			[]string{"0 · 7", "1 · 8"}},
		{"everything constant: the last column",
			[][]any{{"a", 0, 0, 7}, {"a", 0, 0, 7}},
			[]string{"7", "7"}},
		{"two labels",
			[][]any{{"a", 0, 0, 7}, {"b", 0, 0, 7}},
			[]string{"a", "b"}},
	} {
		tbl := &resultTable{cols: cols, rows: c.rows}
		rows := make([]int, len(c.rows))
		for i := range rows {
			rows[i] = i
		}
		if got := keyLabels(tbl, []int{0, 1, 2, 3}, rows, false); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestReportReadOnly: report --readonly writes the report of a database opened for reading only, and
// refuses a trace to load or a missing --db as bad usage.
func TestReportReadOnly(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	writeDB(t, db, alexnetDir)
	html := filepath.Join(dir, "r.html")
	if _, errOut, code := runCLI(t, "", "report", "--db", db, "--readonly", "-o", html); code != 0 {
		t.Fatalf("report --readonly: %d %s", code, errOut)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "Temporal breakdown per rank") {
		t.Errorf("report --readonly wrote %d bytes (%v)", len(b), err)
	}
	for _, args := range [][]string{
		{"report", "--readonly", "-o", html},
		{"report", "--db", db, "--readonly", alexnetDir, "-o", html},
	} {
		if _, errOut, code := runCLI(t, "", args...); code != 2 || errOut != "tracesql: report: --readonly needs --db FILE and no traces to load\n" {
			t.Errorf("%q: %d %q", args, code, errOut)
		}
	}
}

// TestOutputRefusesOwnFiles: report -o, .output and .once refuse to replace the open database file or a loaded
// trace (either would be destroyed), and leave it byte for byte as it was.
func TestOutputRefusesOwnFiles(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	trace := filepath.Join(dir, "trace.json")
	if err := os.WriteFile(trace, []byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	writeDB(t, db, trace)
	for _, c := range []struct {
		name   string
		args   []string
		victim string
		msg    string
	}{
		{"report -o the --db file", []string{"report", "--db", db, "-o", db}, db, "tracesql: report: write " + db + ": that is the database file; choose another file name\n"},
		{"report -o a trace it loads", []string{"report", trace, "-o", trace}, trace, "tracesql: report: write " + trace + ": that is the loaded trace of rank 0 (label trace); choose another file name\n"},
		{".output to the --db file", []string{"--db", db, "-c", ".output " + db}, db, "tracesql: .output: write " + db + ": that is the database file; choose another file name\n"},
		{".once to a loaded trace", []string{"--db", db, "-c", ".once " + trace}, trace, "tracesql: .once: write " + trace + ": that is the loaded trace of rank 0 (label trace); choose another file name\n"},
		// the write-ahead log exists only between checkpoints: refused before it does (review r69; a result written
		// there was replayed as the log after a crash, and the committed work was lost)
		{".once to the --db file's log, not there yet", []string{"--db", db, "-c", ".once " + db + ".wal"}, db + ".wal", "tracesql: .once: write " + db + ".wal: that is the database's write-ahead log; choose another file name\n"},
		{".output to the log through another spelling", []string{"--db", db, "-c", ".output " + dir + "/./t.duckdb.wal"}, db + ".wal", "tracesql: .output: write " + dir + "/./t.duckdb.wal: that is the database's write-ahead log; choose another file name\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, err := os.ReadFile(c.victim)
			if errors.Is(err, fs.ErrNotExist) {
				before = nil // must stay absent
			} else if err != nil {
				t.Fatal(err)
			}
			_, errOut, code := runCLI(t, "", c.args...)
			if code != 1 || errOut != c.msg {
				t.Errorf("exit %d, stderr %q; want 1, %q", code, errOut, c.msg)
			}
			after, err := os.ReadFile(c.victim)
			if !bytes.Equal(before, after) || before == nil && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s changed (%d → %d bytes, %v)", c.victim, len(before), len(after), err)
			}
		})
	}
}

// TestReportLeavesSessionAlone: a report reads. A user's section that creates a table does not leave it in the --db
// file, and a variable the user set under a name @foreach uses keeps its value (it was reset).
func TestReportLeavesSessionAlone(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.duckdb")
	writeDB(t, db, alexnetDir)
	secs := filepath.Join(dir, "sections")
	os.Mkdir(secs, 0o755)
	os.WriteFile(filepath.Join(secs, "90_mine.sql"), []byte("-- @title Mine\nCREATE TABLE report_made AS SELECT 42 AS x;\n"), 0o644)
	// a @foreach section that fails: its transaction is aborted, and the variables must still come back
	os.WriteFile(filepath.Join(secs, "91_fails.sql"), []byte("-- @title Fails\n-- @foreach SELECT rank AS report_rank FROM traces\nSELECT error('bad rank') AS x;\n"), 0o644)
	if _, errOut, code := runCLI(t, "", "report", "--db", db, "--reports-dir", secs, "-o", filepath.Join(dir, "r.html")); code != 0 {
		t.Fatalf("report: %d %s", code, errOut)
	}
	out, errOut, code := runCLI(t, "SET VARIABLE report_rank = [1, 2];\n.report "+filepath.Join(dir, "r2.html")+" --reports-dir "+secs+"\n"+
		"SELECT getvariable('report_rank') AS v, (SELECT count(*) FROM duckdb_tables() WHERE table_name = 'report_made') AS made,\n"+
		"  (SELECT count(*) FROM duckdb_variables() WHERE name <> 'report_rank') AS others;\n", "--db", db, "--format", "csv")
	if code != 0 || out != "v,made,others\n\"[1, 2]\",0,0\n" || !strings.Contains(errOut, `report section "Fails"`) {
		t.Errorf("after the reports: exit %d, %q (stderr %s); want the variable kept, no table made, no other variable", code, out, errOut)
	}
	// A report in compat mode says so at the top; one in the default mode does not.
	for _, compat := range []bool{true, false} {
		page := filepath.Join(dir, fmt.Sprintf("compat_%t.html", compat))
		if _, errOut, code := runCLI(t, fmt.Sprintf("SET VARIABLE hta_compat = %t;\n.report %s\n", compat, page), "--db", db); code != 0 {
			t.Fatalf("compat %t: %d %s", compat, code, errOut)
		}
		b, _ := os.ReadFile(page)
		if got := strings.Contains(string(b), "<strong>HTA compatibility mode</strong>"); got != compat {
			t.Errorf("hta_compat = %t: compat note shown: %t", compat, got)
		}
	}
}

// TestReportForeachRowFails: a @foreach row whose statement fails is left out and named, on the page and
// on stderr; the other rows are drawn. Every row failing makes the section "not available".
func TestReportForeachRowFails(t *testing.T) {
	dir := t.TempDir()
	secs := filepath.Join(dir, "sections")
	os.Mkdir(secs, 0o755)
	os.WriteFile(filepath.Join(secs, "90_part.sql"), []byte(`-- @title Part
-- @foreach SELECT k FROM (VALUES (1), (2), (3)) v(k)
SELECT getvariable('k') AS k, CASE WHEN getvariable('k') = 2 THEN error('two is bad') ELSE getvariable('k') * 10 END AS v;
-- @title None
-- @foreach SELECT k FROM (VALUES (1), (2)) v(k)
SELECT error('all bad ' || getvariable('k')) AS v;
`), 0o644)
	page := filepath.Join(dir, "r.html")
	_, errOut, code := runCLI(t, "", "report", alexnetDir, "--reports-dir", secs, "-o", page)
	if code != 0 || !strings.Contains(errOut, `tracesql: warning: report section "Part" (`+filepath.Join(secs, "90_part.sql")+`) leaves out k=2: Invalid Input Error: two is bad`) {
		t.Fatalf("report: exit %d, stderr %s", code, errOut)
	}
	b, _ := os.ReadFile(page)
	got := rpParse(t, string(b))
	part := got["Part"]
	var cells []string
	for _, m := range rpCellRE.FindAllStringSubmatch(string(b[strings.Index(string(b), "<h2>Part</h2>"):strings.Index(string(b), "<h2>None</h2>")]), -1) {
		cells = append(cells, m[1])
	}
	if part.na != "" || len(part.leftOut) != 1 || !strings.HasPrefix(part.leftOut[0], "k=2: Invalid Input Error: two is bad") ||
		strings.Join(cells, " ") != "1 10 3 30" {
		t.Errorf("section Part: na %q, left out %q, cells %q; want rows k=1 and k=3, k=2 left out", part.na, part.leftOut, cells)
	}
	if none := got["None"]; !strings.HasPrefix(none.na, "k=1: Invalid Input Error: all bad 1") || none.leftOut != nil {
		t.Errorf("section None: na %q, left out %q; want not available (first row's error)", none.na, none.leftOut)
	}
}

// TestReportForeachTypes: a @foreach variable keeps its column's type and value whatever the type (HUGEINT,
// INTERVAL, UUID and BLOB made the section "not available: unsupported value type *big.Int"; a DATE,
// TIME or TIMESTAMPTZ became another TIMESTAMP); a list is refused with a line saying what to do.
func TestReportForeachTypes(t *testing.T) {
	dir := t.TempDir()
	secs := filepath.Join(dir, "sections")
	os.Mkdir(secs, 0o755)
	values := []string{"170141183460469231731687303715884105727::HUGEINT", "INTERVAL '1 day 02:03:04.5'",
		"'c0ffee00-0000-4000-8000-000000000001'::UUID", "'a\\x00b'::BLOB", "DATE '2024-02-29'", "TIME '23:59:59.25'",
		"TIMESTAMPTZ '2024-05-06 07:08:09.123456+02'", "-0.5::DECIMAL(4,2)", "'it''s'"}
	var sql strings.Builder
	for i, v := range values {
		fmt.Fprintf(&sql, "-- @title T%d\n-- @foreach SELECT %s AS v\nSELECT getvariable('v') = (%s) AND typeof(getvariable('v')) = typeof(%s) AS same;\n", i, v, v, v)
	}
	sql.WriteString("-- @title List\n-- @foreach SELECT [1, 2] AS v\nSELECT 1 AS x;\n")
	os.WriteFile(filepath.Join(secs, "90_types.sql"), []byte(sql.String()), 0o644)
	page := filepath.Join(dir, "r.html")
	if _, errOut, code := runCLI(t, "", "report", alexnetDir, "--reports-dir", secs, "-o", page); code != 0 {
		t.Fatalf("report: exit %d, stderr %s", code, errOut)
	}
	b, _ := os.ReadFile(page)
	got := rpParse(t, string(b))
	for i, v := range values {
		title := fmt.Sprintf("T%d", i)
		start := strings.Index(string(b), "<h2>"+title+"</h2>")
		if start < 0 || got[title].na != "" {
			t.Errorf("%s: not available: %q", v, got[title].na)
			continue
		}
		if m := rpCellRE.FindStringSubmatch(string(b[start:])); m == nil || m[1] != "true" {
			t.Errorf("%s: the variable differs from the value (cell %q)", v, m)
		}
	}
	if na := got["List"].na; !strings.Contains(na, "INTEGER[] value cannot be a variable here") {
		t.Errorf("list: not available %q, want the refusal", na)
	}
}

// TestReportTwoLabels: report takes --label per trace path, as the main command does (the last --label
// used to win for every path, so two sets with the same ranks clashed), and its diff section compares the
// two sets over the rank they share, else each set's lowest rank (sets without a common rank made the section
// "not available": trace_diff's own default needs a common rank).
func TestReportTwoLabels(t *testing.T) {
	straggler := "../../testdata/hta/ct_straggler_rank%d.json"
	for _, tc := range []struct {
		name                  string
		control, test         string
		controlRank, testRank int
		xTitle                string // the temporal breakdown's: the key columns its bars are labelled with
	}{
		{"same rank", alexnetDir, backwardJSON, 0, 0, "label"},
		{"no rank in common", fmt.Sprintf(straggler, 0), fmt.Sprintf(straggler, 1), 0, 1, "label · rank"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db, pagePath := filepath.Join(dir, "t.duckdb"), filepath.Join(dir, "r.html")
			if _, errOut, code := runCLI(t, "", "report", "--db", db, "--label", "control", tc.control, "--label", "test", tc.test, "-o", pagePath); code != 0 {
				t.Fatalf("report with two labels: %d %s", code, errOut)
			}
			out, errOut, code := runCLI(t, "", "--db", db, "--format", "csv", "-c", "SELECT label, count(*) AS files FROM traces GROUP BY label ORDER BY label")
			if code != 0 || out != "label,files\ncontrol,1\ntest,1\n" {
				t.Errorf("trace sets loaded by the report: %d %q %s", code, out, errOut)
			}
			// The diff section compares them: its rows are trace_diff's biggest changes, control first.
			page, err := os.ReadFile(pagePath)
			if err != nil {
				t.Fatal(err)
			}
			secs := rpParse(t, string(page))
			// Both sets' labels are shown, and the axis title names what is (it said "rank" under "control · 3").
			if tb := secs["Temporal breakdown per rank"]; len(tb.charts) != 1 || tb.charts[0].xLabel != tc.xTitle {
				t.Errorf("temporal breakdown: %d charts, x title %q, want %q", len(tb.charts), tb.charts[0].xLabel, tc.xTitle)
			}
			sec, ok := secs["Trace diff"]
			if !ok || sec.empty || sec.na != "" {
				t.Fatalf("Trace diff section: present %t, empty %t, not available %q", ok, sec.empty, sec.na)
			}
			want, errOut, code := runCLI(t, "", "--db", db, "--format", "csv", "-c", fmt.Sprintf(`SELECT name FROM trace_diff('control', 'test', control_rank := %d, test_rank := %d)
				WHERE diff_duration_us <> 0 OR diff_counts <> 0 ORDER BY abs(diff_duration_us) DESC, name LIMIT 1`, tc.controlRank, tc.testRank))
			top := strings.TrimSpace(strings.TrimPrefix(want, "name\n"))
			row := fmt.Sprintf("<tr><td>%s</td>", html.EscapeString(top))
			if pair := fmt.Sprintf("<td>control rank %d → test rank %d</td></tr>", tc.controlRank, tc.testRank); !strings.Contains(string(page), pair) {
				t.Errorf("the diff table does not name the sets compared, %s", pair)
			}
			if code != 0 || top == "" || !strings.Contains(string(page), row) {
				t.Errorf("the diff table does not start with %s (%d %s)", row, code, errOut)
			}
		})
	}
}

// TestReportToPipe: a report written to something that is not a regular file (a FIFO here; /dev/stdout,
// /dev/null) is written into it: renaming the finished file onto it, as for a regular file, replaced it
// with a regular file (running as root, /dev/null itself).
func TestReportToPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "report.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	_, errOut, code := runCLI(t, "", "report", alexnetDir, "-o", fifo)
	if code != 0 {
		t.Fatalf("report -o FIFO: exit %d, stderr %s", code, errOut)
	}
	var b []byte
	select {
	case b = <-got:
	case <-time.After(20 * time.Second):
		// (the reader is still waiting for a writer: the report went elsewhere)
	}
	if !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) || !bytes.Contains(b, []byte("</html>")) {
		t.Errorf("the FIFO's reader got %d bytes, not a whole report", len(b))
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("after the report, %s is %v (%v), not the FIFO", fifo, fi.Mode(), err)
	}
}

// TestReportThroughLink: -o naming a symbolic link writes the report to the link's file and leaves the link
// (it was replaced by a regular file), and a file written again keeps its permissions (it became 0644).
func TestReportThroughLink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "reports", "latest.html"), filepath.Join(dir, "r.html")
	os.Mkdir(filepath.Dir(target), 0o755)
	os.WriteFile(target, []byte("old"), 0o600)
	os.Chmod(target, 0o640)
	os.Symlink(target, link)
	if _, errOut, code := runCLI(t, "", "report", alexnetDir, "-o", link); code != 0 {
		t.Fatalf("report -o link: exit %d, stderr %s", code, errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("-o's link is now %v (%v)", fi.Mode(), err)
	}
	b, _ := os.ReadFile(target)
	if fi, _ := os.Stat(target); !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) || fi.Mode().Perm() != 0o640 {
		t.Errorf("the link's file: %d bytes, mode %v; want the report, 0640", len(b), fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(filepath.Dir(target)); len(entries) != 1 {
		t.Errorf("the link's directory holds %d files (a temporary file left?)", len(entries))
	}
}

// TestReportCellsAndInfinities: a chart with an infinite value drew no axis and panicked (index out of
// range; the CLI's "internal error", no file): such a value is not drawn, the rest is. Table cells read as
// DuckDB prints them: a BIGINT past 2^53 exactly (it went through float64), lists, structs, timestamps,
// intervals, blobs, NaN and decimals not as Go's fmt, doubles as the table output mode prints them.
func TestReportCellsAndInfinities(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"91_inf.sql": "-- @title Inf bars\n-- @chart bar\n-- @x k\n-- @y v\n" +
			"SELECT 'a' AS k, 'inf'::DOUBLE AS v UNION ALL SELECT 'b', 2.0 UNION ALL SELECT 'c', 'nan'::DOUBLE ORDER BY k;\n",
		"92_line.sql": "-- @title Inf line\n-- @chart line\n-- @x x\n-- @y v\n" +
			"SELECT 1.0 AS x, '-inf'::DOUBLE AS v UNION ALL SELECT 2.0, -1.7e308 UNION ALL SELECT 3.0, 1.7e308 ORDER BY x;\n",
		// x all equal and y near float64's ends: the scale overflowed, and the line had ±Inf points
		"94_step.sql": "-- @title Huge step\n-- @chart step\n-- @x t\n-- @y v\n" +
			"SELECT * FROM (VALUES (1.0, 1e308), (1.0, -1e308), (1.0, 1.7976931348623157e308)) t(t, v);\n",
		// @foreach rows past the cap: the iterations stop there, and the note says "more than"
		"95_foreach.sql": "-- @title Many\n-- @foreach SELECT * FROM range(30) t(report_i)\n" +
			"SELECT getvariable('report_i') AS i, r FROM range(1000) t(r);\n",
		// series named alike keep their colour from chart to chart (they took their position's colour)
		"97_colour1.sql": "-- @title Colours 1\n-- @chart stacked_bar\n-- @x k\n-- @y v\n-- @series s\n" +
			"SELECT * FROM (VALUES ('x', 'a', 1.0), ('x', 'b', 2.0)) t(k, s, v);\n",
		"98_colour2.sql": "-- @title Colours 2\n-- @chart stacked_bar\n-- @x k\n-- @y v\n-- @series s\n" +
			"SELECT * FROM (VALUES ('x', 'b', 1.0), ('x', 'c', 2.0)) t(k, s, v);\n",
		// a line whose x is text: what is not drawn is named
		"96_textx.sql": "-- @title Text x\n-- @chart line\n-- @x k\n-- @y v\n" +
			"SELECT * FROM (VALUES ('a', 1.0), ('b', 2.0), (NULL, 3.0)) t(k, v);\n",
		// a line of one point drew nothing (an invisible one-point polyline)
		"99_onepoint.sql": "-- @title One point\n-- @chart line\n-- @x x\n-- @y v\nSELECT 5.0 AS x, 2.5 AS v;\n",
		"93_cells.sql": "-- @title Cells\nSELECT 1712195495789354574::BIGINT AS ts, [1, 2] AS l, {'a': 1} AS s, " +
			"TIMESTAMP '2024-01-02 03:04:05.123456' AS t, INTERVAL 90 MINUTE AS i, '\\xAA'::BLOB AS b, 'nan'::DOUBLE AS n, " +
			"1.5::DECIMAL(10,3) AS d, 18446744073709551615::UBIGINT AS u, round(66.1, 1)::DOUBLE AS r1, 0.8::DOUBLE AS r2, " +
			"123.456::DOUBLE AS r3, 1/3 AS third;\n",
	}
	for n, s := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "r.html")
	if stdout, stderr, code := runCLI(t, "", "report", alexnetDir, "-o", out, "--reports-dir", dir); code != 0 || stdout != "" || stderr != "tracesql: report written to "+out+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	secs := rpParse(t, page)
	for _, title := range []string{"Inf bars", "Inf line"} {
		if s := secs[title]; s.na != "" || len(s.charts) != 1 {
			t.Errorf("%s: not available %q, %d charts", title, s.na, len(s.charts))
		}
	}
	if !strings.Contains(page, "The first 200 of more than 20000 rows are shown") {
		t.Errorf("@foreach past the row cap: no note saying so")
	}
	if regexp.MustCompile(`points="[^"]*(Inf|NaN)`).MatchString(page) {
		t.Errorf("a line has a non-finite point")
	}
	if c := secs["Huge step"]; len(c.charts) != 1 || len(c.charts[0].marks) != 1 || len(c.charts[0].marks[0].points) < 3 {
		t.Errorf("Huge step: %+v", c.charts)
	}
	if m := secs["Inf bars"].charts[0].marks; len(m) != 1 || html.UnescapeString(m[0].cat) != "b" {
		t.Errorf("Inf bars: marks %+v, want only b's", m)
	}
	if n := strings.Count(page, `<circle class="mark-point"`); n != 1 || len(secs["One point"].charts) != 1 {
		t.Errorf("One point: %d dots, want 1", n)
	}
	c1, c2 := secs["Colours 1"].charts[0].marks, secs["Colours 2"].charts[0].marks
	if len(c1) != 2 || len(c2) != 2 || c1[1].series != "b" || c2[0].series != "b" || c1[1].fill != c2[0].fill || c2[1].fill != c1[0].fill {
		t.Errorf("series colours from chart to chart: %+v then %+v (want b's colour kept, c in a's freed one)", c1, c2)
	}
	// What is left out is said under the chart (it vanished without a word).
	for _, want := range []string{`<p class="note">Not drawn: 2 value(s) of v that are not finite.</p>`,
		`<p class="note">Not drawn: 1 value(s) of v that are not finite.</p>`,
		`<p class="note">Not drawn: 2 value(s) of k that are not numbers, 1 row(s) whose k is NULL.</p>`} {
		if strings.Count(page, want) != 1 {
			t.Errorf("page lacks %s", want)
		}
	}
	want := `<tr><td>1712195495789354574</td><td>[1, 2]</td><td>{&#39;a&#39;: 1}</td><td>2024-01-02 03:04:05.123456</td>` +
		`<td>01:30:00</td><td>\xAA</td><td>nan</td><td>1.500</td><td>18446744073709551615</td>` +
		// doubles as the table output mode prints them: what the SQL rounded reads so (66.1 was 66.10, 123.456
		// was 123.5), at most 6 decimals
		`<td>66.1</td><td>0.8</td><td>123.456</td><td>0.333333</td></tr>`
	if !strings.Contains(page, want) {
		i := strings.Index(page, "<td>17121")
		t.Errorf("cells:\n%.400s\nwant %s", page[max(i, 0):], want)
	}
}

// TestReportManyStreamsAndCutSections: a section is read up to maxSectionRows rows. The queue-length
// section of 6 ranks × 12 streams (200 buckets: 28,800 rows) was cut there, and its charts drew rank 4
// with 2 of its 12 streams and rank 5 not at all, with no word said: it now takes fewer buckets when there
// are many streams, so every chart is whole. A user's section that is still cut leaves out the chart the
// cut went through, and says so.
func TestReportManyStreamsAndCutSections(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	traces := t.TempDir()
	for rank := 0; rank < 6; rank++ {
		var b strings.Builder
		fmt.Fprintf(&b, `{"distributedInfo":{"rank":%d,"world_size":6},"traceEvents":[`, rank)
		corr := 0
		for s := 0; s < 12; s++ {
			for i := 0; i < 300; i++ { // the stream's queue: 1, 0, 1, 0, ...
				corr++
				ts := float64(i)*20 + float64(s)*0.5
				if corr > 1 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":%g,"dur":1,"args":{"correlation":%d}},`, ts, corr)
				fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":%d,"ts":%g,"dur":3,"args":{"stream":%d,"device":0,"correlation":%d}}`, s, 10+s, ts+5, 10+s, corr)
			}
		}
		b.WriteString("]}")
		if err := os.WriteFile(filepath.Join(traces, fmt.Sprintf("rank%d.json", rank)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reports := t.TempDir()
	cut := "-- @title Cut\n-- @chart line\n-- @facet f\n-- @x x\n-- @y y\n" +
		"SELECT r // 9000 AS f, r % 9000 AS x, r AS y FROM range(27000) t(r) ORDER BY r;\n"
	if err := os.WriteFile(filepath.Join(reports, "90_cut.sql"), []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	if _, stderr, code := runCLI(t, "", "report", traces, "-o", out, "--reports-dir", reports); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	secs := rpParse(t, string(b))
	q := secs["Queue length over time"]
	if len(q.charts) != 6 {
		t.Fatalf("queue length: %d charts (%v), want one per rank", len(q.charts), q.facets)
	}
	for i, c := range q.charts {
		streams := map[string]bool{}
		for _, m := range c.marks {
			streams[m.series] = true
		}
		if len(streams) != 12 {
			t.Errorf("queue length, %s: %d streams drawn, want 12", q.facets[i], len(streams))
		}
	}
	c := secs["Cut"]
	if len(c.charts) != 2 || !strings.Contains(string(b), "The section has more than 20000 rows: the charts are drawn from the first 20000. f 2, cut there, is not drawn.") {
		t.Errorf("cut section: %d charts (%v); want f 0 and f 1 and a note on f 2", len(c.charts), c.facets)
	}
}

// TestShortLabels: category labels cut to the same text show where their names differ.
func TestShortLabels(t *testing.T) {
	cats := []string{
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, MulFunctor<float> > >(int)",
		"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int)",
		"sgemm_128x64",
		"abcdefghijklmnopqrstuvwxyz0123456789_a",
		"abcdefghijklmnopqrstuvwxyz0123456789_a", // twice (two label sets): numbered
	}
	got := shortLabels(cats)
	want := []string{"…CUDAFunctor_add<float>, …", "…BinaryFunctor<float, flo…", "…FillFunctor<float>, at::…", "sgemm_128x64",
		"abcdefghijklmnopqrstuvwxy…", "abcdefghijklmnopqrstuvwxy… #2"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("label %d: %q, want %q", i, got[i], want[i])
		}
		if n := len([]rune(got[i])); n > labelChars+3 {
			t.Errorf("label %d: %d runes", i, n)
		}
	}
}

// TestReportSaysWhatItDid: `tracesql report` says on stderr where it wrote, and, given no traces or --db, that
// it reported on the bundled sample (it wrote ./report.html without a word, which could pass for the user's).
func TestReportSaysWhatItDid(t *testing.T) {
	t.Chdir(t.TempDir())
	stdout, stderr, code := runCLI(t, "", "report")
	want := "tracesql: report: no traces or --db given: reporting on the bundled sample trace\n" +
		"tracesql: report written to report.html\n"
	if code != 0 || stdout != "" || stderr != want {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0, \"\", %q", code, stdout, stderr, want)
	}
	if fi, err := os.Stat("report.html"); err != nil || fi.Size() == 0 {
		t.Fatalf("report.html: %v", err)
	}
}

// TestReportRanksMissingAbbreviated: the "Ranks missing" section lists the first 20 missing ranks and a count. It
// listed all: two ranks claiming a world_size of 2e8 took 99 s, 12.5 GB and a 2 GB report, and 2e9 never ended.
func TestReportRanksMissingAbbreviated(t *testing.T) {
	dir := t.TempDir()
	for r := range 2 {
		body := fmt.Sprintf(`{"distributedInfo": {"rank": %d, "world_size": 2000000000}, "traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}`, r)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("rank%d.json", r)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "r.html")
	if _, stderr, code := runCLI(t, "", "report", dir, "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, … and 1999999978 more") {
		t.Errorf("the report lacks the abbreviated list of missing ranks")
	}
}

// TestReportBadOutputArgs: an empty -o and a --label that labels nothing are usage errors (exit 2). `-o ”` exited 0,
// wrote no report and left a hidden temporary file in the working directory; `--label x` alone reported on the
// bundled sample under its own label without a word.
func TestReportBadOutputArgs(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "-o", ""}, "tracesql: report: -o: empty file name\n"},
		{[]string{"report", "--label", "mine", "-o", "r.html"}, "tracesql: report: --label mine: no trace path follows it (a --db's trace sets keep their labels)\n"},
	} {
		stdout, stderr, code := runCLI(t, "", c.args...)
		if code != 2 || stdout != "" || stderr != c.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, \"\", %q", c.args, code, stdout, stderr, c.want)
		}
		if left, _ := os.ReadDir("."); len(left) != 0 {
			t.Errorf("%q left %v behind", c.args, left)
		}
	}
}

// TestSQLLiteral: @foreach values become SQL literals of their own type; a DECIMAL (round(x, 2)) or a DATE/TIMESTAMP
// made the section "not available" (unsupported value type).
func TestSQLLiteral(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{nil, "NULL"},
		{"it's", "'it''s'"},
		{int64(3), "3"},
		{1.5, "1.5"},
		{duckdb.Decimal{Width: 10, Scale: 2, Value: big.NewInt(-6610)}, "-66.1::DECIMAL(10,2)"},
		{time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC), "TIMESTAMP '2024-05-06 07:08:09.123456'"},
	} {
		if got, err := sqlLiteral(c.in); err != nil || got != c.want {
			t.Errorf("%#v: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestReportCancelledWritesNothing: a report whose queries were cancelled (Ctrl-C during .report) leaves the
// file it would replace as it was, instead of a report of "not available: context canceled" sections.
func TestReportCancelledWritesNothing(t *testing.T) {
	db := openTestDB(t)
	out := filepath.Join(t.TempDir(), "r.html")
	if err := os.WriteFile(out, []byte("the last good report"), 0o644); err != nil {
		t.Fatal(err)
	}
	secs, err := reportSections("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var warn bytes.Buffer
	err = writeReportFile(ctx, db, out, "", secs, &warn)
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want a cancellation", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "the last good report" {
		t.Errorf("the file holds %d bytes now, not the last report", len(b))
	}
	if warn.Len() > 0 {
		t.Errorf("warnings for cancelled sections:\n%s", warn.String())
	}
}

// TestReportHistogramOpenBin: a histogram bin whose bin_hi is NULL counts everything from its lo up: it
// is labelled "≥ lo", drawn as wide as the other bins (not stretched to the longest value), and the data
// fold says how many rows the result has.
func TestReportHistogramOpenBin(t *testing.T) {
	page := reportWithSection(t, "-- @title Open bin\n-- @chart histogram\n-- @x lo, hi (µs)\n-- @y n (count)\n"+
		"SELECT * FROM (VALUES (0.0, 1.0, 5), (1.0, 2.0, 3), (2.0, NULL, 7)) t(lo, hi, n);\n")
	s := rpParse(t, page)["Open bin"]
	if len(s.charts) != 1 || len(s.charts[0].marks) != 3 {
		t.Fatalf("section %+v", s)
	}
	m := s.charts[0].marks
	if m[0].cat != "0–1 µs" || m[2].cat != "≥ 2 µs" || m[2].value != 7 {
		t.Errorf("bins %q %q (%v), want 0–1 µs and ≥ 2 µs (7)", m[0].cat, m[2].cat, m[2].value)
	}
	if math.Abs(m[2].w-m[0].w) > 0.01 {
		t.Errorf("the open bin is %.1f px wide, the others %.1f", m[2].w, m[0].w)
	}
	if !strings.Contains(page, "<summary>Data (3 rows)</summary>") {
		t.Error("no data fold labelled with the result's 3 rows")
	}
}

// TestReportHistogramNotes: rows a histogram cannot draw (a NULL or NaN lo) and bins whose lo is above their hi
// are said under it, as the other charts say what they leave out (r71 #9: they went unsaid).
func TestReportHistogramNotes(t *testing.T) {
	page := reportWithSection(t, "-- @title Odd bins\n-- @chart histogram\n-- @x lo, hi\n-- @y n\n"+
		"SELECT * FROM (VALUES (5.0, 1.0, 3), (1.0, 1.0, 2), (NULL, 2.0, 1), ('nan'::DOUBLE, 'inf'::DOUBLE, 4)) t(lo, hi, n);\n")
	want := `<p class="note">Not drawn: 1 value(s) of lo that are not finite, 1 row(s) whose lo is NULL. 1 bin(s) whose lo is above their hi, drawn between the two.</p>`
	if !strings.Contains(page, want) {
		t.Errorf("no note %s", want)
	}
}

// TestReportLineNullX: line and step charts say how many rows a NULL x left out (r71 #9: unsaid); a NULL y is
// a gap, not counted.
func TestReportLineNullX(t *testing.T) {
	for _, chart := range []string{"line", "step"} {
		page := reportWithSection(t, "-- @title Null x\n-- @chart "+chart+"\n-- @x t\n-- @y v\n"+
			"SELECT * FROM (VALUES (1, 3), (NULL, 2), (NULL, 5), (4, NULL), (5, 1)) t(t, v);\n")
		if want := `<p class="note">Not drawn: 2 row(s) whose t is NULL.</p>`; !strings.Contains(page, want) {
			t.Errorf("%s chart: no note %s", chart, want)
		}
	}
}

// reportWithSection writes the report of alexnet with one extra section file, sec, and returns the page.
func reportWithSection(t *testing.T, sec string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "90_extra.sql"), []byte(sec), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	if _, stderr, code := runCLI(t, "", "report", alexnetDir, "-o", out, "--reports-dir", dir); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}
