package engine

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"tracesql/internal/procmem"
	"tracesql/sqlfuncs"
)

// LoadOptions configures Load.
type LoadOptions struct {
	Label    string   // trace set name; "" means "trace"
	RankFrom RankFrom // "" means auto
	Workers  int      // event-scanning goroutines per file; 0 means one per CPU
	// Progress, if set, is called about five times a second while a file loads, and once at its end.
	Progress func(Progress)
	// Warn, if set, receives one-line warnings about irregularities tolerated in the files loaded.
	// Skipped files are not warned about: each has a LoadResult with Skipped set.
	Warn func(string)
	// Replace loads a file that changed since it was loaded (same path and label, another size or
	// modification time) in place of its older version, in the same transaction: if the new version
	// fails, the old one stays. Without it such a file is an error.
	Replace bool
	// Prefetch is the parse of the first file that StartPrefetch began before the database was opened:
	// Load takes it over when its first file is that one, and stops it otherwise.
	Prefetch *Prefetch

	ahead *lookahead // set by Load: parses the next file while the current one is inserted
	// replacing (with Replace) maps the trace ids of the older versions that this Load's changed files
	// replace to those files: a new version may take the rank of another file's older version, which then
	// goes with it.
	replacing map[int]string
	// swaps records, for the files of replacing, which ones failed in this Load and which older versions
	// another file's new version took away.
	swaps *swapState
	// fileOrder (set by Load for several files) is each file's place among the set's trace files, its
	// rank when ranks come from the file order: a JSON file that is not a trace takes none.
	fileOrder []int
}

// swapState follows the changed files of one Load with Replace whose ranks moved onto each other.
type swapState struct {
	failed map[string]bool      // paths whose new version failed to load
	taken  map[string]takenRank // path whose older version went → the file that took its rank
}

type takenRank struct {
	by   string
	rank int
}

// Progress reports the state of the file being loaded: its parse (ticks, then Done), then, with Writing,
// its rows going into the database (once as that starts, once with Done as it ends; the next file's
// parse may tick meanwhile), and at last, with Checkpoint, the checkpoint after the load's last file.
type Progress struct {
	Path       string
	FileBytes  int64 // size on disk
	ReadBytes  int64 // bytes read from disk so far
	Events     int64 // events scanned so far
	Elapsed    time.Duration
	Done       bool
	Writing    bool
	Checkpoint bool
}

// LoadResult describes one file of a Load call.
type LoadResult struct {
	Path      string
	TraceID   int
	Rank      int
	Events    int64
	JSONBytes int64  // decompressed size
	Skipped   string // why the file was not loaded ("" if it was)
	Replaced  bool   // the file replaced its older version (LoadOptions.Replace)
	// Rederived: the file had not changed, but another loader (older or newer) had loaded it (LoaderVersion), so
	// Replace loaded it again.
	Rederived bool
	Elapsed   time.Duration
	notTrace  bool // skipped as ErrNotATrace
}

// SkippedLoaded is LoadResult.Skipped for a file the database holds already.
const SkippedLoaded = "already loaded"

// SkippedNamedTwice is LoadResult.Skipped for a file one load names more than once.
const SkippedNamedTwice = "named twice"

// LoadError is a failed load: the file and what is wrong with it.
type LoadError struct {
	Path string
	Err  error
}

func (e *LoadError) Error() string { return fmt.Sprintf("load %s: %v", e.Path, e.Err) }
func (e *LoadError) Unwrap() error { return e.Err }

// Load discovers the trace files named by args (directories or files) and loads each in its own
// transaction: a file that fails leaves the database as it was, and the other files still load (one bad
// rank in a directory should not hide the state of the rest), so the error is every failed file's
// *LoadError, joined (errors.Join), in file order. Only a cancelled ctx stops it early. Files already
// loaded (same path, size and modification time, same label) are skipped.
func (db *DB) Load(ctx context.Context, args []string, opts LoadOptions) (results []LoadResult, err error) {
	prefetch := opts.Prefetch
	opts.Prefetch = nil
	defer prefetch.Stop() // unless taken over below
	db.StoredMayChange()  // (rows stored while a rule cannot apply are stale)
	if db.ReadOnly {
		return nil, fmt.Errorf("load %s: %w", strings.Join(args, " "), ErrReadOnly)
	}
	// before any file is read: the load's own transaction cannot start inside the user's
	if err := db.CheckNoTransaction(ctx); err != nil {
		return nil, fmt.Errorf("load %s: %w", strings.Join(args, " "), err)
	}
	if opts.Label == "" {
		opts.Label = "trace"
	}
	if opts.RankFrom == "" {
		opts.RankFrom = RankAuto
	}
	files, fromDir, repeated, err := Discover(args)
	if err != nil {
		return nil, err
	}
	results = append(results, repeated...)
	if opts.Replace {
		opts.replacing = db.replacedVersions(ctx, files, opts)
		opts.swaps = &swapState{failed: map[string]bool{}, taken: map[string]takenRank{}}
	}
	if len(files) > 1 {
		heads := readHeads(files)
		opts.fileOrder = traceOrder(files, heads)
		// One file cannot be half a set: its clash is found as it loads, without reading it twice.
		if err := db.checkRanksUpFront(ctx, files, heads, opts); err != nil {
			var le *LoadError
			if errors.As(err, &le) {
				// Said, since every other bad file is reported beside the ones that did load.
				le.Err = fmt.Errorf("%w; no file of the %d was loaded", le.Err, len(files))
			}
			return nil, err
		}
	}
	defer lowerGCPercent()()
	opts.ahead = newLookahead(files)
	defer opts.ahead.stop()
	if prefetch != nil && prefetch.p != nil && prefetch.p.path == files[0] {
		opts.ahead.next, prefetch.p = prefetch.p, nil
	}
	prefetch.Stop() // a prefetch of another file; and the GC target is Load's own from here
	// No vacuum in the load's checkpoints: each file's tables end in a partial row group, and DuckDB's
	// vacuum merges up to 3 row groups' worth of them (full ones included) by decompressing and compressing
	// them again, a second write of most of the rows it has just written. Registered before the checkpoint
	// below, so that it is reset after it.
	if _, serr := db.SQL.ExecContext(ctx, "SET max_vacuum_tasks = 0"); serr == nil {
		defer db.SQL.ExecContext(context.WithoutCancel(ctx), "RESET max_vacuum_tasks")
	}
	if len(files) > 1 {
		// Each file commits on its own; with DuckDB's default 16 MB threshold nearly every commit then
		// checkpoints, and those checkpoints grow with the database (1-2.4 s per 50 MB file after a few
		// ranks). Checkpoint after each GB of log and after the last file instead. The price is memory:
		// rows not yet checkpointed stay in DuckDB's buffers (64 x 53 MB: peak RSS 4.9 GB, was 2.1 GB),
		// which memory_limit still bounds.
		// In memory, a checkpoint is what compresses the rows committed since the last one, so the
		// threshold trades time for memory. 64 x 53 MB: 16 MB (DuckDB's default) 93 s and 2.7 GB peak
		// RSS, 128 MB 69 s and 4.2 GB; 16 x 53 MB: 21.0 s / 1.2 GB, 16.4 s / 2.1 GB, and without any
		// checkpoint 14.8 s / 3.1 GB.
		threshold := "1GB"
		if db.Path == "" {
			threshold = "128MB"
		}
		if _, serr := db.SQL.ExecContext(ctx, "SET checkpoint_threshold = '"+threshold+"'"); serr == nil {
			defer db.SQL.ExecContext(context.WithoutCancel(ctx), "RESET checkpoint_threshold")
		}
	}
	// One checkpoint after the last file, also after a single file: the commit's automatic checkpoint
	// fails without a word (a full disk left the rows in the write-ahead log and the load said nothing).
	// Not err: the deferred function sets Load's own.
	defer func() {
		loaded := 0
		for _, r := range results {
			if r.Skipped == "" {
				loaded++
			}
		}
		if opts.Progress != nil && loaded > 0 && db.Path != "" {
			opts.Progress(Progress{Checkpoint: true})
			defer opts.Progress(Progress{Checkpoint: true, Done: true})
		}
		if cerr := db.checkpointAfterLoad(loaded); cerr != nil {
			errs := []error{cerr}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = append(j.Unwrap(), cerr) // one list: each failure reported on its own line
			} else if err != nil {
				errs = []error{err, cerr}
			}
			err = errors.Join(errs...)
		}
	}()
	var failed []error
	for i, f := range files {
		res, err := db.loadFile(ctx, f, i, fromDir[i], opts)
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) {
				err = &LoadError{Path: f, Err: err}
			}
			failed = append(failed, err)
			if opts.swaps != nil {
				opts.swaps.failed[f] = true
			}
			if ctx.Err() != nil {
				if rest := len(files) - i - 1; rest > 0 {
					failed = append(failed, fmt.Errorf("load cancelled: %d more file(s) not loaded, from %s on", rest, files[i+1]))
				}
				break
			}
			continue
		}
		results = append(results, res)
	}
	if opts.swaps != nil {
		for i, err := range failed {
			var le *LoadError
			if errors.As(err, &le) {
				if t, ok := opts.swaps.taken[le.Path]; ok {
					// Its older version is gone with no new one in its place: said, not left to be found.
					failed[i] = fmt.Errorf("%w; its older version is no longer loaded either: %s took its rank %d before this file failed", err, t.by, t.rank)
				} else if slices.Contains(slices.Collect(maps.Values(opts.replacing)), le.Path) {
					failed[i] = fmt.Errorf("%w; its older version stays loaded", err)
				}
			}
		}
	}
	for _, r := range results {
		if r.Skipped == "" && opts.Warn != nil {
			db.warnMissingRanks(ctx, opts)
			break
		}
	}
	if len(failed) == 0 {
		failed = append(failed, noTraceLoaded(results))
	}
	return results, errors.Join(failed...)
}

