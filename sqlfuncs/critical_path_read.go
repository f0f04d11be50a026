package sqlfuncs

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"tracesql/graph"
)

// Reading a rank's HTA frame for the critical path. The frame tables (_hta_frame_default /
// _hta_frame_compat, filled at load time) are read in storage order, with only the columns the graph
// needs; the rows are put in ev_idx order here (a counting placement: ev_idx is dense), which is
// cheaper than DuckDB's ORDER BY. The synchronisation args (wait_on_*) are read separately for the
// few cuda_sync rows only. The column read itself is cpReadFrameColumns: DuckDB's Arrow interface
// with -tags duckdb_arrow (critical_path_read_arrow.go), database/sql Scan otherwise
// (critical_path_read_scan.go).

// cpFrameQuery selects the frame columns in Frame order: ev_idx, cat, name, pid, tid, ts, dur,
// stream, correlation, index_correlation.
func cpFrameQuery(table string) string {
	return `SELECT ev_idx, cat, coalesce(name, '') AS name, pid, tid, ts, dur, stream, correlation, index_correlation
	FROM ` + table + ` WHERE trace_id = $1`
}

// cpNewFrame returns an empty frame with room for n rows.
func cpNewFrame(n int) *graph.Frame {
	n = max(n, 0)
	return &graph.Frame{EvIdx: make([]int64, 0, n), Cat: make([]int32, 0, n), Name: make([]int32, 0, n),
		Pid: make([]int64, 0, n), Tid: make([]int64, 0, n), TS: make([]int64, 0, n), Dur: make([]int64, 0, n),
		Stream: make([]int64, 0, n), Corr: make([]int64, 0, n), IndexCorr: make([]int64, 0, n)}
}

// cpInterner interns strings that may live in memory about to be reused (Arrow buffers): a new
// string is copied before it is kept.
type cpInterner struct {
	ids  map[string]int32
	syms []string
}

func (in *cpInterner) intern(s string) int32 {
	if id, ok := in.ids[s]; ok {
		return id
	}
	if in.ids == nil {
		in.ids = map[string]int32{}
	}
	s = strings.Clone(s)
	id := int32(len(in.syms))
	in.ids[s] = id
	in.syms = append(in.syms, s)
	return id
}

// cpFrameKey identifies a trace's frame as read: the database, the trace, its event count (which
// changes when a trace is reloaded) and the mode.
type cpFrameKey struct {
	env    *Env
	trace  int64
	events int64
	compat bool
}

// cpFrameCache keeps the last frames read, shared by both algorithms and every window of a trace
// (frames are read-only once read). Two: a frame of a 1M-event trace holds ~100 MB.
var cpFrameCache = graphCache[cpFrameKey, *graph.Frame]{size: 2}

// cachedFrame returns a trace's frame, from the cache or read.
func cachedFrame(ctx context.Context, env *Env, tr cpTrace, compat bool) (*graph.Frame, error) {
	key := cpFrameKey{env, tr.id, tr.events, compat}
	if f, ok := cpFrameCache.get(key); ok {
		return f, nil
	}
	var f *graph.Frame
	var err error
	if compat {
		f, _, err = compatFrame(ctx, env, tr)
	} else {
		f, err = readFrame(ctx, env.DB, tr.id, false, tr.events)
	}
	if err != nil {
		return nil, err
	}
	cpFrameCache.put(key, f)
	return f, nil
}

// compatFrame returns a trace's compat frame: derived from its default frame (cached, and shared with the
// default mode) when _compat_frame_exceptions changes no row, which saves reading _hta_frame_compat's join
// (trace_diff/control: 17 -> 12 ms of a 38 ms critical path); read from _hta_frame_compat otherwise.
// derived says which.
func compatFrame(ctx context.Context, env *Env, tr cpTrace) (f *graph.Frame, derived bool, err error) {
	type result struct {
		drop    []int64
		changed bool
		err     error
	}
	exc := make(chan result, 1)
	go func() {
		var r result
		rows, err := env.DB.QueryContext(ctx, `SELECT ev_idx, changed FROM _compat_frame_exceptions($1)`, tr.id)
		if err != nil {
			exc <- result{err: err}
			return
		}
		defer rows.Close()
		for rows.Next() {
			var ev int64
			var changed bool
			if err := rows.Scan(&ev, &changed); err != nil {
				exc <- result{err: err}
				return
			}
			r.drop = append(r.drop, ev)
			r.changed = r.changed || changed
		}
		r.err = rows.Err()
		exc <- r
	}()
	def, err := cachedFrame(ctx, env, tr, false)
	r := <-exc
	if err != nil {
		return nil, false, err
	}
	if r.err != nil {
		return nil, false, fmt.Errorf("read _compat_frame_exceptions: %w", r.err)
	}
	if r.changed {
		f, err = readFrame(ctx, env.DB, tr.id, true, tr.events)
		return f, false, err
	}
	return cpCompatFromDefault(def, r.drop), true, nil
}

