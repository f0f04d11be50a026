package sqlfuncs

// _export_kernel_sequences_overlay(operator_name, output_dir, min_pattern_len, top_k, rank, label, compress, compat):
// writes output_dir/overlaid_<trace file name>, the trace of one rank with its frequent kernel sequences marked, as
// HTA's get_frequent_cuda_kernel_sequences does (hta-spec.md §4.9 step 5). The public, NULL-safe signature is the
// export_kernel_sequences_overlay macro in queries/views/40_kernel_sequences.sql.
//
// The events of the top_k patterns (each root op, everything below it, and its GPU events) get
// args.Patterns = {pattern: count, ...}. With compress, every other complete (ph X) event loses its args and its
// name is replaced by a symbol id (the position of the name among the trace's distinct event names in file order);
// the "PyTorch Profiler" span (pid "Spans"; outside compat mode also the 2021 profiler's, pid "Traces") gets the
// id → name dictionary as its args (as HTA; when the trace has no such span the dictionary is written as the
// top-level key "tracesqlSymbols" instead, so it is never lost; a trace in the plain array form comes out in the
// object form for that).
//
// The original file is streamed: each event is copied byte for byte unless it changes, and only the changed fields
// are rewritten. Output is compact JSON, gzip-compressed when the output name ends in .gz (compat: always, as HTA,
// whatever the name).

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

func init() {
	addTable("_export_kernel_sequences_overlay", func(conn *sql.Conn, env *Env) error {
		varchar, err := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
		if err != nil {
			return err
		}
		bigint, err := duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
		if err != nil {
			return err
		}
		boolean, err := duckdb.NewTypeInfo(duckdb.TYPE_BOOLEAN)
		if err != nil {
			return err
		}
		return duckdb.RegisterTableUDF(conn, "_export_kernel_sequences_overlay", duckdb.RowTableFunction{
			Config: duckdb.TableFunctionConfig{Arguments: []duckdb.TypeInfo{
				varchar, varchar, bigint, bigint, bigint, varchar, boolean, boolean}},
			BindArgumentsContext: func(ctx context.Context, _ map[string]any, args ...any) (duckdb.RowTableSource, error) {
				for i, v := range args {
					if v == nil {
						return nil, fmt.Errorf("_export_kernel_sequences_overlay: argument %d is NULL (call export_kernel_sequences_overlay)", i+1)
					}
				}
				r := &argReader{args: args}
				req := OverlayRequest{
					OperatorName: readArg[string](r, 0, "operator_name"), OutputDir: readArg[string](r, 1, "output_dir"),
					MinPatternLen: readArg[int64](r, 2, "min_pattern_len"), TopK: readArg[int64](r, 3, "top_k"), Rank: readArg[int64](r, 4, "rank"),
					Label: readArg[string](r, 5, "label"), Compress: readArg[bool](r, 6, "compress"), Compat: readArg[bool](r, 7, "compat"),
				}
				if r.err != nil {
					return nil, fmt.Errorf("_export_kernel_sequences_overlay: %w (call export_kernel_sequences_overlay)", r.err)
				}
				ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
				defer cancel()
				res, err := ExportKernelSequencesOverlay(ctx, env.DB, req)
				if err != nil {
					return nil, err
				}
				return &overlayResult{res: res, varchar: varchar, bigint: bigint}, nil
			},
		})
	})
}

// OverlayRequest are the arguments of _export_kernel_sequences_overlay.
type OverlayRequest struct {
	OperatorName  string
	OutputDir     string
	MinPatternLen int64
	TopK          int64 // <= 0: every pattern
	Rank          int64
	Label         string // "" = the only trace of that rank, whatever its label
	Compress      bool
	Compat        bool
}

// OverlayResult describes the file written.
type OverlayResult struct {
	Path     string
	Patterns int64 // patterns overlaid
	Marked   int64 // events that got args.Patterns
}

type overlayResult struct {
	res             OverlayResult
	done            bool
	varchar, bigint duckdb.TypeInfo
}

