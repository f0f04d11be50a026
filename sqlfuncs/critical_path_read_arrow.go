//go:build duckdb_arrow

package sqlfuncs

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"tracesql/graph"
)

// cpReadFrameColumns reads a trace's frame rows through DuckDB's Arrow interface, on connections of its
// own (never the one running the calling query). The two string columns come as DuckDB's hash() of each
// value, and are decoded through the trace's distinct strings, read beside the rows: handing 2.8M names
// over as strings and interning them was most of the read (the 1 GB inflation's frame query: 176 ms with
// the strings, 59 ms with their hashes; the distinct strings 16 ms). Two strings of one hash, or a hash
// the distinct strings lack, fall back to reading the strings.
func cpReadFrameColumns(ctx context.Context, db *sql.DB, table string, traceID int64, sizeHint int) (*graph.Frame, error) {
	dictc := make(chan struct{})
	var dict *cpSymbolDict
	var dictErr error
	go func() {
		dict, dictErr = cpReadSymbolDict(ctx, db, table, traceID)
		close(dictc)
	}()
	waitDict := func() (*cpSymbolDict, error) {
		<-dictc
		return dict, dictErr
	}
	f, err := cpReadArrow(ctx, db, cpFrameHashedQuery(table), traceID, sizeHint, waitDict)
	waitDict()
	if errors.Is(err, errCPSymbolMiss) {
		cpSymbolFallbacks.Add(1)
		return cpReadArrow(ctx, db, cpFrameQuery(table), traceID, sizeHint, nil)
	}
	return f, err
}

// cpSymbolFallbacks counts the reads that fell back to the strings (tests check it stays 0).
var cpSymbolFallbacks atomic.Int64

// cpFrameHashedQuery is cpFrameQuery with cat and name as their hash().
func cpFrameHashedQuery(table string) string {
	return `SELECT ev_idx, hash(coalesce(cat, '')) AS cat, hash(coalesce(name, '')) AS name, pid, tid, ts, dur, stream,
	       correlation, index_correlation
	FROM ` + table + ` WHERE trace_id = $1`
}

// errCPSymbolMiss: a hashed frame cannot be decoded (two strings of one hash, or a hash of no string read).
var errCPSymbolMiss = errors.New("frame symbols: hash not decodable")

// cpSymbolDict maps the hash() of a trace's categories and names to their symbol ids: an open-addressing
// table (DuckDB's hashes are well mixed, so their low bits index it), several times faster than a Go map
// over 5.6M lookups.
type cpSymbolDict struct {
	syms []string
	keys []uint64
	ids  []int32 // -1: empty slot
	mask uint64
}

