package main

// Hand-written SVG for the HTML report: bars (grouped or stacked, with optional whiskers), histograms,
// lines and pies, each with nice-tick axes, axis titles with units and a <title> tooltip per mark.
// Every mark carries data-value so that a reader (or a test) can check the drawing against the query.
// All text goes through esc: the SVG is well-formed XML as well as HTML.

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"

	"tracesql/queries"
)

const (
	svgW       = 760.0
	svgH       = 360.0
	marginL    = 78.0
	marginR    = 16.0
	marginT    = 14.0
	maxCats    = 128 // categories drawn by one bar chart (a 64-rank job's per-rank charts lost ranks 60-63 at 60)
	maxFacets  = 16  // charts drawn by one section
	labelChars = 26  // category labels longer than this are cut (the full text is the tooltip)
)

// palette is colour-blind-friendly (Tableau 10); series beyond it reuse its colours.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// colourBook gives a series (or pie slice) name the colour it had in the report's earlier charts, unless
// another series of the chart took that colour first: the critical path's bound_by causes were coloured
// by their order in each chart, so one cause had two colours in the HTA and the CTDA chart.
type colourBook map[string]int

// pick returns the colours of a chart's series names: booked ones where still free in the chart, then the
// free palette colours in order (past the palette's 10, colours repeat), booking names seen first.
func (b colourBook) pick(names []string) []string {
	used := make([]bool, len(palette))
	idx := make([]int, len(names))
	for i, n := range names {
		idx[i] = -1
		if c, ok := b[n]; ok && !used[c] {
			used[c], idx[i] = true, c
		}
	}
	next := 0
	for i, n := range names {
		if idx[i] >= 0 {
			continue
		}
		for next < len(palette) && used[next] {
			next++
		}
		if next < len(palette) {
			used[next], idx[i] = true, next
		} else {
			idx[i] = i % len(palette)
		}
		if _, ok := b[n]; !ok && b != nil {
			b[n] = idx[i]
		}
	}
	out := make([]string, len(names))
	for i, c := range idx {
		out[i] = palette[c]
	}
	return out
}

// esc escapes text for an SVG inside HTML. Characters XML does not allow (C0 controls but tab, newline and
// carriage return; a kernel name may hold a NUL) become U+FFFD, so that the SVG stays well-formed XML.
func esc(s string) string {
	if strings.IndexFunc(s, notXMLChar) >= 0 {
		s = strings.Map(func(r rune) rune {
			if notXMLChar(r) {
				return '\uFFFD'
			}
			return r
		}, s)
	}
	return html.EscapeString(s)
}

func notXMLChar(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0xFFFE || r == 0xFFFF
}

