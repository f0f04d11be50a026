-- CUPTI range-profiler counters per kernel with the PyTorch ops that launched it (HTA
-- get_cupti_counter_data_with_operators, hta-spec.md §4.10).
--
-- Counter records are the cat cuda_profiler_range events; every arg of such an event is a counter, kept in one
-- MAP(VARCHAR, DOUBLE) column (`counters['smsp__sass_thread_inst_executed_op_ffma_pred_on.sum']`) rather than one
-- column per counter, so the view's shape does not depend on which metrics were collected. Values above 2^53 lose
-- precision (DOUBLE); the raw integers stay in events.args.
--
-- Pairing a record with its launch:
--   default  by correlation id when the record carries one (args.correlation = the launch's); a record without one
--            falls back to HTA's positional pairing when the rank has as many records as cudaLaunchKernel* calls
--            and none of its records paired by correlation (positions would then pair a launch a second time);
--            otherwise the launch columns are NULL (the record is still listed).
--   compat   HTA: positional only (i-th record by ts with the i-th cuda_runtime cudaLaunchKernel* call by ts), and a
--            rank whose counts differ is left out.
-- op_stack: the cpu_op events enclosing the launch on its thread, outermost first (compat: those of HTA's call stack,
-- where an event that outlived its parent encloses what starts after it ended, and those below the launch, by start;
-- at equal starts HTA's order is a Python set's, here the call-stack order). An empty stack gives NULL columns (HTA
-- raises IndexError there).

-- @view cupti_counters  One row per CUPTI range-profiler kernel record (cat cuda_profiler_range).
-- @column label            Trace set
-- @column rank             Rank
-- @column ev_idx           Position of the record in traceEvents
-- @column name             Kernel name
-- @column ts               Start, ns
-- @column dur_us           Duration of the profiled range, µs
-- @column correlation      args.correlation of the record, NULL when absent
-- @column launch_ev_idx    ev_idx of the launching runtime call (HTA index_runtime), NULL when not paired
-- @column launch_name      Name of the launching runtime call
-- @column paired_by        correlation or position
-- @column op_stack         Names of the enclosing cpu_op events, outermost first, joined by ' > '
-- @column top_level_op     Outermost enclosing cpu_op
-- @column bottom_level_op  Innermost enclosing cpu_op
-- @column counters         Every counter of the record: MAP(metric name → value), from its numeric args (not correlation, External id, nor a text or object arg)
-- @column flops            FLOPs from the SASS instruction counters (2 per FMA, 1 per add/mul; half, single and double precision), NULL when none was collected
CREATE OR REPLACE VIEW cupti_counters AS
WITH RECURSIVE
rec AS (
    SELECT f.trace_id, f.label, f.rank, f.ev_idx, f.name, f.ts, f.dur, e.correlation, e.args,
           row_number() OVER (PARTITION BY f.trace_id ORDER BY f.ts, f.ev_idx) AS pos,
           count(*) OVER (PARTITION BY f.trace_id) AS n
    FROM hta_frame f JOIN events e ON e.trace_id = f.trace_id AND e.ev_idx = f.ev_idx
    WHERE f.cat = 'cuda_profiler_range'
),
launches AS (
    SELECT f.trace_id, f.ev_idx, f.name, row_number() OVER (PARTITION BY f.trace_id ORDER BY f.ts, f.ev_idx) AS pos,
           count(*) OVER (PARTITION BY f.trace_id) AS n
    FROM hta_frame f
    WHERE starts_with(f.cat, 'cuda_runtime') AND starts_with(f.name, 'cudaLaunchKernel')
      AND f.trace_id IN (SELECT trace_id FROM rec)
),
by_corr AS (
    SELECT r.trace_id, r.ev_idx, arg_min(c.ev_idx, (c.cat_class <> 'runtime', c.ev_idx)) AS launch
    FROM rec r JOIN events c ON c.trace_id = r.trace_id AND c.correlation = r.correlation
    WHERE NOT hta_compat() AND c.cat_class IN ('runtime', 'driver')
    GROUP BY ALL
),
paired AS (
    SELECT r.*, coalesce(bc.launch, lp.ev_idx) AS launch_ev_idx,
           CASE WHEN bc.launch IS NOT NULL THEN 'correlation' WHEN lp.ev_idx IS NOT NULL THEN 'position' END AS paired_by
    FROM rec r
    LEFT JOIN by_corr bc ON bc.trace_id = r.trace_id AND bc.ev_idx = r.ev_idx
    LEFT JOIN (SELECT DISTINCT trace_id FROM by_corr) any_corr ON any_corr.trace_id = r.trace_id
    LEFT JOIN launches lp ON lp.trace_id = r.trace_id AND lp.pos = r.pos AND lp.n = r.n AND bc.launch IS NULL
                         AND any_corr.trace_id IS NULL
    -- compat: HTA skips a rank whose record and launch counts differ
    WHERE NOT hta_compat() OR r.n = (SELECT count(*) FROM launches l WHERE l.trace_id = r.trace_id)
),
-- the call stacks: the loader's nesting, or HTA's own (compat; _hta_call_stack says how they differ)
nesting AS (
    SELECT e.trace_id, e.ev_idx, e.parent_idx, e.depth FROM events e
    WHERE NOT hta_compat() AND e.trace_id IN (SELECT trace_id FROM paired)
    UNION ALL
    SELECT trace_id, ev_idx, parent_idx, depth FROM _hta_call_stack(-1, '', hta_compat(), 'cuda_profiler_range')
),
up(trace_id, ev_idx, anc, depth) AS (
    SELECT p.trace_id, p.ev_idx, e.parent_idx, e.depth
    FROM paired p JOIN nesting e ON e.trace_id = p.trace_id AND e.ev_idx = p.launch_ev_idx
    WHERE e.parent_idx IS NOT NULL
    UNION ALL
    SELECT u.trace_id, u.ev_idx, e.parent_idx, e.depth
    FROM up u JOIN nesting e ON e.trace_id = u.trace_id AND e.ev_idx = u.anc
    WHERE e.parent_idx IS NOT NULL
),
-- compat: HTA's stack of a launch also holds the events below it in its call stack (a zero-length op at the
-- launch's start or end nests inside it there), all listed by start time (HTA's order at equal starts is that of a
-- Python set of event indices; here the outer first)
down(trace_id, ev_idx, node, depth) AS (
    SELECT p.trace_id, p.ev_idx, n.ev_idx, n.depth
    FROM paired p JOIN nesting n ON n.trace_id = p.trace_id AND n.parent_idx = p.launch_ev_idx
    WHERE hta_compat()
    UNION ALL
    SELECT d.trace_id, d.ev_idx, n.ev_idx, n.depth
    FROM down d JOIN nesting n ON n.trace_id = d.trace_id AND n.parent_idx = d.node
),
members AS (
    SELECT trace_id, ev_idx, anc AS node, depth - 1 AS depth FROM up
    UNION ALL
    SELECT trace_id, ev_idx, node, depth FROM down
),
stacks AS (
    SELECT m.trace_id, m.ev_idx, list(e.name ORDER BY CASE WHEN hta_compat() THEN e.ts END, m.depth) AS ops
    FROM members m JOIN events e ON e.trace_id = m.trace_id AND e.ev_idx = m.node
    WHERE e.cat = 'cpu_op'
    GROUP BY ALL
),
out AS (
    -- numbers only: a boolean arg read as DOUBLE was a counter of 1 or 0
    SELECT p.*, s.ops,
           map_from_entries(list_transform(
               list_filter(map_entries(json_transform(p.args, '"MAP(VARCHAR, JSON)"')),
                           lambda x: json_type(x.value) IN ('BIGINT', 'UBIGINT', 'DOUBLE', 'HUGEINT')),
               lambda x: {'key': x.key, 'value': x.value::DOUBLE})) AS all_args
    FROM paired p LEFT JOIN stacks s ON s.trace_id = p.trace_id AND s.ev_idx = p.ev_idx
)
SELECT o.label, o.rank, o.ev_idx, o.name, o.ts, o.dur / 1000.0 AS dur_us,
       o.correlation, o.launch_ev_idx, l.name AS launch_name, o.paired_by,
       array_to_string(o.ops, ' > ') AS op_stack, o.ops[1] AS top_level_op, o.ops[-1] AS bottom_level_op,
       map_from_entries(list_filter(map_entries(o.all_args), lambda x: x.key NOT IN ('correlation', 'External id') AND x.value IS NOT NULL)) AS counters,
       list_sum(list_transform(map_entries(o.all_args), lambda x:
           CASE WHEN regexp_full_match(x.key, 'smsp__sass_thread_inst_executed_op_[dhf](fma|mul|add)_pred_on\.sum')
                THEN x.value * CASE WHEN contains(x.key, 'fma') THEN 2 ELSE 1 END END)) AS flops
FROM out o LEFT JOIN events l ON l.trace_id = o.trace_id AND l.ev_idx = o.launch_ev_idx
ORDER BY o.label, o.rank, o.ts, o.ev_idx;
