package queries_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"tracesql/engine"
)

// gpuFrameDB loads several traces (dlrm's 8 ranks, ns_resolution, triton, the hand-made launch-queue, idle and
// two-GPU traces) into one database, so that every derived column is computed across many partitions.
func gpuFrameDB(t *testing.T) *engine.DB {
	t.Helper()
	var paths []string
	dlrm, err := filepath.Glob(filepath.Join("..", "testdata", "traces", "dlrm_8ranks", "*.json.gz"))
	if err != nil || len(dlrm) != 8 {
		t.Fatalf("dlrm_8ranks: %v %v", dlrm, err)
	}
	paths = append(paths, dlrm...)
	db, err := engine.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	sets := map[string][]string{
		"dlrm":   paths,
		"ns":     {filepath.Join("..", "testdata", "traces", "ns_resolution", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")},
		"triton": {filepath.Join("..", "testdata", "traces", "triton")},
		"graph":  {filepath.Join("..", "testdata", "traces", "recorded", "graphed")},
		"queue":  {bdTestdata("ct_launch_queue.json")},
		"idle":   {bdTestdata("bd_idle.json")},
		"gpus":   {bdTestdata("bd_idle_two_gpus.json")},
	}
	for _, label := range []string{"dlrm", "ns", "triton", "graph", "queue", "idle", "gpus"} {
		if _, err := db.Load(context.Background(), sets[label], engine.LoadOptions{Label: label}); err != nil {
			t.Fatalf("load %s: %v", label, err)
		}
	}
	return db
}

// TestGPUFrameDerived checks the columns _gpu_frame_default stores at load (streaming windows over
// packed values, one join for launches and links) against their plain definitions: partitioned
// windows and per-column joins over hta_frame.
func TestGPUFrameDerived(t *testing.T) {
	db := gpuFrameDB(t)
	var gpuRows int
	if err := db.SQL.QueryRow(`SELECT count(*) FROM _gpu_frame_default WHERE launch_idx IS NOT NULL AND NOT opens_busy`).Scan(&gpuRows); err != nil {
		t.Fatal(err)
	}
	if gpuRows == 0 {
		t.Fatal("no launched GPU event overlaps an earlier one: the test data exercises nothing")
	}
	const reference = `
WITH g AS (SELECT * FROM hta_frame WHERE stream <> -1),
launch AS (
    SELECT g.trace_id, g.ev_idx, l.ev_idx AS launch_idx, l.ts AS launch_ts, l.dur AS launch_dur, n.is_memory AS launch_is_memory
    FROM g JOIN hta_frame l ON l.trace_id = g.trace_id AND l.correlation = g.correlation
    JOIN _ct_launch_names() n ON n.name = l.name
    WHERE g.gpu_work AND l.stream = -1 AND l.correlation <> -1
    QUALIFY row_number() OVER (PARTITION BY g.trace_id, g.ev_idx ORDER BY (l.cat_class = 'runtime') DESC, l.ev_idx) = 1
),
linked AS (
    SELECT g.trace_id, g.ev_idx, CASE WHEN g.ts >= r.ts + r.dur THEN r.ts + r.dur ELSE r.ts END AS linked_enqueue_ts
    FROM g JOIN hta_frame r ON r.trace_id = g.trace_id AND r.ev_idx = g.index_correlation AND r.correlation = g.correlation
),
prev AS (
    SELECT trace_id, ev_idx, ts,
           max(end_ts) OVER (PARTITION BY trace_id ORDER BY ts, ev_idx ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS p_all,
           max(end_ts) OVER (PARTITION BY trace_id, pid, stream ORDER BY ts, ev_idx ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS p_stream
    FROM g WHERE gpu_work
),
changes AS (
    SELECT l.trace_id, g.pid, g.stream, l.launch_ts AS ts, 1 AS delta, l.launch_idx AS idx, g.ev_idx AS gpu_idx
    FROM launch l JOIN g USING (trace_id, ev_idx)
    UNION ALL
    SELECT l.trace_id, g.pid, g.stream, g.ts, -1, g.ev_idx, g.ev_idx FROM launch l JOIN g USING (trace_id, ev_idx)
),
series AS (
    SELECT trace_id, gpu_idx, delta, sum(delta) OVER w AS q, row_number() OVER w - 1 AS seq, lead(ts) OVER w AS nxt
    FROM changes
    WINDOW w AS (PARTITION BY trace_id, pid, stream ORDER BY ts, delta DESC, idx, gpu_idx ROWS UNBOUNDED PRECEDING)
)
SELECT g.trace_id, g.ev_idx, l.launch_idx, l.launch_ts, l.launch_dur, l.launch_is_memory, k.linked_enqueue_ts,
       g.gpu_work AND (p.p_all IS NULL OR g.ts > p.p_all) AS opens_busy,
       CASE WHEN g.ts > p.p_all THEN p.p_all END AS busy_before,
       CASE WHEN g.ts > p.p_stream THEN p.p_stream END AS stream_busy_before,
       sl.q AS queue_at_launch, sl.seq AS seq_at_launch, sl.nxt AS next_ts_at_launch,
       ss.q AS queue_at_start, ss.seq AS seq_at_start, ss.nxt AS next_ts_at_start
FROM g
LEFT JOIN launch l USING (trace_id, ev_idx)
LEFT JOIN linked k USING (trace_id, ev_idx)
LEFT JOIN prev p USING (trace_id, ev_idx)
LEFT JOIN series sl ON sl.trace_id = g.trace_id AND sl.gpu_idx = g.ev_idx AND sl.delta = 1
LEFT JOIN series ss ON ss.trace_id = g.trace_id AND ss.gpu_idx = g.ev_idx AND ss.delta = -1`
	const stored = `SELECT trace_id, ev_idx, launch_idx, launch_ts, launch_dur, launch_is_memory, linked_enqueue_ts, opens_busy,
	busy_before, stream_busy_before, queue_at_launch, seq_at_launch, next_ts_at_launch, queue_at_start, seq_at_start,
	next_ts_at_start FROM _gpu_frame_default`
	for _, q := range []struct{ name, sql string }{
		{"stored rows missing from the reference", stored + " EXCEPT ALL (" + reference + ")"},
		{"reference rows missing from the stored frame", "(" + reference + ") EXCEPT ALL " + stored},
	} {
		var n int
		if err := db.SQL.QueryRow(`SELECT count(*) FROM (` + q.sql + `)`).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q.name, err)
		}
		if n != 0 {
			t.Errorf("%s: %d", q.name, n)
		}
	}
}

