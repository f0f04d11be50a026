-- The common input of every HTA analysis: one row per complete event an analysis may look at, with HTA's
-- column meanings (stream -1 = CPU side, correlation -1 = none, index_correlation = linked event).
--
-- Two modes, switched by `SET VARIABLE hta_compat = true`:
--   default  every complete event; streams as the trace means them (uint32 -1 is no stream); exact ns.
--   compat   HTA 0.6.1's loaded dataframe: the last ProfilerStep and what starts after it dropped when the
--            trace has two or more steps, GPU-side rows kept only with a kept CPU partner, raw stream args
--            (4294967295 is a stream; a hex string is not), and ns timestamps rounded inward to whole µs.

-- A value that is not a boolean is an error: 'banana' read as false ran every analysis in the mode not asked for.

-- @macro hta_compat  True when `SET VARIABLE hta_compat = true` is in effect (HTA 0.6.1 compatibility mode); any other value than a boolean is an error.
CREATE OR REPLACE MACRO hta_compat() AS
    CASE WHEN getvariable('hta_compat') IS NULL THEN false
         -- (through VARCHAR, as _hta_mode: a number casts to BOOLEAN as "not zero", so 2 was compat mode)
         WHEN TRY_CAST(getvariable('hta_compat')::VARCHAR AS BOOLEAN) IS NULL
             THEN error(format('hta_compat is {}: SET VARIABLE hta_compat = true (HTA 0.6.1''s results) or false',
                               getvariable('hta_compat')::VARCHAR))
         ELSE CAST(getvariable('hta_compat')::VARCHAR AS BOOLEAN) END;

