package engine

// This file loads NCCL profiler-plugin traces (see nccl_parse.go) into nccl_traces and nccl_events,
// beside the Kineto traces of the same run. Alignment with Kineto's clock is SQL
// (queries/views/60_nccl.sql); this side only stores the plugin's own times, exactly.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// ncclFileName is the plugin's output name, <prefix>_<commHash>_<rank>.json (plugin.cc).
var ncclFileName = regexp.MustCompile(`_(\d+)_(\d+)\.json(?:\.gz)?$`)

// ncclSniffCat finds a plugin event in the first bytes of a file: a b/e event of a category only the plugin
// writes, or of one of its generic categories (GPU, NET, GROUP) under a name the plugin gives it. A Chrome
// trace's async events may well be of category "GPU" or "NET": those stay Chrome events.
var ncclSniffCat = regexp.MustCompile(`"cat"\s*:\s*"(?:GROUP_API|COLL_API|P2P_API|KERNEL_LAUNCH|COLL|P2P|PROXY|NET_IB|NET_SOCK|CE_COLL|CE_SYNC|CE_BATCH)"\s*,\s*"ph"\s*:\s*"[be]"` +
	`|"name"\s*:\s*"(?:KernelCh|Group|SendGpuWait|SendPeerWait|SendWait|RecvWait|RecvFlushWait|RecvGpuWait)"\s*,\s*"cat"\s*:\s*"(?:GPU|NET|GROUP)"\s*,\s*"ph"\s*:\s*"[be]"`)

// IsNCCLProfile reports whether path holds NCCL profiler-plugin output rather than a Kineto trace:
// a JSON array whose first events are the plugin's b/e events (ncclSniffCat), or a file named like the
// plugin's output that holds nothing but the array's opening bracket (a dump killed before its first
// event, which the NCCL loader then reports as such).
func IsNCCLProfile(path string) bool {
	// Not openTrace: its read-ahead would decompress megabytes to look at 4 KB, for every file loaded.
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	rd, _, err := traceStream(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		return false
	}
	head := make([]byte, 4096)
	k, _ := io.ReadFull(rd, head)
	whole := k < len(head)
	head = head[:k]
	for _, c := range ncclCurly {
		head = bytes.ReplaceAll(head, c, []byte{'"'})
	}
	t := bytes.TrimLeft(head, " \t\r\n")
	if len(t) == 0 || t[0] != '[' {
		return false
	}
	if ncclSniffCat.Match(head) {
		return true
	}
	return whole && ncclFileName.MatchString(filepath.Base(path)) && ncclEmptyDump(t[1:])
}

// ncclEmptyDump reports what follows the '[' of a plugin file that holds no event: nothing (a dump killed
// before its first event) or the "{}]" that the plugin's finalize writes (a communicator that ran no
// operation; it was taken for a Chrome trace and refused, r72 #7).
func ncclEmptyDump(rest []byte) bool {
	rest = bytes.TrimSpace(rest)
	if len(rest) == 0 {
		return true
	}
	rest, ok := bytes.CutPrefix(rest, []byte("{"))
	if !ok {
		return false
	}
	rest, ok = bytes.CutPrefix(bytes.TrimLeft(rest, " \t\r\n"), []byte("}"))
	return ok && string(bytes.TrimSpace(rest)) == "]"
}