// noTraceLoaded is an error when a load found JSON files but none was a trace, loaded now or before (a directory
// of execution traces, or TraceLens' capture folder: loading nothing and going on ran every query on an empty
// database, with exit status 0); nil otherwise.
func noTraceLoaded(results []LoadResult) error {
	var notTrace []LoadResult
	for _, r := range results {
		switch {
		case r.Skipped == "" || r.Skipped == SkippedLoaded:
			return nil
		case r.notTrace:
			notTrace = append(notTrace, r)
		}
	}
	if len(notTrace) == 0 {
		return nil
	}
	return fmt.Errorf("load %s: no trace loaded: its %d JSON file(s) are not Chrome traces (%s: %s)", filepath.Dir(notTrace[0].Path),
		len(notTrace), filepath.Base(notTrace[0].Path), notTrace[0].Skipped)
}

// warnMissingRanks warns when a trace set holds several ranks but fewer than its traces' world size:
// a file missing from a job's directory changes every cross-rank analysis (stragglers, NCCL views,
// per-rank comparisons) without an error. One rank alone is the usual way to look at a job and is not
// warned about.
func (db *DB) warnMissingRanks(ctx context.Context, opts LoadOptions) {
	var worldSize, leastSize sql.NullInt64
	var ranks []int64
	rows, err := db.SQL.QueryContext(ctx, `SELECT DISTINCT rank, max(world_size) OVER (), min(world_size) OVER () FROM traces WHERE label = ? ORDER BY rank`, opts.Label)
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var r int64
		if rows.Scan(&r, &worldSize, &leastSize) != nil {
			return
		}
		ranks = append(ranks, r)
	}
	if leastSize.Valid && leastSize.Int64 != worldSize.Int64 {
		// traces of two jobs in one set, most likely: the missing ranks below are counted against the larger
		opts.Warn(fmt.Sprintf("trace set %q: its traces disagree on distributedInfo.world_size (%d to %d): are they of one job?", opts.Label, leastSize.Int64, worldSize.Int64))
	}
	if rows.Err() != nil || len(ranks) < 2 || !worldSize.Valid || int64(len(ranks)) >= worldSize.Int64 {
		return
	}
	// The first 8 missing ranks from the gaps between the sorted ranks, the count by arithmetic: a
	// world_size of 2^63-1 must not be walked rank by rank.
	var missing []string
	n := worldSize.Int64
	next := int64(0) // the lowest rank not yet known to be present or listed as missing
	for _, r := range append(ranks, worldSize.Int64) {
		if r < 0 || r > worldSize.Int64 {
			continue
		}
		for ; next < r && len(missing) < 8; next++ {
			missing = append(missing, strconv.FormatInt(next, 10))
		}
		if r < worldSize.Int64 {
			n--
		}
		next = max(next, r+1)
	}
	list := strings.Join(missing, ", ")
	if n > int64(len(missing)) {
		list += fmt.Sprintf(" and %d more", n-int64(len(missing)))
	}
	opts.Warn(fmt.Sprintf("trace set %q holds %d of the %d ranks its traces' world_size names (missing: %s): cross-rank analyses see only these", opts.Label, len(ranks), worldSize.Int64, list))
}

// loadGCPercent is the Go GC target while loading. The parsed copy of a file is pointer-free Arrow
// buffers, so a collection costs little however large it is, but with Go's default target (100 %) the
// heap may grow to twice that copy before one runs. Parsing a 1 GB trace: peak RSS 1450-1515 MB at
// 100 %, 1242-1261 MB at 25 %, for 5-10 % more CPU.
const loadGCPercent = 25

var gcLowered struct {
	sync.Mutex
	loads, saved int
}

// lowerGCPercent sets loadGCPercent while at least one Load runs (unless GOGC is already lower or off)
// and returns the function that restores the previous setting.
func lowerGCPercent() func() {
	gcLowered.Lock()
	defer gcLowered.Unlock()
	if gcLowered.loads == 0 {
		gcLowered.saved = debug.SetGCPercent(loadGCPercent)
		if gcLowered.saved < loadGCPercent {
			debug.SetGCPercent(gcLowered.saved)
		}
	}
	gcLowered.loads++
	return func() {
		gcLowered.Lock()
		defer gcLowered.Unlock()
		if gcLowered.loads--; gcLowered.loads == 0 {
			debug.SetGCPercent(gcLowered.saved)
		}
	}
}

// MemoryLimitEnv names the environment variable that overrides DuckDB's memory_limit: a DuckDB size
// (4GB, 512MiB) or a share of the usable memory (60%).
const MemoryLimitEnv = "TRACESQL_MEMORY_LIMIT"

// MemoryLimit returns the memory_limit Open gives DuckDB ("" for DuckDB's own default) and where it
// comes from, in words. The default is half the memory this process may use (the machine's, or its
// cgroup's limit in a container: DuckDB's own default is 80 % of that, but the Go side holds up to two
// parsed files beside it).
func MemoryLimit() (limit, source string) {
	if v := strings.TrimSpace(os.Getenv(MemoryLimitEnv)); v != "" {
		source = MemoryLimitEnv + "=" + v
		if pct, ok := strings.CutSuffix(v, "%"); ok {
			p, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
			if usable := procmem.Usable(); err == nil && p > 0 && p <= 100 && usable > 0 {
				return fmt.Sprintf("%dMiB", int64(float64(usable)*p/100)>>20), source
			}
		}
		return v, source // DuckDB checks it; Open's error names the variable
	}
	if usable := procmem.Usable(); usable > 0 {
		return fmt.Sprintf("%dMiB", usable/2>>20), "half of the usable memory"
	}
	return "", ""
}

// MemoryError returns err with the memory limit in force and how to raise it when err is DuckDB's
// "Out of Memory Error" (whose own words name neither the setting nor the variable); else err itself.
func MemoryError(ctx context.Context, db *DB, err error) error {
	if err == nil || db == nil || !strings.Contains(err.Error(), "Out of Memory Error") {
		return err
	}
	var current string
	if db.SQL.QueryRowContext(context.WithoutCancel(ctx), `SELECT current_setting('memory_limit')`).Scan(&current) != nil {
		return err
	}
	from := ""
	configured, source := MemoryLimit()
	a, okA := parseDuckDBSize(current)
	b, okB := parseDuckDBSize(configured)
	switch {
	case okA && okB && (a-b > b/50 || b-a > b/50):
		from = ", as SET in this session"
	case source != "":
		from = ", from " + source
	}
	return &hintedError{err: err, hint: fmt.Sprintf(" (memory_limit is %s%s: raise it with %s, e.g. %s=80%%, or SET memory_limit)", current, from, MemoryLimitEnv, MemoryLimitEnv)}
}

