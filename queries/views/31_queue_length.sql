-- Queue length family (HTA get_queue_length_time_series / _summary / get_time_spent_blocked_on_full_queue).
-- Queue length of a stream = work enqueued by launch calls that has not started on the GPU yet: +1 at each launch
-- call, −1 when its GPU event starts.

-- _ct_hta_reordered: traces whose compat frame HTA stores GPU-side rows first (its last-step filter ran: two or
-- more distinct ProfilerStep names). Row order matters in compat mode: HTA sorts with an unstable quicksort.
CREATE OR REPLACE VIEW _ct_hta_reordered AS
SELECT trace_id
FROM events
WHERE name LIKE '%ProfilerStep%' AND regexp_matches(name, 'ProfilerStep\s*#\s*\d+')
  AND dur IS NOT NULL AND cat IS NOT NULL AND cat <> 'Trace'
GROUP BY trace_id
HAVING count(DISTINCT name) >= 2;

-- _ct_frame_pos_of(compat_mode): that mode's hta_frame with frame_part, the part of HTA's dataframe the row is in
-- (compat mode: GPU-side rows first where _ct_hta_reordered; rows sort by (frame_part, ev_idx)).
CREATE OR REPLACE MACRO _ct_frame_pos_of(compat_mode) AS TABLE
SELECT f.*, CASE WHEN r.trace_id IS NOT NULL AND NOT f.gpu_side THEN 1 ELSE 0 END AS frame_part
FROM _hta_frame_mode(compat_mode) f LEFT JOIN _ct_hta_reordered r USING (trace_id);

-- _queue_length_compat / _queue_length_default: queue_length in each mode.
CREATE OR REPLACE VIEW _queue_length_compat AS
WITH
c_frame AS (SELECT * FROM _ct_frame_pos_of(true)),
c_launch AS (
    SELECT f.* FROM c_frame f JOIN _ct_launch_names() n ON n.name = f.name AND n.hta_queue
    WHERE f.index_correlation > 0
),
c_gpu AS (
    SELECT g.* FROM c_frame g
    WHERE g.stream <> -1 AND EXISTS (SELECT 1 FROM c_launch l WHERE l.trace_id = g.trace_id AND l.correlation = g.correlation)
),
c_rows AS (
    -- pandas: launches joined to their GPU rows (left join, launch order then GPU order), then the GPU rows
    SELECT l.trace_id, l.label, l.rank, g.stream, g.pid, g.tid, l.ts, l.ev_idx, 1 AS delta,
           0 AS k0, l.frame_part AS k1, l.ev_idx AS k2, g.frame_part AS k3, g.ev_idx AS k4
    FROM c_launch l LEFT JOIN c_gpu g ON g.trace_id = l.trace_id AND g.correlation = l.correlation
    UNION ALL
    SELECT trace_id, label, rank, stream, pid, tid, ts, ev_idx, -1, 1, frame_part, ev_idx, 0, 0 FROM c_gpu
),
c_num AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY k0, k1, k2, k3, k4) - 1 AS pos FROM c_rows
),
c_perm AS (
    SELECT trace_id, unnest(_np_argsort(list(ts ORDER BY pos))) AS pos, unnest(range(count(*))) AS sorted_pos
    FROM c_num GROUP BY trace_id
),
c_series AS (
    SELECT n.label, n.rank, n.stream, n.pid, n.tid, n.ts, n.ev_idx,
           (sum(n.delta) OVER (PARTITION BY n.trace_id, n.stream ORDER BY p.sorted_pos))::BIGINT AS queue_length,
           row_number() OVER (PARTITION BY n.trace_id, n.stream ORDER BY p.sorted_pos) - 1 AS seq
    FROM c_num n JOIN c_perm p USING (trace_id, pos)
    WHERE n.stream IS NOT NULL
)
SELECT * FROM c_series;

-- default: the series was computed when the frame was stored (_gpu_frame_default.queue_at_* / seq_at_*)
CREATE OR REPLACE VIEW _queue_length_default AS
SELECT label, rank, stream, pid, tid, launch_ts AS ts, launch_idx AS ev_idx, queue_at_launch AS queue_length,
       seq_at_launch AS seq
FROM _gpu_frame_default WHERE launch_idx IS NOT NULL
UNION ALL
SELECT label, rank, stream, pid, tid, ts, ev_idx, queue_at_start, seq_at_start
FROM _gpu_frame_default WHERE launch_idx IS NOT NULL;