// loadNCCLFile loads one plugin file in its own transaction. Its trace_id is drawn from the same
// sequence as Kineto traces' (but it has no traces row), so a trace_id names one file everywhere.
func (db *DB) loadNCCLFile(ctx context.Context, path string, opts LoadOptions) (LoadResult, error) {
	start := time.Now()
	res := LoadResult{Path: path}
	st, err := os.Stat(path)
	if err != nil {
		return res, err
	}
	mtime := st.ModTime().UTC().Truncate(time.Microsecond)
	existing, replaces, err := db.loadedBefore(ctx, "nccl_traces", path, st, opts)
	if err != nil {
		return res, err
	} else if existing >= 0 {
		res.TraceID, res.Skipped = existing, SkippedLoaded
		return res, nil
	}

	var n atomic.Int64
	rd, err := openTrace(path, &n)
	if err != nil {
		return res, err
	}
	data, err := io.ReadAll(rd)
	rd.Close()
	if err != nil {
		return res, err
	}
	raw, quirks, err := parseNCCLEvents(data)
	if err != nil {
		return res, err
	}
	ivs := buildNCCLIntervals(raw, &quirks)
	// (a file with no events, a communicator that ran no operation, loads as its nccl_traces row: its rank
	// and communicator come from its name)
	rank, comm, err := ncclIdentity(path, ivs)
	if err != nil {
		return res, err
	}
	if r, c, found, _ := ncclEventIdentity(ivs); found && (r != rank || c != comm) && opts.Warn != nil {
		// (r72 #9: a renamed copy loaded under the name's identity without a word)
		opts.Warn(fmt.Sprintf("%s: its name says communicator %s rank %d, its events CommHash %s Rank %d: loaded as the name says (rename the file if the events are right)", path, comm, rank, c, r))
	}
	var unmatchedB, unmatchedE int
	for _, iv := range ivs {
		switch iv.status {
		case "begin_only":
			unmatchedB++
		case "end_only":
			unmatchedE++
		}
	}
	if opts.Warn != nil {
		if s := quirks.String(); s != "" {
			opts.Warn(fmt.Sprintf("%s: accepted older NCCL profiler-plugin output: %s", path, s))
		}
		if unmatchedB+unmatchedE > 0 {
			opts.Warn(fmt.Sprintf("%s: %d begins and %d ends without a partner (kept; see nccl_unmatched)", path, unmatchedB, unmatchedE))
		}
	}
	res.Rank, res.Events, res.JSONBytes = rank, int64(len(raw)), int64(len(data))

	db.loadMu.Lock()
	defer db.loadMu.Unlock()
	nextID, err := db.nextTraceID(ctx, db.SQL)
	if err != nil {
		return res, err
	}
	traceID := int(nextID)
	res.TraceID = traceID
	// (r72 #1: a second file of one communicator rank, another run's dump beside this one's, was numbered into
	// the same sequence of operations: both files' clock offsets came out milliseconds off, without a word)
	var other string
	switch err := db.SQL.QueryRowContext(ctx, `SELECT path FROM nccl_traces WHERE label = ? AND comm_hash = ? AND rank = ?
		AND trace_id <> ? ORDER BY trace_id LIMIT 1`, opts.Label, comm, rank, replaces).Scan(&other); {
	case err == nil:
		return res, fmt.Errorf("rank %d of communicator %s is already loaded from %s in trace set %q: two NCCL profiler files of one communicator rank (another run's dump?) cannot be aligned as one; load it under another --label, or remove the other (.unload)",
			rank, comm, other, opts.Label)
	case !errors.Is(err, sql.ErrNoRows):
		return res, err
	}
	var replaceTables []string
	if replaces >= 0 {
		if replaceTables, err = db.perFileTables(ctx); err != nil {
			return res, err
		}
	}
	conn, err := db.connOutsideTransaction(ctx)
	if err != nil {
		return res, err
	}
	defer conn.Close()
	err = conn.Raw(func(dcAny any) error {
		dc := dcAny.(driver.Conn)
		ex := dc.(driver.ExecerContext)
		if _, err := ex.ExecContext(ctx, "BEGIN TRANSACTION", nil); err != nil {
			return err
		}
		err := func() error {
			if err := deleteTraceRows(ctx, ex, replaceTables, int64(replaces)); err != nil {
				return err
			}
			var pid any
			if len(ivs) > 0 {
				pid = ivs[0].pid
			}
			// Columns named here and in the stage below: a column the user added (or an import brought,
			// ImportParquet) is left NULL instead of failing every later load.
			if _, err := ex.ExecContext(ctx, `INSERT INTO nccl_traces (trace_id, label, rank, comm_hash, path, file_bytes,
				file_mtime, pid, records, intervals, begin_only, end_only, quirks, loaded_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now())`, named(
				traceID, opts.Label, rank, comm, pathText(path), st.Size(), mtime, pid, int64(len(raw)), int64(len(ivs)),
				int64(unmatchedB), int64(unmatchedE), nullIfEmpty(quirks.String()))); err != nil {
				return fmt.Errorf("insert nccl_traces row: %w", err)
			}
			// The appender stores a Go string in a JSON column as a JSON string, so rows go through a
			// staging table whose args are text, cast to JSON on the way in.
			if _, err := ex.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS _nccl_stage AS
				SELECT trace_id, rank, comm_hash, ev_idx, cat, name, id, parent_idx, root_idx, op_idx, depth, pid, ts, dur,
				end_ts, status, quirk, args::VARCHAR AS args FROM nccl_events LIMIT 0`, nil); err != nil {
				return fmt.Errorf("stage nccl_events: %w", err)
			}
			if _, err := ex.ExecContext(ctx, `DELETE FROM _nccl_stage`, nil); err != nil {
				return fmt.Errorf("stage nccl_events: %w", err)
			}
			app, err := duckdb.NewAppender(dc, "temp", "main", "_nccl_stage")
			if err != nil {
				return fmt.Errorf("insert nccl_events: %w", err)
			}
			for i := range ivs {
				iv := &ivs[i]
				if err := app.AppendRow(ncclRow(traceID, rank, comm, iv)...); err != nil {
					app.Close()
					return fmt.Errorf("insert nccl_events: %w", err)
				}
			}
			if err := app.Close(); err != nil {
				return fmt.Errorf("insert nccl_events: %w", err)
			}
			if _, err := ex.ExecContext(ctx, `INSERT INTO nccl_events BY NAME SELECT * REPLACE (args::JSON AS args) FROM _nccl_stage`, nil); err != nil {
				return fmt.Errorf("insert nccl_events: %w", err)
			}
			_, err = ex.ExecContext(ctx, `DELETE FROM _nccl_stage`, nil)
			return err
		}()
		if err != nil {
			ex.ExecContext(context.Background(), "ROLLBACK", nil)
			return err
		}
		_, err = ex.ExecContext(ctx, "COMMIT", nil)
		return err
	})
	res.Elapsed = time.Since(start)
	res.Replaced = err == nil && replaces >= 0
	return res, err
}

// ncclRow is one nccl_events row, in the column order of _nccl_stage (the table's own columns).
func ncclRow(traceID, rank int, comm string, iv *ncclInterval) []driver.Value {
	opt := func(ok bool, v int64) driver.Value {
		if !ok {
			return nil
		}
		return v
	}
	idx := func(v int64) driver.Value {
		if v < 0 {
			return nil
		}
		return v
	}
	var dur driver.Value
	if iv.hasTS && iv.hasEnd {
		dur = iv.end - iv.ts
	}
	var quirk, args driver.Value
	if iv.quirk != "" {
		quirk = iv.quirk
	}
	if a := iv.argsJSON(); a != nil {
		args = a
	}
	return []driver.Value{
		int32(traceID), int32(rank), comm, iv.evIdx, iv.cat, iv.name, opt(iv.hasID, iv.id),
		idx(iv.parentIdx), idx(iv.rootIdx), idx(iv.opIdx), int32(iv.depth), iv.pid,
		opt(iv.hasTS, iv.ts), dur, opt(iv.hasEnd, iv.end), iv.status, quirk, args,
	}
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ncclIdentity returns the rank and communicator hash of a plugin file: from its name
// (<prefix>_<commHash>_<rank>.json), else from the CommHash and Rank args of its COLL / P2P events.
func ncclIdentity(path string, ivs []ncclInterval) (int, string, error) {
	// nccl_traces.rank and nccl_events.rank are INTEGER: a rank that does not fit is an error here, not
	// DuckDB's conversion error (or a silently wrapped int32) later. A name whose number does not fit
	// is not the plugin's name: the events may still say.
	var badName error
	if m := ncclFileName.FindStringSubmatch(filepath.Base(path)); m != nil {
		r, err := strconv.ParseInt(m[2], 10, 32)
		if err == nil {
			return int(r), m[1], nil
		}
		badName = fmt.Errorf("cannot tell the rank of this NCCL profiler-plugin file: no COLL/P2P event with CommHash and Rank, and %s in the file name is out of range (want at most %d)", clipStr(m[2]), maxRank)
	}
	rank, comm, found, err := ncclEventIdentity(ivs)
	switch {
	case err != nil:
		return 0, "", err
	case found:
		return rank, comm, nil
	case badName != nil:
		return 0, "", badName
	}
	return 0, "", errors.New("cannot tell the rank and communicator of this NCCL profiler-plugin file: no COLL/P2P event with CommHash and Rank, and the name is not <prefix>_<commHash>_<rank>.json")
}

// ncclEventIdentity returns the communicator and rank the file's first COLL/P2P event with both names.
func ncclEventIdentity(ivs []ncclInterval) (rank int, comm string, found bool, err error) {
	for _, iv := range ivs {
		if iv.cat != "COLL" && iv.cat != "P2P" {
			continue
		}
		var c, r string
		for _, kv := range iv.args {
			switch kv.key {
			case "CommHash":
				c = strings.Trim(kv.json, `"`)
			case "Rank":
				r = kv.json
			}
		}
		if c == "" {
			continue
		}
		n, perr := strconv.ParseInt(r, 10, 32)
		if errors.Is(perr, strconv.ErrRange) {
			return 0, "", false, fmt.Errorf("event %d: Rank %s is out of range (want at most %d)", iv.evIdx, clipStr(r), maxRank)
		} else if perr == nil {
			return int(n), c, true, nil
		}
	}
	return 0, "", false, nil
}