// memorySettings are the DuckDB options Open sets so that a load larger than RAM spills to disk
// instead of failing: memory_limit (MemoryLimit), and temp_directory next to the database file, or
// under the system temporary directory, one per process, for an in-memory database (DuckDB's default,
// ".tmp" in the working directory, may not be writable) and for a file opened read-only: several
// processes may read one file, and DuckDB names its spill files the same in each, so a shared directory
// let one reader overwrite or remove another's spilled data. DuckDB creates the directory when it first
// spills and removes it on close.
func memorySettings(path string, readOnly bool) map[string]string {
	out := map[string]string{}
	if limit, _ := MemoryLimit(); limit != "" {
		out["memory_limit"] = limit
	}
	if path != "" && !readOnly {
		out["temp_directory"] = path + ".tmp"
	} else {
		out["temp_directory"] = filepath.Join(os.TempDir(), fmt.Sprintf("tracesql-%d.tmp", os.Getpid()))
	}
	return out
}

// unorderedInsertFactor: an in-memory load inserts a file's side tables and events without keeping
// their row order (preserve_insertion_order = false; the readers order by ev_idx or ts themselves)
// when DuckDB has more than this many times the file's decompressed JSON of memory left under its
// limit. Keeping the order makes DuckDB write each parallel batch apart and then copy them all into
// one collection, a second write of every row: a 1 GB trace's events take 0.8 s instead of 1.5-2.5 s
// and its side tables 0.6 s instead of 1.0-1.1 s. Without the order DuckDB holds more at once: a
// 24.5 MB trace loaded in memory needs a memory_limit between 56 and 80 MB instead of 40-56 MB. With a
// database file (--db) the ordered insert is kept: there the unordered one raised the 1 GB trace's peak
// RSS from 1.37 to 1.69 GB (1.5x the file is issue 2's bound) for 0.8 s of 12.
const unorderedInsertFactor = 4

// memoryRoom returns how many bytes DuckDB may still allocate under its memory_limit (0 when either
// is unknown).
func (db *DB) memoryRoom(ctx context.Context) int64 {
	var limit string
	var used int64
	if err := db.SQL.QueryRowContext(ctx, `SELECT current_setting('memory_limit'),
		(SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory())::BIGINT`).Scan(&limit, &used); err != nil {
		return 0
	}
	n, ok := parseDuckDBSize(limit)
	if !ok || n <= used {
		return 0
	}
	return n - used
}

// parseDuckDBSize reads a size as DuckDB prints a setting ("11.2 GiB", "53.4 MiB", "512 bytes") or as a
// user writes one ("100MB", "4gb").
func parseDuckDBSize(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, false
	}
	scale := map[string]float64{"bytes": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}[strings.ToLower(strings.TrimSpace(s[i:]))]
	if scale == 0 {
		return 0, false
	}
	return int64(v * scale), true
}

// duckRowGroupRows is DuckDB's row group size (rows).
const duckRowGroupRows = 122880

// threads returns DuckDB's threads setting (0 when it cannot be read).
func (db *DB) threads(ctx context.Context) int {
	var n int
	if db.SQL.QueryRowContext(ctx, `SELECT current_setting('threads')`).Scan(&n) != nil {
		return 0
	}
	return n
}

// threadSwitch runs the load's small inserts on one DuckDB thread. In a parallel INSERT (DuckDB 1.5.3)
// each thread appends its share of the rows to a collection of its own, and a share under one row group
// is then appended a second time, under a lock, to the transaction's storage, with its statistics
// (HyperLogLog, string stats) computed again: an insert of fewer rows than one row group per thread
// costs more CPU and more memory in parallel, and takes longer. mtia_trace_single_rank (in memory):
// its 138 k events took 137 ms of CPU and 88 ms on two threads against 65 ms and 65 ms on one, its
// stored frame 118 / 75 ms against 62 / 60 ms, and the process's peak RSS fell from 329 to 234 MB.
// Larger inserts keep every thread (the 1 GB trace's 2.8 M events: 0.63 s on two, 1.15 s on one), and so
// do the derived tables, queries that gain from them. threads is a database-wide setting: restore puts
// it back (also after a failed load).
type threadSwitch struct {
	ex      driver.ExecerContext
	threads int // the database's setting
	current int
}

// forInsert sets the threads for an insert of recs.
func (s *threadSwitch) forInsert(ctx context.Context, recs ...arrow.RecordBatch) error {
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	n := s.threads
	if rows < int64(s.threads)*duckRowGroupRows {
		n = 1
	}
	return s.set(ctx, n)
}

func (s *threadSwitch) set(ctx context.Context, n int) error {
	if n == s.current || n < 1 || s.threads < 1 {
		return nil
	}
	if _, err := s.ex.ExecContext(ctx, fmt.Sprintf("SET threads = %d", n), nil); err != nil {
		return err
	}
	s.current = n
	return nil
}

func (s *threadSwitch) restore(ctx context.Context) {
	s.set(context.WithoutCancel(ctx), s.threads)
}

// freeOSAbove: after inserting a file with more decompressed JSON than this, loadFile hands the Go
// heap back to the OS before DuckDB builds the frames, so that RSS peaks at the larger of the two
// phases instead of their sum. Below it the forced GC costs more than it saves.
const freeOSAbove = 64 << 20

// lookaheadBudget bounds the estimated decompressed JSON of the file being inserted plus the file
// parsed ahead of it (the parsed form takes about 1.7× its JSON): a job of many 50 MB ranks overlaps
// every parse with the previous insert, two 1 GB files are loaded one after the other.
const lookaheadBudget = 1 << 30

// Prefetch is a parse of a Load's first file begun before the database is open (StartPrefetch).
type Prefetch struct {
	p  *pendingParse
	gc func() // puts the GC target back (lowerGCPercent)
}

// StartPrefetch starts parsing the first trace file that args name, for the Load of args with opts that
// follows (LoadOptions.Prefetch), so that the parse runs while the database opens: installing the schema
// into a new database takes one core for ~140 ms. nil when there is nothing to parse ahead (args name no
// file, or an error that the Load reports, or an NCCL profile first). A Prefetch that no Load takes must
// be stopped (Stop).
func StartPrefetch(ctx context.Context, args []string, opts LoadOptions) *Prefetch {
	files, _, _, err := Discover(args)
	if err != nil || len(files) == 0 || IsNCCLProfile(files[0]) {
		return nil
	}
	st, err := os.Stat(files[0])
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	pctx, cancel := context.WithCancel(ctx)
	p := &pendingParse{index: 0, path: files[0], done: make(chan struct{}), cancel: cancel}
	gc := lowerGCPercent() // as Load's own parse
	go func() {
		defer close(p.done)
		p.pf, p.err = parseFile(pctx, files[0], st.Size(), opts)
	}()
	return &Prefetch{p: p, gc: gc}
}

// Stop cancels a prefetch that no Load took and frees what it parsed (nothing once a Load took it).
func (p *Prefetch) Stop() {
	if p == nil {
		return
	}
	p.p.discard()
	p.p = nil
	if p.gc != nil {
		p.gc()
		p.gc = nil
	}
}

// lookahead pipelines Load across files: when file i has been parsed, file i+1 is parsed in the
// background while file i is derived, inserted and framed, so that the Go scanner and DuckDB work at
// the same time. At most one file is parsed ahead, and only within lookaheadBudget, so a job of 64
// ranks never holds more than two files in memory.
type lookahead struct {
	files []string
	mu    sync.Mutex
	next  *pendingParse
}

type pendingParse struct {
	index  int
	path   string
	done   chan struct{}
	cancel context.CancelFunc
	pf     *parsedFile
	err    error
}