// TestStreamingSweeps checks the analyses that replace partitioned windows by streaming ones over sorted
// input (kernel-type segments, temporal_breakdown's computation time) against the partitioned form, and
// the per-trace results stored at load (_trace_summary, _type_segments) before and after an edit of
// kernel_classes.
func TestStreamingSweeps(t *testing.T) {
	db := gpuFrameDB(t)
	// the sweep as it was: edges merged per instant, a partitioned running sum of the packed counts
	const segmentsOf = `
WITH raw AS (
    SELECT trace_id, ts, end_ts,
           CASE kernel_type WHEN 'COMPUTATION' THEN 1 WHEN 'COMMUNICATION' THEN 2097152 ELSE 4398046511104 END AS d
    FROM gpu_frame WHERE gpu_work AND kernel_type IN ('COMPUTATION', 'COMMUNICATION', %s)
),
edges AS (
    SELECT trace_id, t, sum(d)::BIGINT AS d
    FROM (SELECT trace_id, ts AS t, d FROM raw UNION ALL SELECT trace_id, end_ts, -d FROM raw)
    GROUP BY ALL
),
sweep AS (
    SELECT trace_id, t, d, sum(d) OVER (PARTITION BY trace_id ORDER BY t ROWS UNBOUNDED PRECEDING)::BIGINT AS s FROM edges
),
masks AS (
    SELECT trace_id, t,
           ((s - d) & 2097151 > 0)::INTEGER + 2 * ((s - d) >> 21 & 2097151 > 0)::INTEGER + 4 * ((s - d) >> 42 > 0)::INTEGER AS m_before,
           (s & 2097151 > 0)::INTEGER + 2 * (s >> 21 & 2097151 > 0)::INTEGER + 4 * (s >> 42 > 0)::INTEGER AS m_after
    FROM sweep
)
SELECT trace_id, mask, sum(c)::BIGINT AS len_ns
FROM (SELECT trace_id, m_before AS mask, t::HUGEINT AS c FROM masks WHERE m_before > 0 AND m_before <> m_after
      UNION ALL
      SELECT trace_id, m_after, -t::HUGEINT FROM masks WHERE m_after > 0 AND m_before <> m_after)
GROUP BY ALL HAVING sum(c) > 0`
	checkSegments := func(stage string) {
		t.Helper()
		for _, memory := range []bool{true, false} {
			segments := fmt.Sprintf(segmentsOf, map[bool]string{true: "'MEMORY'", false: "NULL"}[memory])
			stored := fmt.Sprintf(`SELECT trace_id, mask, len_ns FROM _bd_type_segments(%v, false)`, memory)
			for _, q := range []string{stored + " EXCEPT (" + segments + ")", "(" + segments + ") EXCEPT " + stored} {
				var n int
				if err := db.SQL.QueryRow(`SELECT count(*) FROM (` + q + `)`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != 0 {
					t.Errorf("%s, memory kernels %v: kernel-type segments differ from the partitioned sweep in %d rows", stage, memory, n)
				}
			}
		}
	}
	const comp = `
SELECT t.label, t.rank, (max(end_ts) + sum(coalesce(prev, 0) - ts) FILTER (WHERE prev IS NULL OR ts > prev)) / 1000.0 AS comp_us
FROM (SELECT trace_id, ts, end_ts,
             max(end_ts) OVER (PARTITION BY trace_id ORDER BY ts, ev_idx ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev
      FROM gpu_frame WHERE gpu_work AND kernel_type = 'COMPUTATION') JOIN traces t USING (trace_id)
GROUP BY ALL`
	// busy time: the union of all GPU work intervals, the same partitioned merge
	const busy = `
SELECT t.label, t.rank, (max(end_ts) - min(ts) - (max(end_ts) + sum(coalesce(prev, 0) - ts) FILTER (WHERE prev IS NULL OR ts > prev))) / 1000.0 AS idle_us
FROM (SELECT trace_id, ts, end_ts,
             max(end_ts) OVER (PARTITION BY trace_id ORDER BY ts, ev_idx ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev
      FROM gpu_frame WHERE gpu_work) JOIN traces t USING (trace_id)
GROUP BY ALL`
	check := func(stage string) float64 {
		t.Helper()
		var bad, compared int
		var total float64
		if err := db.SQL.QueryRow(`SELECT count(*) FILTER (WHERE b.compute_time_us IS DISTINCT FROM coalesce(c.comp_us, 0) OR b.idle_time_us <> i.idle_us),
				count(*), sum(b.compute_time_us)
			FROM temporal_breakdown b JOIN (`+busy+`) i USING (label, rank) LEFT JOIN (`+comp+`) c USING (label, rank)`).Scan(&bad, &compared, &total); err != nil {
			t.Fatal(err)
		}
		if bad != 0 {
			t.Errorf("%s: temporal_breakdown's busy or compute time differs from the partitioned merge on %d ranks", stage, bad)
		}
		if compared < 10 {
			t.Errorf("%s: %d ranks compared", stage, compared)
		}
		checkSegments(stage)
		return total
	}
	before := check("stored totals")
	// An edit of kernel_classes makes the stored computation totals stale: they are merged again.
	if _, err := db.SQL.Exec(`INSERT INTO kernel_classes VALUES (-1, 'gemm', 'COMMUNICATION', 'all')`); err != nil {
		t.Fatal(err)
	}
	if after := check("after a kernel_classes edit"); after >= before {
		t.Errorf("reclassifying gemm kernels left the total compute time at %v µs (before: %v)", after, before)
	}
	if _, err := db.SQL.Exec(`DELETE FROM kernel_classes WHERE priority = -1`); err != nil {
		t.Fatal(err)
	}
	if again := check("after undoing it"); again != before {
		t.Errorf("compute time %v µs after undoing the edit, %v before", again, before)
	}
	var ranks int
	if err := db.SQL.QueryRow(`SELECT count(*) FROM temporal_breakdown`).Scan(&ranks); err != nil || ranks < 10 {
		t.Errorf("temporal_breakdown: %d ranks, %v", ranks, err)
	}
}
