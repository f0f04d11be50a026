-- Temporal breakdown (HTA get_temporal_breakdown): how a rank's GPU time splits into idle, compute and
-- non-compute time between the first GPU event's start and the last one's end.
--   default: GPU work = kernels, memcpy and memset on a stream (gpu_frame.gpu_work); percentages unrounded.
--   compat:  every stream != -1 row counts as GPU work, cuda_sync rows included (HTA quirk §7.2, so sync
--            waits are "busy" non-compute time), percentages rounded to 2 decimals like HTA.

-- @view temporal_breakdown  One row per rank with GPU work: idle, compute and non-compute time.
-- @column label                 Trace set
-- @column rank                  Rank
-- @column idle_time_us          Time no GPU work runs on any stream, µs
-- @column compute_time_us       Time some COMPUTATION kernel runs, µs
-- @column non_compute_time_us   Busy time without computation (communication, memory, other), µs
-- @column kernel_time_us        Last GPU end minus first GPU start, µs
-- @column idle_time_pct         idle_time_us / kernel_time_us · 100
-- @column compute_time_pct      compute_time_us / kernel_time_us · 100
-- @column non_compute_time_pct  non_compute_time_us / kernel_time_us · 100
CREATE OR REPLACE VIEW temporal_breakdown AS
WITH g AS (
    SELECT trace_id, label, rank, ev_idx, ts, end_ts, kernel_type = 'COMPUTATION' AS is_comp
    FROM gpu_frame
    WHERE gpu_work
),
-- HTA's merge: a row opens a new merged interval when it starts after every earlier row's end. The
-- merged length is max(end) − min(ts) per merged interval, computed per group (not as a running sum of
-- the parts that stick out) because compat rows can have negative durations (ts rounded up, end down);
-- kernel time is the end of the last merged interval minus the start of the first, as in HTA.
flags AS (
    SELECT *,
           ts > max(end_ts) OVER (PARTITION BY trace_id ORDER BY ts, ev_idx
                                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) IS NOT false AS new_all,
           ts > max(end_ts) OVER (PARTITION BY trace_id, is_comp ORDER BY ts, ev_idx
                                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) IS NOT false AS new_type
    FROM g
),
groups AS (
    SELECT *,
           sum(new_all::INTEGER) OVER (PARTITION BY trace_id ORDER BY ts, ev_idx
                                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS grp_all,
           sum(new_type::INTEGER) OVER (PARTITION BY trace_id, is_comp ORDER BY ts, ev_idx
                                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS grp_type
    FROM flags
),
busy AS (
    SELECT trace_id, label, rank, sum(e - s) AS busy_ns, min(s) AS first_ts, arg_max(e, s) AS last_end
    FROM (SELECT trace_id, label, rank, min(ts) AS s, max(end_ts) AS e FROM groups GROUP BY trace_id, label, rank, grp_all)
    GROUP BY ALL
),
comp AS (
    SELECT trace_id, sum(e - s) AS comp_ns
    FROM (SELECT trace_id, min(ts) AS s, max(end_ts) AS e FROM groups WHERE is_comp GROUP BY trace_id, grp_type)
    GROUP BY ALL
),
r AS (
    SELECT b.label, b.rank,
           (b.last_end - b.first_ts) / 1000.0 AS kernel_time_us,
           (b.last_end - b.first_ts - b.busy_ns) / 1000.0 AS idle_time_us,
           coalesce(c.comp_ns, 0) / 1000.0 AS compute_time_us
    FROM busy b LEFT JOIN comp c USING (trace_id)
)
SELECT label, rank, idle_time_us, compute_time_us,
       kernel_time_us - compute_time_us - idle_time_us AS non_compute_time_us,
       kernel_time_us,
       _bd_hta_round(100 * idle_time_us / kernel_time_us, 2) AS idle_time_pct,
       _bd_hta_round(100 * compute_time_us / kernel_time_us, 2) AS compute_time_pct,
       _bd_hta_round(100 * (kernel_time_us - compute_time_us - idle_time_us) / kernel_time_us, 2) AS non_compute_time_pct
FROM r
ORDER BY label, rank;
