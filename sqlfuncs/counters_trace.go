package sqlfuncs

// Counter time series support for queries/views/30_counters.sql:
//
//   - _np_argsort(BIGINT[]) → BIGINT[]: the permutation numpy 1.24's argsort(kind="quicksort") produces for the
//     keys (0-based input positions in output order). pandas' sort_values(by=one column) uses it, and it is not
//     stable, so HTA's queue-length and memory-bandwidth series order equal timestamps this way. Compat mode
//     reproduces that order with this function; SQL cannot.
//   - _cumsum(DOUBLE[]) → DOUBLE[]: a left-to-right float64 running sum (pandas' Series.cumsum), bit for bit: a
//     NaN element is NaN in the output and left out of the sum (r77 #3: one NaN made every later value NaN).
//     DuckDB's windowed sum may add in another order.
//   - _export_counters_trace(...): writes a trace with Chrome counter events appended (see exportCounters).

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"tracesql/graph"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

func init() {
	add("_np_argsort", func(conn *sql.Conn, env *Env) error {
		return registerListScalar(conn, "_np_argsort", duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, npArgsortUDF)
	})
	add("_cumsum", func(conn *sql.Conn, env *Env) error {
		return registerListScalar(conn, "_cumsum", duckdb.TYPE_DOUBLE, duckdb.TYPE_DOUBLE, cumsumUDF)
	})
	addTable("_export_counters_trace", registerExportCounters)
}

type listScalar struct {
	in, out duckdb.TypeInfo
	fn      func(values []driver.Value) (any, error)
}

func (s listScalar) Config() duckdb.ScalarFuncConfig {
	return duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{s.in}, ResultTypeInfo: s.out}
}

func (s listScalar) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: s.fn}
}

func registerListScalar(conn *sql.Conn, name string, in, out duckdb.Type, fn func([]driver.Value) (any, error)) error {
	mk := func(t duckdb.Type) (duckdb.TypeInfo, error) {
		child, err := duckdb.NewTypeInfo(t)
		if err != nil {
			return nil, err
		}
		return duckdb.NewListInfo(child)
	}
	inInfo, err := mk(in)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	outInfo, err := mk(out)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return duckdb.RegisterScalarUDF(conn, name, listScalar{in: inInfo, out: outInfo, fn: fn})
}

func npArgsortUDF(values []driver.Value) (any, error) {
	list, ok := values[0].([]any)
	if !ok {
		return nil, fmt.Errorf("_np_argsort: expected a BIGINT list, got %T", values[0])
	}
	keys := make([]int64, len(list))
	for i, v := range list {
		k, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("_np_argsort: element %d is %T, not BIGINT", i, v)
		}
		keys[i] = k
	}
	return NPArgsort(keys), nil
}

func cumsumUDF(values []driver.Value) (any, error) {
	list, ok := values[0].([]any)
	if !ok {
		return nil, fmt.Errorf("_cumsum: expected a DOUBLE list, got %T", values[0])
	}
	out := make([]float64, len(list))
	s := 0.0
	for i, v := range list {
		f, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("_cumsum: element %d is %T, not DOUBLE", i, v)
		}
		if math.IsNaN(f) {
			out[i] = math.NaN() // (an end's -NaN too: pandas shows NaN)
			continue
		}
		s += f
		out[i] = s
	}
	return out, nil
}

// NPArgsort returns the indices that sort keys in numpy 1.24's argsort(kind="quicksort") order (see
// graph.ArgsortQuick): pandas sorts with it, so HTA's order at equal keys depends on it.
func NPArgsort(keys []int64) []int64 {
	idx := graph.ArgsortQuick(keys)
	out := make([]int64, len(idx))
	for i, v := range idx {
		out[i] = int64(v)
	}
	return out
}

// ---- _export_counters_trace ----

func registerExportCounters(conn *sql.Conn, env *Env) error {
	t := func(x duckdb.Type) duckdb.TypeInfo {
		ti, err := duckdb.NewTypeInfo(x)
		if err != nil {
			panic(err) // primitive types cannot fail
		}
		return ti
	}
	f := duckdb.RowTableFunction{
		Config: duckdb.TableFunctionConfig{
			NamedArguments: map[string]duckdb.TypeInfo{
				"rank":        t(duckdb.TYPE_BIGINT),
				"output_dir":  t(duckdb.TYPE_VARCHAR),
				"label":       t(duckdb.TYPE_VARCHAR),
				"time_series": t(duckdb.TYPE_VARCHAR),
				"compat":      t(duckdb.TYPE_BOOLEAN),
			},
		},
		BindArgumentsContext: func(ctx context.Context, named map[string]any, _ ...any) (duckdb.RowTableSource, error) {
			var a counterArgs
			var ok [5]bool
			a.rank, ok[0] = named["rank"].(int64)
			a.outputDir, ok[1] = named["output_dir"].(string)
			a.label, ok[2] = named["label"].(string)
			a.timeSeries, ok[3] = named["time_series"].(string)
			a.compat, ok[4] = named["compat"].(bool)
			for _, b := range ok {
				if !b {
					return nil, fmt.Errorf("export_counters_trace: bad arguments %v", named)
				}
			}
			path, n, err := exportCounters(ctx, env.DB, a)
			if err != nil {
				return nil, fmt.Errorf("export_counters_trace: %w", err)
			}
			return &oneRow{path: path, n: n, done: path == ""}, nil
		},
	}
	return duckdb.RegisterTableUDF(conn, "_export_counters_trace", f)
}

