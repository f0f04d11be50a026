package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Each file commits on its own (a failed file leaves the database as it was), so a rank clash found
// when the second of two files is loaded leaves the first committed: half the set. checkRanksUpFront
// finds the clashes that can be found without parsing, before anything is loaded.

// headBudget bounds what readHead decompresses looking for the traceEvents key. Kineto writes its
// metadata (schemaVersion, deviceProperties, distributedInfo) before traceEvents, a few KB.
const headBudget = 1 << 20

// traceHead is the start of a trace file, up to its first event.
type traceHead struct {
	meta      map[string]json.RawMessage // the top-level keys before traceEvents
	arrayForm bool                       // a bare array of events: no metadata at all
	events    bool                       // the traceEvents key or an array's first event was reached
	notTrace  bool                       // a JSON file that is not a trace (ErrNotATrace)
}

// readHead reads a trace file up to its first event, without the load's read-ahead (which would
// decompress megabytes ahead).
func readHead(path string) (traceHead, error) {
	f, err := os.Open(path)
	if err != nil {
		return traceHead{}, err
	}
	defer f.Close()
	r, _, err := traceStream(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		return traceHead{}, err
	}
	sp := newSplitter(io.LimitReader(r, headBudget))
	sp.headOnly = true
	err = sp.Run(make(chan *rawBatch), nil)
	sp.close()
	h := traceHead{meta: sp.Metadata, arrayForm: sp.ArrayForm}
	switch {
	case errors.Is(err, errHeadDone):
		h.events = true
	case errors.Is(err, ErrNotATrace):
		h.notTrace = true
	case sp.ArrayForm && isTruncated(err):
		// An array cut inside an element within the head (the read budget, or the file's end, which the
		// parse repairs by leaving the element out): it has no metadata to read, as any array has none.
	case err != nil:
		return h, err
	}
	return h, nil
}

// isTruncated reports the splitter's error for input that ends inside a value.
func isTruncated(err error) bool {
	var se *SyntaxError
	return errors.As(err, &se) && strings.HasPrefix(se.Msg, "truncated JSON")
}

// rankSource says where an up-front rank came from, for the clash message.
type rankSource string

const srcFileOrder rankSource = "the file order"

// readHeads reads the start of each file of a set once, for traceOrder and checkRanksUpFront: nil for
// an NCCL profiler file (no trace) and for a file whose start cannot be read (its load reports why).
func readHeads(files []string) []*traceHead {
	heads := make([]*traceHead, len(files))
	for i, path := range files {
		if IsNCCLProfile(path) {
			continue
		}
		if h, err := readHead(path); err == nil {
			heads[i] = &h
		}
	}
	return heads
}

// traceOrder numbers the files that are traces, in order: a file's number is its rank when ranks come
// from the file order. A JSON file that is not a trace (an execution trace beside its Kineto trace, a
// config file) is skipped when it loads, so it takes no number: it made the directory's only trace
// rank 1. An NCCL profiler file is no trace either. A file whose start cannot be read counts: it is
// a trace that fails in its turn.
func traceOrder(files []string, heads []*traceHead) []int {
	order := make([]int, len(files))
	n := 0
	for i, path := range files {
		order[i] = n
		if IsNCCLProfile(path) || heads[i] != nil && heads[i].notTrace {
			continue
		}
		n++
	}
	return order
}

// gzipTwinError is the error of a file ranked by the file order whose name, up to .gz, is other's: the
// same trace kept plain and gzipped (gunzip -k) would load as two ranks, and double every count
// across ranks.
func gzipTwinError(other string) error {
	return fmt.Errorf("%s is in the trace set under the same name up to .gz: the same trace twice (kept plain and gzipped?); their ranks come from the file order, so they would load as two ranks: remove one, or load it under another --label", other)
}

