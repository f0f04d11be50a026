-- Idle-time breakdown (HTA get_idle_time_breakdown): the gaps between consecutive GPU events (kernels,
-- memcpy, memset; cuda_sync excluded) on each stream of each GPU, each blamed on a cause:
--   host_wait    the launching runtime call started after the stream had gone idle (the CPU was late);
--   kernel_wait  otherwise, a gap shorter than consecutive_kernel_delay µs (launch overhead between kernels);
--   other        everything else.
--   default: a stream is one timeline per (device, stream): a trace can hold several GPUs (one process, pid,
--            per device), each with its own stream 7. The stream is idle only after the running max of the
--            previous ends (an event that overlaps an earlier long one leaves no gap), so every idle interval
--            is > 0 and overlaps count no idle time; the runtime call is the launch call with the same correlation id (the runtime one where a driver call shares it).
--   compat:  HTA 0.6.1 (quirk §7.4): one timeline per stream id, whatever the device; the gap is ts − the end
--            of the previous event in ts order, negative for overlaps and summed as is; the first event of a
--            stream is an "other" interval of unknown length (it counts in no sum or count); the runtime call is
--            the event whose index is index_correlation, so index_correlation 0 (partner absent) picks event
--            #0's ts.

-- _bd_idle_gaps_compat / _bd_idle_gaps_default: one row per GPU event of every trace with the end of what
-- precedes it on its timeline (prev_end), the start of its runtime call and the device of the timeline, in each
-- mode: default, the event's GPU (pid: one process per GPU); compat, where HTA keys by stream only, the GPU of
-- every event of the stream id, NULL when they are on several.
CREATE OR REPLACE VIEW _bd_idle_gaps_compat AS
WITH k AS (
    SELECT g.trace_id, g.pid, g.stream, g.ev_idx, g.ts, g.end_ts, r.ts AS ts_runtime
    FROM _hta_frame_compat g
    LEFT JOIN (SELECT trace_id, ev_idx, ts, correlation FROM _hta_frame_compat WHERE correlation >= 0 OR ev_idx = 0) r
           ON r.trace_id = g.trace_id AND r.ev_idx = g.index_correlation
    WHERE g.stream <> -1 AND g.cat_class IN ('kernel', 'memcpy', 'memset')
)
SELECT trace_id, CASE WHEN min(pid) OVER s = max(pid) OVER s THEN pid END AS device, stream, ev_idx, ts,
       lag(end_ts) OVER w AS prev_end, ts_runtime
FROM k
-- s is w's whole partition, in w's order: one sort for both
WINDOW w AS (PARTITION BY trace_id, stream ORDER BY ts, ev_idx),
       s AS (PARTITION BY trace_id, stream ORDER BY ts, ev_idx ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING);