func newLookahead(files []string) *lookahead { return &lookahead{files: files} }

// estJSON guesses a file's decompressed size from its size on disk (Kineto JSON gzips about 10×).
func estJSON(path string, size int64) int64 {
	if strings.HasSuffix(path, ".gz") {
		return size * 10
	}
	return size
}

// parse returns file index's parse, from the lookahead when it was parsed ahead, and starts parsing
// the file after it.
func (la *lookahead) parse(ctx context.Context, db *DB, index int, path string, size int64, opts LoadOptions) (*parsedFile, error) {
	if la == nil {
		return parseFile(ctx, path, size, opts)
	}
	la.mu.Lock()
	p := la.next
	la.next = nil
	la.mu.Unlock()
	var pf *parsedFile
	var err error
	if p != nil && p.index == index && p.path == path {
		<-p.done
		pf, err = p.pf, p.err
		p.cancel() // (the parse is over: its context would stay registered on ctx until ctx ended)
	} else {
		p.discard()
		pf, err = parseFile(ctx, path, size, opts)
	}
	if err == nil {
		la.start(ctx, db, index+1, estJSON(path, size), opts)
	}
	return pf, err
}

// start parses file index in the background if it fits the budget and is not loaded already.
func (la *lookahead) start(ctx context.Context, db *DB, index int, current int64, opts LoadOptions) {
	if index >= len(la.files) {
		return
	}
	path := la.files[index]
	st, err := os.Stat(path)
	if err != nil || current+estJSON(path, st.Size()) > lookaheadBudget {
		return // loadFile reports a stat error in its turn
	}
	if existing, _, err := db.loadedBefore(ctx, "traces", path, st, opts); err != nil || existing >= 0 {
		return // already loaded (loadFile skips it), or changed since, or a query error: loadFile says
	}
	pctx, cancel := context.WithCancel(ctx)
	p := &pendingParse{index: index, path: path, done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(p.done)
		p.pf, p.err = parseFile(pctx, path, st.Size(), opts)
	}()
	la.mu.Lock()
	old := la.next
	la.next = p
	la.mu.Unlock()
	old.discard()
}

// discard cancels a parse nobody will consume and frees what it holds.
func (p *pendingParse) discard() {
	if p == nil {
		return
	}
	p.cancel()
	<-p.done
	if p.pf != nil {
		p.pf.release()
	}
}

// stop ends the pipeline: a file parsed ahead but not loaded (an earlier file failed) is dropped.
func (la *lookahead) stop() {
	la.mu.Lock()
	p := la.next
	la.next = nil
	la.mu.Unlock()
	p.discard()
}

// parsedFile is a whole file scanned into Arrow batches, ready for insertion.
type parsedFile struct {
	batches   []*parsedBatch
	meta      map[string]json.RawMessage
	metaKeys  []string
	metaOffs  map[string]int64 // where each metadata value starts in the file
	arrayForm bool
	// unterminated: an array-form file that ends without ']' (allowed by the Chrome trace format).
	unterminated bool
	cutEvent     int64          // the byte offset of the cut-off last event an unterminated file ended in (dropped), else 0
	droppedMeta  []DroppedValue // top-level values too long to keep as metadata
	// noDur counts the complete (X) events without a dur: kept, with dur NULL, and said (the analyses
	// of durations leave them out).
	noDur int64
	// oddLanes counts the events whose pid or tid is neither an integer nor a string (laneNumber), and
	// oddLaneExample is the first such value: kept, and said.
	oddLanes       int64
	oddLaneExample string
	// badEscapes counts the events whose name or cat is not a valid JSON string, badEscapeExample
	// names the first: decoded where valid, the rest kept as written, and said.
	badEscapes       int64
	badEscapeExample string
	// metaEvents counts the metadata (M) events: a file of nothing else has nothing to analyse.
	metaEvents int64
	// dupKeys counts the events with a key written twice (an event key, or a hot args key), dupKeyExample
	// names the first.
	dupKeys       int64
	dupKeyExample string
	// negativeDur counts the complete (X) events with a negative dur, kept in other_events, and
	// negativeDurExample names the first.
	negativeDur        int64
	negativeDurExample string
	// noTS counts the events other than M without a ts, kept with ts NULL (complete ones in other_events), and
	// noTSExample names the first.
	noTS        int64
	noTSExample string
	events      int64
	jsonBytes   int64
	sawLaunch   uint8
	laneNames   map[laneKey]string
}