// checkNoGzipTwin fails when label holds path's twin (the same name up to .gz).
func (db *DB) checkNoGzipTwin(ctx context.Context, path, label string) error {
	twin := path + ".gz"
	if strings.HasSuffix(path, ".gz") {
		twin = strings.TrimSuffix(path, ".gz")
	}
	var n int
	if err := db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM traces WHERE label = ? AND path = ?`, label, pathText(twin)).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return gzipTwinError(twin)
	}
	return nil
}

// headRank returns the rank file index of the set will be loaded as, where that is known without
// parsing it: for --rank-from file and index, and for auto when the file is a bare array (no
// metadata) or has distributedInfo before traceEvents, as Kineto writes it. known is false when the
// rank is only known after parsing (distributedInfo may follow the events), and for a file that
// will not be loaded (not a trace: skipped from a directory) or may fail to (its start cannot be
// read; h nil): it has no rank to clash, and its own error is reported in its turn. err is what the
// load would report about the metadata read.
func headRank(from RankFrom, h *traceHead, path string, index int) (rank int, src rankSource, known bool, err error) {
	if h == nil || h.notTrace || !(h.events || h.arrayForm) {
		return 0, "", false, nil
	}
	var info traceInfo
	if from == RankAuto {
		if _, ok := h.meta["distributedInfo"]; ok {
			info = readMetadata(h.meta)
		} else if !h.arrayForm {
			return 0, "", false, nil
		}
	}
	rank, err = pickRank(from, info, path, index)
	if err != nil {
		return 0, "", false, err
	}
	return rank, rankSourceOf(from, info, path), true, nil
}

// rankSourceOf says where the rank of a file with metadata info comes from.
func rankSourceOf(from RankFrom, info traceInfo, path string) rankSource {
	_, named := rankDigitsInName(path)
	switch {
	case from == RankAuto && info.rank != nil:
		return "distributedInfo.rank"
	case from != RankIndex && named:
		return "the file name"
	}
	return srcFileOrder
}

// checkRanksUpFront fails, before any file of the set is loaded, with the *LoadError of a rank clash
// that loading would meet later: two files with one rank in the trace set (in the set, or one of it
// and one loaded before). A file's own problem (changed since it was loaded, bad metadata in its head,
// no rank where one is asked for) leaves it out of the check: it fails in its turn, and the other files
// load, as after any bad file. Files whose rank is known only after parsing (headRank) are checked when
// they are loaded, as before.
func (db *DB) checkRanksUpFront(ctx context.Context, files []string, heads []*traceHead, opts LoadOptions) error {
	type owner struct {
		path string
		src  rankSource
	}
	// With opts.Replace, the older versions of the set's changed files are not in the way: they go
	// when their files load.
	replaced := opts.replacing
	loaded := map[int]string{}
	rows, err := db.SQL.QueryContext(ctx, `SELECT rank, path, trace_id FROM traces WHERE label = ? ORDER BY trace_id`, opts.Label)
	if err != nil {
		return err
	}
	for rows.Next() {
		var r, id int
		var p string
		if err := rows.Scan(&r, &p, &id); err != nil {
			rows.Close()
			return err
		}
		if _, dup := loaded[r]; !dup && replaced[id] == "" {
			loaded[r] = p
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	seen := map[int]owner{}
	orderRanked := map[string]string{} // files ranked by the file order, by name without .gz
	for i, path := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if IsNCCLProfile(path) {
			continue // plugin files have no traces row and no rank rule
		}
		st, err := os.Stat(path)
		if err != nil {
			continue // loadFile reports it in its turn
		}
		if existing, _, err := db.loadedBefore(ctx, "traces", path, st, opts); err != nil {
			continue // changed since it was loaded: loadFile says so
		} else if existing >= 0 {
			continue // skipped: its rank is its own
		}
		order := i
		if opts.fileOrder != nil {
			order = opts.fileOrder[i]
		}
		rank, src, known, err := headRank(opts.RankFrom, heads[i], path, order)
		if err != nil {
			continue // its metadata or name: loadFile reports it with the same words
		}
		if !known {
			continue
		}
		if src == srcFileOrder && opts.RankFrom != RankFile { // (--rank-from index too: r42 #7)
			key := strings.TrimSuffix(path, ".gz")
			if other, ok := orderRanked[key]; ok {
				return &LoadError{Path: path, Err: gzipTwinError(other)}
			}
			orderRanked[key] = path
		}
		if other, ok := loaded[rank]; ok {
			return &LoadError{Path: path, Err: fmt.Errorf("rank %d (from %s) is already loaded from %s in trace set %q (%s)",
				rank, src, other, opts.Label, rankClashHint(opts, src))}
		}
		if o, ok := seen[rank]; ok {
			return &LoadError{Path: path, Err: fmt.Errorf("rank %d (from %s) is also the rank of %s (from %s) in trace set %q (%s)",
				rank, src, o.path, o.src, opts.Label, rankClashHint(opts, src))}
		}
		seen[rank] = owner{path, src}
	}
	return nil
}

// rankClashHint says what to do about two files of one rank in a trace set. The likely cause is an extra file
// (a copy, another run's file) in the directory: numbering the files in order would hide it and shift every
// later rank, so that is offered last, and not to a load that numbers them already.
func rankClashHint(opts LoadOptions, src rankSource) string {
	if src == srcFileOrder && opts.RankFrom != RankIndex {
		// Numbering in order is what gave it its rank: each load counts from 0, so a file added later
		// (.load, a rerun on a --db) meets the set's rank 0.
		return "two files with one rank: this file has no distributedInfo.rank and no rank in its name, so its rank is its place among the files loaded with it, counted from 0 in each load: load the set's files in one go, put the rank in the file name (…_rank3.json), or load it under another --label"
	}
	if opts.RankFrom == RankIndex {
		return "two files with one rank: remove or move the extra file, or load it under another --label"
	}
	return "two files with one rank: remove or move the extra file, load it under another --label, or, if the files' ranks are wrong, number them in order with --rank-from index"
}