// cpCompatFromDefault builds the compat frame of a trace whose compat frame differs from its default frame
// only by the dropped rows and HTA's whole-µs times (_hta_frame_compat's ts, dur: the start rounded up,
// the end rounded down). def is left as it is.
func cpCompatFromDefault(def *graph.Frame, drop []int64) *graph.Frame {
	n := def.Len()
	dropped := make([]bool, n)
	kept := n
	for _, ev := range drop {
		if r := cpFrameRow(def, ev); r >= 0 && !dropped[r] {
			dropped[r] = true
			kept--
		}
	}
	f := &graph.Frame{}
	if kept == n {
		// frames are read-only once read: share every column but the times
		*f = *def
		f.TS, f.Dur = slices.Clone(def.TS), slices.Clone(def.Dur)
	} else {
		perm := make([]int32, 0, kept)
		for i := range n {
			if !dropped[i] {
				perm = append(perm, int32(i))
			}
		}
		*f = graph.Frame{
			EvIdx: cpPermute(def.EvIdx, perm), Cat: cpPermute(def.Cat, perm), Name: cpPermute(def.Name, perm),
			Pid: cpPermute(def.Pid, perm), Tid: cpPermute(def.Tid, perm), TS: cpPermute(def.TS, perm),
			Dur: cpPermute(def.Dur, perm), Stream: cpPermute(def.Stream, perm), Corr: cpPermute(def.Corr, perm),
			IndexCorr: cpPermute(def.IndexCorr, perm), WaitOnStream: cpPermute(def.WaitOnStream, perm),
			WaitOnCorr: cpPermute(def.WaitOnCorr, perm), Syms: def.Syms,
		}
	}
	for i, ts := range f.TS {
		start, end := htaWholeMicros(ts, f.Dur[i])
		f.TS[i], f.Dur[i] = start, end-start
	}
	return f
}

// htaWholeMicros is _hta_start and _hta_end of 10_hta_frame.sql (which say why): HTA's start rounded up
// and end rounded down to whole µs, in ns, computed on float64 µs as HTA computes them.
func htaWholeMicros(ts, dur int64) (start, end int64) {
	if ts%1000 == 0 && dur%1000 == 0 {
		return ts, ts + dur
	}
	tsUs := nsAsFloatMicros(ts)
	return int64(math.Ceil(tsUs)) * 1000, int64(math.Floor(tsUs+nsAsFloatMicros(dur))) * 1000
}

// nsAsFloatMicros is the float64 nearest to ns/1000, as a JSON parser reads the µs text.
func nsAsFloatMicros(ns int64) float64 {
	if ns%1000 == 0 && ns > -1<<53 && ns < 1<<53 {
		return float64(ns / 1000)
	}
	f, err := strconv.ParseFloat(strconv.FormatInt(ns, 10)+"e-3", 64)
	if err != nil { // not reached: an integer with an exponent always parses
		return float64(ns) / 1000
	}
	return f
}