func (db *DB) loadFile(ctx context.Context, path string, index int, fromDir bool, opts LoadOptions) (LoadResult, error) {
	start := time.Now()
	res := LoadResult{Path: path}
	if IsNCCLProfile(path) {
		return db.loadNCCLFile(ctx, path, opts) // NCCL profiler-plugin output: nccl_load.go
	}
	st, err := os.Stat(path)
	if err != nil {
		return res, err
	}
	mtime := st.ModTime().UTC().Truncate(time.Microsecond)
	existing, replaces, err := db.loadedBefore(ctx, "traces", path, st, opts)
	if err != nil {
		return res, err
	} else if existing >= 0 {
		res.TraceID, res.Skipped = existing, SkippedLoaded
		return res, nil
	} else if replaces >= 0 {
		var n int
		if err := db.SQL.QueryRowContext(ctx, `SELECT count(*) FROM traces WHERE trace_id = ? AND file_bytes = ? AND file_mtime = ?`,
			replaces, st.Size(), mtime).Scan(&n); err != nil {
			return res, err
		}
		res.Rederived = n > 0
	}

	tm := newPhaseTimer(path)
	defer tm.report()
	pf, err := opts.ahead.parse(ctx, db, index, path, st.Size(), opts)
	tm.mark("parse")
	if err != nil {
		if errors.Is(err, ErrNotATrace) && fromDir {
			// Reported once, as LoadResult.Skipped like every skipped file: a Warn as well made the
			// command line print it twice.
			res.Skipped, res.notTrace = err.Error(), true
			return res, nil
		}
		return res, err
	}
	released := false
	releaseAll := func() {
		if !released {
			released = true
			pf.release()
		}
	}
	defer func() { releaseAll() }()
	if opts.Progress != nil {
		// The rows' append, derived columns and commit take longer than the parse: the line says so
		// (it was blank for 90 % of a load).
		opts.Progress(Progress{Path: path, FileBytes: st.Size(), ReadBytes: st.Size(), Events: int64(pf.events), Elapsed: time.Since(start), Writing: true})
		defer opts.Progress(Progress{Path: path, Writing: true, Done: true})
	}
	if pf.unterminated && opts.Warn != nil {
		cut := ""
		if pf.cutEvent > 0 {
			cut = fmt.Sprintf("; the file ends inside its last event, at byte %d, which is left out", pf.cutEvent)
		}
		opts.Warn(fmt.Sprintf("%s: traceEvents array has no closing ']' (accepted, as the Chrome trace format allows)%s", path, cut))
	}
	for _, d := range pf.droppedMeta {
		if opts.Warn != nil {
			opts.Warn(fmt.Sprintf("%s: top-level key %q holds %.1f MB, more than the %d MB of metadata kept per key: left out of traces.metadata", path, d.Key, float64(d.Bytes)/1e6, maxMetadataValue>>20))
		}
	}
	if pf.noDur > 0 && opts.Warn != nil {
		opts.Warn(fmt.Sprintf("%s: %d complete (X) event(s) without dur, kept with dur NULL: analyses of durations leave them out (SELECT * FROM events WHERE dur IS NULL)", path, pf.noDur))
	}
	if pf.noTS > 0 && opts.Warn != nil {
		opts.Warn(fmt.Sprintf("%s: %d event(s) without ts (the first: %s), kept with ts NULL (complete ones in other_events, not in events): no analysis places them in time (trace_stats: without_ts)", path, pf.noTS, pf.noTSExample))
	}
	if pf.negativeDur > 0 && opts.Warn != nil {
		opts.Warn(fmt.Sprintf("%s: %d complete (X) event(s) with a negative dur (the first: %s), kept in other_events, not in events: no analysis counts them (SELECT * FROM other_events WHERE ph = 'X' AND dur < 0)", path, pf.negativeDur, pf.negativeDurExample))
	}
	if pf.events == pf.metaEvents && opts.Warn != nil {
		// Loaded all the same (a rank that recorded nothing is a fact about the job), but in a directory of
		// 64 ranks an empty one is easy to miss.
		what := "no events (traceEvents is empty)"
		if pf.arrayForm {
			what = "no events (the array is empty)"
		}
		if pf.events > 0 {
			what = fmt.Sprintf("only %d metadata (M) event(s), nothing to analyse", pf.events)
		}
		opts.Warn(fmt.Sprintf("%s: %s", path, what))
	}
	if pf.dupKeys > 0 && opts.Warn != nil {
		opts.Warn(fmt.Sprintf("%s: %d event(s) with a key written twice (the first: %s): the columns take its last value, as Python's json (and so HTA) reads it; in args, DuckDB's -> and ->> return the first", path, pf.dupKeys, pf.dupKeyExample))
	}
	if pf.badEscapes > 0 && opts.Warn != nil {
		opts.Warn(fmt.Sprintf("%s: %d event(s) whose name or cat is not a valid JSON string (the first: %s): an unknown escape such as \\q, a \\u without four hex digits or a raw control character is kept as written, the rest decoded; a value that is not a string (123) is kept as its JSON text", path, pf.badEscapes, pf.badEscapeExample))
	}
	if pf.oddLanes > 0 && opts.Warn != nil {
		opts.Warn(fmt.Sprintf("%s: %d event(s) with a pid or tid that is neither an integer nor a string (the first: %s): a fraction is rounded to the nearest integer, any other value leaves it NULL", path, pf.oddLanes, pf.oddLaneExample))
	}
	info := readMetadata(pf.meta)
	for _, w := range info.warnings {
		if opts.Warn != nil {
			opts.Warn(fmt.Sprintf("%s: %s: its column of traces is left NULL (the value is in traces.metadata)", path, w))
		}
	}
	order := index
	if opts.fileOrder != nil {
		order = opts.fileOrder[index]
	}
	rank, err := pickRank(opts.RankFrom, info, path, order)
	if err != nil {
		return res, err
	}
	if rankFromOrder(opts.RankFrom, info, path) && opts.RankFrom != RankFile {
		if err := db.checkNoGzipTwin(ctx, path, opts.Label); err != nil {
			return res, err
		}
	}
	if ws, ok := info.worldSize.(int64); ok && opts.Warn != nil && (ws <= 0 || int64(rank) >= ws) {
		// (a copied file, or a rank given by its name or order in a job of another size: the cross-rank
		// views count world_size ranks)
		opts.Warn(fmt.Sprintf("%s: rank %d is not below its distributedInfo.world_size %d", path, rank, ws))
	}
	if named, nerr := pickRank(RankFile, info, path, order); opts.Warn != nil && opts.RankFrom == RankAuto && info.rank != nil && nerr == nil && named != rank {
		// (a renamed or copied file: the clash with the file that is rank 5 by name came later, and
		// only its error showed the disagreement)
		opts.Warn(fmt.Sprintf("%s: distributedInfo.rank is %d, its name says rank %d: loaded as rank %d (--rank-from file takes the name's)", path, rank, named, rank))
	}
	if replaces >= 0 && rankFromOrder(opts.RankFrom, info, path) {
		// Its place in this load's file order says nothing (named alone, it is first): the replacement
		// keeps the rank its older version was given.
		if err := db.SQL.QueryRowContext(ctx, `SELECT rank FROM traces WHERE trace_id = ?`, replaces).Scan(&rank); err != nil {
			return res, err
		}
	}
	res.Rank, res.Events, res.JSONBytes = rank, pf.events, pf.jsonBytes

	// The derived columns (step, parent_idx, depth) are computed in Go while DuckDB inserts the
	// tables that do not need them: the two use different cores. The pass starts once the largest of
	// those tables has been inserted and its Go copy given back (startDerive), so that its allocations
	// reuse that memory instead of adding to the peak.
	mem := memory.DefaultAllocator
	var evRecs []arrow.RecordBatch
	derived := make(chan struct{})
	started := false
	startDerive := func() {
		if !started {
			started = true
			go func() {
				defer close(derived)
				evRecs = derive(pf.batches, mem)
			}()
		}
	}
	releaseEvents := func() {
		if !started {
			return // a load that failed before the side tables: nothing derived, nothing to give back
		}
		<-derived
		for _, r := range evRecs {
			r.Release()
		}
		evRecs = nil
	}
	defer releaseEvents()

	db.loadMu.Lock()
	defer db.loadMu.Unlock()
	var other string
	var otherID int
	err = db.SQL.QueryRowContext(ctx, `SELECT path, trace_id FROM traces WHERE label = ? AND rank = ? AND trace_id <> ? LIMIT 1`, opts.Label, rank, replaces).Scan(&other, &otherID)
	obsolete := []int64{int64(replaces)}
	switch {
	case err == nil && opts.replacing[otherID] != "" && opts.swaps.failed[opts.replacing[otherID]]:
		// That file's new version failed, so its older version stays, holding the rank.
		return res, fmt.Errorf("rank %d is still held by the older version of %s, whose new version failed to load in this run; fix that file and load both again with --replace", rank, opts.replacing[otherID])
	case err == nil && opts.replacing[otherID] != "":
		// The older version of another changed file of this load (ranks swapped or shifted): it goes now;
		// that file loads afresh in its turn.
		obsolete = append(obsolete, int64(otherID))
	case err == nil:
		if _, statErr := os.Stat(other); errors.Is(statErr, os.ErrNotExist) {
			// A re-profiled job: Kineto names each new file after its time, and the old one is gone.
			return res, fmt.Errorf("rank %d is already loaded from %s in trace set %q, a file that is no longer there: unload it (.unload %s) or use a fresh --db, then load this one", rank, other, opts.Label, other)
		}
		src := rankSourceOf(opts.RankFrom, info, path)
		return res, fmt.Errorf("rank %d (from %s) is already loaded from %s in trace set %q (%s)", rank, src, other, opts.Label, rankClashHint(opts, src))
	case !errors.Is(err, sql.ErrNoRows):
		return res, err
	}
	nextID, err := db.nextTraceID(ctx, db.SQL)
	if err != nil {
		return res, err
	}
	traceID := int(nextID)
	res.TraceID = traceID
	var replaceTables []string
	if replaces >= 0 || len(obsolete) > 1 {
		if replaceTables, err = db.perFileTables(ctx); err != nil {
			return res, err
		}
	}

	unordered := db.Path == "" && db.memoryRoom(ctx) > unorderedInsertFactor*pf.jsonBytes

	threads := db.threads(ctx)
	conn, err := db.connOutsideTransaction(ctx)
	if err != nil {
		return res, err
	}
	defer conn.Close()
	err = conn.Raw(func(dcAny any) error {
		dc := dcAny.(driver.Conn)
		ex := dc.(driver.ExecerContext)
		ts := &threadSwitch{ex: ex, threads: threads, current: threads}
		defer ts.restore(ctx)
		if unordered {
			if _, err := ex.ExecContext(ctx, "SET preserve_insertion_order = false", nil); err != nil {
				return err
			}
			defer ex.ExecContext(context.WithoutCancel(ctx), "RESET preserve_insertion_order", nil)
		}
		if _, err := ex.ExecContext(ctx, "BEGIN TRANSACTION", nil); err != nil {
			return err
		}
		err := func() error {
			if err := deleteTraceRows(ctx, ex, replaceTables, obsolete...); err != nil {
				return err
			}
			metaJSON := string(validJSONText([]byte(metadataJSON(pf.meta, pf.metaKeys))))
			// The columns named: a column the user added to traces (or an import of an export that has one
			// added, ImportParquet) is left NULL instead of failing every later load.
			_, err := ex.ExecContext(ctx, `INSERT INTO traces (trace_id, label, rank, path, file_bytes, file_mtime, events,
				schema_version, device_type, backend, world_size, base_time_ns, min_ts, max_ts, metadata, array_form, loaded_at, loader_version)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now(), ?)`, named(
				traceID, opts.Label, rank, pathText(path), st.Size(), mtime, pf.events, info.schemaVersion, deviceType(info, pf.sawLaunch),
				info.backend, info.worldSize, info.baseTimeNS, nil, nil, metaJSON, pf.arrayForm, LoaderVersion))
			if err != nil {
				if bad := malformedMetadata(pf); bad != nil {
					return bad
				}
				return fmt.Errorf("insert trace row: %w", err)
			}
			tid := strconv.Itoa(traceID)
			withRank := [][2]string{{"trace_id", tid}, {"rank", strconv.Itoa(rank)}, {"ph", "'X'"}}
			onlyID := [][2]string{{"trace_id", tid}}
			pick := func(f func(*parsedBatch) arrow.RecordBatch) []arrow.RecordBatch {
				out := make([]arrow.RecordBatch, 0, len(pf.batches))
				for _, b := range pf.batches {
					if r := f(b); r.NumRows() > 0 {
						out = append(out, r)
					}
				}
				return out
			}
			var meta []arrow.RecordBatch // besides the M events: the names of string pids and tids
			if names := laneNameRecord(pf.laneNames, mem); names != nil {
				defer names.Release()
				meta = append(meta, names)
			}
			if unordered {
				// In memory the peak is the database, not this file's Go copy: derive beside the
				// first insert rather than after it (1 GB trace: 0.3 s less waiting for it).
				startDerive()
			}
			// The side table with the largest Go copy in Kineto traces (instants: the [memory] events)
			// goes first; each copy is given back once inserted.
			for i, t := range []struct {
				table  string
				schema *arrow.Schema
				field  func(*parsedBatch) *arrow.RecordBatch
			}{
				{"instants", instantsSchema, func(b *parsedBatch) *arrow.RecordBatch { return &b.instants }},
				{"flows", flowsSchema, func(b *parsedBatch) *arrow.RecordBatch { return &b.flows }},
				{"metadata_events", metaSchema, func(b *parsedBatch) *arrow.RecordBatch { return &b.meta }},
				{"counters", countersSchema, func(b *parsedBatch) *arrow.RecordBatch { return &b.counters }},
				{"other_events", otherSchema, func(b *parsedBatch) *arrow.RecordBatch { return &b.others }},
			} {
				recs := pick(func(b *parsedBatch) arrow.RecordBatch { return *t.field(b) })
				if t.table == "metadata_events" {
					recs = append(recs, meta...)
				}
				if err := ts.forInsert(ctx, recs...); err != nil {
					return err
				}
				if err := insertBatches(ctx, dc, t.table, t.schema, recs, onlyID); err != nil {
					return fmt.Errorf("insert %s: %w", t.table, err)
				}
				for _, b := range pf.batches {
					if r := t.field(b); *r != nil {
						(*r).Release()
						*r = nil
					}
				}
				if i == 0 && !started {
					if pf.jsonBytes > freeOSAbove {
						runtime.GC() // so that derive's allocations reuse the instants' memory
					}
					startDerive()
				}
			}
			tm.mark("insert others")
			<-derived
			tm.mark("derive wait")
			// What is left of the file's Go copy is the events batches: give the rest, and the derive
			// pass's scratch memory, back before DuckDB inserts the events.
			pf.releaseSideTables()
			if pf.jsonBytes > freeOSAbove {
				debug.FreeOSMemory()
			}
			tm.mark("free side tables")
			// A B/E pair made complete keeps its phase: ph 'B'.
			firstPaired := len(pf.batches)
			for firstPaired > 0 && pf.batches[firstPaired-1].pairedDurations {
				firstPaired--
			}
			plain, paired := evRecs[:firstPaired], evRecs[firstPaired:]
			if err := ts.forInsert(ctx, evRecs...); err != nil {
				return err
			}
			if err := insertBatches(ctx, dc, "events", eventsSchema, plain, withRank); err != nil {
				return fmt.Errorf("insert events: %w", err)
			}
			pairedConsts := [][2]string{withRank[0], withRank[1], {"ph", "'B'"}}
			if err := insertBatches(ctx, dc, "events", eventsSchema, paired, pairedConsts); err != nil {
				return fmt.Errorf("insert events: %w", err)
			}
			tm.mark("insert events")
			// From here on only the frame's columns of the Go copy are read: the others (external_id,
			// device, parent_idx, depth: 90 MB for a 1 GB trace) are given back before DuckDB builds
			// the frame, and the rest before it builds the GPU frame, so that the peaks do not add up.
			frameRecs := frameInput(evRecs, int64(traceID), int64(rank), mem)
			releaseEvents()
			releaseAll()
			if pf.jsonBytes > freeOSAbove {
				debug.FreeOSMemory()
			}
			tm.mark("free unframed")
			if unordered {
				// The frames keep the ordered insert: without it the stored frame measured no faster,
				// and the GPU frame's streaming windows rely on the order of their input.
				if _, err := ex.ExecContext(ctx, "RESET preserve_insertion_order", nil); err != nil {
					return err
				}
			}
			if err = ts.forInsert(ctx, frameRecs...); err == nil {
				err = insertFrame(ctx, dc, frameRecs, traceID)
			}
			for _, r := range frameRecs {
				r.Release()
			}
			if err != nil {
				return fmt.Errorf("build the analysis frame: %w", RuleError(ctx, db.SQL, err))
			}
			tm.mark("_hta_frame_default")
			if pf.jsonBytes > freeOSAbove {
				debug.FreeOSMemory()
			}
			tm.mark("free")
			// The span excludes Kineto's whole-session "Trace" event, as HTA's trace duration does.
			if _, err := ex.ExecContext(ctx, fmt.Sprintf(`UPDATE traces SET min_ts = s.lo, max_ts = s.hi
				FROM (SELECT min(ts) AS lo, max(ts + coalesce(dur, 0)) AS hi FROM events
				      WHERE trace_id = %[1]d AND cat IS DISTINCT FROM 'Trace') s
				WHERE trace_id = %[1]d`, traceID), nil); err != nil {
				return fmt.Errorf("set time span: %w", err)
			}
			tm.mark("span")
			if err := ts.set(ctx, ts.threads); err != nil {
				return err
			}
			usable, err := driverRulesUsable(ctx, dc)
			if err != nil {
				return err
			}
			if !usable && opts.Warn != nil {
				opts.Warn(fmt.Sprintf("%s: loaded, but kernel_classes holds a rule that cannot apply: the analyses that type kernels fail, naming it, until it is corrected or deleted", path))
			}
			for _, s := range derivedFrameInserts(int64(traceID), int64(traceID), usable) {
				if _, err := ex.ExecContext(ctx, s, nil); err != nil {
					return fmt.Errorf("build the analysis frame: %w", RuleError(ctx, db.SQL, err))
				}
				tm.mark(frameTableName(s))
			}
			return nil
		}()
		if err != nil {
			ex.ExecContext(context.Background(), "ROLLBACK", nil)
			if strings.Contains(err.Error(), "Malformed JSON") && !released {
				// The scanner checks structure only; DuckDB's JSON cast found bad args. Name the event.
				if e := findMalformedArgs(pf); e != nil {
					return e
				}
			}
			return err
		}
		// Once here the file is in: a cancel now waits for the commit rather than leave the caller
		// unsure whether it happened (a commit that completed under a cancelled context reported the
		// cancel, and the file went unreported though loaded).
		_, err = ex.ExecContext(context.WithoutCancel(ctx), "COMMIT", nil)
		tm.mark("commit")
		return err
	})
	res.Elapsed = time.Since(start)
	if err == nil && (replaces >= 0 || len(obsolete) > 1) {
		sqlfuncs.ResetCriticalPathCache()
	}
	// A file whose older version an earlier file of this Load took away (ranks swapped) loaded afresh, but
	// it too replaced that version.
	res.Replaced = err == nil && (replaces >= 0 || slices.Contains(slices.Collect(maps.Values(opts.replacing)), path))
	if err == nil && len(obsolete) > 1 {
		opts.swaps.taken[opts.replacing[otherID]] = takenRank{by: path, rank: rank}
	}
	return res, err
}

