-- Per-trace results of the default mode, stored at load (engine frameInserts) so that the analyses read a
-- few rows per trace instead of sorting every GPU interval again: temporal_breakdown's totals
-- (_trace_summary; across 64 ranks the merge of the computation intervals alone, a sort and a running max
-- over 1.3 M rows, was 0.22 s of the 0.32 s that re-opening a database and running temporal_breakdown
-- took) and the kernel-type sweep of kernel_type_breakdown and comm_comp_overlap (_type_segments).
--
-- Busy time depends on the trace only; computation time and kernel types depend on kernel_classes too,
-- which users may edit. _trace_summary keeps, for every trace, a fingerprint of kernel_classes as it was
-- when the rows were computed; the analyses compute again the traces whose fingerprint differs from the
-- current one (_stale_traces).

-- _kernel_classes_fp(): a fingerprint of kernel_classes' rows: the sum of their hashes modulo 2^64, which does not
-- depend on row order (an ordered list of the rows cost 1.0 ms per analysis, this 0.3 ms). A sum, not an xor: a
-- rule inserted twice must change it.
CREATE OR REPLACE MACRO _kernel_classes_fp() AS (
    SELECT (coalesce(sum(hash(priority, pattern, kernel_type, applies_to)), 0) % 18446744073709551616)::UBIGINT
    FROM kernel_classes
);

-- One row per trace; the times are NULL when the trace has no GPU work (kernels, memcpy, memset on a stream):
--   first_ts / last_end  the first GPU start and the last GPU end, ns
--   busy_ns              the length of the union of the GPU work intervals, ns
--   comp_ns              the same for COMPUTATION kernels, under the kernel_classes of classes_fp
--   classes_fp           _kernel_classes_fp() when the trace's rows here and in _type_segments were computed
CREATE TABLE IF NOT EXISTS _trace_summary (
    trace_id INTEGER, first_ts BIGINT, last_end BIGINT, busy_ns BIGINT, comp_ns BIGINT, classes_fp UBIGINT
);

-- Per trace, the time each set of running kernel types lasts (mask: 1 COMPUTATION, 2 COMMUNICATION,
-- 4 MEMORY; memory kernels included: the sets without them are these masks & 3).
CREATE TABLE IF NOT EXISTS _type_segments (trace_id INTEGER, mask INTEGER, len_ns BIGINT);

-- _stale_traces(first_trace, last_trace, stale_only): the trace ids in that range; with stale_only, only those
-- whose stored results were computed under other kernel_classes (or are missing).
CREATE OR REPLACE MACRO _stale_traces(first_trace, last_trace, stale_only) AS TABLE
SELECT trace_id FROM traces
WHERE trace_id BETWEEN first_trace AND last_trace
  AND (NOT stale_only OR trace_id NOT IN (SELECT trace_id FROM _trace_summary WHERE classes_fp = _kernel_classes_fp()));

-- _stale_gpu_rows(first_trace, last_trace, stale_only): the default-mode GPU work rows of _stale_traces with
-- their kernel type (NULL when kernel_classes has none). Reading only the span of those trace ids lets
-- DuckDB skip the scan when there are none, the usual case at query time.
CREATE OR REPLACE MACRO _stale_gpu_rows(first_trace, last_trace, stale_only) AS TABLE
WITH todo AS (
    SELECT trace_id FROM _stale_traces(first_trace, last_trace, stale_only)
),
span AS (
    SELECT coalesce(min(trace_id), 0) AS lo, coalesce(max(trace_id), -1) AS hi FROM todo
),
g AS (
    SELECT f.trace_id, f.ev_idx, f.ts, f.end_ts, f.name
    FROM _gpu_frame_default f, span
    WHERE f.trace_id BETWEEN span.lo AND span.hi AND f.trace_id IN (SELECT trace_id FROM todo) AND f.gpu_work
),
types AS (
    SELECT n.name, arg_min(k.kernel_type, (k.priority, k.rule_pattern, k.kernel_type)) AS kernel_type
    FROM (SELECT DISTINCT name FROM g WHERE name IS NOT NULL) n
    JOIN _kernel_class_rules(false) k ON _kernel_rule_matches(n.name, k.like_pattern, k.pattern)
    GROUP BY n.name
)
SELECT g.*, k.kernel_type FROM g LEFT JOIN types k USING (name);

-- _comp_merge(first_trace, last_trace, stale_only): per trace, the length of the union of its COMPUTATION
-- kernels' intervals (default mode); stale_only: only _stale_traces. prev = the running max of the trace's
-- earlier computation ends, as streaming windows (half the cost of PARTITION BY trace_id ORDER BY ts; see
-- _run_pack in 10_hta_frame.sql).
CREATE OR REPLACE MACRO _comp_merge(first_trace, last_trace, stale_only) AS TABLE
SELECT trace_id, max(end_ts) + sum(coalesce(prev, 0) - ts) FILTER (WHERE prev IS NULL OR ts > prev) AS comp_ns
FROM (SELECT trace_id, ts, end_ts, _run_unpack(packed, trace_id) AS prev
      FROM (SELECT *, lag(m) OVER () AS packed
            FROM (SELECT *, max(_run_pack(trace_id, end_ts)) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS m
                  FROM (SELECT trace_id, ev_idx, ts, end_ts FROM _stale_gpu_rows(first_trace, last_trace, stale_only)
                        WHERE kernel_type = 'COMPUTATION'
                        ORDER BY trace_id, ts, ev_idx))))
GROUP BY trace_id;

