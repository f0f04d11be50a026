-- Temporal breakdown (HTA get_temporal_breakdown): how a rank's GPU time splits into idle, compute and
-- non-compute time between the first GPU event's start and the last one's end.
--   default: GPU work = kernels, memcpy and memset on a stream (gpu_frame.gpu_work); percentages unrounded.
--   compat:  every stream != -1 row counts as GPU work, cuda_sync rows included (HTA quirk §7.2, so sync
--            waits are "busy" non-compute time), percentages rounded to 2 decimals like HTA.

-- _temporal_totals_compat / _temporal_totals_default: per trace with GPU work, the first start, the last end,
-- and the busy and computation ns, in each mode.
-- temporal_breakdown picks one when the query is bound (query()), so that a query neither plans nor runs
-- the other mode's pipelines: 7-9 -> 5 ms on one trace.
CREATE OR REPLACE VIEW _temporal_totals_compat AS
WITH g AS (
    SELECT trace_id, label, rank, ev_idx, ts, end_ts, kernel_type = 'COMPUTATION' AS is_comp
    FROM _gpu_frame_compat
    WHERE gpu_work
),
-- Compat mode: HTA's merge in one window pass. Rows in (ts, ev_idx) order; prev = running max of the earlier rows' ends
-- (all rows, and computation rows only); a row opens a merged interval when ts > prev. The merged length
-- Σ (max end − start) over merged intervals is Σ over openers of (prev − ts) + the final max end: each
-- opener's prev is where the interval before it ended. One correction keeps this exact for compat rows
-- with negative durations (ts rounded up, end rounded down): such a row always forms an interval of its own
-- (the next row starts after ts > its end), whose end is its own end, not the running max.
m AS (
    SELECT *,
           max(end_ts) OVER w AS prev_all,
           max(CASE WHEN is_comp THEN end_ts END) OVER w AS prev_comp
    FROM g
    WINDOW w AS (PARTITION BY trace_id ORDER BY ts, ev_idx ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
),
f AS (
    SELECT *,
           prev_all IS NULL OR ts > prev_all AS new_all,
           is_comp AND (prev_comp IS NULL OR ts > prev_comp) AS new_comp
    FROM m
),
r_compat AS (
    SELECT trace_id, label, rank,
           min(ts) AS first_ts,
           -- the end of the last merged interval (HTA's kernel-time end)
           CASE WHEN arg_max(end_ts < ts, {'ts': ts, 'i': ev_idx}) FILTER (WHERE new_all)
                THEN arg_max(end_ts, {'ts': ts, 'i': ev_idx}) FILTER (WHERE new_all)
                ELSE max(end_ts) END AS last_end,
           max(end_ts)
             + sum(coalesce(prev_all, 0) - ts) FILTER (WHERE new_all)
             - coalesce(sum(greatest(prev_all - end_ts, 0)) FILTER (WHERE new_all AND end_ts < ts), 0) AS busy_ns,
           coalesce(max(end_ts) FILTER (WHERE is_comp)
             + sum(coalesce(prev_comp, 0) - ts) FILTER (WHERE new_comp)
             - coalesce(sum(greatest(prev_comp - end_ts, 0)) FILTER (WHERE new_comp AND end_ts < ts), 0), 0) AS comp_ns
    FROM f
    GROUP BY ALL
)
SELECT * FROM r_compat;

-- Default mode: the stored per-trace totals (11_trace_summary.sql); unless _stored_fresh() vouches for them,
-- computation time merged again for the traces whose totals predate an edit of kernel_classes.
CREATE OR REPLACE VIEW _temporal_totals_checked AS
SELECT s.trace_id, t.label, t.rank, s.first_ts, s.last_end, s.busy_ns,
       CASE WHEN s.classes_fp = _kernel_classes_fp() THEN s.comp_ns ELSE coalesce(c.comp_ns, 0) END AS comp_ns
FROM _trace_summary s
JOIN traces t USING (trace_id)
LEFT JOIN _comp_merge(-2147483648, 2147483647, true) c USING (trace_id)
WHERE s.first_ts IS NOT NULL;

CREATE OR REPLACE VIEW _temporal_totals_default AS
SELECT * FROM query(CASE WHEN _stored_fresh()
    THEN 'SELECT s.trace_id, t.label, t.rank, s.first_ts, s.last_end, s.busy_ns, s.comp_ns
          FROM _trace_summary s JOIN traces t USING (trace_id) WHERE s.first_ts IS NOT NULL'
    ELSE 'FROM _temporal_totals_checked' END);

-- @view temporal_breakdown  One row per rank with GPU work: idle, compute and non-compute time.
-- @column label                 Trace set
-- @column rank                  Rank
-- @column idle_time_us          Time no GPU work runs on any stream, µs
-- @column compute_time_us       Time some COMPUTATION kernel runs, µs
-- @column non_compute_time_us   Busy time without computation (communication, memory, other), µs
-- @column kernel_time_us        Last GPU end minus first GPU start, µs
-- @column idle_time_pct         idle_time_us / kernel_time_us · 100 (NULL when kernel_time_us is 0; compat: NaN)
-- @column compute_time_pct      compute_time_us / kernel_time_us · 100
-- @column non_compute_time_pct  non_compute_time_us / kernel_time_us · 100
CREATE OR REPLACE VIEW temporal_breakdown AS
WITH r AS (
    SELECT * FROM query(CASE WHEN hta_compat() THEN 'FROM _temporal_totals_compat' ELSE 'FROM _temporal_totals_default' END)
),
us AS (
    SELECT label, rank,
           (last_end - first_ts) / 1000.0 AS kernel_time_us,
           (last_end - first_ts - busy_ns) / 1000.0 AS idle_time_us,
           comp_ns / 1000.0 AS compute_time_us,
           -- default: from the integer ns (µs floats subtracted leave -1e-12 where it is 0); compat: HTA's floats
           CASE WHEN hta_compat() THEN (last_end - first_ts) / 1000.0 - comp_ns / 1000.0 - (last_end - first_ts - busy_ns) / 1000.0
                ELSE (busy_ns - comp_ns) / 1000.0 END AS non_compute_time_us
    FROM r
)
SELECT label, rank, idle_time_us, compute_time_us, non_compute_time_us, kernel_time_us,
       pct[1] AS idle_time_pct, pct[2] AS compute_time_pct, pct[3] AS non_compute_time_pct
-- a span of 0 (every GPU event lasts 0 µs) has no shares: NULL, where 0 / 0 gave NaN (kept in compat, as HTA's)
FROM (SELECT *, _bd_hta_round_list([100 * idle_time_us / span_us, 100 * compute_time_us / span_us,
                                    100 * non_compute_time_us / span_us], 2, hta_compat()) AS pct
      FROM (SELECT *, CASE WHEN hta_compat() THEN kernel_time_us ELSE nullif(kernel_time_us, 0) END AS span_us FROM us))
ORDER BY label, rank;