// replacedVersions returns the trace ids of the older versions of files that changed since they were
// loaded (LoadOptions.Replace).
func (db *DB) replacedVersions(ctx context.Context, files []string, opts LoadOptions) map[int]string {
	ids := map[int]string{}
	for _, path := range files {
		if IsNCCLProfile(path) {
			continue
		}
		if st, err := os.Stat(path); err == nil {
			if _, old, err := db.loadedBefore(ctx, "traces", path, st, opts); err == nil && old >= 0 {
				ids[old] = path
			}
		}
	}
	return ids
}

// pathText is a file path as the traces tables store it: valid UTF-8 (a byte that is not becomes U+FFFD;
// DuckDB refuses such a string, and a Linux file name may hold one).
func pathText(path string) string { return strings.ToValidUTF8(path, "\uFFFD") }

// loadedBefore returns the trace_id under which this very file (same path, size and modification
// time) is in table (traces or nccl_traces) for opts.Label, or -1 if it is not. A row with the same path
// and label but another size or time means that the file changed since it was loaded: an error, since
// loading it again would put two versions of one file in the trace set (and, for a Kineto trace, its
// rank would clash with its own older version); with opts.Replace, that row's trace_id is returned
// as replaces instead (-1 otherwise).
func (db *DB) loadedBefore(ctx context.Context, table, path string, st os.FileInfo, opts LoadOptions) (same, replaces int, _ error) {
	mtime := st.ModTime().UTC().Truncate(time.Microsecond)
	var id, rank int
	var size int64
	var was time.Time
	err := db.SQL.QueryRowContext(ctx, `SELECT trace_id, rank, file_bytes, file_mtime FROM `+table+`
		WHERE path = ? AND label = ? ORDER BY (file_bytes = ? AND file_mtime = ?) DESC, trace_id LIMIT 1`,
		pathText(path), opts.Label, st.Size(), mtime).Scan(&id, &rank, &size, &was)
	if errors.Is(err, sql.ErrNoRows) {
		// The file may be loaded under another name: through a symbolic link (runs/latest/… and
		// runs/2026-11-23/…), or a hard link. Only rows of its size are looked at (a stat each), so a
		// load of many new files into a database of many stays cheap; one changed since, through another
		// name, meets the rank check instead.
		if id, err = db.loadedAs(ctx, table, st, opts.Label, &rank, &size, &was); err != nil || id < 0 {
			return -1, -1, err
		}
	} else if err != nil {
		return -1, -1, err
	}
	if size == st.Size() && was.Equal(mtime) {
		if opts.Replace && table == "traces" {
			// The same file, loaded by another loader (older, or newer than this one): --replace
			// derives its columns afresh, as this binary's analyses read them.
			var version int
			if err := db.SQL.QueryRowContext(ctx, `SELECT coalesce(loader_version, 1) FROM traces WHERE trace_id = ?`, id).Scan(&version); err != nil {
				return -1, -1, err
			}
			if version != LoaderVersion {
				return -1, id, nil
			}
		}
		return id, -1, nil
	}
	if opts.Replace {
		return -1, id, nil
	}
	how := "load it with --replace (.load --replace in the REPL) to replace the older version, into a new --db, or with another --label to keep both versions"
	if db.Path == "" {
		how = "load it with .load --replace to replace the older version, start tracesql again to load it afresh, or load it with another --label to keep both versions"
	}
	const stamp = "2006-01-02 15:04:05.999999 UTC"
	return -1, -1, fmt.Errorf("changed since it was loaded as rank %d of trace set %q (then %d bytes, modified %s; now %d bytes, modified %s), and a loaded file is not replaced: %s",
		rank, opts.Label, size, was.UTC().Format(stamp), st.Size(), mtime.Format(stamp), how)
}