// oneRow is export_counters_trace's result: the file written, or no row when none was (done from the start).
type oneRow struct {
	path string
	n    int64
	done bool
}

func (r *oneRow) ColumnInfos() []duckdb.ColumnInfo {
	s, _ := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	i, _ := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
	return []duckdb.ColumnInfo{{Name: "path", T: s}, {Name: "counter_events", T: i}}
}
func (r *oneRow) Cardinality() *duckdb.CardinalityInfo {
	if r.done {
		return &duckdb.CardinalityInfo{Cardinality: 0, Exact: true}
	}
	return &duckdb.CardinalityInfo{Cardinality: 1, Exact: true}
}
func (r *oneRow) Init() {}
func (r *oneRow) FillRow(row duckdb.Row) (bool, error) {
	if r.done {
		return false, nil
	}
	r.done = true
	if err := duckdb.SetRowValue(row, 0, r.path); err != nil {
		return false, err
	}
	return true, duckdb.SetRowValue(row, 1, r.n)
}

type counterArgs struct {
	rank       int64
	outputDir  string
	label      string // "" = any label (must then be unique)
	timeSeries string // comma-separated: queue_length, memory_bw
	compat     bool
}

// countersName is the name of the counters trace written for the trace file named base: HTA's replaces every
// ".json" of the name by "_with_counters.json" (and keeps a name without one); the default mode, the last only
// (a.json.b.json.gz → a.json.b_with_counters.json.gz), or appends "_with_counters.json".
func countersName(base string, compat bool) string {
	if compat {
		return strings.ReplaceAll(base, ".json", "_with_counters.json")
	}
	if i := strings.LastIndex(strings.ToLower(base), ".json"); i >= 0 { // (.JSON.GZ too, as the loader reads it: r78 #6)
		return base[:i] + "_with_counters" + base[i:]
	}
	return base + "_with_counters.json"
}

