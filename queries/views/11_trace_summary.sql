-- Per-trace totals of the default mode, stored at load (engine frameInserts) so that temporal_breakdown
-- reads one row per trace instead of merging every GPU interval again: across 64 ranks the merge of the
-- computation intervals alone (a sort and a running max over 1.3 M rows) was 0.22 s of the 0.32 s that
-- re-opening a database and running temporal_breakdown took.
--
-- Busy time depends on the trace only. Computation time depends on kernel_classes too, which users may
-- edit: each row keeps a fingerprint of kernel_classes as it was when the row was computed, and
-- temporal_breakdown merges again (_comp_merge) the traces whose fingerprint differs from the current one.

-- _kernel_classes_fp(): a fingerprint of kernel_classes' rows.
CREATE OR REPLACE MACRO _kernel_classes_fp() AS (
    SELECT hash(list({'priority': priority, 'pattern': pattern, 'kernel_type': kernel_type, 'applies_to': applies_to}
                     ORDER BY priority, pattern, kernel_type, applies_to))
    FROM kernel_classes
);

-- One row per trace with GPU work (kernels, memcpy, memset on a stream):
--   first_ts / last_end  the first GPU start and the last GPU end, ns
--   busy_ns              the length of the union of the GPU work intervals, ns
--   comp_ns              the same for COMPUTATION kernels, under the kernel_classes of classes_fp
CREATE TABLE IF NOT EXISTS _trace_summary (
    trace_id INTEGER, first_ts BIGINT, last_end BIGINT, busy_ns BIGINT, comp_ns BIGINT, classes_fp UBIGINT
);

-- _comp_merge(first_trace, last_trace, stale_only): per trace, the length of the union of its COMPUTATION
-- kernels' intervals (default mode); stale_only: only the traces whose stored comp_ns was computed under
-- other kernel_classes (none, usually: the span of trace ids to read is then empty, which DuckDB applies
-- to the scan). prev = the running max of the trace's earlier computation ends, as streaming windows (half
-- the cost of PARTITION BY trace_id ORDER BY ts; see _run_pack in 10_hta_frame.sql).
CREATE OR REPLACE MACRO _comp_merge(first_trace, last_trace, stale_only) AS TABLE
WITH todo AS (
    SELECT trace_id FROM traces
    WHERE trace_id BETWEEN first_trace AND last_trace
      AND (NOT stale_only OR trace_id NOT IN (SELECT trace_id FROM _trace_summary WHERE classes_fp = _kernel_classes_fp()))
),
span AS (
    SELECT coalesce(min(trace_id), 0) AS lo, coalesce(max(trace_id), -1) AS hi FROM todo
),
g AS (
    SELECT f.trace_id, f.ev_idx, f.ts, f.end_ts, f.name
    FROM _gpu_frame_default f, span
    WHERE f.trace_id BETWEEN span.lo AND span.hi AND f.trace_id IN (SELECT trace_id FROM todo) AND f.gpu_work
),
comp AS (
    SELECT name FROM (SELECT DISTINCT name FROM g WHERE name IS NOT NULL)
    WHERE _kernel_class_of(name, false) = 'COMPUTATION'
)
SELECT trace_id, max(end_ts) + sum(coalesce(prev, 0) - ts) FILTER (WHERE prev IS NULL OR ts > prev) AS comp_ns
FROM (SELECT trace_id, ts, end_ts, _run_unpack(packed, trace_id) AS prev
      FROM (SELECT *, lag(m) OVER () AS packed
            FROM (SELECT *, max(_run_pack(trace_id, end_ts)) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS m
                  FROM (SELECT g.trace_id, g.ev_idx, g.ts, g.end_ts FROM g JOIN comp USING (name)
                        ORDER BY g.trace_id, g.ts, g.ev_idx))))
GROUP BY trace_id;

-- _trace_summary_source(first_trace, last_trace): the _trace_summary rows of those traces.
CREATE OR REPLACE MACRO _trace_summary_source(first_trace, last_trace) AS TABLE
SELECT b.trace_id, b.first_ts, b.last_end, b.busy_ns, coalesce(c.comp_ns, 0) AS comp_ns, _kernel_classes_fp() AS classes_fp
FROM (SELECT trace_id, min(ts) AS first_ts, max(end_ts) AS last_end,
             max(end_ts) + sum(coalesce(busy_before, 0) - ts) FILTER (WHERE opens_busy) AS busy_ns
      FROM _gpu_frame_default
      WHERE trace_id BETWEEN first_trace AND last_trace AND gpu_work
      GROUP BY trace_id) b
LEFT JOIN _comp_merge(first_trace, last_trace, false) c USING (trace_id);