-- default: the stored frame has each event's gap after the previous busy interval of its (device, stream); the
-- runtime call is the event's launch call, as kernel_launch_stats and queue_length pair them (the runtime call
-- where a runtime and a driver call share the correlation: HTA's link, the last in the file, made the cause
-- depend on the file's order), else when HTA's link partner enqueued it (a cudaGraphLaunch, which launches no
-- one kernel: its start, or its end for the graph's work that waited for the call to return; HTA: its start)
CREATE OR REPLACE VIEW _bd_idle_gaps_default AS
SELECT trace_id, pid AS device, stream, ev_idx, ts, stream_busy_before AS prev_end, coalesce(launch_ts, linked_enqueue_ts) AS ts_runtime
FROM _gpu_frame_default
WHERE gpu_work AND stream_busy_before IS NOT NULL;

-- _bd_idle_intervals(consecutive_kernel_delay, compat_mode): one row per GPU event with its gap, gap_ns, and its cause
-- as idle_code (0 host_wait, 1 kernel_wait, 2 other: numbers group faster than names; _bd_idle_category names them).
-- The mode's view is picked when the query is bound (query()), so that the other is neither planned nor run. The
-- callers filter streams after their GROUP BY and ranks where they join traces (a filter on whole window partitions
-- gives the same rows after the compat window as before it): one use of each parameter, as each use of a macro
-- parameter is bound again.
CREATE OR REPLACE MACRO _bd_idle_intervals(consecutive_kernel_delay, compat_mode) AS TABLE
SELECT trace_id, device, stream, ev_idx, ts, prev_end, ts_runtime,
       ts - prev_end AS gap_ns,
       CASE WHEN ts_runtime > prev_end THEN 0
            -- compared in µs: a delay in µs times 1000 overflows BIGINT for huge values
            WHEN (ts - prev_end) / 1000.0 < coalesce(consecutive_kernel_delay, 30) THEN 1
            ELSE 2 END AS idle_code
FROM query(CASE WHEN compat_mode THEN 'FROM _bd_idle_gaps_compat' ELSE 'FROM _bd_idle_gaps_default' END);

CREATE OR REPLACE MACRO _bd_idle_category(idle_code) AS ['host_wait', 'kernel_wait', 'other'][idle_code + 1];

-- _idle_interval_moments(gap_ns): an aggregate of a group's gaps (ns), in µs: [mean, std, min, p25, p50, p75, max].
CREATE OR REPLACE MACRO _idle_interval_moments(gap_ns) AS
    [avg(gap_ns) / 1000.0, sqrt(_var_samp_exact(gap_ns)) / 1000.0, min(gap_ns) / 1000.0]
    || list_transform(quantile_cont(gap_ns, [0.25, 0.5, 0.75]), lambda q: q / 1000.0)
    || [max(gap_ns) / 1000.0];

-- Default mode at the default consecutive_kernel_delay (30 µs): the idle time and the interval statistics of every
-- (trace, device, stream, cause), stored at load (engine derivedFrameInserts), since the gaps depend on the trace
-- alone (no rule): on the 1 GB trace idle_interval_stats took 24 ms on every query (the quantiles' sorts) and
-- idle_time_breakdown 8 ms. The macros read these rows when _idle_stored holds, which DuckDB folds when it plans
-- the query, so that the other branch of their UNION ALL is an empty result (it is still bound: ~0.2 ms).
-- _idle_summary_source(first_trace, last_trace): the _idle_summary rows of those traces.
CREATE OR REPLACE MACRO _idle_summary_source(first_trace, last_trace) AS TABLE
SELECT trace_id, device, stream, idle_code, coalesce(sum(gap_ns), 0) AS idle_ns, count(gap_ns) AS count,
       _idle_interval_moments(gap_ns) AS moments_us
FROM _bd_idle_intervals(30, false)
WHERE trace_id BETWEEN first_trace AND last_trace
GROUP BY trace_id, device, stream, idle_code;

CREATE TABLE IF NOT EXISTS _idle_summary (
    trace_id INTEGER, device BIGINT, stream BIGINT, idle_code INTEGER, idle_ns HUGEINT, count BIGINT, moments_us DOUBLE[]
);

-- _idle_stored(consecutive_kernel_delay, compat_mode): whether a call's rows are _idle_summary's. A delay that is not
-- a number reads them too, and fails the call's parameter check.
CREATE OR REPLACE MACRO _idle_stored(consecutive_kernel_delay, compat_mode) AS
    NOT compat_mode AND coalesce(TRY_CAST(consecutive_kernel_delay AS DOUBLE), 30) = 30;

-- @macro idle_time_breakdown(consecutive_kernel_delay := 30, ranks := NULL, streams := NULL, hta_compat := NULL)  GPU
-- idle time per rank, device, stream and cause. consecutive_kernel_delay, in µs (HTA's docstring says ns, but HTA
-- compares it with µs): a gap after a kernel shorter than this is kernel_wait, the launch overhead between back-to-back
-- kernels. ranks and streams are lists (NULL or [] = all ranks / all streams).
-- hta_compat: true or false overrides the session's hta_compat for this call (NULL = the session's).
-- @column label            Trace set
-- @column rank             Rank
-- @column device           GPU (its process id in the trace; compat: NULL when the stream id is on several GPUs, which HTA merges into one timeline)
-- @column stream           Stream
-- @column idle_category    host_wait, kernel_wait or other
-- @column idle_time_us     Idle time of this cause on the stream, µs (compat: overlaps count negative)
-- @column idle_time_ratio  Share of the stream's idle time (0–1; compat: rounded to 2 decimals)
CREATE OR REPLACE MACRO idle_time_breakdown(consecutive_kernel_delay := 30, ranks := NULL, streams := NULL,
                                            hta_compat := NULL) AS TABLE
WITH c AS (
    SELECT * FROM (
        SELECT trace_id, device, stream, idle_code, idle_ns
        FROM _idle_summary
        WHERE _idle_stored(consecutive_kernel_delay, _hta_mode(hta_compat, 'idle_time_breakdown'))
        UNION ALL
        SELECT trace_id, device, stream, idle_code, coalesce(sum(gap_ns), 0) AS idle_ns
        FROM _bd_idle_intervals(TRY_CAST(consecutive_kernel_delay AS DOUBLE), _hta_mode(hta_compat, 'idle_time_breakdown'))
        WHERE NOT _idle_stored(consecutive_kernel_delay, _hta_mode(hta_compat, 'idle_time_breakdown'))
        GROUP BY trace_id, device, stream, idle_code)
),
-- the timeline's idle time beside its causes: a second aggregate and an unnest, 0.03 ms where a window over
-- these few rows took 1 ms, and a join of c with its own aggregate would compute c twice. Summed in ns: a sum
-- of the µs doubles changed in its last digits with the order DuckDB added them in.
tl AS (
    SELECT trace_id, device, stream, sum(idle_ns) AS timeline_ns,
           unnest(list({idle_code: idle_code, idle_ns: idle_ns}), recursive := true)
    FROM c GROUP BY trace_id, device, stream
)
SELECT t.label, t.rank, c.device, c.stream, _bd_idle_category(c.idle_code) AS idle_category,
       c.r[1] AS idle_time_us, c.r[2] AS idle_time_ratio
FROM (SELECT *, _bd_hta_round_list([idle_ns / 1000.0, idle_ns / timeline_ns], 2, _hta_mode(hta_compat, 'idle_time_breakdown')) AS r
      FROM tl) c
JOIN traces t USING (trace_id),
     (SELECT _num_check(TRY_CAST(consecutive_kernel_delay AS DOUBLE) >= 0, 'idle_time_breakdown: consecutive_kernel_delay',
                        consecutive_kernel_delay, 'a finite number >= 0 (µs)') AS args_ok) args_check,
     _ranks_loaded(ranks, streams, 'idle_time_breakdown') ranks_check
WHERE coalesce(list_contains(ranks_check.ranks, t.rank), true) AND coalesce(list_contains(ranks_check.streams, c.stream), true)
  AND args_check.args_ok AND ranks_check.ranks_ok
ORDER BY t.label, t.rank, c.device, c.stream, idle_category;

-- @macro idle_interval_stats(consecutive_kernel_delay := 30, ranks := NULL, streams := NULL, hta_compat := NULL)
-- Distribution of the idle intervals per rank, device, stream and cause (HTA's show_idle_interval_stats; compat:
-- rounded to 2). Parameters as idle_time_breakdown's (consecutive_kernel_delay in µs). hta_compat: true or false overrides the session's hta_compat for this call (NULL = the session's).
-- Only gaps > 0 are intervals, and a cause without one has no row (compat: every gap, as HTA: 0 µs between touching
-- kernels, negative for overlapping ones, and an other row for every stream). On ROCm traces back-to-back kernels
-- are often exactly 1 ns apart (the end looks exclusive): each is a 0.001 µs kernel_wait interval, which can be most
-- of the count and set the quartiles (an MI300 trace: 2,792 of 3,625 intervals, p25 to p75 0.001 µs) while adding
-- next to no idle time, so compare idle times (idle_time_breakdown) there rather than interval counts.
-- @column label          Trace set
-- @column rank           Rank
-- @column device         GPU (its process id in the trace; compat: NULL when the stream id is on several GPUs)
-- @column stream         Stream
-- @column idle_category  host_wait, kernel_wait or other
-- @column count          Idle intervals
-- @column mean_us        Mean interval, µs
-- @column std_us         Sample standard deviation, µs (NULL for one interval)
-- @column min_us         Shortest interval, µs
-- @column p25_us         25th percentile (linear interpolation), µs
-- @column p50_us         Median, µs
-- @column p75_us         75th percentile, µs
-- @column max_us         Longest interval, µs
CREATE OR REPLACE MACRO idle_interval_stats(consecutive_kernel_delay := 30, ranks := NULL, streams := NULL,
                                            hta_compat := NULL) AS TABLE
WITH c AS (
    SELECT trace_id, device, stream, idle_code, count,
           _bd_hta_round_list(moments_us, 2, _hta_mode(hta_compat, 'idle_interval_stats')) AS r
    FROM (
        SELECT trace_id, device, stream, idle_code, count, moments_us
        FROM _idle_summary
        WHERE _idle_stored(consecutive_kernel_delay, _hta_mode(hta_compat, 'idle_interval_stats'))
        UNION ALL
        SELECT trace_id, device, stream, idle_code, count(gap_ns), _idle_interval_moments(gap_ns)
        FROM _bd_idle_intervals(TRY_CAST(consecutive_kernel_delay AS DOUBLE), _hta_mode(hta_compat, 'idle_interval_stats'))
        WHERE NOT _idle_stored(consecutive_kernel_delay, _hta_mode(hta_compat, 'idle_interval_stats'))
        GROUP BY trace_id, device, stream, idle_code)
)
SELECT t.label, t.rank, c.device, c.stream, _bd_idle_category(c.idle_code) AS idle_category, c.count,
       r[1] AS mean_us, r[2] AS std_us, r[3] AS min_us, r[4] AS p25_us, r[5] AS p50_us, r[6] AS p75_us,
       r[7] AS max_us
FROM c JOIN traces t USING (trace_id),
     (SELECT _num_check(TRY_CAST(consecutive_kernel_delay AS DOUBLE) >= 0, 'idle_interval_stats: consecutive_kernel_delay',
                        consecutive_kernel_delay, 'a finite number >= 0 (µs)') AS args_ok) args_check,
     _ranks_loaded(ranks, streams, 'idle_interval_stats') ranks_check
WHERE coalesce(list_contains(ranks_check.ranks, t.rank), true) AND coalesce(list_contains(ranks_check.streams, c.stream), true)
  AND args_check.args_ok AND ranks_check.ranks_ok
ORDER BY t.label, t.rank, c.device, c.stream, idle_category;