// readFrame reads one trace's stored HTA frame (compat or default), sorted by ev_idx, with the
// synchronisation args the graph needs. events (the trace's event count, or 0) presizes the columns.
func readFrame(ctx context.Context, db *sql.DB, traceID int64, compat bool, events int64) (*graph.Frame, error) {
	table := "_hta_frame_default"
	if compat {
		table = "_hta_frame_compat"
	}
	// The sync args of the cuda_sync rows, read concurrently on another connection.
	type syncArgs struct{ ev, ws, wc int64 }
	var waits []syncArgs
	waitErr := make(chan error, 1)
	go func() {
		rows, err := db.QueryContext(ctx, `SELECT ev_idx,
		       coalesce(TRY_CAST(args->>'wait_on_stream' AS BIGINT), -1),
		       coalesce(TRY_CAST(args->>'wait_on_cuda_event_record_corr_id' AS BIGINT), -1)
		FROM events WHERE trace_id = $1 AND cat = 'cuda_sync'`, traceID)
		if err != nil {
			waitErr <- err
			return
		}
		defer rows.Close()
		for rows.Next() {
			var w syncArgs
			if err := rows.Scan(&w.ev, &w.ws, &w.wc); err != nil {
				waitErr <- err
				return
			}
			waits = append(waits, w)
		}
		waitErr <- rows.Err()
	}()
	f, err := cpReadFrameColumns(ctx, db, table, traceID, int(events))
	if err == nil {
		err = cpSortFrame(f)
	}
	if werr := <-waitErr; werr != nil && err == nil {
		return nil, fmt.Errorf("read cuda_sync args: %w", werr)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	n := f.Len()
	f.WaitOnStream = make([]int64, n)
	f.WaitOnCorr = make([]int64, n)
	for i := range n {
		f.WaitOnStream[i], f.WaitOnCorr[i] = -1, -1
	}
	for _, w := range waits {
		if r := cpFrameRow(f, w.ev); r >= 0 {
			f.WaitOnStream[r], f.WaitOnCorr[r] = w.ws, w.wc
		}
	}
	return f, nil
}

// cpFrameRow finds the row of an event in a frame sorted by ev_idx (-1 when absent).
func cpFrameRow(f *graph.Frame, ev int64) int {
	lo, hi := 0, f.Len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if f.EvIdx[m] < ev {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < f.Len() && f.EvIdx[lo] == ev {
		return lo
	}
	return -1
}

// cpSortFrame puts the rows in ev_idx order (unique, non-negative event indexes). The stored rows come
// in a few ascending runs (one per batch of events the loader inserted: 3 on the 1 GB inflation), so the
// order is a merge of the runs. Each column is permuted through one scratch column, not into a fresh
// copy: ten fresh columns of a 2.8M-row frame (200 MB) cost more in page faults than the permutation.
func cpSortFrame(f *graph.Frame) error {
	n := f.Len()
	var runs []int // first row of each ascending run
	for i, e := range f.EvIdx {
		if e < 0 {
			return fmt.Errorf("negative ev_idx %d", e)
		}
		if i == 0 || e <= f.EvIdx[i-1] {
			runs = append(runs, i)
		}
	}
	if len(runs) <= 1 {
		return nil
	}
	perm, err := cpMergeOrder(f.EvIdx, runs)
	if err != nil {
		return err
	}
	scratch64 := make([]int64, n)
	for _, col := range []*[]int64{&f.EvIdx, &f.Pid, &f.Tid, &f.TS, &f.Dur, &f.Stream, &f.Corr, &f.IndexCorr} {
		old := (*col)[:n]
		for i, p := range perm {
			scratch64[i] = old[p]
		}
		*col, scratch64 = scratch64, old
	}
	scratch32 := make([]int32, n)
	for _, col := range []*[]int32{&f.Cat, &f.Name} {
		old := (*col)[:n]
		for i, p := range perm {
			scratch32[i] = old[p]
		}
		*col, scratch32 = scratch32, old
	}
	return nil
}

// cpMergeOrder returns the rows of evIdx in ascending order, given the first row of each ascending run: a
// merge when the runs are few, a counting placement (ev_idx is dense) otherwise. Equal values are an error.
func cpMergeOrder(evIdx []int64, runs []int) ([]int32, error) {
	n := len(evIdx)
	perm := make([]int32, 0, n)
	if len(runs) > 16 {
		var maxIdx int64
		for _, e := range evIdx {
			maxIdx = max(maxIdx, e)
		}
		pos := make([]int32, maxIdx+1)
		for i := range pos {
			pos[i] = -1
		}
		for i, e := range evIdx {
			if pos[e] >= 0 {
				return nil, fmt.Errorf("duplicate ev_idx %d", e)
			}
			pos[e] = int32(i)
		}
		for _, p := range pos {
			if p >= 0 {
				perm = append(perm, p)
			}
		}
		return perm, nil
	}
	head := slices.Clone(runs)
	end := append(slices.Clone(runs[1:]), n)
	last := int64(-1)
	for range n {
		best := -1
		for k := range head {
			if head[k] < end[k] && (best < 0 || evIdx[head[k]] < evIdx[head[best]]) {
				best = k
			}
		}
		r := head[best]
		if evIdx[r] == last {
			return nil, fmt.Errorf("duplicate ev_idx %d", last)
		}
		last = evIdx[r]
		perm = append(perm, int32(r))
		head[best]++
	}
	return perm, nil
}

func cpPermute[T any](xs []T, perm []int32) []T {
	out := make([]T, len(perm))
	for i, p := range perm {
		out[i] = xs[p]
	}
	return out
}