-- @view queue_length  One row per change of a stream's launch-queue length: a launch call (+1, at the call's
-- start) or the start of the GPU event it launched (−1). A step function: the value holds until the stream's next row
-- (rows come ordered by label, rank, pid, stream and seq).
-- @column label         Trace set
-- @column rank          Rank
-- @column stream        GPU stream
-- @column pid           GPU process (device) of the stream
-- @column tid           GPU thread (lane) of the stream
-- @column ts            Time of the change, ns
-- @column ev_idx        Event that changed it (launch call or GPU event), HTA's index
-- @column queue_length  Launched but not yet started operations on the stream after this change
-- @column seq           Position of the row in its stream's series (0-based), the order queue_length accumulates in
--
-- Default mode: launches are the enqueueing calls of _ct_launch_names on CPU threads, GPU events are kernels,
-- memcpys and memsets (cuda_sync records never count, quirk §7.2); series per (device, stream); at equal ts a
-- launch (+1) comes before a GPU start (−1) — a kernel cannot start before its own launch, so this order never
-- shows a spurious negative queue (only a trace whose GPU clock runs ahead of the CPU's, a kernel starting before
-- its launch call, can dip below 0) — then by ev_idx.
-- Compat mode (HTA 0.6.1): launches with index_correlation > 0 from HTA's list, every stream != −1 row with such a
-- correlation (cuda_sync included), series per stream id, equal timestamps in numpy's quicksort order (_np_argsort).
--
-- The view picks the current mode's series (_queue_length_compat or _default) when the query is bound (query()):
-- the other is neither planned nor run.
CREATE OR REPLACE VIEW queue_length AS
SELECT * FROM query(CASE WHEN hta_compat() THEN 'FROM _queue_length_compat' ELSE 'FROM _queue_length_default' END)
ORDER BY label, rank, pid, stream, seq;

-- _queue_length_summary_compat / _default: queue_length_summary in each mode (compat: per stream id, as HTA); one
-- quantile_cont with a list of fractions sorts each group once (three sorted it three times: 3.8 against 2.6 ms).
-- Tried for the 1 GB trace's 1M samples (22–28 ms here): histogram() with percentiles from cumulative counts, 20 ms
-- but +1.2 ms on df_index_resolver (its list lambdas); window functions over a histogram, 14 ms but +1.8 ms of
-- planning there; quantile_cont on INTEGER, no change. The small trace's time is mostly planning, so this stays.
CREATE OR REPLACE VIEW _queue_length_summary_compat AS
SELECT * EXCLUDE (q, max), q[1] AS p25, q[2] AS p50, q[3] AS p75, max
FROM (SELECT label, rank, CASE WHEN min(pid) = max(pid) THEN min(pid) END AS device, stream, count(*) AS count,
             avg(queue_length) AS mean, sqrt(_var_samp_exact(queue_length)) AS std,
             min(queue_length) AS min, quantile_cont(queue_length, [0.25, 0.5, 0.75]) AS q, max(queue_length) AS max
      FROM _queue_length_compat
      GROUP BY label, rank, stream);

-- Default mode: stored at load (engine derivedFrameInserts), since the series depends on the trace alone (no
-- rule): the 1 GB trace's 1M samples took 50-90 ms to sort for the quantiles on every query.
-- _queue_summary_source(first_trace, last_trace): the _queue_summary rows of those traces.
CREATE OR REPLACE MACRO _queue_summary_source(first_trace, last_trace) AS TABLE
SELECT trace_id, device, stream, count, mean, std, min, q[1] AS p25, q[2] AS p50, q[3] AS p75, max
FROM (SELECT trace_id, pid AS device, stream, count(*) AS count,
             avg(queue_length) AS mean, sqrt(_var_samp_exact(queue_length)) AS std,
             min(queue_length) AS min, quantile_cont(queue_length, [0.25, 0.5, 0.75]) AS q, max(queue_length) AS max
      FROM (SELECT trace_id, pid, stream, queue_at_launch AS queue_length
            FROM _gpu_frame_default WHERE trace_id BETWEEN first_trace AND last_trace AND launch_idx IS NOT NULL
            UNION ALL
            SELECT trace_id, pid, stream, queue_at_start
            FROM _gpu_frame_default WHERE trace_id BETWEEN first_trace AND last_trace AND launch_idx IS NOT NULL)
      GROUP BY trace_id, pid, stream);

CREATE TABLE IF NOT EXISTS _queue_summary (
    trace_id INTEGER, device BIGINT, stream BIGINT, count BIGINT, mean DOUBLE, std DOUBLE, min BIGINT,
    p25 DOUBLE, p50 DOUBLE, p75 DOUBLE, max BIGINT
);

CREATE OR REPLACE VIEW _queue_length_summary_default AS
SELECT t.label, t.rank, q.* EXCLUDE (trace_id)
FROM _queue_summary q JOIN traces t USING (trace_id);

