-- The common input of every HTA analysis: one row per complete event an analysis may look at, with HTA's
-- column meanings (stream -1 = CPU side, correlation -1 = none, index_correlation = linked event).
--
-- Two modes, switched by `SET VARIABLE hta_compat = true`:
--   default  every complete event; streams as the trace means them (uint32 -1 is no stream); exact ns.
--   compat   HTA 0.6.1's loaded dataframe: the last ProfilerStep and what starts after it dropped when the
--            trace has two or more steps, GPU-side rows kept only with a kept CPU partner, raw stream args
--            (4294967295 is a stream; a hex string is not), and ns timestamps rounded inward to whole µs.

-- @macro hta_compat  True when `SET VARIABLE hta_compat = true` is in effect (HTA 0.6.1 bit-for-bit mode).
CREATE OR REPLACE MACRO hta_compat() AS coalesce(TRY_CAST(getvariable('hta_compat') AS BOOLEAN), false);

-- The default frame is a projection of events (the loader pairs launches with GPU events by correlation
-- into events.link_idx, so no join is needed); the engine stores it in _hta_frame_default when a trace
-- is loaded, because analyses run 1.3-2x faster on the stored table than on this view.
CREATE OR REPLACE VIEW _hta_frame_source AS
SELECT e.trace_id, t.label, e.rank, e.ev_idx, e.cat, e.cat_class, e.name, e.pid, e.tid,
       e.ts, e.dur, e.ts + e.dur AS end_ts,
       coalesce(e.stream, -1) AS stream, coalesce(e.correlation, -1) AS correlation,
       CASE WHEN coalesce(e.correlation, -1) = -1 THEN -1 ELSE coalesce(e.link_idx, 0) END AS index_correlation,
       coalesce(e.step, -1) AS iteration,
       (coalesce(e.stream, -1) >= 0 AND coalesce(e.correlation, -1) >= 0) OR e.name IN ('Event Sync', 'Context Sync') AS gpu_side,
       e.stream IS NOT NULL AND e.cat_class IN ('kernel', 'memcpy', 'memset') AS gpu_work,
       -- Only GPU-side rows carry these args; skipping the JSON of the others halves their cost.
       CASE WHEN e.cat_class IN ('kernel', 'memcpy', 'memset', 'cupti_range', 'other')
            THEN coalesce(TRY_CAST(e.args->>'memory bandwidth (GB/s)' AS DOUBLE), 0) ELSE 0 END AS memory_bw_gbps,
       CASE WHEN e.cat_class IN ('kernel', 'memcpy', 'memset', 'cupti_range', 'other')
            THEN coalesce(TRY_CAST(e.args->>'bytes' AS BIGINT), -1) ELSE -1 END AS bytes
FROM events e JOIN traces t ON t.trace_id = e.trace_id
WHERE e.dur IS NOT NULL AND e.cat IS NOT NULL AND e.cat <> 'Trace';

CREATE TABLE IF NOT EXISTS _hta_frame_default AS SELECT * FROM _hta_frame_source WHERE false;