// loadedAs returns the trace id (-1: none) of the file st loaded in the label under another path, and
// fills in its rank, size and mtime as loaded.
func (db *DB) loadedAs(ctx context.Context, table string, st os.FileInfo, label string, rank *int, size *int64, was *time.Time) (int, error) {
	rows, err := db.SQL.QueryContext(ctx, `SELECT trace_id, rank, file_bytes, file_mtime, path FROM `+table+`
		WHERE label = ? AND file_bytes = ? ORDER BY trace_id`, label, st.Size())
	if err != nil {
		return -1, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var p string
		if err := rows.Scan(&id, rank, size, was, &p); err != nil {
			return -1, err
		}
		if other, err := os.Stat(p); err == nil && os.SameFile(st, other) {
			return id, nil
		}
	}
	return -1, rows.Err()
}

func named(vals ...any) []driver.NamedValue {
	out := make([]driver.NamedValue, len(vals))
	for i, v := range vals {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

// releaseSideTables releases the batches of every table but events, and the per-event facts.
func (pf *parsedFile) releaseSideTables() {
	for _, b := range pf.batches {
		b.facts = nil // read by derive only
		for _, r := range []*arrow.RecordBatch{&b.flows, &b.counters, &b.instants, &b.others, &b.meta} {
			if *r != nil {
				(*r).Release()
				*r = nil
			}
		}
	}
}

func (pf *parsedFile) release() {
	for _, b := range pf.batches {
		for _, r := range []arrow.RecordBatch{b.events, b.flows, b.counters, b.instants, b.others, b.meta} {
			if r != nil {
				r.Release()
			}
		}
	}
}

// parseFile streams one file through the splitter and the parallel event scanners. The splitter
// first guesses the ends of events laid out as Kineto writes them (splitter.guessEnd: a third of the
// parse's CPU time was finding event ends byte by byte); when that parse fails after a guess, the
// file is parsed again with every end found exactly, which gives the result or the error of record.
func parseFile(ctx context.Context, path string, size int64, opts LoadOptions) (*parsedFile, error) {
	pf, guessed, err := parseFileSplit(ctx, path, size, opts, true)
	if err != nil && guessed && ctx.Err() == nil && !errors.Is(err, ErrNotATrace) {
		pf, _, err = parseFileSplit(ctx, path, size, opts, false)
	}
	return pf, err
}

// parseFileSplit is parseFile with guessed event ends allowed or not; guessed reports whether any
// end was guessed.
func parseFileSplit(ctx context.Context, path string, size int64, opts LoadOptions, guess bool) (_ *parsedFile, guessed bool, _ error) {
	var rawRead, scanned atomic.Int64
	rd, err := openTrace(path, &rawRead)
	if err != nil {
		return nil, false, err
	}
	defer rd.Close()
	sp := newSplitter(rd)
	sp.guess = guess
	if ra, ok := rd.(*readAhead); ok {
		sp.base, sp.bom = ra.skipped, ra.skipped
	}

	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	raw := make(chan *rawBatch, workers*2)
	parsed := make(chan *parsedBatch, workers*2)
	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	defer halt()

	var firstErr error
	var errMu sync.Mutex
	setErr := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		halt()
	}

	var splitErr error
	splitDone := make(chan struct{})
	go func() {
		defer close(splitDone)
		splitErr = sp.Run(raw, stop)
		sp.close()
		if splitErr != nil {
			halt()
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bld := newBuilders(memory.DefaultAllocator)
			for rb := range raw {
				select {
				case <-stop:
					rb.done()
					continue // drain
				default:
				}
				pb, err := parseBatch(rb, bld)
				rb.done()
				if err != nil {
					setErr(err)
					continue
				}
				scanned.Add(int64(pb.count))
				select {
				case parsed <- pb:
				case <-stop:
				}
			}
		}()
	}
	go func() { wg.Wait(); close(parsed) }()

	var ticker *time.Ticker
	var tick <-chan time.Time
	began := time.Now()
	report := func(done bool) {
		if opts.Progress != nil {
			opts.Progress(Progress{Path: path, FileBytes: size, ReadBytes: rawRead.Load(), Events: scanned.Load(), Elapsed: time.Since(began), Done: done})
		}
	}
	if opts.Progress != nil {
		ticker = time.NewTicker(200 * time.Millisecond)
		defer ticker.Stop()
		tick = ticker.C
	}
	pf := &parsedFile{}
	var bySeq []*parsedBatch
	for collecting := true; collecting; {
		select {
		case pb, ok := <-parsed:
			if !ok {
				collecting = false
				break
			}
			for len(bySeq) <= pb.seq {
				bySeq = append(bySeq, nil)
			}
			bySeq[pb.seq] = pb
		case <-tick:
			report(false)
		case <-ctx.Done():
			setErr(ctx.Err())
		}
	}
	<-splitDone
	pf.batches = bySeq
	if splitErr != nil || firstErr != nil {
		// A cancelled load can drop batches in flight, leaving holes in bySeq.
		pf.batches = pf.batches[:0]
		for _, b := range bySeq {
			if b != nil {
				pf.batches = append(pf.batches, b)
			}
		}
	}
	guessed = sp.guessed > 0
	if splitErr != nil && !errors.Is(splitErr, errStopped) {
		pf.release()
		return nil, guessed, splitErr
	}
	if firstErr != nil {
		pf.release()
		return nil, guessed, firstErr
	}
	paired, err := pairDurationEvents(bySeq, newBuilders(memory.DefaultAllocator))
	if err != nil {
		pf.release()
		return nil, guessed, err
	}
	if len(paired) > 0 {
		bySeq = append(bySeq, paired...)
		pf.batches = bySeq
	}
	report(true)
	for _, b := range bySeq {
		pf.events += int64(b.count)
		if b.meta != nil {
			pf.metaEvents += b.meta.NumRows()
		}
		if b.events != nil {
			pf.noDur += int64(b.events.Column(eventsDurColumn).NullN())
		}
		if b.oddLanes > 0 && pf.oddLanes == 0 {
			pf.oddLaneExample = b.oddLaneExample
		}
		pf.oddLanes += int64(b.oddLanes)
		if b.dupKeys > 0 && pf.dupKeys == 0 {
			pf.dupKeyExample = b.dupKeyExample
		}
		pf.dupKeys += int64(b.dupKeys)
		if b.badEscapes > 0 && pf.badEscapes == 0 {
			pf.badEscapeExample = b.badEscapeExample
		}
		pf.badEscapes += int64(b.badEscapes)
		if b.negativeDur > 0 && pf.negativeDur == 0 {
			pf.negativeDurExample = b.negativeDurExample
		}
		pf.negativeDur += int64(b.negativeDur)
		if b.noTS > 0 && pf.noTS == 0 {
			pf.noTSExample = b.noTSExample
		}
		pf.noTS += int64(b.noTS)
		pf.sawLaunch |= b.sawLaunch
		for k, v := range b.laneNames {
			if pf.laneNames == nil {
				pf.laneNames = map[laneKey]string{}
			}
			pf.laneNames[k] = v
		}
	}
	pf.meta, pf.metaKeys, pf.metaOffs, pf.arrayForm = sp.Metadata, sp.MetaKeys, sp.MetaOffsets, sp.ArrayForm
	pf.unterminated, pf.cutEvent = sp.Unterminated, sp.CutEvent
	pf.droppedMeta = sp.DroppedMeta
	pf.jsonBytes = sp.Bytes
	return pf, guessed, nil
}

// deviceType follows HTA: the backend names MTIA, else the launch calls seen decide (launchFlavour).
func deviceType(info traceInfo, saw uint8) string {
	if b, ok := info.backend.(string); ok && strings.Contains(b, "mtia:hccl") {
		return "MTIA"
	}
	switch {
	case saw&sawCUDA != 0:
		return "NVIDIA GPU"
	case saw&sawHIP != 0:
		return "AMD GPU"
	case saw&sawMTIA != 0:
		return "MTIA"
	}
	return "UNKNOWN GPU"
}

// malformedMetadata names the first top-level value that is not JSON (error path only: DuckDB's error for the
// metadata column counts bytes of the compacted text, not of the file). NaN and Infinity, which DuckDB reads,
// are not what failed.
func malformedMetadata(pf *parsedFile) error {
	for _, k := range pf.metaKeys {
		v := pf.meta[k]
		if json.Valid(v) || json.Valid([]byte(strings.NewReplacer("NaN", "0", "Infinity", "0").Replace(string(v)))) {
			continue
		}
		return fmt.Errorf("value of top-level key %q is not valid JSON at byte %d", k, pf.metaOffs[k])
	}
	return nil
}

func metadataJSON(meta map[string]json.RawMessage, keys []string) string {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, k := range keys {
		v, ok := meta[k]
		if !ok {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		kj, _ := json.Marshal(k)
		b.Write(kj)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

// laneNameRecord synthesises metadata rows naming the ids given to string pids and tids.
func laneNameRecord(names map[laneKey]string, mem memory.Allocator) arrow.RecordBatch {
	if len(names) == 0 {
		return nil
	}
	b := array.NewRecordBuilder(mem, metaSchema)
	defer b.Release()
	for k, text := range names {
		b.Field(0).AppendNull()
		kind, tidOK := "process_name", false
		if k.isTid {
			kind, tidOK = "thread_name", true
		}
		b.Field(1).(*array.StringBuilder).Append(kind)
		appendI64(b.Field(2), k.pid, true)
		appendI64(b.Field(3), k.tid, tidOK)
		b.Field(4).AppendNull()
		arg, _ := json.Marshal(map[string]string{"name": text})
		b.Field(5).(*array.StringBuilder).Append(string(arg))
	}
	return b.NewRecordBatch()
}

// findMalformedArgs locates the first event whose args text is not valid JSON (error path only).
func findMalformedArgs(pf *parsedFile) error {
	var bad *EventError
	for _, b := range pf.batches {
		for _, rc := range []struct {
			rec     arrow.RecordBatch
			argsCol int
		}{{b.events, 12}, {b.instants, 8}, {b.others, 9}, {b.meta, 5}} {
			if rc.rec == nil {
				continue
			}
			idx := rc.rec.Column(0).(*array.Int64)
			args := rc.rec.Column(rc.argsCol).(*array.String)
			for i := 0; i < int(rc.rec.NumRows()); i++ {
				if args.IsValid(i) && !json.Valid([]byte(args.Value(i))) && (bad == nil || idx.Value(i) < bad.Index) {
					bad = &EventError{Index: idx.Value(i), Offset: -1, Msg: "args is not valid JSON: " + clip([]byte(args.Value(i)))}
				}
			}
		}
	}
	if bad == nil {
		return nil
	}
	return bad
}

// phaseTimer prints the time of each load phase to stderr when TRACESQL_LOAD_TIMING is set: the
// breakdown used to decide what to overlap.
type phaseTimer struct {
	path  string
	last  time.Time
	parts []string
}

func newPhaseTimer(path string) *phaseTimer {
	if os.Getenv("TRACESQL_LOAD_TIMING") == "" {
		return nil
	}
	return &phaseTimer{path: path, last: time.Now()}
}

func (t *phaseTimer) mark(phase string) {
	if t == nil {
		return
	}
	now := time.Now()
	t.parts = append(t.parts, fmt.Sprintf("%s %.0f ms (rss %d MB, hwm %d MB)", phase, float64(now.Sub(t.last).Microseconds())/1000, procmem.Self("VmRSS")>>20, procmem.Self("VmHWM")>>20))
	t.last = now
}

func (t *phaseTimer) report() {
	if t == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "load timing %s: %s\n", t.path, strings.Join(t.parts, ", "))
}

// driverRulesUsable is rulesUsable on the load's driver connection.
func driverRulesUsable(ctx context.Context, dc driver.Conn) (bool, error) {
	rows, err := dc.(driver.QueryerContext).QueryContext(ctx, "SELECT _kernel_classes_usable()", nil)
	if err != nil {
		return false, fmt.Errorf("check kernel_classes: %w", err)
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil {
		return false, fmt.Errorf("check kernel_classes: %w", err)
	}
	ok, _ := v[0].(bool)
	return ok, nil
}