-- @view queue_length_summary  One row per (label, rank, device, stream): statistics of the queue_length samples (one
-- per change, not time-weighted, as HTA's describe()). Compat mode: one row per (label, rank, stream), as HTA.
-- @column label   Trace set
-- @column rank    Rank
-- @column device  GPU (process id of the stream's lane, queue_length.pid; compat: NULL when the stream id is on several GPUs)
-- @column stream  GPU stream
-- @column count   Samples
-- @column mean    Mean queue length
-- @column std     Sample standard deviation (NULL for one sample)
-- @column min     Minimum
-- @column p25     25th percentile (linear interpolation)
-- @column p50     Median
-- @column p75     75th percentile
-- @column max     Maximum
--
-- The view picks the current mode's statistics when the query is bound (query()): the other is neither planned nor run.
CREATE OR REPLACE VIEW queue_length_summary AS
SELECT * FROM query(CASE WHEN hta_compat() THEN 'FROM _queue_length_summary_compat' ELSE 'FROM _queue_length_summary_default' END)
ORDER BY label, rank, device, stream;

-- _queue_durations_compat / _queue_durations_default: each queue_length sample with how long it held (to the
-- next sample of its series; NULL for the last), in each mode, with the device of its series: default, the
-- series' GPU (pid); compat, where HTA's series is the stream id's whatever the GPU, the GPU of every sample of
-- the stream id, NULL when they are on several. Default: the next change was stored with the series.
CREATE OR REPLACE VIEW _queue_durations_compat AS
SELECT label, rank, CASE WHEN min(pid) OVER s = max(pid) OVER s THEN pid END AS device, stream, queue_length,
       lead(ts) OVER w - ts AS dur
FROM _queue_length_compat
-- s is w's whole partition, in w's order: one sort for both
WINDOW w AS (PARTITION BY label, rank, stream ORDER BY seq),
       s AS (PARTITION BY label, rank, stream ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING);

CREATE OR REPLACE VIEW _queue_durations_default AS
SELECT label, rank, pid AS device, stream, queue_at_launch AS queue_length, next_ts_at_launch - launch_ts AS dur
FROM _gpu_frame_default WHERE launch_idx IS NOT NULL
UNION ALL
SELECT label, rank, pid, stream, queue_at_start, next_ts_at_start - ts
FROM _gpu_frame_default WHERE launch_idx IS NOT NULL;

-- @macro time_blocked_on_full_queue(max_queue_length := 1024, hta_compat := NULL)  One row per (label, rank, device,
-- stream) whose launch queue reached max_queue_length: how long it stayed there (the CPU blocks on a full queue).
-- hta_compat: true or false overrides the session's hta_compat for this call (NULL = the session's).
-- @column label                                  Trace set
-- @column rank                                   Rank
-- @column device                                 GPU (process id of the stream's lane; compat: NULL when the stream id is on several GPUs)
-- @column stream                                 GPU stream
-- @column duration_at_max_queue_length_us        Time from each sample with queue_length >= max_queue_length to the stream's next sample, summed, µs
-- @column relative_duration_at_max_queue_length  That time / the rank's trace duration
--
-- Default mode: every such (device, stream); trace duration = last event end − first event start.
-- Compat mode (HTA 0.6.1): one series per stream id; only the highest such stream id of each rank survives
-- (quirk §7.9); trace duration = last event start − first event start of the loaded frame.
CREATE OR REPLACE MACRO time_blocked_on_full_queue(max_queue_length := 1024, hta_compat := NULL) AS TABLE
WITH q AS (
    FROM query(CASE WHEN _hta_mode(hta_compat, 'time_blocked_on_full_queue') THEN 'FROM _queue_durations_compat' ELSE 'FROM _queue_durations_default' END)
),
blocked AS (
    SELECT label, rank, device, stream, coalesce(sum(dur), 0) / 1000.0 AS duration_at_max_queue_length_us
    FROM q WHERE queue_length >= coalesce(TRY_CAST(max_queue_length AS DOUBLE), 1024)
    GROUP BY label, rank, device, stream
),
span AS (
    SELECT label, rank,
           CASE WHEN _hta_mode(hta_compat, 'time_blocked_on_full_queue') THEN max(ts) - min(ts) ELSE max(end_ts) - min(ts) END / 1000.0 AS span_us
    FROM _hta_frame_mode(_hta_mode(hta_compat, 'time_blocked_on_full_queue')) GROUP BY label, rank
)
SELECT b.label, b.rank, b.device, b.stream, b.duration_at_max_queue_length_us,
       -- a rank whose events span no time has no ratio (HTA: NaN, kept in compat)
       b.duration_at_max_queue_length_us / CASE WHEN s.span_us = 0 AND NOT _hta_mode(hta_compat, 'time_blocked_on_full_queue') THEN NULL ELSE s.span_us END
           AS relative_duration_at_max_queue_length
FROM blocked b JOIN span s USING (label, rank),
     (SELECT _num_check(TRY_CAST(max_queue_length AS DOUBLE) >= 1 AND TRY_CAST(max_queue_length AS DOUBLE) = trunc(TRY_CAST(max_queue_length AS DOUBLE)), 'time_blocked_on_full_queue: max_queue_length', max_queue_length, 'an integer >= 1')
      AS args_ok) args_check
WHERE (NOT _hta_mode(hta_compat, 'time_blocked_on_full_queue')
       OR b.stream = (SELECT max(b2.stream) FROM blocked b2 WHERE b2.label = b.label AND b2.rank = b.rank))
  AND args_check.args_ok
ORDER BY b.label, b.rank, b.device, b.stream;