// cpReadSymbolDict reads a trace's distinct categories and names with their hash(), in string order (so that
// symbol ids do not depend on the order DuckDB returns them in).
func cpReadSymbolDict(ctx context.Context, db *sql.DB, table string, traceID int64) (*cpSymbolDict, error) {
	rows, err := db.QueryContext(ctx, `SELECT s, hash(s) FROM (
	    SELECT DISTINCT coalesce(cat, '') AS s FROM `+table+` WHERE trace_id = $1
	    UNION SELECT DISTINCT coalesce(name, '') FROM `+table+` WHERE trace_id = $1)
	ORDER BY s`, traceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var entries []cpSymbolEntry
	for rows.Next() {
		var e cpSymbolEntry
		if err := rows.Scan(&e.s, &e.h); err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return newCPSymbolDict(entries)
}

// cpSymbolEntry is a string and its hash().
type cpSymbolEntry struct {
	s string
	h uint64
}

// newCPSymbolDict numbers the strings of entries in their order; two of one hash are errCPSymbolMiss.
func newCPSymbolDict(entries []cpSymbolEntry) (*cpSymbolDict, error) {
	size := 16
	for size < 2*len(entries) {
		size *= 2
	}
	d := &cpSymbolDict{keys: make([]uint64, size), ids: make([]int32, size), mask: uint64(size - 1)}
	for i := range d.ids {
		d.ids[i] = -1
	}
	for _, e := range entries {
		i := e.h & d.mask
		for d.ids[i] >= 0 {
			if d.keys[i] == e.h {
				return nil, errCPSymbolMiss // two strings, one hash
			}
			i = (i + 1) & d.mask
		}
		d.keys[i], d.ids[i] = e.h, int32(len(d.syms))
		d.syms = append(d.syms, e.s)
	}
	return d, nil
}

// lookup returns the symbol id of a hash, -1 when no string read has it.
func (d *cpSymbolDict) lookup(h uint64) int32 {
	for i := h & d.mask; ; i = (i + 1) & d.mask {
		switch id := d.ids[i]; {
		case id < 0:
			return -1
		case d.keys[i] == h:
			return id
		}
	}
}

// cpReadArrow runs q (cpFrameQuery's columns, strings or their hashes) for a trace into a frame. dict, when the
// strings come hashed, returns the table that decodes them; it is called when the first batch arrives.
func cpReadArrow(ctx context.Context, db *sql.DB, q string, traceID int64, sizeHint int, dict func() (*cpSymbolDict, error)) (*graph.Frame, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	f := cpNewFrame(sizeHint)
	err = conn.Raw(func(dc any) error {
		dconn, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("not a driver connection")
		}
		// String views: DuckDB hands short strings over inline instead of copying every name into one
		// buffer (reads ~10 % faster on trace_diff/control). The reader takes either layout.
		if ex, ok := dc.(driver.ExecerContext); ok {
			if _, err := ex.ExecContext(ctx, "SET produce_arrow_string_view = true", nil); err != nil {
				return err
			}
		}
		ar, err := duckdb.NewArrowFromConn(dconn)
		if err != nil {
			return err
		}
		rr, err := ar.QueryContext(ctx, q, traceID)
		if err != nil {
			return err
		}
		defer rr.Release()
		// DuckDB has run the query by now; converting its chunks to Arrow (the reader's Next) and copying
		// them into the frame run side by side, on two goroutines (the 1 GB inflation's 2.8M-row frame, read
		// cold: 460 -> 370 ms).
		batches := make(chan arrow.RecordBatch, 4)
		stop := make(chan struct{})
		go func() {
			defer close(batches)
			for rr.Next() {
				rec := rr.RecordBatch()
				rec.Retain()
				select {
				case batches <- rec:
				case <-stop:
					rec.Release()
					return
				}
			}
		}()
		defer func() {
			close(stop)
			for rec := range batches {
				rec.Release()
			}
		}()
		var in cpInterner
		var d *cpSymbolDict
		ints := []*[]int64{&f.EvIdx, nil, nil, &f.Pid, &f.Tid, &f.TS, &f.Dur, &f.Stream, &f.Corr, &f.IndexCorr}
		syms := []*[]int32{nil, &f.Cat, &f.Name}
		for rec := range batches {
			if dict != nil && d == nil {
				if d, err = dict(); err != nil {
					rec.Release()
					return err
				}
			}
			err := cpAppendBatch(rec, ints, syms, &in, d)
			rec.Release()
			if err != nil {
				return err
			}
		}
		f.Syms = in.syms
		if d != nil {
			f.Syms = d.syms
		}
		return rr.Err()
	})
	if err != nil {
		return nil, err
	}
	if dict != nil && f.Syms == nil { // no rows: no batch asked for the strings
		d, err := dict()
		if err != nil {
			return nil, err
		}
		f.Syms = d.syms
	}
	return f, nil
}

// cpAppendBatch appends one batch of cpFrameQuery's rows: the int64 columns copied into ints (nil
// for a string column), the strings interned into syms, or their hashes decoded through dict.
func cpAppendBatch(rec arrow.RecordBatch, ints []*[]int64, syms []*[]int32, in *cpInterner, dict *cpSymbolDict) error {
	n := int(rec.NumRows())
	if int(rec.NumCols()) != len(ints) {
		return fmt.Errorf("frame query returned %d columns", rec.NumCols())
	}
	for c := range ints {
		col := rec.Column(c)
		if ints[c] != nil {
			a, ok := col.(*array.Int64)
			if !ok {
				return fmt.Errorf("column %d: want int64, got %s", c, col.DataType())
			}
			vals := a.Int64Values()
			*ints[c] = append(*ints[c], vals[:n]...)
			if a.NullN() > 0 {
				out := (*ints[c])[len(*ints[c])-n:]
				for i := range n {
					if a.IsNull(i) {
						out[i] = -1 // not expected: the frame's columns are NOT NULL in practice
					}
				}
			}
			continue
		}
		if hashes, ok := col.(*array.Uint64); ok && dict != nil {
			out := *syms[c]
			prev, prevID := uint64(0), int32(-1)
			for _, h := range hashes.Uint64Values()[:n] { // (never NULL: the hash of a coalesced string)
				if prevID < 0 || h != prev {
					prev, prevID = h, dict.lookup(h)
					if prevID < 0 {
						return errCPSymbolMiss
					}
				}
				out = append(out, prevID)
			}
			*syms[c] = out
			continue
		}
		s, ok := col.(interface {
			arrow.Array
			Value(int) string
		})
		if !ok {
			return fmt.Errorf("column %d: want a string, got %s", c, col.DataType())
		}
		out := *syms[c]
		prev, prevID := "", int32(-1)
		for i := range n {
			v := ""
			if !s.IsNull(i) {
				v = s.Value(i)
			}
			if prevID < 0 || v != prev {
				prev, prevID = v, in.intern(v)
			}
			out = append(out, prevID)
		}
		*syms[c] = out
	}
	return nil
}