// SetNCCLClockOffset overrides the estimated plugin→Kineto clock offset of a trace set (see the
// nccl_clock_override table). spec is "NS" for every rank, or "RANK=NS,RANK=NS".
func (db *DB) SetNCCLClockOffset(ctx context.Context, label, spec string) error {
	if db.ReadOnly {
		return fmt.Errorf("set the NCCL clock offset: %w", ErrReadOnly)
	}
	rows, err := ParseNCCLClockOffset(spec)
	if err != nil {
		return err
	}
	// An offset for a rank with no plugin file would be kept and change nothing: a mistyped rank. RANK is the
	// Kineto rank of the file's process, as the NCCL views apply it (a clock is per process); in a
	// sub-communicator the file's own rank differs (r72 #2: the check took that one, and the override was then
	// refused for the right rank, or accepted for a wrong one and ignored).
	var ranks []int
	q, err := db.SQL.QueryContext(ctx, `SELECT DISTINCT coalesce(m.kineto_rank, n.rank) AS r FROM nccl_traces n
		LEFT JOIN _nccl_trace_map m USING (trace_id) WHERE n.label = ? ORDER BY r`, label)
	if err != nil {
		return fmt.Errorf("--nccl-clock-offset: %w", err)
	}
	for q.Next() {
		var r int
		if err := q.Scan(&r); err != nil {
			q.Close()
			return fmt.Errorf("--nccl-clock-offset: %w", err)
		}
		ranks = append(ranks, r)
	}
	q.Close()
	if err := q.Err(); err != nil {
		return fmt.Errorf("--nccl-clock-offset: %w", err)
	}
	for _, r := range rows {
		switch {
		case len(ranks) == 0:
			var others string // (r72 #9: that --label picks the set went unsaid)
			db.SQL.QueryRowContext(ctx, `SELECT string_agg(DISTINCT label, ', ' ORDER BY label) FROM nccl_traces`).Scan(&others)
			if others != "" {
				return fmt.Errorf("--nccl-clock-offset %q: trace set %q has no NCCL profiler file loaded, whose times it would shift (--label names the set; those with NCCL files: %s)", spec, label, others)
			}
			return fmt.Errorf("--nccl-clock-offset %q: trace set %q has no NCCL profiler file loaded, whose times it would shift", spec, label)
		case r.Rank >= 0 && !slices.Contains(ranks, r.Rank):
			return fmt.Errorf("--nccl-clock-offset %q: trace set %q has no NCCL profiler file of a process of rank %d (its files' Kineto ranks, nccl_clock_alignment.kineto_rank: %s)", spec, label, r.Rank, rankList(ranks))
		}
	}
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The spec replaces the rows of the ranks it names (every communicator's), and an offset for every rank
	// all of the set's rows; a user's rows for the other ranks stay (the whole set's rows went, unsaid).
	del, args := `DELETE FROM nccl_clock_override WHERE label = ?`, []any{label}
	if !slices.ContainsFunc(rows, func(r NCCLClockOffset) bool { return r.Rank < 0 }) {
		var named []string
		for _, r := range rows {
			named = append(named, strconv.Itoa(r.Rank))
		}
		del += " AND rank IN (" + strings.Join(named, ", ") + ")"
	}
	if _, err := tx.ExecContext(ctx, del, args...); err != nil {
		return fmt.Errorf("--nccl-clock-offset: %w", err)
	}
	for _, r := range rows {
		var rank any // NULL: every rank
		if r.Rank >= 0 {
			rank = r.Rank
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO nccl_clock_override (label, rank, comm_hash, offset_ns) VALUES (?, ?, NULL, ?)`, label, rank, r.Offset); err != nil {
			return fmt.Errorf("--nccl-clock-offset: %w", err)
		}
	}
	return tx.Commit()
}

// MaxNCCLClockOffset bounds a clock offset's size: one beyond int64's range once added to a plugin time broke
// every NCCL view with DuckDB's overflow error, in every later session of the --db file that stored it (r72 #5).
// (_nccl_overrides refuses the same for the table's rows.)
const MaxNCCLClockOffset = 1 << 62

// NCCLClockOffset is one entry of a --nccl-clock-offset spec: Offset ns for Rank (-1: every rank).
type NCCLClockOffset struct {
	Rank   int
	Offset int64
}

// ParseNCCLClockOffset parses a --nccl-clock-offset spec, NS or RANK=NS,… (the command line checks it
// with this before loading anything).
func ParseNCCLClockOffset(spec string) ([]NCCLClockOffset, error) {
	var out []NCCLClockOffset
	for _, part := range strings.Split(spec, ",") {
		r, v, per := strings.Cut(strings.TrimSpace(part), "=")
		if !per {
			v = r
		}
		off, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("--nccl-clock-offset %q: want NS or RANK=NS,… (integer nanoseconds added to plugin times)", spec)
		}
		if off > MaxNCCLClockOffset || off < -MaxNCCLClockOffset {
			return nil, fmt.Errorf("--nccl-clock-offset %q: %d ns is out of range (at most ±2^62 ns, 146 years: plugin times moved by it must stay in BIGINT)", spec, off)
		}
		rank := -1
		if per {
			n, err := strconv.Atoi(strings.TrimSpace(r))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("--nccl-clock-offset %q: %q is not a rank", spec, r)
			}
			rank = n
		}
		for _, o := range out {
			if o.Rank == rank {
				if rank < 0 {
					return nil, fmt.Errorf("--nccl-clock-offset %q: the offset for every rank is given twice", spec)
				}
				return nil, fmt.Errorf("--nccl-clock-offset %q: rank %d is given twice", spec, rank)
			}
		}
		out = append(out, NCCLClockOffset{rank, off})
	}
	return out, nil
}

// rankList writes sorted ranks with runs shortened: "0-7", "0, 2, 5-6".
func rankList(ranks []int) string {
	var parts []string
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ranks[i], ranks[j]))
		} else {
			parts = append(parts, fmt.Sprint(ranks[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