-- _trace_busy_source(first_trace, last_trace): the _trace_summary rows of those traces without what
-- kernel_classes decides (comp_ns and classes_fp NULL: stale, so the analyses compute it when read). What the
-- load and the open store while kernel_classes holds a rule that cannot apply (_kernel_classes_usable): a typo
-- in a rule must not keep a trace from loading, nor a database file from opening, where the row could be fixed.
CREATE OR REPLACE MACRO _trace_busy_source(first_trace, last_trace) AS TABLE
SELECT t.trace_id, b.first_ts, b.last_end, b.busy_ns, NULL::BIGINT AS comp_ns, NULL::UBIGINT AS classes_fp
FROM traces t
LEFT JOIN (SELECT trace_id, min(ts) AS first_ts, max(end_ts) AS last_end,
                  max(end_ts) + sum(coalesce(busy_before, 0) - ts) FILTER (WHERE opens_busy) AS busy_ns
           FROM _gpu_frame_default
           WHERE trace_id BETWEEN first_trace AND last_trace AND gpu_work
           GROUP BY trace_id) b USING (trace_id)
WHERE t.trace_id BETWEEN first_trace AND last_trace;

-- _trace_summary_source(first_trace, last_trace): the _trace_summary rows of those traces.
CREATE OR REPLACE MACRO _trace_summary_source(first_trace, last_trace) AS TABLE
SELECT b.trace_id, b.first_ts, b.last_end, b.busy_ns, CASE WHEN b.first_ts IS NOT NULL THEN coalesce(c.comp_ns, 0) END AS comp_ns,
       _kernel_classes_fp() AS classes_fp
FROM _trace_busy_source(first_trace, last_trace) b
LEFT JOIN _comp_merge(first_trace, last_trace, false) c USING (trace_id);

-- _kernel_classes_usable(): whether every kernel_classes rule that applies (priority not NULL) passes
-- _kernel_class_rules' checks, its pattern compiling as RE2 (DuckDB's engine) included.
CREATE OR REPLACE MACRO _kernel_classes_usable() AS (
    SELECT count(*) = 0 FROM kernel_classes
    WHERE priority IS NOT NULL
      AND (pattern IS NULL OR kernel_type IS NULL OR kernel_type NOT IN ('COMMUNICATION', 'MEMORY', 'COMPUTATION', 'OTHER')
           OR (applies_to IS NOT NULL AND applies_to NOT IN ('all', 'default', 'hta_compat'))
           OR try(regexp_matches('', pattern)) IS NULL)
);

-- _type_sweep(first_trace, last_trace, stale_only): the _type_segments rows of those traces (stale_only: of
-- _stale_traces), from one sweep over the GPU work rows. Per type, the number of running events (a type
-- runs while its count is > 0; touching events keep it running, like HTA's merge). The three counts are
-- packed in one BIGINT (21 bits each) so that one running sum carries them; durations < 0 count as 0.
-- With s the running value after an edge and d the edge's value, the mask before it is mask(s − d) and
-- after it mask(s), so an edge at time t adds +t to the length of the mask that ends there and −t to the
-- mask that starts there (no lead/lag needed).
CREATE OR REPLACE MACRO _type_sweep(first_trace, last_trace, stale_only) AS TABLE
WITH raw AS (
    SELECT trace_id, ts, greatest(end_ts, ts) AS end_ts,
           CASE kernel_type WHEN 'COMPUTATION' THEN 1 WHEN 'COMMUNICATION' THEN 2097152 ELSE 4398046511104 END AS d
    FROM _stale_gpu_rows(first_trace, last_trace, stale_only)
    WHERE kernel_type IN ('COMPUTATION', 'COMMUNICATION', 'MEMORY')
),
edges AS (
    SELECT trace_id, ts AS t, d FROM raw UNION ALL SELECT trace_id, end_ts, -d FROM raw
),
-- The running sum restarts at 0 with each trace (every +d has its −d in the same trace), so one sum over
-- all traces in (trace_id, t) order equals the per-trace sum: a streaming window, 2-4x cheaper than
-- PARTITION BY trace_id ORDER BY t (DuckDB runs an OVER () aggregate in its input's order). Edges at one
-- instant are not merged (a GROUP BY t costs more than the rest): the masks in between last 0 ns and add
-- nothing, and starts go first so that no count drops below 0 on the way.
sweep AS (
    SELECT trace_id, t, d,
           sum(d) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)::BIGINT AS s
    FROM (SELECT * FROM edges ORDER BY trace_id, t, d DESC)
),
masks AS (
    SELECT trace_id, t,
           ((s - d) & 2097151 > 0)::INTEGER + 2 * ((s - d) >> 21 & 2097151 > 0)::INTEGER
               + 4 * ((s - d) >> 42 > 0)::INTEGER AS m_before,
           (s & 2097151 > 0)::INTEGER + 2 * (s >> 21 & 2097151 > 0)::INTEGER + 4 * (s >> 42 > 0)::INTEGER AS m_after
    FROM sweep
)
-- one pass over masks: side 0 ends m_before, side 1 starts m_after
SELECT trace_id, mask, len_ns
FROM (SELECT trace_id, mask, sum(c)::BIGINT AS len_ns
      FROM (SELECT trace_id,
                   CASE WHEN side = 0 THEN m_before ELSE m_after END AS mask,
                   CASE WHEN side = 0 THEN t::HUGEINT ELSE -t::HUGEINT END AS c
            FROM masks, (VALUES (0), (1)) v(side)
            WHERE m_before <> m_after)
      WHERE mask > 0
      GROUP BY ALL)
WHERE len_ns > 0;