-- _hta_mode(hta_compat, fn): the mode of one call of the analysis macro fn: its hta_compat argument when not NULL,
-- else the session variable (hta_compat()). It takes what DuckDB casts to a boolean, as SET VARIABLE hta_compat does
-- ('yes', 1, 't'); anything else is an error naming fn and hta_compat (a list was DuckDB's "Unimplemented type for
-- cast"; fn NULL names none). The check costs no measurable planning time.
CREATE OR REPLACE MACRO _hta_mode(hta_compat, fn) AS
    coalesce(TRY_CAST(hta_compat::VARCHAR AS BOOLEAN),
             CASE WHEN hta_compat IS NULL THEN hta_compat()
                  ELSE error(format('{}hta_compat must be true or false, not {} ({})', coalesce(fn || ': ', ''),
                                    hta_compat::VARCHAR, typeof(hta_compat))) END);

-- _hta_gpu_side(stream, correlation, name): HTA's GPU side of a row (stream and correlation -1 when none): on
-- a stream with a correlation id, or an Event Sync / Context Sync record. NULL for a row without a name that
-- is not on a stream with a correlation id.
CREATE OR REPLACE MACRO _hta_gpu_side(stream, correlation, name) AS
    (stream >= 0 AND correlation >= 0) OR name IN ('Event Sync', 'Context Sync');

-- The default frame is a projection of events (the loader pairs launches with GPU events by correlation
-- into events.link_idx, so no join is needed); the engine stores it in _hta_frame_default when a trace
-- is loaded, because analyses run 1.3-2x faster on the stored table than on this view.
-- _hta_frame_of(src): that projection of src, a table or view with the columns of events. The loader
-- applies it to the Arrow batches it has just inserted into events, registered as a view, because DuckDB
-- scans a table whose rows are all uncommitted with one thread (2.9 s against 1.7 s for a 1 GB trace).
-- It must read every column of that view, engine.frameInputColumns: DuckDB's scan of a registered Arrow
-- stream crashes when a query reads only some of its columns (duckdb/duckdb-go#28).
CREATE OR REPLACE MACRO _hta_frame_of(src) AS TABLE
SELECT e.trace_id, t.label, e.rank, e.ev_idx, e.cat, e.cat_class, e.name, e.pid, e.tid,
       e.ts, e.dur, e.ts + e.dur AS end_ts,
       coalesce(e.stream, -1) AS stream, coalesce(e.correlation, -1) AS correlation,
       CASE WHEN coalesce(e.correlation, -1) = -1 THEN -1 ELSE coalesce(e.link_idx, 0) END AS index_correlation,
       coalesce(e.step, -1) AS iteration,
       _hta_gpu_side(coalesce(e.stream, -1), coalesce(e.correlation, -1), e.name) AS gpu_side,
       e.stream IS NOT NULL AND e.cat_class IN ('kernel', 'memcpy', 'memset') AS gpu_work,
       -- Only GPU-side rows carry these args; skipping the JSON of the others halves their cost.
       CASE WHEN e.cat_class IN ('kernel', 'memcpy', 'memset', 'cupti_range', 'other')
            THEN coalesce(TRY_CAST(e.args->>'memory bandwidth (GB/s)' AS DOUBLE), 0) ELSE 0 END AS memory_bw_gbps,
       CASE WHEN e.cat_class IN ('kernel', 'memcpy', 'memset', 'cupti_range', 'other')
            THEN coalesce(TRY_CAST(e.args->>'bytes' AS BIGINT), -1) ELSE -1 END AS bytes
FROM query_table(src) e JOIN traces t ON t.trace_id = e.trace_id
WHERE e.dur IS NOT NULL AND e.cat IS NOT NULL AND e.cat <> 'Trace';

CREATE OR REPLACE VIEW _hta_frame_source AS FROM _hta_frame_of('events');

CREATE TABLE IF NOT EXISTS _hta_frame_default AS SELECT * FROM _hta_frame_source WHERE false;

-- @macro _ct_launch_names()  Runtime/driver calls that enqueue work on a GPU stream.
-- @column name            Call name
-- @column is_memory       A memcpy/memset enqueue (include_memory_events)
-- @column hta_stats       HTA 0.6.1's kernel-launch-stats list (no cuLaunchKernel*, no HIP: quirk §7.6)
-- @column hta_queue       HTA 0.6.1's queue-length list
CREATE OR REPLACE MACRO _ct_launch_names() AS TABLE
SELECT * FROM (VALUES
    ('cudaLaunchKernel', false, true, true),
    ('cudaLaunchKernelExC', false, true, true),
    -- the per-thread default stream's spellings (nvcc --default-stream per-thread), which HTA's exact names miss
    ('cudaLaunchKernel_ptsz', false, false, false),
    ('cudaLaunchKernelExC_ptsz', false, false, false),
    ('cuLaunchKernel', false, false, true),
    ('cuLaunchKernelEx', false, false, true),
    ('runFunction - job_prep_and_submit_for_execution', false, true, true),
    ('hipLaunchKernel', false, false, true),
    ('hipExtModuleLaunchKernel', false, false, true),
    ('hipModuleLaunchKernel', false, false, false),
    ('hipExtLaunchKernel', false, false, false),
    ('cudaMemcpyAsync', true, true, true),
    ('cudaMemsetAsync', true, true, true),
    ('cudaMemcpyAsync_ptsz', true, false, false),
    ('cudaMemsetAsync_ptsz', true, false, false),
    ('hipMemcpyAsync', true, false, true),
    ('hipMemsetAsync', true, false, true),
    ('hipMemcpyWithStream', true, false, true)
) v(name, is_memory, hta_stats, hta_queue);

-- _run_pack(part, v) / _run_unpack(packed, part): a BIGINT v with its partition number above it, so that a
-- running max over rows sorted by partition (a streaming window) stays within the partition: unpack gives v
-- when the max came from the same partition, NULL otherwise.
CREATE OR REPLACE MACRO _run_pack(part, v) AS (part::HUGEINT << 64) | (v::HUGEINT + 9223372036854775808);
CREATE OR REPLACE MACRO _run_unpack(packed, part) AS
    CASE WHEN packed >> 64 = part THEN ((packed & 18446744073709551615) - 9223372036854775808)::BIGINT END;

-- The default frame's GPU-side rows (stream != -1), stored in _gpu_frame_default when a trace is loaded, with
-- the per-event facts that the default-mode analyses would otherwise recompute with window functions and
-- joins over the whole frame on every query (a framed running max over 1.7 M GPU rows costs ~0.5 s; reading
-- the stored column, a scan). Computed per trace from the stored _hta_frame_default; none of it depends on
-- kernel_classes, which users may edit, so kernel types are still joined when read (gpu_frame).
--   launch_*            the launch call of a GPU work event: the enqueueing call (_ct_launch_names) on a CPU
--                       thread with the same correlation, the runtime call when a runtime and a driver call
--                       share it, else the first (kernel_launch_stats, queue_length)
--   launch_seq          such an event's position (1, 2, …) in its trace's launch order: (launch_ts, launch_idx,
--                       ev_idx), the order of kernel_launch_stats' rows, which then sort on one integer
--   linked_enqueue_ts   when the event HTA links it with (index_correlation, of the same correlation) enqueued
--                       it: that call's start, or its end for an event that starts after the call returned
--                       (idle_time_breakdown's host_wait). A cudaGraphLaunch submits its graph in pieces: on
--                       the recorded graphed trace the first 7 of 29 events ran during the 134-165 µs call,
--                       the rest 1-3 µs after it returned, the stream idle in between.
--   opens_busy          a GPU work event that starts after every earlier one of the trace ((ts, ev_idx) order)
--                       has ended, or the first: it opens a merged busy interval (temporal_breakdown)
--   busy_before         for such an event after the first: the end of the busy interval before it
--   stream_busy_before  the same on the event's (device, stream): the end of the previous busy interval of that
--                       stream of that GPU (pid: one process per device) when the event starts after it (an idle
--                       gap, idle_time_breakdown), NULL otherwise. A trace holding several GPUs has one stream 7
--                       per device: they are separate timelines.
--   queue_at_launch / seq_at_launch / next_ts_at_launch and queue_at_start / seq_at_start / next_ts_at_start:
--                       the launch queue of (device, stream) after the launch's +1 and after the GPU start's
--                       −1, the position of those changes in the series and the time of the next change
--                       (queue_length, time_blocked_on_full_queue)
CREATE OR REPLACE MACRO _gpu_frame_source(first_trace, last_trace) AS TABLE
-- (no CTE over the whole frame: DuckDB would materialise every column of it; each part scans what it needs)
WITH g AS NOT MATERIALIZED (
    SELECT * FROM _hta_frame_default WHERE trace_id BETWEEN first_trace AND last_trace AND stream <> -1
),
-- the CPU-side rows that share a correlation id with GPU work: launch calls and HTA's link partners
cpu AS (
    SELECT c.trace_id, c.correlation, c.ev_idx, c.ts, c.dur, c.cat_class, c.stream, n.name IS NOT NULL AS enqueues,
           n.is_memory
    FROM _hta_frame_default c LEFT JOIN _ct_launch_names() n ON n.name = c.name
    WHERE c.trace_id BETWEEN first_trace AND last_trace AND c.correlation <> -1 AND NOT c.gpu_side
),
-- launch_seq numbered here, over these few columns: a window over runs' every column buffered the whole GPU
-- frame (1 GB trace: +0.4 s and ~+200 MB peak RSS at load); a CTE of its own would read partners twice, which
-- DuckDB then materialises (out of memory under a 54 MB memory_limit)
partners AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id, l.idx IS NULL ORDER BY l.ts, l.idx, ev_idx) AS seq
    FROM (SELECT g.trace_id, g.ev_idx,
                 arg_min({'idx': c.ev_idx, 'ts': c.ts, 'dur': c.dur, 'mem': c.is_memory},
                         {'driver': c.cat_class <> 'runtime', 'idx': c.ev_idx})
                     FILTER (WHERE c.enqueues AND c.stream = -1 AND g.gpu_work) AS l,
                 max(CASE WHEN g.ts >= c.ts + c.dur THEN c.ts + c.dur ELSE c.ts END)
                     FILTER (WHERE c.ev_idx = g.index_correlation) AS linked_enqueue_ts
          FROM g JOIN cpu c ON c.trace_id = g.trace_id AND c.correlation = g.correlation
          GROUP BY g.trace_id, g.ev_idx)
),
-- Running maxima of the earlier ends, as streaming windows over ordered input: a running max up to the
-- current row, then lag() of it (DuckDB runs both as STREAMING_WINDOW, in its input's order; a frame ending
-- at 1 PRECEDING is not streamed): 5-10x cheaper than PARTITION BY ... ORDER BY ... ROWS ... 1 PRECEDING,
-- whose segment tree costs ~1.7 µs a row. The partition number is packed above the value (_run_pack) so that
-- a max never carries into the next partition (_run_unpack).
work AS (
    SELECT trace_id, ev_idx, pid, stream, ts, end_ts FROM g WHERE gpu_work
),
prev_all AS (
    SELECT trace_id, ev_idx, _run_unpack(packed, trace_id) AS prev_all
    FROM (SELECT *, lag(m) OVER () AS packed
          FROM (SELECT *, max(_run_pack(trace_id, end_ts)) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS m
                FROM (SELECT * FROM work ORDER BY trace_id, ts, ev_idx)))
),
prev_stream AS (
    SELECT trace_id, ev_idx, _run_unpack(packed, part) AS prev_stream
    FROM (SELECT *, lag(m) OVER () AS packed
          FROM (SELECT *, max(_run_pack(part, end_ts)) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS m
                FROM (SELECT *, dense_rank() OVER (ORDER BY trace_id, pid, stream) AS part
                      FROM work ORDER BY trace_id, pid, stream, ts, ev_idx)))
),
runs AS (
    SELECT g.*, l.l.idx AS launch_idx, l.l.ts AS launch_ts, l.l.dur AS launch_dur, l.l.mem AS launch_is_memory,
           l.linked_enqueue_ts,
           g.gpu_work AND (a.prev_all IS NULL OR g.ts > a.prev_all) AS opens_busy,
           CASE WHEN g.ts > a.prev_all THEN a.prev_all END AS busy_before,
           CASE WHEN g.ts > s.prev_stream THEN s.prev_stream END AS stream_busy_before,
           CASE WHEN l.l.idx IS NOT NULL THEN l.seq END AS launch_seq
    FROM g
    LEFT JOIN partners l ON l.trace_id = g.trace_id AND l.ev_idx = g.ev_idx
    LEFT JOIN prev_all a ON a.trace_id = g.trace_id AND a.ev_idx = g.ev_idx
    LEFT JOIN prev_stream s ON s.trace_id = g.trace_id AND s.ev_idx = g.ev_idx
),
-- The queue series of each (device, stream): +1 at a launch call, −1 at the start of its GPU event; at equal
-- ts the launch first (a kernel cannot start before its own launch), then by event index.
changes AS (
    SELECT trace_id, pid, stream, launch_ts AS ts, 1 AS delta, launch_idx AS idx, ev_idx AS gpu_idx
    FROM runs WHERE launch_idx IS NOT NULL
    UNION ALL
    SELECT trace_id, pid, stream, ts, -1, ev_idx, ev_idx FROM runs WHERE launch_idx IS NOT NULL
),
series AS (
    SELECT trace_id, gpu_idx, delta,
           (sum(delta) OVER w)::BIGINT AS queue, row_number() OVER w - 1 AS seq, lead(ts) OVER w AS next_ts
    FROM changes
    WINDOW w AS (PARTITION BY trace_id, pid, stream ORDER BY ts, delta DESC, idx, gpu_idx ROWS UNBOUNDED PRECEDING)
),
queue AS (
    SELECT trace_id, gpu_idx AS ev_idx,
           any_value(queue) FILTER (WHERE delta = 1) AS queue_at_launch,
           any_value(seq) FILTER (WHERE delta = 1) AS seq_at_launch,
           any_value(next_ts) FILTER (WHERE delta = 1) AS next_ts_at_launch,
           any_value(queue) FILTER (WHERE delta = -1) AS queue_at_start,
           any_value(seq) FILTER (WHERE delta = -1) AS seq_at_start,
           any_value(next_ts) FILTER (WHERE delta = -1) AS next_ts_at_start
    FROM series GROUP BY trace_id, gpu_idx
)
SELECT r.*, q.queue_at_launch, q.seq_at_launch, q.next_ts_at_launch, q.queue_at_start, q.seq_at_start, q.next_ts_at_start
FROM runs r LEFT JOIN queue q ON q.trace_id = r.trace_id AND q.ev_idx = r.ev_idx;

CREATE TABLE IF NOT EXISTS _gpu_frame_default AS SELECT * FROM _gpu_frame_source(0, -1);

-- What HTA 0.6.1's dataframe has that the default frame lacks, stored per event at load for the compat frame
-- (_hta_frame_compat); few rows: the last step's, and rarely others:
--   raw / raw_stream   the event has no stream but a numeric `stream` arg, which HTA reads as its stream
--                      (4294967295, say); raw_stream is that number (NULL where it does not fit a BIGINT)
--   annotation_step    a gpu_user_annotation row's step by time containment: HTA steps it like a CPU row
--   dropped            HTA drops it: when the trace has two or more ProfilerStep names, the CPU-side rows
--                      from the start of the last step on, and the GPU-side rows that no kept CPU row shares
--                      a correlation id with
--   relinked / link    HTA's launch link (index_correlation; NULL = none) of a correlated row of a trace where
--                      HTA's sides differ from the loader's, because of a raw stream or a correlated row without
--                      a name (on neither HTA side). Elsewhere HTA's links are the loader's (link_idx: the last
--                      event of the other side with the correlation id, both ways), made on the whole trace
--                      before the last step is dropped.
CREATE OR REPLACE MACRO _compat_fixups_source(first_trace, last_trace) AS TABLE
WITH raw AS MATERIALIZED (
    SELECT trace_id, ev_idx, TRY_CAST(TRY_CAST(args->>'stream' AS DOUBLE) AS BIGINT) AS raw_stream
    FROM events
    WHERE trace_id BETWEEN first_trace AND last_trace
      AND stream IS NULL AND dur IS NOT NULL AND cat IS NOT NULL AND cat <> 'Trace'
      -- the classes sync, kernel, memcpy, memset, other, gpu_user_annotation, written as the complement:
      -- DuckDB filters the scan with a NOT IN before it reads any JSON (3x cheaper than IN with a CASE)
      AND cat_class NOT IN ('cpu_op', 'user_annotation', 'runtime', 'driver', 'python_function', 'cupti_range')
      AND regexp_full_match(args->>'stream', '-?[0-9]+(\.0*)?')
),
last_step AS (
    -- HTA drops the last step only when the trace has at least two distinct ProfilerStep names
    SELECT f.trace_id, max(f.ts) AS last_start
    FROM _hta_frame_default f
    WHERE f.trace_id BETWEEN first_trace AND last_trace
      AND CASE WHEN contains(f.name, 'ProfilerStep') THEN regexp_matches(f.name, 'ProfilerStep\s*#\s*\d+') ELSE false END
    GROUP BY f.trace_id HAVING min(f.name) <> max(f.name)
),
relink AS (
    SELECT trace_id FROM raw
    UNION
    SELECT trace_id FROM _hta_frame_default
    WHERE trace_id BETWEEN first_trace AND last_trace AND name IS NULL AND correlation <> -1
),
-- HTA's side of each row of the traces with a last step to drop
sides AS MATERIALIZED (
    SELECT f.trace_id, f.ev_idx, f.ts, f.correlation, l.last_start,
           _hta_gpu_side(CASE WHEN f.stream <> -1 THEN f.stream WHEN r.ev_idx IS NOT NULL THEN r.raw_stream ELSE -1 END,
                         f.correlation, f.name) AS gpu_side
    FROM _hta_frame_default f JOIN last_step l ON l.trace_id = f.trace_id
    LEFT JOIN raw r ON r.trace_id = f.trace_id AND r.ev_idx = f.ev_idx
    WHERE f.trace_id BETWEEN first_trace AND last_trace
),
-- a GPU-side row is kept when a kept CPU row shares its correlation id
kept_correlations AS (
    SELECT DISTINCT trace_id, correlation FROM sides WHERE NOT gpu_side AND ts < last_start AND correlation >= 0
),
dropped AS (
    SELECT s.trace_id, s.ev_idx
    FROM sides s LEFT JOIN kept_correlations k ON k.trace_id = s.trace_id AND k.correlation = s.correlation
    WHERE CASE WHEN s.gpu_side THEN k.correlation IS NULL ELSE s.ts >= s.last_start END
),
relink_span AS (
    SELECT coalesce(min(trace_id), 0) AS lo, coalesce(max(trace_id), -1) AS hi FROM relink
),
-- the correlated rows of the relinked traces with HTA's side (reading only the span of those traces lets
-- DuckDB skip the scan when there are none, the usual case)
relink_rows AS (
    SELECT f.trace_id, f.ev_idx, f.correlation,
           _hta_gpu_side(CASE WHEN f.stream <> -1 THEN f.stream WHEN r.ev_idx IS NOT NULL THEN r.raw_stream ELSE -1 END,
                         f.correlation, f.name) AS gpu_side
    FROM _hta_frame_default f JOIN relink_span s ON f.trace_id BETWEEN s.lo AND s.hi
    LEFT JOIN raw r ON r.trace_id = f.trace_id AND r.ev_idx = f.ev_idx
    WHERE f.trace_id IN (SELECT trace_id FROM relink) AND f.correlation <> -1
),
links AS (
    SELECT c.trace_id, c.ev_idx AS cpu_idx, g.ev_idx AS gpu_idx
    FROM relink_rows c JOIN relink_rows g ON c.trace_id = g.trace_id AND c.correlation = g.correlation
    WHERE NOT c.gpu_side AND g.gpu_side
),
link_of AS (
    SELECT r.trace_id, r.ev_idx, coalesce(max(c.gpu_idx), max(g.cpu_idx)) AS link
    FROM relink_rows r
    LEFT JOIN links c ON c.trace_id = r.trace_id AND c.cpu_idx = r.ev_idx
    LEFT JOIN links g ON g.trace_id = r.trace_id AND g.gpu_idx = r.ev_idx
    GROUP BY r.trace_id, r.ev_idx
),
annotation AS (
    SELECT g.trace_id, g.ev_idx, arg_max(p.step, p.ev_idx) AS annotation_step
    FROM _hta_frame_default g JOIN profiler_steps p ON p.trace_id = g.trace_id AND g.ts >= p.ts AND g.ts < p.end_ts
    WHERE g.trace_id BETWEEN first_trace AND last_trace AND g.cat_class = 'gpu_user_annotation'
    GROUP BY ALL
)
SELECT trace_id, ev_idx, bool_or(raw) AS raw, max(raw_stream) AS raw_stream, max(annotation_step) AS annotation_step,
       bool_or(dropped) AS dropped, bool_or(relinked) AS relinked, max(link) AS link
