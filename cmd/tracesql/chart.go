package main

import (
	"bufio"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// maxBarRows caps the rows a chart reads: more bars than this cannot be seen at a glance anyway.
const maxBarRows = 500

// chartWidth is the length, in character cells, of the longest bar.
const chartWidth = 40

// eighths are the partial block characters for 1/8 … 7/8 of a cell.
var eighths = []rune{'▏', '▎', '▍', '▌', '▋', '▊', '▉'}

// keyColumns are integer columns that name a row rather than measure it.
var keyColumns = map[string]bool{"rank": true, "stream": true, "pid": true, "tid": true, "step": true,
	"iteration": true, "trace_id": true, "device": true, "seq": true, "correlation": true}

var errStopRows = fmt.Errorf("stop reading rows")

func isKeyColumn(name string) bool {
	n := strings.ToLower(name)
	return keyColumns[n] || strings.HasSuffix(n, "_id") || strings.HasSuffix(n, "_idx")
}

// hasBarValues reports whether the result has a column bar draws.
func (r *result) hasBarValues() bool {
	for i, name := range r.names {
		if r.numeric[i] && !isKeyColumn(name) {
			return true
		}
	}
	return false
}

// bar renders the result as horizontal bars: one block per numeric column, one bar per row, labelled by
// the row's text and key columns (rank, stream, …). Bars are scaled to the largest |value| of the column;
// negative values are drawn to the same scale and printed with their sign.
func (r *result) bar(w *bufio.Writer) (int64, error) {
	var labelCols, valueCols []int
	for i, name := range r.names {
		if r.numeric[i] && !isKeyColumn(name) {
			valueCols = append(valueCols, i)
		} else {
			labelCols = append(labelCols, i)
		}
	}
	var labels []string
	values := make([][]barValue, len(valueCols))
	more := false
	n, err := r.each(func(row int64) error {
		if row >= maxBarRows {
			more = true
			return errStopRows
		}
		var parts []string
		for _, c := range labelCols {
			if len(labelCols) > 1 && isKeyColumn(r.names[c]) {
				parts = append(parts, escapeControls(r.names[c]+" "+r.text(c, textTable)))
			} else {
				parts = append(parts, escapeControls(r.text(c, textTable)))
			}
		}
		if len(parts) == 0 {
			parts = append(parts, strconv.FormatInt(row+1, 10))
		}
		labels = append(labels, strings.Join(parts, " · "))
		for k, c := range valueCols {
			values[k] = append(values[k], r.barValue(c))
		}
		return nil
	})
	if err == errStopRows {
		n, err = n-1, nil
	}
	if err != nil {
		return n, err
	}
	if len(valueCols) == 0 {
		return n, fmt.Errorf("bar chart: the result has no numeric column to draw") // (renderRows shows such a result as a table)
	}
	if n == 0 {
		// No bars: the empty table says "0 rows" where bare column titles would look like a broken chart.
		return r.table(w, maxTableRows)
	}
	labelWidth := 0
	for _, l := range labels {
		labelWidth = max(labelWidth, displayWidth(l))
	}
	labelWidth = min(labelWidth, 48)
	if r.screenWidth > 0 {
		labelWidth = min(labelWidth, max(12, r.screenWidth/3))
	}
	for k, c := range valueCols {
		if k > 0 {
			w.WriteByte('\n')
		}
		w.WriteString(r.names[c] + "\n")
		// Only finite values set the scale: one inf would squash every other bar to nothing.
		scale, negative := 0.0, false
		for _, v := range values[k] {
			if v.drawable() {
				scale = math.Max(scale, math.Abs(v.f))
				negative = negative || v.f < 0
			}
		}
		// On a terminal the bars shorten so that a row fits its width (label, " │", bar, " ", value).
		width := chartWidth
		if r.screenWidth > 0 {
			textWidth := 0
			for _, v := range values[k] {
				textWidth = max(textWidth, displayWidth(v.text))
			}
			width = min(chartWidth, max(8, r.screenWidth-labelWidth-2-1-textWidth-1))
		}
		for i, l := range labels {
			w.WriteString(padRight(truncateWidth(l, labelWidth), labelWidth))
			w.WriteString(" │")
			v := values[k][i]
			if negative {
				// A column with negative values (trace_diff's differences) diverges from an axis in
				// the middle: negative bars grow left of it, positive ones right.
				left, right := "", ""
				if v.drawable() && v.f < 0 {
					left = strings.Repeat("█", int(math.Round(min(-v.f/scale, 1)*float64(width/2))))
				} else if v.drawable() {
					right = barOf(v.f, scale, width/2)
				}
				w.WriteString(strings.Repeat(" ", width/2-utf8.RuneCountInString(left)) + left + "┊" + right)
			} else if v.drawable() {
				w.WriteString(barOf(v.f, scale, width))
			}
			w.WriteString(" " + v.text + "\n")
		}
	}
	if more {
		fmt.Fprintf(w, "(only the first %d rows are drawn)\n", maxBarRows)
	}
	return n, nil
}

// barValue is one numeric cell of a bar chart: its magnitude for the bar and its text beside it.
type barValue struct {
	f    float64
	text string
	ok   bool // f is a number (not NULL, not a type toFloat does not know)
}

// drawable reports values that get a bar: NULL, NaN and ±Inf are shown as text only.
func (v barValue) drawable() bool { return v.ok && !math.IsNaN(v.f) && !math.IsInf(v.f, 0) }

// barValue reads column c of the current row. Integers are printed exactly (a BIGINT near 2^63
// or a HUGEINT would lose digits through float64); only the bar length goes through float64.
func (r *result) barValue(c int) barValue {
	x := r.vals[c]
	f, ok := toFloat(x)
	v := barValue{f: f, ok: ok}
	switch x.(type) {
	case nil:
		v.text = "NULL"
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint, *big.Int:
		v.text = r.text(c, textTable)
	case float32, float64, duckdb.Decimal:
		v.text = formatValue(f)
	default:
		v.text = escapeControls(r.text(c, textTable))
	}
	return v
}

// barOf draws |v|/scale of chartWidth cells with eighth-cell resolution; v must be finite.
func barOf(v, scale float64, width int) string {
	if scale == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	e := int(math.Round(min(math.Abs(v)/scale, 1) * float64(width) * 8))
	var b strings.Builder
	b.WriteString(strings.Repeat("█", e/8))
	if e%8 > 0 {
		b.WriteRune(eighths[e%8-1])
	}
	return b.String()
}

// formatValue prints a float beside its bar: whole numbers without a fraction, others with two
// decimals, magnitudes from 1e15 on in exponent notation (not a 300-digit number), and nan/inf/-inf as
// DuckDB spells them.
func formatValue(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return string(appendFloat(nil, v, 64, false))
	case math.Abs(v) >= 1e15:
		return strconv.FormatFloat(v, 'g', 6, 64)
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) < 1:
		return strconv.FormatFloat(v, 'g', 3, 64) // 0.004, not 0.00
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case int16:
		return float64(x), true
	case int8:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint8:
		return float64(x), true
	case int:
		return float64(x), true
	case duckdb.Decimal:
		return x.Float64(), true
	case *big.Int: // HUGEINT
		f, _ := new(big.Float).SetInt(x).Float64()
		return f, true
	}
	return 0, false
}

// padRight pads s with spaces to width terminal cells.
func padRight(s string, width int) string {
	if n := displayWidth(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}