// exportCounters writes <output_dir>/<trace file name, ".json" → "_with_counters.json"> = the rank's original trace
// with Chrome counter events (ph "C") for the queue length of each stream and the memory bandwidth of each memory
// kind appended to traceEvents, as HTA's generate_trace_with_counters does. The original file is streamed through
// (never decoded as a whole); the counter rows come from the queue_length and memory_bw views in the requested mode.
// Compat mode writes what HTA writes (gzip whatever the name, µs timestamps as HTA rounds them); default mode
// writes gzip only for a .gz name and exact timestamps (µs with three decimals).
func exportCounters(ctx context.Context, db *sql.DB, a counterArgs) (string, int64, error) {
	if a.outputDir == "" {
		return "", 0, errors.New("output_dir is required")
	}
	a.outputDir = expandHome(a.outputDir)
	var queue, membw bool
	for _, s := range strings.Split(a.timeSeries, ",") {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "queue_length":
			queue = true
		case "memory_bw":
			membw = true
		case "":
		default:
			return "", 0, fmt.Errorf("unknown time series %q (want queue_length, memory_bw)", s)
		}
	}
	if !queue && !membw {
		// (a copy of the trace with no counter added is not what anyone asked for)
		return "", 0, fmt.Errorf("time_series %q names no series (want queue_length, memory_bw or both)", a.timeSeries)
	}
	// A second connection (querying through the one running this function deadlocks). A pool capped at one
	// connection would wait forever: fail after a while instead.
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := db.Conn(cctx)
	cancel()
	if err != nil {
		return "", 0, fmt.Errorf("no second database connection (is the pool limited to one?): %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET VARIABLE hta_compat = %t", a.compat)); err != nil {
		return "", 0, err
	}
	defer conn.ExecContext(context.Background(), "RESET VARIABLE hta_compat")

	// The trace.
	tr, err := resolveTrace(ctx, conn, a.label, a.rank)
	if err != nil {
		return "", 0, err
	}
	label, lf := tr.label, tr.file
	if err := lf.unchanged(); err != nil {
		return "", 0, err
	}
	// A trace this function wrote already holds its counter events: a second pass would add each sample
	// again beside the first (review r78 #9: 108 events, 54 distinct).
	var earlier int64
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM counters WHERE trace_id = ? AND (key = 'Queue Length' OR key = 'Memcpy BW')`,
		tr.id).Scan(&earlier); err != nil {
		return "", 0, err
	}
	if earlier > 0 {
		return "", 0, fmt.Errorf("%s already holds %d queue-length or memory-bandwidth counter events (it is an export_counters_trace output?): export from the original trace", lf.path, earlier)
	}

	// The counter events.
	var events []byte
	var n int64
	if queue {
		order := "stream, seq"
		if !a.compat {
			order = "pid, stream, seq"
		}
		q := `SELECT pid, ts, stream, queue_length FROM queue_length WHERE label = ? AND rank = ? ORDER BY ` + order
		rows, err := conn.QueryContext(ctx, q, label, a.rank)
		if err != nil {
			return "", 0, err
		}
		for rows.Next() {
			var pid, ts, stream, ql int64
			if err := rows.Scan(&pid, &ts, &stream, &ql); err != nil {
				rows.Close()
				return "", 0, err
			}
			events = append(events, `,{"pid":`...)
			events = strconv.AppendInt(events, pid, 10)
			events = append(events, `,"ts":`...)
			events = appendTS(events, ts, a.compat, false)
			events = append(events, `,"args":{"Queue Length":`...)
			events = strconv.AppendInt(events, ql, 10)
			events = append(events, `},"ph":"C","name":"Queue Length","id":`...)
			events = strconv.AppendInt(events, stream, 10)
			events = append(events, '}')
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return "", 0, err
		}
	}
	if membw {
		order := "name, seq"
		if !a.compat {
			order = "pid, name, seq"
		}
		q := `SELECT pid, ts, name, memory_bw_gbps FROM memory_bw WHERE label = ? AND rank = ? ORDER BY ` + order
		rows, err := conn.QueryContext(ctx, q, label, a.rank)
		if err != nil {
			return "", 0, err
		}
		for rows.Next() {
			var pid, ts int64
			var name string
			var bw float64
			if err := rows.Scan(&pid, &ts, &name, &bw); err != nil {
				rows.Close()
				return "", 0, err
			}
			events = append(events, `,{"pid":`...)
			events = strconv.AppendInt(events, pid, 10)
			events = append(events, `,"ts":`...)
			events = appendTS(events, ts, a.compat, true)
			events = append(events, `,"args":{"Memcpy BW":`...)
			events = appendPyFloat(events, bw)
			events = append(events, `},"ph":"C","name":`...)
			events = appendJSONString(events, name)
			events = append(events, '}')
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return "", 0, err
		}
	}

	if n == 0 {
		// No sample of the series (a CPU-only rank, or memory_bw where nothing is copied): no file and no
		// row, as HTA writes none; a copy named _with_counters that held no counter misled scripts.
		return "", 0, nil
	}

	// The output file.
	outName := countersName(lf.exportBase(), a.compat)
	out := filepath.Join(a.outputDir, outName)
	if err := RefuseOwnFiles(ctx, db, out); err != nil {
		return "", 0, err
	}
	gz := a.compat || strings.HasSuffix(strings.ToLower(outName), ".gz")
	if err := writeWithCounters(ctx, lf, out, gz, events); err != nil {
		return "", 0, err
	}
	return out, n, nil
}

// appendTS writes a timestamp in µs. Compat: HTA's integer µs (ts was rounded to whole µs), as a float for the
// memory series (HTA's frame there is float). Default: exact, µs with three decimals.
func appendTS(b []byte, ns int64, compat, float bool) []byte {
	if compat {
		b = strconv.AppendInt(b, ns/1000, 10)
		if float {
			b = append(b, ".0"...)
		}
		return b
	}
	// The sign, then the magnitude: -979,750 ns is -979.750 µs (a floored -980 and the remainder .250 wrote
	// -980.250, half a µs early).
	mag := uint64(ns)
	if ns < 0 {
		b, mag = append(b, '-'), -mag
	}
	us, frac := mag/1000, mag%1000
	b = strconv.AppendUint(b, us, 10)
	if frac != 0 {
		b = append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	}
	return b
}

// appendPyFloat writes v as Python's json module does (repr: shortest round-trip digits, "x.0" for integral
// values, exponent form below 1e-4 and from 1e16). NaN/Inf (not valid JSON) become null.
func appendPyFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	if v == 0 {
		if math.Signbit(v) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	e := strconv.FormatFloat(v, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return append(b, e...) // Go's 'e' form matches repr: mantissa digits, e-05 / e+16
	}
	f := strconv.FormatFloat(v, 'f', -1, 64)
	b = append(b, f...)
	if !strings.ContainsRune(f, '.') {
		b = append(b, ".0"...)
	}
	return b
}

// writeWithCounters copies the trace src to out, inserting events (each preceded by a comma) before the closing
// bracket of the top-level traceEvents array (or of the top-level array for the array form).
func writeWithCounters(ctx context.Context, src loadedFile, out string, gz bool, events []byte) error {
	return rewriteTrace(src, out, gz, func(r io.Reader, w *bufio.Writer) error {
		if err := spliceEvents(ctx, r, w, events); err != nil {
			return fmt.Errorf("%s: %w", src.path, err)
		}
		return nil
	})
}

// spliceEvents streams JSON from r to w, tracking only strings and bracket depth, and writes events before the
// bracket that closes the traceEvents array of the top-level object (or the top-level array itself). Strings are
// skipped with bytes.IndexByte (most of a trace's bytes are inside strings).
func spliceEvents(ctx context.Context, r io.Reader, w io.Writer, events []byte) error {
	buf := make([]byte, 1<<20)
	var (
		depth      int
		inString   bool
		backslash  int    // consecutive backslashes ending the string content scanned so far
		started    bool   // first non-space byte seen
		target     = -1   // depth inside the array to close, once found
		nonEmpty   bool   // the target array has an element
		done       bool   // events written: copy the rest
		collecting bool   // inside a depth-1 key string
		key        []byte // the last depth-1 key (first 64 bytes)
		afterColon bool   // at depth 1: between a key's ':' and the next ','
	)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, rerr := r.Read(buf)
		chunk := buf[:n]
		from := 0
		for i := 0; i < len(chunk) && !done; i++ {
			if inString {
				// find the closing quote: one preceded by an even number of backslashes
				seg := i
				for {
					q := bytes.IndexByte(chunk[i:], '"')
					if q < 0 {
						run := trailingBackslashes(chunk[seg:])
						if run == len(chunk)-seg {
							backslash += run
						} else {
							backslash = run
						}
						if collecting && len(key) < 64 {
							key = append(key, chunk[seg:min(len(chunk), seg+64-len(key))]...)
						}
						i = len(chunk)
						break
					}
					q += i
					run := trailingBackslashes(chunk[seg:q])
					if run == q-seg {
						run += backslash
					}
					if run%2 == 1 {
						i = q + 1
						continue
					}
					if collecting && len(key) < 64 {
						key = append(key, chunk[seg:min(q, seg+64-len(key))]...)
					}
					inString, collecting, backslash, i = false, false, 0, q
					break
				}
				continue
			}
			if started && (target < 0 || nonEmpty) {
				// fast path: only quotes, brackets, braces, commas and colons matter
				for i < len(chunk) && !jsonSpecial[chunk[i]] {
					i++
				}
				if i == len(chunk) {
					break
				}
			}
			c := chunk[i]
			switch c {
			case ' ', '\t', '\n', '\r':
				continue
			}
			if target > 0 && depth >= target && !(depth == target && c == ']') {
				nonEmpty = true
			}
			switch c {
			case '"':
				inString = true
				if depth == 1 && !afterColon {
					collecting, key = true, key[:0]
				}
			case ':':
				if depth == 1 {
					afterColon = true
				}
			case ',':
				if depth == 1 {
					afterColon = false
				}
			case '[', '{':
				depth++
				if !started && c == '[' {
					target = 1 // array form: the whole file is the event list
				} else if c == '[' && depth == 2 && target < 0 && afterColon && string(key) == "traceEvents" {
					target = 2
				}
			case ']', '}':
				if depth == target && c == ']' {
					if _, err := w.Write(chunk[from:i]); err != nil {
						return err
					}
					ev := events
					if !nonEmpty && len(ev) > 0 {
						ev = ev[1:] // no leading comma in an empty array
					}
					if _, err := w.Write(ev); err != nil {
						return err
					}
					from, done = i, true
				}
				depth--
			}
			started = true
		}
		if _, err := w.Write(chunk[from:]); err != nil {
			return err
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if !done {
		return errors.New("no traceEvents array found")
	}
	return nil
}

var jsonSpecial = func() (t [256]bool) {
	for _, c := range []byte(`"[]{},:`) {
		t[c] = true
	}
	return
}()

func trailingBackslashes(b []byte) int {
	n := 0
	for n < len(b) && b[len(b)-1-n] == '\\' {
		n++
	}
	return n
}

// appendJSONString appends s as a JSON string. Go's quoting (strconv.Quote) writes a control character as \x01,
// which no JSON reader accepts; invalid UTF-8 (which the loader keeps) becomes U+FFFD. HTML characters stay as
// they are, as Python's json writes them.
func appendJSONString(dst []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}