FROM (SELECT trace_id, ev_idx, true AS raw, raw_stream, NULL::BIGINT AS annotation_step, false AS dropped,
             false AS relinked, NULL::BIGINT AS link FROM raw
      UNION ALL
      SELECT trace_id, ev_idx, false, NULL, annotation_step, false, false, NULL FROM annotation
      UNION ALL
      SELECT trace_id, ev_idx, false, NULL, NULL, true, false, NULL FROM dropped
      UNION ALL
      SELECT trace_id, ev_idx, false, NULL, NULL, false, true, link FROM link_of)
GROUP BY trace_id, ev_idx;

CREATE TABLE IF NOT EXISTS _compat_fixups (
    trace_id INTEGER, ev_idx BIGINT, raw BOOLEAN, raw_stream BIGINT, annotation_step BIGINT, dropped BOOLEAN,
    relinked BOOLEAN, link BIGINT);

-- _hta_start(ts) / _hta_end(ts, dur): HTA's inward rounding of an event's start and end to whole µs, in
-- ns. HTA reads the µs text as a float64, adds dur to ts in float and rounds the sum down, the start up; at
-- epoch-scale µs (1.7e15) a float64 resolves 0.25 µs, so exact decimal rounding gave other whole µs for a
-- quarter of ns_resolution_trace's events. The float is the decimal text's nearest double (DuckDB's string
-- cast rounds correctly, as Python's float() does); whole-µs times skip it, as they are exact either way.
CREATE OR REPLACE MACRO _hta_float_us(ns) AS CAST(ns::VARCHAR || 'e-3' AS DOUBLE);
CREATE OR REPLACE MACRO _hta_start(ts) AS
    CASE WHEN ts % 1000 = 0 THEN ts ELSE CAST(ceil(_hta_float_us(ts)) AS BIGINT) * 1000 END;
CREATE OR REPLACE MACRO _hta_end(ts, dur) AS
    CASE WHEN ts % 1000 = 0 AND dur % 1000 = 0 THEN ts + dur
         ELSE CAST(floor(_hta_float_us(ts) + _hta_float_us(dur)) AS BIGINT) * 1000 END;

-- The compat frame reproduces HTA 0.6.1's dataframe from the stored default frame and _compat_fixups: the rows
-- HTA keeps, with HTA's stream (the raw arg where the loader found none), its GPU side from that stream (NULL
-- for a nameless CPU row, which HTA keeps on neither side), its links and steps, and timestamps rounded inward
-- to whole µs. Label and rank come from traces, as they are now (the reference tests renumber ranks after
-- loading).
CREATE OR REPLACE VIEW _hta_frame_compat AS
SELECT k.trace_id, t.label, t.rank, k.ev_idx, k.cat, k.cat_class, k.name, k.pid, k.tid,
       _hta_start(k.ts) AS ts,
       _hta_end(k.ts, k.dur) - _hta_start(k.ts) AS dur,
       _hta_end(k.ts, k.dur) AS end_ts,
       k.stream, k.correlation,
       CASE WHEN k.correlation = -1 THEN -1 WHEN k.relinked THEN coalesce(k.link, 0) ELSE k.index_correlation END
           AS index_correlation,
       CASE WHEN k.stream = 0 AND k.cat <> 'cpu_op' THEN NULL  -- HTA: neither a CPU (< 0) nor a GPU (> 0) row
            WHEN k.cat_class = 'gpu_user_annotation' THEN coalesce(k.annotation_step, -1)
            ELSE k.iteration END AS iteration,
       k.gpu_side,
       k.stream <> -1 AS gpu_work,
       k.memory_bw_gbps, k.bytes