-- The compat frame reproduces HTA 0.6.1's dataframe, computed when a query reads it (compat mode is for
-- checking against HTA, not for speed): raw stream args, the last-step filter, links made on the whole
-- parsed trace before that filter, and timestamps rounded inward to whole µs.
CREATE OR REPLACE VIEW _hta_frame_compat AS
WITH base AS (
    SELECT e.trace_id, t.label, e.rank, e.ev_idx, e.cat, e.cat_class, e.name, e.pid, e.tid, e.ts AS ts_ns, e.dur AS dur_ns,
           e.args, e.step,
           CASE
               WHEN e.stream IS NOT NULL THEN e.stream
               WHEN e.cat_class IN ('sync', 'kernel', 'memcpy', 'memset', 'other', 'gpu_user_annotation')
                    AND regexp_full_match(e.args->>'stream', '-?[0-9]+(\.0*)?')
                   THEN TRY_CAST(TRY_CAST(e.args->>'stream' AS DOUBLE) AS BIGINT)
               ELSE -1
           END AS stream,
           coalesce(e.correlation, -1) AS correlation
    FROM events e JOIN traces t ON t.trace_id = e.trace_id
    WHERE e.dur IS NOT NULL AND e.cat IS NOT NULL AND e.cat <> 'Trace'
),
sided AS (
    SELECT *, (stream >= 0 AND correlation >= 0) OR name IN ('Event Sync', 'Context Sync') AS gpu_side FROM base
),
last_step AS (
    -- HTA drops the last step only when the trace has at least two distinct ProfilerStep names.
    SELECT trace_id, max(ts_ns) AS last_start
    FROM base WHERE regexp_matches(name, 'ProfilerStep\s*#\s*\d+')
    GROUP BY trace_id HAVING count(DISTINCT name) >= 2
),
kept_cpu AS (
    SELECT s.* FROM sided s LEFT JOIN last_step l USING (trace_id)
    WHERE NOT s.gpu_side AND (l.last_start IS NULL OR s.ts_ns < l.last_start)
),
kept AS (
    SELECT * FROM kept_cpu
    UNION ALL
    SELECT s.* FROM sided s LEFT JOIN last_step l USING (trace_id)
    WHERE s.gpu_side AND (l.last_start IS NULL
        OR s.correlation IN (SELECT k.correlation FROM kept_cpu k WHERE k.trace_id = s.trace_id AND k.correlation >= 0))
),
links AS (
    SELECT c.trace_id, c.ev_idx AS cpu_idx, g.ev_idx AS gpu_idx
    FROM sided c JOIN sided g ON c.trace_id = g.trace_id AND c.correlation = g.correlation
    WHERE NOT c.gpu_side AND g.gpu_side AND c.correlation <> -1
),
-- HTA gives gpu_user_annotation rows (no stream arg) a step by time containment, like CPU rows.
annotation_step AS (
    SELECT g.trace_id, g.ev_idx, arg_max(p.step, p.ev_idx) AS step
    FROM base g JOIN profiler_steps p ON p.trace_id = g.trace_id AND g.ts_ns >= p.ts AND g.ts_ns < p.end_ts
    WHERE g.cat_class = 'gpu_user_annotation'
    GROUP BY ALL
),
link_of AS (
    SELECT trace_id, cpu_idx AS ev_idx, max(gpu_idx) AS linked FROM links GROUP BY ALL
    UNION ALL
    SELECT trace_id, gpu_idx AS ev_idx, max(cpu_idx) AS linked FROM links GROUP BY ALL
)
SELECT k.trace_id, k.label, k.rank, k.ev_idx, k.cat, k.cat_class, k.name, k.pid, k.tid,
       ((k.ts_ns + 999) // 1000) * 1000 AS ts,
       ((k.ts_ns + k.dur_ns) // 1000) * 1000 - ((k.ts_ns + 999) // 1000) * 1000 AS dur,
       ((k.ts_ns + k.dur_ns) // 1000) * 1000 AS end_ts,
       k.stream, k.correlation,
       CASE WHEN k.correlation = -1 THEN -1 ELSE coalesce(l.linked, 0) END AS index_correlation,
       CASE WHEN k.stream = 0 AND k.cat <> 'cpu_op' THEN NULL  -- HTA: neither a CPU (< 0) nor a GPU (> 0) row
            WHEN k.cat_class = 'gpu_user_annotation' THEN coalesce(a.step, -1)
            ELSE coalesce(k.step, -1) END AS iteration,
       k.gpu_side,
       k.stream <> -1 AS gpu_work,
       CASE WHEN k.cat_class IN ('kernel', 'memcpy', 'memset', 'cupti_range', 'other')
            THEN coalesce(TRY_CAST(k.args->>'memory bandwidth (GB/s)' AS DOUBLE), 0) ELSE 0 END AS memory_bw_gbps,
       CASE WHEN k.cat_class IN ('kernel', 'memcpy', 'memset', 'cupti_range', 'other')
            THEN coalesce(TRY_CAST(k.args->>'bytes' AS BIGINT), -1) ELSE -1 END AS bytes
FROM kept k
LEFT JOIN link_of l ON l.trace_id = k.trace_id AND l.ev_idx = k.ev_idx
LEFT JOIN annotation_step a ON a.trace_id = k.trace_id AND a.ev_idx = k.ev_idx;

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
CREATE OR REPLACE VIEW hta_frame AS
SELECT * FROM _hta_frame_compat WHERE hta_compat()
UNION ALL
SELECT * FROM _hta_frame_default WHERE NOT hta_compat();

-- @view kernel_types  The kernel type of every distinct GPU-side event name, from kernel_classes.
-- @column name         Event name
-- @column kernel_type  COMMUNICATION, MEMORY, COMPUTATION or OTHER (first matching kernel_classes row)
CREATE OR REPLACE VIEW kernel_types AS
WITH names AS (
    SELECT DISTINCT name FROM hta_frame WHERE stream <> -1 AND name IS NOT NULL
)
SELECT n.name, arg_min(k.kernel_type, k.priority) AS kernel_type
FROM names n
JOIN kernel_classes k
  ON (k.applies_to = 'all' OR k.applies_to = CASE WHEN hta_compat() THEN 'hta_compat' ELSE 'default' END)
 AND regexp_matches(n.name, k.pattern)
GROUP BY n.name;

-- @view gpu_frame  hta_frame's GPU-side rows (stream != -1) with their kernel type.
-- @column kernel_type  COMMUNICATION, MEMORY, COMPUTATION or OTHER (kernel_classes)
CREATE OR REPLACE VIEW gpu_frame AS
SELECT f.*, coalesce(k.kernel_type, 'OTHER') AS kernel_type
FROM hta_frame f LEFT JOIN kernel_types k USING (name)
WHERE f.stream <> -1;