func (o *overlayResult) ColumnInfos() []duckdb.ColumnInfo {
	return []duckdb.ColumnInfo{{Name: "path", T: o.varchar}, {Name: "patterns", T: o.bigint}, {Name: "marked_events", T: o.bigint}}
}
func (o *overlayResult) Cardinality() *duckdb.CardinalityInfo {
	return &duckdb.CardinalityInfo{Cardinality: 1, Exact: true}
}
func (o *overlayResult) Init() {}
func (o *overlayResult) FillRow(row duckdb.Row) (bool, error) {
	if o.done {
		return false, nil
	}
	o.done = true
	if err := duckdb.SetRowValue(row, 0, o.res.Path); err != nil {
		return false, err
	}
	if err := duckdb.SetRowValue(row, 1, o.res.Patterns); err != nil {
		return false, err
	}
	return true, duckdb.SetRowValue(row, 2, o.res.Marked)
}

// ExportKernelSequencesOverlay computes the top patterns with the SQL analysis and writes the overlaid trace.
func ExportKernelSequencesOverlay(ctx context.Context, db *sql.DB, req OverlayRequest) (OverlayResult, error) {
	var res OverlayResult
	if req.OutputDir == "" {
		return res, errors.New("export_kernel_sequences_overlay: output_dir is required (an empty string names no directory)")
	}
	req.OutputDir = expandHome(req.OutputDir)
	if req.OperatorName == "" {
		return res, errors.New("export_kernel_sequences_overlay: operator_name is required (a substring of the CPU op names, e.g. 'aten::linear')")
	}
	if req.MinPatternLen < 0 {
		return res, fmt.Errorf("export_kernel_sequences_overlay: min_pattern_len must be at least 0, not %d", req.MinPatternLen)
	}
	tr, err := resolveTrace(ctx, db, req.Label, req.Rank)
	if err != nil {
		return res, fmt.Errorf("export_kernel_sequences_overlay: %w", err)
	}
	traceID, lf := tr.id, tr.file
	if err := lf.unchanged(); err != nil {
		return res, fmt.Errorf("export_kernel_sequences_overlay: %w", err)
	}

	// The top_k patterns in output order (count desc, pattern asc), one row each (ev NULL), then their
	// members (pattern NULL): a pattern can be long (460 KB on df_index_resolver's
	// CompiledFunctionBackward), and repeated on each of its 11.5k member rows it took 16 GB.
	q := `WITH r AS MATERIALIZED (SELECT pattern, members FROM _sq_kseq_roots(?::BOOLEAN, ?::VARCHAR, ?::BIGINT, ?::BIGINT, NULLIF(?::VARCHAR, '')) WHERE trace_id = ?),
		p AS (SELECT pattern, count(*) AS n FROM r GROUP BY pattern),
		top AS MATERIALIZED (SELECT pattern, n, row_number() OVER (ORDER BY n DESC, pattern) AS k FROM p QUALIFY ? <= 0 OR k <= ?)
		SELECT k, pattern, n, NULL::BIGINT AS ev FROM top
		UNION ALL
		SELECT top.k, NULL, top.n, unnest(r.members) FROM top JOIN r USING (pattern)`
	rows, err := db.QueryContext(ctx, q, req.Compat, req.OperatorName, req.MinPatternLen, req.Rank, req.Label, traceID, req.TopK, req.TopK)
	if err != nil {
		return res, fmt.Errorf("export_kernel_sequences_overlay: patterns: %w", err)
	}
	type pat struct {
		name  string
		count int64
	}
	pats := map[int64]pat{}
	evPats := map[int64][]int64{}
	for rows.Next() {
		var k, cnt int64
		var name sql.NullString
		var ev sql.NullInt64
		if err := rows.Scan(&k, &name, &cnt, &ev); err != nil {
			rows.Close()
			return res, fmt.Errorf("export_kernel_sequences_overlay: patterns: %w", err)
		}
		if name.Valid {
			pats[k] = pat{name.String, cnt}
		}
		if ev.Valid {
			evPats[ev.Int64] = append(evPats[ev.Int64], k)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, fmt.Errorf("export_kernel_sequences_overlay: patterns: %w", err)
	}
	if len(pats) == 0 {
		// HTA writes no file either: a copy with nothing marked would pass for a result
		kernels := "GPU kernels"
		if req.Compat {
			kernels = "GPU kernels on a stream above 0 (HTA's link of kernel to launch; ROCm kernels run on stream 0: without compat they count)"
		}
		return res, fmt.Errorf("export_kernel_sequences_overlay: no CPU op of rank %d whose name contains %q launches at least min_pattern_len (%d) %s: no pattern to overlay, no file written", req.Rank, req.OperatorName, req.MinPatternLen, kernels)
	}
	// One JSON object per distinct set of patterns.
	marks := make(map[int64][]byte, len(evPats))
	cache := map[string][]byte{}
	for ev, ks := range evPats {
		ks = sortedUnique(ks)
		key := fmt.Sprint(ks)
		b, ok := cache[key]
		if !ok {
			var buf bytes.Buffer
			buf.WriteByte('{')
			for i, k := range ks {
				if i > 0 {
					buf.WriteByte(',')
				}
				name, _ := json.Marshal(pats[k].name)
				buf.Write(name)
				buf.WriteByte(':')
				buf.WriteString(strconv.FormatInt(pats[k].count, 10))
			}
			buf.WriteByte('}')
			b = buf.Bytes()
			cache[key] = b
		}
		marks[ev] = b
	}

	var syms map[string]int
	var symNames []string
	if req.Compress {
		var err error
		if syms, symNames, err = symbolTable(ctx, db, traceID); err != nil {
			return res, fmt.Errorf("export_kernel_sequences_overlay: names: %w", err)
		}
	}

	out := filepath.Join(req.OutputDir, "overlaid_"+lf.exportBase())
	if err := RefuseOwnFiles(ctx, db, out); err != nil {
		return res, fmt.Errorf("export_kernel_sequences_overlay: %w", err)
	}
	marked, err := writeOverlay(ctx, lf, out, overlayEdit{marks: marks, syms: syms, symNames: symNames,
		compress: req.Compress, gzipOut: req.Compat || strings.HasSuffix(strings.ToLower(out), ".gz"), legacySpan: !req.Compat})
	if err != nil {
		return res, fmt.Errorf("export_kernel_sequences_overlay: %s: %w", out, err)
	}
	return OverlayResult{Path: out, Patterns: int64(len(pats)), Marked: marked}, nil
}

// symbolTable numbers the trace's distinct event names in file order (compress's symbol ids): name → id, and
// the names by id. A failed read is an error, never a partial table.
func symbolTable(ctx context.Context, db *sql.DB, traceID int64) (map[string]int, []string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM events WHERE trace_id = ? AND name IS NOT NULL GROUP BY name ORDER BY min(ev_idx)`, traceID)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	syms := map[string]int{}
	var names []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, nil, err
		}
		syms[s] = len(names)
		names = append(names, s)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return syms, names, nil
}

func sortedUnique(ks []int64) []int64 {
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	out := ks[:0]
	for i, k := range ks {
		if i == 0 || k != ks[i-1] {
			out = append(out, k)
		}
	}
	return out
}

// overlayEdit says how events change: marks[ev_idx] = the args.Patterns object; syms = name → symbol id.
type overlayEdit struct {
	marks    map[int64][]byte
	syms     map[string]int
	symNames []string
	compress bool
	gzipOut  bool
	// legacySpan: the 2021 profiler's span (pid "Traces") takes the dictionary too; HTA looks for pid "Spans" only.
	legacySpan bool
}

// writeOverlay streams src (plain or gzip JSON, object or bare-array form) to dst with the edits applied and returns
// the number of events marked.
func writeOverlay(ctx context.Context, src loadedFile, dst string, ed overlayEdit) (int64, error) {
	ow := &overlayWriter{ed: ed, ctx: ctx}
	err := rewriteTrace(src, dst, ed.gzipOut, func(r io.Reader, w *bufio.Writer) error {
		ow.w = w
		return ow.run(newRawDecoder(r))
	})
	if err != nil {
		return 0, err
	}
	return ow.marked, nil
}

type overlayWriter struct {
	ed       overlayEdit
	w        *bufio.Writer
	ctx      context.Context
	marked   int64
	sawSpans bool
	fields   objFields
}

func (o *overlayWriter) run(dec *rawDecoder) error {
	return copyTrace(dec, o.w, func() error { return o.events(dec) }, o.symbols)
}

// symbols writes the top-level "tracesqlSymbols" key (after a comma when more keys come before it) when
// names were compressed and no profiler span took the dictionary.
func (o *overlayWriter) symbols(comma bool) {
	if !o.ed.compress || o.sawSpans || len(o.ed.symNames) == 0 {
		return
	}
	if comma {
		o.w.WriteByte(',')
	}
	o.w.WriteString(`"tracesqlSymbols":`)
	o.w.Write(o.dictionary())
}

// events copies the elements of an array whose '[' was consumed, through its ']'.
func (o *overlayWriter) events(dec *rawDecoder) error {
	o.w.WriteByte('[')
	for idx := int64(0); ; idx++ {
		more, err := dec.more()
		if err != nil {
			return fmt.Errorf("event %d: %w", idx, err)
		} else if !more {
			break
		}
		if idx&0xffff == 0 {
			if err := o.ctx.Err(); err != nil {
				return err
			}
		}
		raw, err := dec.value()
		if err != nil {
			return fmt.Errorf("event %d: %w", idx, err)
		}
		if idx > 0 {
			o.w.WriteByte(',')
		}
		if err := o.event(idx, raw); err != nil {
			return fmt.Errorf("event %d: %w", idx, err)
		}
	}
	if err := dec.expect(']'); err != nil {
		return err
	}
	o.w.WriteByte(']')
	return nil
}

func (o *overlayWriter) event(idx int64, raw []byte) error {
	mark, marked := o.ed.marks[idx]
	if !marked && !o.ed.compress {
		o.w.Write(raw)
		return nil
	}
	fields, ok := splitObject(raw, o.fields[:0])
	o.fields = fields
	if !ok {
		o.w.Write(raw) // not an object: leave it alone
		return nil
	}
	get := func(k string) []byte { return fields.get(raw, k) }
	isX := string(get("ph")) == `"X"`
	if !marked && !isX {
		o.w.Write(raw) // compression only touches complete events
		return nil
	}
	var newArgs, newName []byte
	switch {
	case marked:
		o.marked++
		newArgs = withPatterns(get("args"), mark)
	default:
		name := get("name")
		pid := string(get("pid"))
		span := (pid == `"Spans"` || o.ed.legacySpan && pid == `"Traces"`) && bytes.Contains(name, []byte("PyTorch Profiler"))
		if span {
			o.sawSpans = true
			newArgs = o.dictionary()
			break
		}
		newArgs = []byte("{}")
		if string(get("cat")) != `"Trace"` && name != nil {
			var s string
			if json.Unmarshal(name, &s) == nil {
				if id, ok := o.ed.syms[s]; ok {
					newName = []byte(`"` + strconv.Itoa(id) + `"`)
				}
			}
		}
	}
	o.w.WriteByte('{')
	wroteArgs := false
	for i, f := range fields {
		if i > 0 {
			o.w.WriteByte(',')
		}
		key := raw[f.ks:f.ke]
		o.w.Write(raw[f.ks-1 : f.ke+1])
		o.w.WriteByte(':')
		switch {
		case string(key) == "args":
			o.w.Write(newArgs)
			wroteArgs = true
		case string(key) == "name" && newName != nil:
			o.w.Write(newName)
		default:
			o.w.Write(raw[f.vs:f.ve])
		}
	}
	if !wroteArgs && (marked || len(newArgs) > 2) {
		if len(fields) > 0 {
			o.w.WriteByte(',')
		}
		o.w.WriteString(`"args":`)
		o.w.Write(newArgs)
	}
	o.w.WriteByte('}')
	return nil
}

func (o *overlayWriter) dictionary() []byte {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, s := range o.ed.symNames {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(`"` + strconv.Itoa(i) + `":`)
		b, _ := json.Marshal(s)
		buf.Write(b)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// withPatterns returns args (a JSON object, null or absent) with "Patterns": mark added, or put in place of
// the value of a "Patterns" it holds (an overlay of an overlaid trace wrote the key twice).
func withPatterns(args, mark []byte) []byte {
	t := bytes.TrimSpace(args)
	var buf bytes.Buffer
	if fields, ok := splitObject(t, nil); ok {
		if f, ok := fields.find(t, "Patterns"); ok {
			buf.Write(t[:f.vs])
			buf.Write(mark)
			buf.Write(t[f.ve:])
			return buf.Bytes()
		}
	}
	if len(t) < 2 || t[0] != '{' {
		buf.WriteString(`{"Patterns":`)
		buf.Write(mark)
		buf.WriteByte('}')
		return buf.Bytes()
	}
	inner := bytes.TrimSpace(t[1 : len(t)-1])
	buf.WriteByte('{')
	if len(inner) > 0 {
		buf.Write(inner)
		buf.WriteByte(',')
	}
	buf.WriteString(`"Patterns":`)
	buf.Write(mark)
	buf.WriteByte('}')
	return buf.Bytes()
}