FROM (SELECT *, _hta_gpu_side(stream, correlation, name) AS gpu_side
      FROM (SELECT f.* EXCLUDE (stream, gpu_side), x.annotation_step, x.relinked, x.link,
                   CASE WHEN f.stream <> -1 THEN f.stream WHEN x.raw THEN x.raw_stream ELSE -1 END AS stream
            FROM _hta_frame_default f LEFT JOIN _compat_fixups x ON x.trace_id = f.trace_id AND x.ev_idx = f.ev_idx
            WHERE x.dropped IS NOT true)) k
JOIN traces t ON t.trace_id = k.trace_id
WHERE k.gpu_side IS NOT NULL;

-- _compat_frame_exceptions(tid): where one trace's _hta_frame_compat is not its default frame with times rounded
-- inward to whole µs: the default frame's rows that the compat frame drops (changed = false), and the kept rows
-- whose stream or link HTA sees differently (changed = true: raw streams, relinked rows). The critical path
-- derives its compat frame from the default frame it has already read when no row is changed (the usual
-- case; sqlfuncs.cpCompatFromDefault, checked against this view by TestCompatFrameFromDefault).
CREATE OR REPLACE MACRO _compat_frame_exceptions(tid) AS TABLE
SELECT ev_idx, (raw OR relinked) AND dropped IS NOT true AS changed
FROM _compat_fixups WHERE trace_id = tid AND (dropped OR raw OR relinked)
UNION ALL
SELECT ev_idx, false FROM _hta_frame_default WHERE trace_id = tid AND gpu_side IS NULL;