// px formats a coordinate: two decimals are finer than any screen and keep the file small.
func px(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// chartOut is one drawn chart: its SVG, its legend and a note (what was left out).
type chartOut struct {
	Facet  string
	SVG    string
	Legend []legendItem
	Note   string
}

type legendItem struct {
	Colour, Label, Value string
}

// drawCharts draws a section's result: one chart per @facet value.
// book keeps a series' colour the same from chart to chart.
func drawCharts(sec queries.ReportSection, t *resultTable, book colourBook) ([]chartOut, error) {
	need := func(cols []string) ([]int, error) {
		idx := make([]int, len(cols))
		for i, c := range cols {
			if idx[i] = t.col(c); idx[i] < 0 {
				return nil, fmt.Errorf("column %s is not in the result (columns: %s)", c, strings.Join(t.cols, ", "))
			}
		}
		return idx, nil
	}
	var sp chartSpec
	var err error
	sp.sec, sp.colours = sec, book
	if sp.x, err = need(sec.X.Cols); err != nil {
		return nil, err
	}
	if sp.y, err = need(sec.Y.Cols); err != nil {
		return nil, err
	}
	if sp.series, err = need(sec.Series); err != nil {
		return nil, err
	}
	if sp.rng, err = need(sec.Range); err != nil {
		return nil, err
	}
	facet, err := need(sec.Facet)
	if err != nil {
		return nil, err
	}
	all := make([]int, len(t.rows))
	for i := range all {
		all[i] = i
	}
	groups := [][]int{all}
	names := []string{""}
	if len(facet) > 0 {
		names, groups = groupRows(t, facet, all, true)
	}
	// A section cut at maxSectionRows: the chart of the last row read lacks the rows after it (a
	// queue-length chart drew 2 of a rank's 12 streams), so it is left out, and the charts say so.
	cutNote := ""
	if t.truncated {
		cutNote = fmt.Sprintf("The section has more than %d rows: the charts are drawn from the first %d.", maxSectionRows, len(t.rows))
		if len(groups) > 1 {
			last := len(t.rows) - 1
			for i, g := range groups {
				if slices.Contains(g, last) {
					cutNote += fmt.Sprintf(" %s, cut there, is not drawn.", names[i])
					groups, names = slices.Delete(groups, i, i+1), slices.Delete(names, i, i+1)
					break
				}
			}
		}
	}
	if len(groups) == 1 {
		names = []string{""} // one chart: the section's title names it
	}
	var out []chartOut
	for i, g := range groups {
		if i == maxFacets {
			out[len(out)-1].Note = strings.TrimSpace(out[len(out)-1].Note + fmt.Sprintf(" Only the first %d of %d charts are drawn.", maxFacets, len(groups)))
			break
		}
		var c chartOut
		switch sec.Chart {
		case "bar", "stacked_bar":
			c, err = sp.bars(t, g)
		case "histogram":
			c, err = sp.histogram(t, g)
		case "line", "step":
			c, err = sp.line(t, g, sec.Chart == "step")
		case "pie":
			c, err = sp.pie(t, g)
		default:
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		c.Facet = names[i]
		out = append(out, c)
	}
	if cutNote != "" && len(out) > 0 {
		out[len(out)-1].Note = strings.TrimSpace(out[len(out)-1].Note + " " + cutNote)
	}
	return out, nil
}

// chartSpec is a section's directives resolved to result column indexes.
type chartSpec struct {
	sec                   queries.ReportSection
	x, y, series, rng     []int
	xTitle, yTitle, title string
	// xShown: the positions in @x of the columns a category chart's labels show (shownKeyColumns); nil when
	// all are shown.
	xShown  []int
	xNames  []string // the @x columns' names
	colours colourBook
}

// showX records which @x columns the category labels of rows show (xShown).
func (sp *chartSpec) showX(t *resultTable, rows []int) {
	sp.xShown, sp.xNames = nil, nil
	shown := shownKeyColumns(t, sp.x, rows)
	if len(shown) == len(sp.x) {
		return
	}
	for i, c := range sp.x {
		sp.xNames = append(sp.xNames, t.cols[c])
		if slices.Contains(shown, c) {
			sp.xShown = append(sp.xShown, i)
		}
	}
}

// xTitleText is the category axis's title. An @xlabel written as one " · " part per @x column ("label · rank")
// keeps the parts of the columns the labels show (a lone trace set's label is not shown, and so not named);
// another @xlabel is kept whole when every column is shown, else the shown columns are named.
func (sp *chartSpec) xTitleText() string {
	title := axisTitle(sp.sec.X)
	if sp.xShown == nil {
		return title
	}
	parts := strings.Split(sp.sec.X.Label, " · ")
	var out []string
	for _, i := range sp.xShown {
		if len(parts) == len(sp.x) {
			out = append(out, parts[i])
		} else {
			out = append(out, sp.xNames[i])
		}
	}
	return strings.Join(out, " · ")
}

// groupRows splits rows by the key columns cols, in order of first appearance. named: see keyLabels.
func groupRows(t *resultTable, cols, rows []int, named bool) ([]string, [][]int) {
	labels := keyLabels(t, cols, rows, named)
	var names []string
	var groups [][]int
	at := map[string]int{}
	for k, r := range rows {
		i, ok := at[labels[k]]
		if !ok {
			i = len(names)
			at[labels[k]] = i
			names = append(names, labels[k])
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	return names, groups
}

// keyLabels names each row by its key columns joined with " · ", leaving out the columns that hold the
// same value in every row (a lone trace's label) unless all do, and inner columns the ones before
// them determine. named: a number is prefixed with its
// column's name ("rank 1", not "1"), for legends and chart headings where no axis title says it.
func keyLabels(t *resultTable, cols, rows []int, named bool) []string {
	keep := shownKeyColumns(t, cols, rows)
	out := make([]string, len(rows))
	for k, r := range rows {
		parts := make([]string, len(keep))
		for i, c := range keep {
			parts[i] = t.cell(r, c)
			if _, isNum := toFloat(t.rows[r][c]); named && isNum {
				parts[i] = t.cols[c] + " " + parts[i]
			}
		}
		out[k] = strings.Join(parts, " · ")
	}
	return out
}

// shownKeyColumns is which of the key columns cols keyLabels shows for the rows.
func shownKeyColumns(t *resultTable, cols, rows []int) []int {
	// A constant column goes. So does an inner one that the columns before it determine (the device
	// of a rank with one GPU); the last, finest one stays unless constant.
	keep := []int{}
	prefix := make([]string, len(rows))
	for i, c := range cols {
		first := map[string]string{}
		for k, r := range rows {
			v, key := t.cell(r, c), prefix[k]
			if i == len(cols)-1 {
				key = ""
			}
			if f, ok := first[key]; !ok {
				first[key] = v
			} else if f != v {
				keep = append(keep, c)
				break
			}
		}
		for k, r := range rows {
			prefix[k] += "\x00" + t.cell(r, c)
		}
	}
	if len(keep) == 0 && len(cols) > 0 {
		keep = cols[len(cols)-1:]
	}
	return keep
}

// valueText is how a cell reads in a label or table: as the table output mode prints it, so a value the SQL
// rounded to 1 decimal reads 66.1, not 66.10, beside 0.8 (up to 6 decimals, trailing zeros dropped).
func valueText(v any, typ *sqlType) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case float64:
		return string(appendFloat(nil, x, 64, true))
	case float32:
		return string(appendFloat(nil, float64(x), 32, true))
	}
	// integers exactly (a BIGINT ts is past float64's 2^53), the rest as DuckDB prints it
	return string(appendText(nil, v, typ, 0))
}

// fmtNum prints a number compactly: integers whole, others with up to 3 significant decimals, from 1e15 on
// in exponent form.
func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	a := math.Abs(v)
	switch {
	case a >= 1e15:
		return strconv.FormatFloat(v, 'g', 4, 64) // 1e300 was 301 digits
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// fmtTick prints an axis tick: thousands as k, millions as M (decided by the largest tick, so that one
// axis uses one suffix), with the decimals the step needs.
func fmtTick(v, step, maxAbs float64) string {
	div, suffix := 1.0, ""
	switch {
	case maxAbs >= 1e9:
		div, suffix = 1e9, "G"
	case maxAbs >= 1e6:
		div, suffix = 1e6, "M"
	case maxAbs >= 1e4:
		div, suffix = 1e3, "k"
	}
	if v == 0 {
		return "0"
	}
	if maxAbs >= 1e13 {
		// past 10,000 G: 5e+28, not 50000000000000004512668450816G across the margin
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	dec, s := 0, step/div
	for dec < 9 && math.Abs(s*math.Pow(10, float64(dec))-math.Round(s*math.Pow(10, float64(dec)))) > 1e-6 {
		dec++
	}
	return strconv.FormatFloat(v/div, 'f', dec, 64) + suffix
}

// tickLabels formats all ticks of one axis.
func tickLabels(ticks []float64, step float64) []string {
	m := 0.0
	for _, v := range ticks {
		m = math.Max(m, math.Abs(v))
	}
	out := make([]string, len(ticks))
	for i, v := range ticks {
		out[i] = fmtTick(v, step, m)
	}
	return out
}

// niceTicks covers [lo, hi] with about n ticks at 1, 2, 2.5 or 5 × 10^k.
func niceTicks(lo, hi float64, n int) (ticks []float64, step float64) {
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		if hi == 0 {
			hi = 1
		} else if hi > 0 {
			lo = 0
		} else {
			hi = 0
		}
	}
	raw := (hi - lo) / float64(n)
	if math.IsInf(raw, 0) { // hi − lo past float64's range (±1.7e308 at both ends)
		raw = hi/float64(n) - lo/float64(n)
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			step = m * mag
			break
		}
	}
	first := math.Floor(lo/step + 1e-9)
	last := math.Ceil(hi/step - 1e-9)
	for i := first; i <= last; i++ {
		ticks = append(ticks, i*step)
	}
	if len(ticks) < 2 || math.IsInf(ticks[0], 0) || math.IsInf(ticks[len(ticks)-1], 0) {
		// Rounded out to whole steps, the range left float64's: its own ends are the ticks (a fallback
		// of [0, 1] put values near ±1.8e308 at ±Inf coordinates). Callers index the first and last.
		if lo == hi {
			return []float64{0, 1}, 1
		}
		return []float64{lo, hi}, hi/2 - lo/2
	}
	return ticks, step
}

// linear maps the domain [d0, d1] onto the range [r0, r1].
type linear struct{ d0, d1, r0, r1 float64 }

func (s linear) at(v float64) float64 {
	if s.d1 == s.d0 {
		return s.r0
	}
	// (halved first: v − d0 and d1 − d0 overflow near ±1.8e308; halving is exact, so the result is the same)
	return s.r0 + (v/2-s.d0/2)/(s.d1/2-s.d0/2)*(s.r1-s.r0)
}

// axisTitle is the @xlabel/@ylabel, or the axis's columns with their unit.
func axisTitle(a queries.Axis) string {
	if a.Label != "" {
		if a.Unit != "" && !strings.Contains(a.Label, "("+a.Unit+")") {
			return a.Label + " (" + a.Unit + ")"
		}
		return a.Label
	}
	s := strings.Join(a.Cols, ", ")
	if a.Unit != "" {
		s += " (" + a.Unit + ")"
	}
	return s
}

func (sp *chartSpec) num(t *resultTable, r, c int) float64 {
	v, ok := toFloat(t.rows[r][c])
	if !ok || math.IsInf(v, 0) {
		return math.NaN() // nothing to draw: an infinite value has no place on an axis
	}
	return v
}

// undrawableNote says which values of the rows' columns cols are there (not NULL) but cannot be drawn, per
// column: text (a column of names given as @x or @y) or not a finite number (NaN, ±Inf). A chart leaves them
// out; "" when there are none.
func (sp *chartSpec) undrawableNote(t *resultTable, rows []int, cols []int) string {
	var parts []string
	for _, c := range cols {
		text, nonFinite := 0, 0
		for _, r := range rows {
			v := t.rows[r][c]
			if v == nil {
				continue
			}
			if f, ok := toFloat(v); !ok {
				text++
			} else if math.IsNaN(f) || math.IsInf(f, 0) {
				nonFinite++
			}
		}
		if text > 0 {
			parts = append(parts, fmt.Sprintf("%d value(s) of %s that are not numbers", text, t.cols[c]))
		}
		if nonFinite > 0 {
			parts = append(parts, fmt.Sprintf("%d value(s) of %s that are not finite", nonFinite, t.cols[c]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Not drawn: " + strings.Join(parts, ", ") + "."
}

// svgFrame writes the <svg> element's start and its accessible title.
func (sp *chartSpec) svgFrame(b *strings.Builder, w, h float64) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="%s" viewBox="0 0 %s %s" width="%s" height="%s" role="img">`,
		esc(sp.sec.Chart), px(w), px(h), px(w), px(h))
	fmt.Fprintf(b, `<title>%s</title>`, esc(sp.sec.Title))
}

// valueAxis draws the vertical value axis with grid lines and its title; it returns the scale.
func (sp *chartSpec) valueAxis(b *strings.Builder, lo, hi, top, bottom float64) linear {
	ticks, step := niceTicks(math.Min(lo, 0), math.Max(hi, 0), 5)
	y := linear{ticks[0], ticks[len(ticks)-1], bottom, top}
	b.WriteString(`<g class="axis axis-y">`)
	labels := tickLabels(ticks, step)
	for i, v := range ticks {
		fmt.Fprintf(b, `<line class="grid" x1="%s" x2="%s" y1="%s" y2="%s"/>`, px(marginL), px(svgW-marginR), px(y.at(v)), px(y.at(v)))
		fmt.Fprintf(b, `<text class="tick" x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, px(marginL-6), px(y.at(v)), esc(labels[i]))
	}
	fmt.Fprintf(b, `<line class="domain" x1="%s" x2="%s" y1="%s" y2="%s"/>`, px(marginL), px(marginL), px(top), px(bottom))
	fmt.Fprintf(b, `<text class="axis-label axis-label-y" transform="translate(16 %s) rotate(-90)" text-anchor="middle">%s</text>`,
		px((top+bottom)/2), esc(axisTitle(sp.sec.Y)))
	b.WriteString(`</g>`)
	return y
}

// xAxisTitle draws the horizontal axis's title under the plot.
func (sp *chartSpec) xAxisTitle(b *strings.Builder, h float64) {
	fmt.Fprintf(b, `<text class="axis-label axis-label-x" x="%s" y="%s" text-anchor="middle">%s</text>`,
		px((marginL+svgW-marginR)/2), px(h-6), esc(sp.xTitleText()))
}

// seriesOf returns, for the rows, the series each (row, value column) pair belongs to: the @series key,
// else the @y column name.
func (sp *chartSpec) seriesOf(t *resultTable, rows []int) (names []string, ofRow []int) {
	if len(sp.series) > 0 {
		var groups [][]int
		names, groups = groupRows(t, sp.series, rows, true)
		pos := map[int]int{}
		for k, r := range rows {
			pos[r] = k
		}
		ofRow = make([]int, len(rows))
		for s, g := range groups {
			for _, r := range g {
				ofRow[pos[r]] = s
			}
		}
		return names, ofRow
	}
	for _, c := range sp.y {
		names = append(names, t.cols[c])
	}
	return names, nil
}

func legendOf(names, colours []string) []legendItem {
	if len(names) < 2 {
		return nil
	}
	out := make([]legendItem, len(names))
	for i, n := range names {
		out[i] = legendItem{Colour: colours[i], Label: n}
	}
	return out
}

// bars draws a bar or stacked_bar chart: one band per category (@x), one bar or stack part per series.
func (sp *chartSpec) bars(t *resultTable, rows []int) (chartOut, error) {
	var out chartOut
	stacked := sp.sec.Chart == "stacked_bar"
	cats, catRows := groupRows(t, sp.x, rows, false)
	sp.showX(t, rows)
	if len(cats) > maxCats {
		out.Note = fmt.Sprintf("Only the first %d of %d categories are drawn.", maxCats, len(cats))
		cats, catRows = cats[:maxCats], catRows[:maxCats]
	}
	drawn := rows
	if len(catRows) > 0 {
		drawn = slices.Concat(catRows...)
	}
	out.Note = strings.TrimSpace(out.Note + " " + sp.undrawableNote(t, drawn, sp.y))
	ser, ofRow := sp.seriesOf(t, rows)
	pal := sp.colours.pick(ser)
	pos := map[int]int{}
	for k, r := range rows {
		pos[r] = k
	}
	// val[c][s]: the value of series s in category c (NaN: none); duplicate keys add up.
	val := make([][]float64, len(cats))
	lo, hi := 0.0, 0.0
	var rlo, rhi []float64
	for c, g := range catRows {
		val[c] = make([]float64, len(ser))
		for s := range val[c] {
			val[c][s] = math.NaN()
		}
		add := func(s int, v float64) {
			if math.IsNaN(v) {
				return
			}
			if math.IsNaN(val[c][s]) {
				val[c][s] = 0
			}
			val[c][s] += v
		}
		for _, r := range g {
			if ofRow != nil {
				add(ofRow[pos[r]], sp.num(t, r, sp.y[0]))
			} else {
				for s, yc := range sp.y {
					add(s, sp.num(t, r, yc))
				}
			}
		}
		if stacked {
			var p, n float64
			for _, v := range val[c] {
				if v > 0 {
					p += v
				} else if v < 0 {
					n += v
				}
			}
			hi, lo = math.Max(hi, p), math.Min(lo, n)
		} else {
			for _, v := range val[c] {
				if !math.IsNaN(v) {
					hi, lo = math.Max(hi, v), math.Min(lo, v)
				}
			}
		}
		if len(sp.rng) == 2 {
			a, b := sp.num(t, g[0], sp.rng[0]), sp.num(t, g[0], sp.rng[1])
			rlo, rhi = append(rlo, a), append(rhi, b)
			for _, v := range []float64{a, b} {
				if !math.IsNaN(v) {
					hi, lo = math.Max(hi, v), math.Min(lo, v)
				}
			}
		}
	}
	// Long category labels are drawn slanted and need room below the plot.
	longest := 0
	for _, c := range cats {
		longest = max(longest, min(len([]rune(c)), labelChars))
	}
	plotW := svgW - marginL - marginR
	band := plotW / float64(max(len(cats), 1))
	slant := float64(longest)*6.5 > band
	bottomRoom := 44.0
	if slant {
		bottomRoom = 30 + float64(longest)*4.6
	}
	h := svgH + bottomRoom - 44
	top, bottom := marginT, h-bottomRoom
	var b strings.Builder
	sp.svgFrame(&b, svgW, h)
	y := sp.valueAxis(&b, lo, hi, top, bottom)
	unit := sp.sec.Y.Unit
	b.WriteString(`<g class="marks">`)
	for c, name := range cats {
		x0 := marginL + float64(c)*band
		var up, down float64 // stack tops above and below zero
		for s, v := range val[c] {
			if math.IsNaN(v) {
				continue
			}
			var bx, bw, y0, y1 float64
			if stacked {
				bw = math.Min(band*0.7, 90)
				bx = x0 + (band-bw)/2
				if v >= 0 {
					y0, y1 = up, up+v
					up += v
				} else {
					y0, y1 = down, down+v
					down += v
				}
			} else {
				bw = math.Min(band*0.8, 90*float64(len(ser))) / float64(len(ser))
				bx = x0 + (band-bw*float64(len(ser)))/2 + float64(s)*bw
				y0, y1 = 0, v
			}
			top, bot := math.Min(y.at(y0), y.at(y1)), math.Max(y.at(y0), y.at(y1))
			fmt.Fprintf(&b, `<rect class="mark" data-cat="%s" data-series="%s" data-value="%s" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
				esc(name), esc(ser[s]), strconv.FormatFloat(v, 'g', -1, 64), px(bx), px(top), px(bw), px(bot-top), pal[s],
				esc(tooltip(name, ser, s, v, unit)))
		}
		if len(sp.rng) == 2 && !math.IsNaN(rlo[c]) && !math.IsNaN(rhi[c]) {
			cx := x0 + band/2
			cap := math.Min(band*0.15, 8)
			fmt.Fprintf(&b, `<g class="whisker" data-cat="%s" data-lo="%s" data-hi="%s"><title>%s: %s – %s %s</title>`,
				esc(name), strconv.FormatFloat(rlo[c], 'g', -1, 64), strconv.FormatFloat(rhi[c], 'g', -1, 64),
				esc(name), esc(fmtNum(rlo[c])), esc(fmtNum(rhi[c])), esc(unit))
			fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s"/>`, px(cx), px(cx), px(y.at(rlo[c])), px(y.at(rhi[c])))
			for _, v := range []float64{rlo[c], rhi[c]} {
				fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s"/>`, px(cx-cap), px(cx+cap), px(y.at(v)), px(y.at(v)))
			}
			b.WriteString(`</g>`)
		}
	}
	b.WriteString(`</g>`)
	// Category axis.
	b.WriteString(`<g class="axis axis-x">`)
	fmt.Fprintf(&b, `<line class="domain" x1="%s" x2="%s" y1="%s" y2="%s"/>`, px(marginL), px(svgW-marginR), px(y.at(0)), px(y.at(0)))
	shorts := shortLabels(cats)
	// Slanted labels closer than ~21 px apart overlap (11 px text, rotated 35°: 11.1 px apart left their
	// baselines 6.4 px apart), so only every labelEvery-th is written; each bar's tooltip names it.
	labelEvery := 1
	if slant {
		labelEvery = int(math.Ceil(21 / band))
	}
	for c, name := range cats {
		if c%labelEvery != 0 {
			continue
		}
		cx := marginL + (float64(c)+0.5)*band
		short := shorts[c]
		if slant {
			fmt.Fprintf(&b, `<text class="tick" transform="translate(%s %s) rotate(-35)" text-anchor="end">%s<title>%s</title></text>`,
				px(cx), px(bottom+12), esc(short), esc(name))
		} else {
			fmt.Fprintf(&b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s<title>%s</title></text>`,
				px(cx), px(bottom+16), esc(short), esc(name))
		}
	}
	b.WriteString(`</g>`)
	sp.xAxisTitle(&b, h)
	b.WriteString(`</svg>`)
	out.SVG = b.String()
	out.Legend = legendOf(ser, pal)
	return out, nil
}

// shortLabels cuts category labels to labelChars runes. Labels that the cut makes equal (kernels of one
// template: "void at::native::vectoriz…" three times, told apart only by a tooltip that paper and PDFs do not
// show) show the part after what their full names share instead, from the word it begins in; any still equal
// get a number.
func shortLabels(cats []string) []string {
	cut := func(r []rune, from int) string {
		prefix := ""
		if from > 0 {
			prefix = "…"
		}
		if len(r)-from+len([]rune(prefix)) <= labelChars {
			return prefix + string(r[from:])
		}
		return prefix + string(r[from:from+labelChars-1-len([]rune(prefix))]) + "…"
	}
	out := make([]string, len(cats))
	same := map[string][]int{}
	for i, c := range cats {
		out[i] = cut([]rune(c), 0)
		same[out[i]] = append(same[out[i]], i)
	}
	for _, group := range same {
		if len(group) < 2 {
			continue
		}
		first := []rune(cats[group[0]])
		common := len(first)
		for _, i := range group[1:] {
			r := []rune(cats[i])
			n := 0
			for n < common && n < len(r) && r[n] == first[n] {
				n++
			}
			common = n
		}
		if common == len(first) {
			continue // the same name (of two label sets) or one the start of another: numbered below
		}
		// back to the start of the word the names part in
		for common > 0 && !strings.ContainsRune(" :<>(),_", first[common-1]) {
			common--
		}
		for _, i := range group {
			out[i] = cut([]rune(cats[i]), common)
		}
	}
	seen := map[string]int{}
	for i := range out {
		if seen[out[i]]++; seen[out[i]] > 1 {
			out[i] = fmt.Sprintf("%s #%d", out[i], seen[out[i]])
		}
	}
	return out
}

func tooltip(cat string, ser []string, s int, v float64, unit string) string {
	label := cat
	if len(ser) > 1 {
		label += " · " + ser[s]
	}
	return strings.TrimSpace(label + ": " + fmtNum(v) + " " + unit)
}

// histogram draws bins from @x lo to hi on a numeric axis, series stacked.
func (sp *chartSpec) histogram(t *resultTable, rows []int) (chartOut, error) {
	ser, ofRow := sp.seriesOf(t, rows)
	pal := sp.colours.pick(ser)
	// A bin whose hi is NULL is open-ended (it counts everything from lo up): drawn as wide as the
	// narrowest closed bin, labelled "≥ lo". (A finite hi said that a 13 µs delay lay in 0.00097–0.001 µs.)
	type bin struct {
		lo, hi float64
		open   bool
	}
	var bins []bin
	at := map[bin]int{}
	var val [][]float64
	xlo, xhi := math.Inf(1), math.Inf(-1)
	width := math.Inf(1)
	noLo, inverted := 0, 0 // rows left out for a NULL lo, bins whose lo is above their hi (r71 #9: unsaid)
	for k, r := range rows {
		bn := bin{lo: sp.num(t, r, sp.x[0]), hi: sp.num(t, r, sp.x[1])}
		if math.IsNaN(bn.lo) {
			if t.rows[r][sp.x[0]] == nil {
				noLo++
			}
			continue
		}
		if bn.lo > bn.hi {
			inverted++
		}
		if math.IsNaN(bn.hi) {
			bn.hi, bn.open = bn.lo, true
		}
		i, ok := at[bn]
		if !ok {
			i = len(bins)
			at[bn] = i
			bins = append(bins, bn)
			val = append(val, make([]float64, len(ser)))
			xlo, xhi = math.Min(xlo, math.Min(bn.lo, bn.hi)), math.Max(xhi, math.Max(bn.lo, bn.hi))
			if w := math.Abs(bn.hi - bn.lo); !bn.open && w > 0 {
				width = math.Min(width, w)
			}
		}
		s := 0
		if ofRow != nil {
			s = ofRow[k]
		}
		if v := sp.num(t, r, sp.y[0]); !math.IsNaN(v) {
			val[i][s] += v
		}
	}
	hi := 0.0
	for _, v := range val {
		sum := 0.0
		for _, x := range v {
			sum += math.Max(x, 0)
		}
		hi = math.Max(hi, sum)
	}
	if math.IsInf(width, 1) {
		width = math.Max(math.Abs(xlo)/10, 1)
	}
	for i := range bins {
		if bins[i].open {
			bins[i].hi = bins[i].lo + width
			xhi = math.Max(xhi, bins[i].hi)
		}
	}
	if len(bins) == 0 {
		xlo, xhi = 0, 1
	}
	h := svgH
	top, bottom := marginT, h-44
	var b strings.Builder
	sp.svgFrame(&b, svgW, h)
	y := sp.valueAxis(&b, 0, hi, top, bottom)
	x := sp.numericXAxis(&b, xlo, xhi, bottom)
	unit := sp.sec.Y.Unit
	b.WriteString(`<g class="marks">`)
	for i, bn := range bins {
		base := 0.0
		name := fmtNum(bn.lo) + "–" + fmtNum(bn.hi) + " " + sp.sec.X.Unit
		if bn.open {
			name = "≥ " + fmtNum(bn.lo) + " " + sp.sec.X.Unit
		}
		for s, v := range val[i] {
			if v <= 0 {
				continue
			}
			x0, x1 := x.at(math.Min(bn.lo, bn.hi)), x.at(math.Max(bn.lo, bn.hi))
			y0, y1 := y.at(base+v), y.at(base)
			fmt.Fprintf(&b, `<rect class="mark" data-cat="%s" data-series="%s" data-value="%s" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
				esc(name), esc(ser[s]), strconv.FormatFloat(v, 'g', -1, 64), px(x0), px(y0), px(math.Max(x1-x0-0.5, 0.5)), px(y1-y0), pal[s],
				esc(tooltip(name, ser, s, v, unit)))
			base += v
		}
	}
	b.WriteString(`</g>`)
	sp.xAxisTitle(&b, h)
	b.WriteString(`</svg>`)
	note := withNullRows(sp.undrawableNote(t, rows, append([]int{sp.x[0]}, sp.y...)), noLo, t.cols[sp.x[0]])
	if inverted > 0 {
		note = strings.TrimSpace(note + fmt.Sprintf(" %d bin(s) whose %s is above their %s, drawn between the two.", inverted, t.cols[sp.x[0]], t.cols[sp.x[1]]))
	}
	return chartOut{SVG: b.String(), Legend: legendOf(ser, pal), Note: note}, nil
}

// numericXAxis draws a linear horizontal axis with nice ticks along the plot's bottom.
func (sp *chartSpec) numericXAxis(b *strings.Builder, lo, hi, bottom float64) linear {
	ticks, step := niceTicks(lo, hi, 8)
	x := linear{ticks[0], ticks[len(ticks)-1], marginL, svgW - marginR}
	b.WriteString(`<g class="axis axis-x">`)
	fmt.Fprintf(b, `<line class="domain" x1="%s" x2="%s" y1="%s" y2="%s"/>`, px(marginL), px(svgW-marginR), px(bottom), px(bottom))
	labels := tickLabels(ticks, step)
	for i, v := range ticks {
		fmt.Fprintf(b, `<line class="tickmark" x1="%s" x2="%s" y1="%s" y2="%s"/>`, px(x.at(v)), px(x.at(v)), px(bottom), px(bottom+4))
		fmt.Fprintf(b, `<text class="tick" x="%s" y="%s" text-anchor="middle">%s</text>`, px(x.at(v)), px(bottom+16), esc(labels[i]))
	}
	b.WriteString(`</g>`)
	return x
}

// line draws one polyline per series over a numeric x axis, points in the result's order. step: each
// value holds until the next point (a level that changes at events, like a queue length), so the
// polyline goes across, then up or down: points 0, 2, 4, … are the data.
func (sp *chartSpec) line(t *resultTable, rows []int, step bool) (chartOut, error) {
	ser, ofRow := sp.seriesOf(t, rows)
	pal := sp.colours.pick(ser)
	type pt struct{ x, y float64 }
	pts := make([][]pt, len(ser))
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), 0.0, 0.0
	for k, r := range rows {
		xv := sp.num(t, r, sp.x[0])
		if math.IsNaN(xv) {
			continue
		}
		for j, yc := range sp.y {
			yv := sp.num(t, r, yc)
			if math.IsNaN(yv) {
				continue
			}
			s := j
			if ofRow != nil {
				s = ofRow[k]
			}
			pts[s] = append(pts[s], pt{xv, yv})
			xlo, xhi = math.Min(xlo, xv), math.Max(xhi, xv)
			ylo, yhi = math.Min(ylo, yv), math.Max(yhi, yv)
		}
	}
	if math.IsInf(xlo, 1) {
		xlo, xhi = 0, 1
	}
	h := svgH
	top, bottom := marginT, h-44
	var b strings.Builder
	sp.svgFrame(&b, svgW, h)
	y := sp.valueAxis(&b, ylo, yhi, top, bottom)
	x := sp.numericXAxis(&b, xlo, xhi, bottom)
	b.WriteString(`<g class="marks">`)
	for s, p := range pts {
		if len(p) == 0 {
			continue
		}
		var coords []string
		values := make([]string, len(p))
		for i, q := range p {
			if step && i > 0 {
				coords = append(coords, px(x.at(q.x))+","+px(y.at(p[i-1].y)))
			}
			coords = append(coords, px(x.at(q.x))+","+px(y.at(q.y)))
			values[i] = strconv.FormatFloat(q.y, 'g', -1, 64)
		}
		fmt.Fprintf(&b, `<polyline class="mark-line" data-series="%s" data-values="%s" points="%s" fill="none" stroke="%s"><title>%s</title></polyline>`,
			esc(ser[s]), strings.Join(values, " "), strings.Join(coords, " "), pal[s], esc(ser[s]))
		if len(p) == 1 {
			// a polyline of one point draws nothing: the point is a dot
			fmt.Fprintf(&b, `<circle class="mark-point" cx="%s" cy="%s" r="3" fill="%s"><title>%s</title></circle>`,
				px(x.at(p[0].x)), px(y.at(p[0].y)), pal[s], esc(ser[s]+": "+values[0]))
		}
	}
	b.WriteString(`</g>`)
	sp.xAxisTitle(&b, h)
	b.WriteString(`</svg>`)
	noX := 0
	for _, r := range rows {
		if t.rows[r][sp.x[0]] == nil {
			noX++
		}
	}
	note := withNullRows(sp.undrawableNote(t, rows, append([]int{sp.x[0]}, sp.y...)), noX, t.cols[sp.x[0]])
	return chartOut{SVG: b.String(), Legend: legendOf(ser, pal), Note: note}, nil
}

// withNullRows adds to a chart's note the n rows left out because their column col, which places them on
// the x axis, is NULL (a NULL y is a gap, as in a table, and not counted).
func withNullRows(note string, n int, col string) string {
	if n == 0 {
		return note
	}
	nulls := fmt.Sprintf("%d row(s) whose %s is NULL.", n, col)
	if note == "" {
		return "Not drawn: " + nulls
	}
	return strings.TrimSuffix(note, ".") + ", " + nulls
}

// pie draws one slice per category (@x) sized by @y; rows with a value ≤ 0 cannot be a slice and are
// counted in the note.
func (sp *chartSpec) pie(t *resultTable, rows []int) (chartOut, error) {
	var out chartOut
	cats, catRows := groupRows(t, sp.x, rows, false)
	sp.showX(t, rows)
	pal := sp.colours.pick(cats)
	vals := make([]float64, len(cats))
	total := 0.0
	skipped := 0
	for c, g := range catRows {
		for _, r := range g {
			if v := sp.num(t, r, sp.y[0]); !math.IsNaN(v) {
				vals[c] += v
			}
		}
		if vals[c] > 0 {
			total += vals[c]
		} else {
			skipped++
		}
	}
	if skipped > 0 {
		out.Note = fmt.Sprintf("%d categories with no positive value are not drawn.", skipped)
	}
	const w, h, r = 420.0, 320.0, 130.0
	cx, cy := w/2, 150.0
	var b strings.Builder
	sp.svgFrame(&b, w, h)
	unit := sp.sec.Y.Unit
	b.WriteString(`<g class="marks">`)
	angle := -math.Pi / 2 // start at 12 o'clock, clockwise
	for c, v := range vals {
		if v <= 0 {
			continue
		}
		frac := v / total
		tip := esc(fmt.Sprintf("%s: %s %s (%.1f%%)", cats[c], fmtNum(v), unit, 100*frac))
		if frac >= 1-1e-12 {
			fmt.Fprintf(&b, `<circle class="mark" data-cat="%s" data-value="%s" data-angle="360" cx="%s" cy="%s" r="%s" fill="%s"><title>%s</title></circle>`,
				esc(cats[c]), strconv.FormatFloat(v, 'g', -1, 64), px(cx), px(cy), px(r), pal[c], tip)
			break
		}
		a1 := angle + 2*math.Pi*frac
		large := 0
		if frac > 0.5 {
			large = 1
		}
		fmt.Fprintf(&b, `<path class="mark" data-cat="%s" data-value="%s" data-angle="%s" d="M%s %s L%s %s A%s %s 0 %d 1 %s %s Z" fill="%s"><title>%s</title></path>`,
			esc(cats[c]), strconv.FormatFloat(v, 'g', -1, 64), px(360*frac), px(cx), px(cy),
			px(cx+r*math.Cos(angle)), px(cy+r*math.Sin(angle)), px(r), px(r), large,
			px(cx+r*math.Cos(a1)), px(cy+r*math.Sin(a1)), pal[c], tip)
		angle = a1
	}
	b.WriteString(`</g>`)
	// A pie has no axes: its caption says what the slices and their sizes are, with the unit.
	fmt.Fprintf(&b, `<text class="axis-label axis-label-x" x="%s" y="%s" text-anchor="middle">%s</text>`, px(cx), px(h-8),
		esc("slices: "+sp.xTitleText()+" · size: "+axisTitle(sp.sec.Y)))
	b.WriteString(`</svg>`)
	for c, v := range vals {
		item := legendItem{Colour: pal[c], Label: cats[c], Value: fmtNum(v) + " " + unit}
		if total > 0 && v > 0 {
			item.Value += fmt.Sprintf(" (%.1f%%)", 100*v/total)
		}
		out.Legend = append(out.Legend, item)
	}
	out.SVG = b.String()
	return out, nil
}