-- @view hta_frame  One row per event that HTA's analyses read, in the current mode (see hta_compat).
-- @column trace_id           Loaded file
-- @column label              Trace set
-- @column rank               Rank
-- @column ev_idx             Position in traceEvents (HTA's index)
-- @column cat                Category as written
-- @column cat_class          Normalised category (events.cat_class)
-- @column name               Event name
-- @column pid                Process id
-- @column tid                Thread id
-- @column ts                 Start, ns (compat: rounded up to a whole µs)
-- @column dur                Duration, ns (compat: end rounded down to a whole µs, minus ts)
-- @column end_ts             ts + dur, ns
-- @column stream             CUDA stream, -1 for CPU-side events
-- @column correlation        Launch correlation id, -1 when none
-- @column index_correlation  ev_idx of the linked launch / GPU event; 0 = correlated but partner absent; -1 = none
-- @column iteration          ProfilerStep number (CPU: containing step; GPU: its launch's), -1 when none (compat: NULL on stream 0 non-cpu_op rows, as HTA)
-- @column gpu_side           HTA's GPU side: stream >= 0 and correlation >= 0, or Event Sync / Context Sync
-- @column gpu_work           Busy GPU time: kernels, memcpy, memset on a stream (compat: any stream != -1 row, cuda_sync included)
-- @column memory_bw_gbps     args "memory bandwidth (GB/s)", 0 when absent
-- @column bytes              args.bytes, -1 when absent
-- The current mode's frame is picked when a query is bound (query()): the other is neither planned nor run.
CREATE OR REPLACE VIEW hta_frame AS
SELECT * FROM query(CASE WHEN hta_compat() THEN 'FROM _hta_frame_compat' ELSE 'FROM _hta_frame_default' END);

-- hta_frame's GPU-side rows (stream != -1); the default mode reads them from the stored _gpu_frame_default.
CREATE OR REPLACE VIEW _gpu_rows AS
SELECT * FROM query(CASE WHEN hta_compat() THEN 'FROM _hta_frame_compat WHERE stream <> -1'
                         ELSE 'SELECT * EXCLUDE (launch_idx, launch_ts, launch_dur, launch_is_memory, launch_seq, linked_enqueue_ts, opens_busy,
                                   busy_before, stream_busy_before, queue_at_launch, seq_at_launch, next_ts_at_launch,
                                   queue_at_start, seq_at_start, next_ts_at_start) FROM _gpu_frame_default' END);

-- _kernel_class_rules(compat_mode): the kernel_classes rows that apply in that mode. A name's kernel type is
-- the kernel_type of the lowest-priority rule whose pattern it matches (_kernel_rule_matches): kernel_types,
-- _stale_gpu_rows, _bd_name_stats_default. Rules of one priority are ordered by their pattern (rule_pattern,
-- before the split into alternatives), not by insertion: a rule a user adds at a taken priority then gives the
-- same type in every run, and after a Parquet export and import (which writes the rules sorted). DuckDB compiles a regex that is not a constant once per row it
-- tests (~5 µs; HTA's big OTHER alternation ~17 µs), while LIKE needs no compiling, so every alternative that
-- LIKE can say gets a like_pattern:
--   a pattern without ( ) [ ] or \ comes as one row per alternative (its | are all top level);
--   an alternative with one optional literal group, A(B)?C, comes as two, ABC and AC;
--   an alternative made of plain characters and .*, with an optional leading ^ and trailing $, is LIKE's
--   (.* -> %, unanchored ends -> %, % and _ escaped with \).
-- With the seeded rules no alternative is left to the regex engine: typing 51 kernel names takes ~0.5 ms.
CREATE OR REPLACE MACRO _kernel_class_rules(compat_mode) AS TABLE
WITH checked AS (
    -- A rule that cannot apply as written is an error naming it: an unknown kernel_type ('communication')
    -- dropped its kernels from every breakdown, and a NULL or misspelt applies_to or a NULL pattern left the
    -- rule out, unsaid. applies_to NULL (a row inserted with three columns) means all. (The checks are in the
    -- column the next filter reads, so that no filter runs before them.)
    SELECT priority, pattern, kernel_type,
           CASE WHEN pattern IS NULL
                    THEN error(format('kernel_classes rule of priority {} has no pattern (NULL): give one, or a NULL priority to turn it off', priority))
                WHEN kernel_type IS NULL OR kernel_type NOT IN ('COMMUNICATION', 'MEMORY', 'COMPUTATION', 'OTHER')
                    THEN error(format('kernel_classes rule of priority {} (pattern ''{}''): kernel_type {} is not COMMUNICATION, MEMORY, COMPUTATION or OTHER',
                                      priority, pattern, coalesce('''' || kernel_type || '''', 'NULL')))
                WHEN applies_to IS NOT NULL AND applies_to NOT IN ('all', 'default', 'hta_compat')
                    THEN error(format('kernel_classes rule of priority {} (pattern ''{}''): applies_to ''{}'' is not all, default or hta_compat',
                                      priority, pattern, applies_to))
                ELSE coalesce(applies_to, 'all') END AS applies_to
    FROM kernel_classes
    WHERE priority IS NOT NULL
),
alternatives AS (
    SELECT priority, pattern AS rule_pattern, kernel_type,
           unnest(CASE WHEN regexp_matches(pattern, '[()\[\]\\]') THEN [pattern] ELSE string_split(pattern, '|') END) AS pattern
    FROM checked
    WHERE applies_to = 'all' OR applies_to = CASE WHEN compat_mode THEN 'hta_compat' ELSE 'default' END
),
expanded AS (
    SELECT priority, rule_pattern, kernel_type,
           unnest(CASE WHEN regexp_full_match(pattern, '\^?(?:[^.^$*+?()\[\]{}|\\]|\.\*)*\([^.^$*+?()\[\]{}|\\]+\)\?(?:[^.^$*+?()\[\]{}|\\]|\.\*)*\$?')
                       THEN [regexp_replace(pattern, '\(([^()]+)\)\?', '\1'), regexp_replace(pattern, '\([^()]+\)\?', '')]
                       ELSE [pattern] END) AS pattern
    FROM alternatives
)
SELECT priority, rule_pattern, pattern, kernel_type,
       CASE WHEN regexp_full_match(pattern, '\^?(?:[^.^$*+?()\[\]{}|\\]|\.\*)*\$?')
            THEN CASE WHEN starts_with(pattern, '^') THEN '' ELSE '%' END
                 || replace(replace(replace(regexp_replace(pattern, '^\^|\$$', '', 'g'), '%', '\%'), '_', '\_'), '.*', '%')
                 || CASE WHEN ends_with(pattern, '$') THEN '' ELSE '%' END
       END AS like_pattern
FROM expanded;

-- _kernel_rule_matches(name, like_pattern, pattern): whether name matches a _kernel_class_rules row (RE2's .
-- does not match a newline, LIKE's % does: such a name goes to the regex engine).
CREATE OR REPLACE MACRO _kernel_rule_matches(name, like_pattern, pattern) AS
    CASE WHEN like_pattern IS NOT NULL AND NOT (contains(name, chr(10)) AND contains(pattern, '.*'))
         THEN name LIKE like_pattern ESCAPE '\'
         ELSE regexp_matches(name, pattern) END;

-- _kernel_types_mode(compat_mode): kernel_types of one mode, whatever the session variable says (the analysis
-- macros' hta_compat parameter may override it for one call); the GPU-side names are picked when the query is
-- bound (query()).
-- _kernel_types_in(compat_mode, first_trace, last_trace): the same for the names of those traces only (the critical
-- path's bound_by, per trace).
CREATE OR REPLACE MACRO _kernel_types_in(compat_mode, first_trace, last_trace) AS TABLE
SELECT n.name, arg_min(k.kernel_type, (k.priority, k.rule_pattern, k.kernel_type)) AS kernel_type
FROM (SELECT DISTINCT name
      FROM query(CASE WHEN compat_mode THEN 'FROM _hta_frame_compat WHERE stream <> -1' ELSE 'FROM _gpu_frame_default' END)
      WHERE name IS NOT NULL AND trace_id BETWEEN first_trace AND last_trace) n
JOIN _kernel_class_rules(compat_mode) k ON _kernel_rule_matches(n.name, k.like_pattern, k.pattern)
GROUP BY n.name;
CREATE OR REPLACE MACRO _kernel_types_mode(compat_mode) AS TABLE
SELECT * FROM _kernel_types_in(compat_mode, 0, 2147483647);

-- @view kernel_types  The kernel type of every distinct GPU-side event name, from kernel_classes.
-- @column name         Event name
-- @column kernel_type  COMPUTATION, COMMUNICATION, MEMORY or OTHER (first matching kernel_classes row)
CREATE OR REPLACE VIEW kernel_types AS
SELECT * FROM _kernel_types_mode(hta_compat());

-- _comm_kernel(name, kernel_type): a communication kernel, as comm_kernels and potential_stragglers (default mode)
-- count them: an NCCL kernel by its name, whatever kernel_classes says of it, or any kernel the rules class as
-- COMMUNICATION (an edit of kernel_classes that reclassified NCCL kernels dropped them from the stragglers alone).
CREATE OR REPLACE MACRO _comm_kernel(name, kernel_type) AS
    regexp_matches(name, '^nccl(Dev)?Kernel') OR coalesce(kernel_type = 'COMMUNICATION', false);

-- @view gpu_frame  hta_frame's GPU-side rows (stream != -1) with their kernel type.
-- @column kernel_type  COMMUNICATION, MEMORY, COMPUTATION or OTHER (kernel_classes)
CREATE OR REPLACE VIEW gpu_frame AS
SELECT f.*, coalesce(k.kernel_type, 'OTHER') AS kernel_type
FROM _gpu_rows f LEFT JOIN kernel_types k USING (name);

-- Each mode's frames under its own name, for the analysis macros, whose hta_compat parameter may override the
-- session variable for one call (hta_frame and gpu_frame follow the variable):
--   _hta_frame_mode(compat_mode)   hta_frame of that mode, picked when the query is bound (query())
--   _gpu_frame_compat              gpu_frame of compat mode (default mode reads _gpu_frame_default)
CREATE OR REPLACE MACRO _hta_frame_mode(compat_mode) AS TABLE
SELECT * FROM query(CASE WHEN compat_mode THEN 'FROM _hta_frame_compat' ELSE 'FROM _hta_frame_default' END);

CREATE OR REPLACE VIEW _gpu_frame_compat AS
SELECT f.*, coalesce(k.kernel_type, 'OTHER') AS kernel_type
FROM (SELECT * FROM _hta_frame_compat WHERE stream <> -1) f LEFT JOIN _kernel_types_mode(true) k USING (name);
