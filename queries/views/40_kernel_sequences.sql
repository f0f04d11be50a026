-- Frequent kernel sequences (HTA get_frequent_cuda_kernel_sequences, hta-spec.md §4.9).
--
-- The call graph is the nesting per (pid, tid): events.parent_idx/depth (default), or HTA's own call stacks (compat:
-- _hta_call_stack, which replays HTA's sort and stack, so an event that outlives its parent or a zero-length event
-- at a boundary nests as HTA nests it), with two additions done here:
--   * every GPU event hangs under the runtime call that launched it (hta_frame.index_correlation), one level deeper;
--   * HTA's backward-thread merge: when a rank has exactly one "main" CPU thread (it holds a ProfilerStep# annotation)
--     and one "bwd" thread (no ProfilerStep#, some autograd:: op), each top-level event of the bwd thread becomes a
--     child of the first (by ev_idx) `## backward ##` annotation of the main thread that contains it in time (when the
--     main thread has no such annotation: the first containing ProfilerStep#), and its subtree moves down accordingly.
-- Unlike HTA, nesting never fails ("ValueError: Unexpected case" on traces with sub-µs events, HTA issue #254): the
-- call stack is built at load time on exact ns timestamps.
--
-- Root selection:
--   default  roots = the outermost CPU events whose name contains operator_name (no enclosing event's name contains
--            it) with at least min_pattern_len GPU events below them; every such occurrence counts.
--   compat   HTA: the events whose name contains operator_name at the smallest call-stack depth among all events with
--            that name (GPU rows and rows outside the call graph count, at depth -1), then those with at least
--            min_pattern_len GPU events below them; occurrences deeper in the stack (e.g. the same op called at depth 3
--            in backward and depth 2 in forward) are dropped. GPU events are HTA's: stream > 0 rows linked to a launch
--            (cuda_sync rows included); default: kernels, memcpy and memset only.

-- _sq_kseq_nodes(compat, rnk, lbl): the call graph of one rank (and label, NULL = every label), one row per node.
CREATE OR REPLACE MACRO _sq_kseq_nodes(compat, rnk, lbl) AS TABLE
WITH hta_stack AS (SELECT * FROM _hta_call_stack(rnk, coalesce(lbl, ''), compat, '')),
f AS (
    SELECT h.trace_id, h.label, h.rank, h.ev_idx, h.name, h.pid, h.tid, h.ts, h.dur, h.end_ts, h.stream,
           h.index_correlation, h.gpu_work,
           CASE WHEN compat THEN s.parent_idx ELSE e.parent_idx END AS parent_idx,
           CASE WHEN compat THEN s.depth ELSE e.depth END AS depth, e.link_idx
    FROM (SELECT * FROM _hta_frame_compat WHERE compat UNION ALL SELECT * FROM _hta_frame_default WHERE NOT compat) h
    JOIN events e ON e.trace_id = h.trace_id AND e.ev_idx = h.ev_idx
    LEFT JOIN hta_stack s ON s.trace_id = h.trace_id AND s.ev_idx = h.ev_idx
    WHERE h.rank = rnk AND (lbl IS NULL OR h.label = lbl)
),
-- HTA skips lanes whose rows are all on a stream > 0, or all have pid 0, or all have tid 0 (GPU lanes).
lanes AS (
    SELECT trace_id, pid, tid,
           bool_and(stream > 0) OR bool_and(pid = 0) OR bool_and(tid = 0) AS gpu_lane,
           bool_or(starts_with(name, 'ProfilerStep#')) AS has_step,
           bool_or(contains(name, 'autograd::')) AS has_autograd
    FROM f GROUP BY ALL
),
cpu AS (
    SELECT f.* FROM f JOIN lanes l USING (trace_id, pid, tid)
    WHERE NOT l.gpu_lane AND f.stream = -1 AND f.depth IS NOT NULL
),
roles AS (
    SELECT trace_id, pid, tid, CASE WHEN has_step THEN 'main' ELSE 'bwd' END AS role
    FROM lanes WHERE NOT gpu_lane AND (has_step OR has_autograd)
),
merge_ok AS (
    SELECT trace_id FROM roles GROUP BY trace_id
    HAVING count(*) FILTER (role = 'main') = 1 AND count(*) FILTER (role = 'bwd') = 1
),
main_ann AS (
    SELECT c.trace_id, c.ev_idx, c.ts, c.end_ts, c.depth, starts_with(c.name, '## backward ##') AS bwd_ann
    FROM cpu c JOIN roles r USING (trace_id, pid, tid) JOIN merge_ok USING (trace_id)
    WHERE r.role = 'main' AND (starts_with(c.name, '## backward ##') OR starts_with(c.name, 'ProfilerStep#'))
),
anns AS (
    SELECT * FROM main_ann a
    WHERE a.bwd_ann OR NOT EXISTS (SELECT 1 FROM main_ann b WHERE b.trace_id = a.trace_id AND b.bwd_ann)
),
bwd_tops AS (
    SELECT c.trace_id, c.ev_idx, arg_min(a.ev_idx, a.ev_idx) AS new_parent, arg_min(a.depth, a.ev_idx) + 1 AS shift
    FROM cpu c JOIN roles r USING (trace_id, pid, tid)
    JOIN anns a ON a.trace_id = c.trace_id AND c.ts >= a.ts AND c.end_ts <= a.end_ts
    WHERE r.role = 'bwd' AND c.depth = 0
    GROUP BY ALL
),
-- Depth shift of every event below a moved top-level event.
shifted AS (
    WITH RECURSIVE s(trace_id, ev_idx, shift) AS (
        SELECT trace_id, ev_idx, shift FROM bwd_tops
        UNION ALL
        SELECT c.trace_id, c.ev_idx, s.shift FROM s JOIN cpu c ON c.trace_id = s.trace_id AND c.parent_idx = s.ev_idx
    )
    SELECT * FROM s
),
cpu_nodes AS (
    SELECT c.trace_id, c.label, c.rank, c.ev_idx, c.name, c.ts, c.dur, false AS is_gpu,
           coalesce(b.new_parent, c.parent_idx) AS parent, c.depth + coalesce(s.shift, 0) AS depth
    FROM cpu c
    LEFT JOIN bwd_tops b ON b.trace_id = c.trace_id AND b.ev_idx = c.ev_idx
    LEFT JOIN shifted s ON s.trace_id = c.trace_id AND s.ev_idx = c.ev_idx
)
SELECT * FROM cpu_nodes
UNION ALL
SELECT g.trace_id, g.label, g.rank, g.ev_idx, g.name, g.ts, g.dur, true AS is_gpu, c.ev_idx AS parent, c.depth + 1 AS depth
-- compat: HTA's index_correlation, whose 0 means no partner (so a launch that is event #0 launches nothing);
-- default: the launch found by correlation, event #0 included
FROM f g JOIN cpu_nodes c ON c.trace_id = g.trace_id AND c.ev_idx = CASE WHEN compat THEN g.index_correlation ELSE g.link_idx END
WHERE CASE WHEN compat THEN g.index_correlation > 0 AND g.stream > 0 ELSE g.gpu_work END;

-- _sq_kseq_roots(compat, operator_name, min_pattern_len, rnk, lbl): one row per root occurrence with its pattern and
-- the ev_idx of every event of its subtree (for the overlay).
CREATE OR REPLACE MACRO _sq_kseq_roots(compat, op, min_len, rnk, lbl) AS TABLE
WITH RECURSIVE
nodes AS MATERIALIZED (SELECT * FROM _sq_kseq_nodes(compat, rnk, lbl)),
frame AS (
    SELECT h.trace_id, h.ev_idx FROM (SELECT trace_id, label, rank, ev_idx, name FROM _hta_frame_compat) h
    WHERE compat AND h.rank = rnk AND (lbl IS NULL OR h.label = lbl) AND op <> '' AND contains(h.name, op)
),
cands AS (
    -- compat: every frame row with the name counts for the minimum depth (rows outside the graph at depth -1).
    SELECT n.* FROM nodes n
    WHERE op <> '' AND contains(n.name, op) AND (compat OR NOT n.is_gpu)
),
-- a GPU root's subtree is itself (HTA: the stack of a kernel is the kernel)
sub(trace_id, root, ev_idx, root_gpu) AS (
    SELECT trace_id, ev_idx, ev_idx, is_gpu FROM cands
    UNION ALL
    SELECT s.trace_id, s.root, n.ev_idx, s.root_gpu
    FROM sub s JOIN nodes n ON n.trace_id = s.trace_id AND n.parent = s.ev_idx
    WHERE NOT s.root_gpu
),
nested AS (
    SELECT DISTINCT s.trace_id, s.ev_idx FROM sub s JOIN cands c ON c.trace_id = s.trace_id AND c.ev_idx = s.ev_idx
    WHERE s.root <> s.ev_idx
),
min_depth AS (
    SELECT trace_id, min(depth) AS depth FROM (
        SELECT trace_id, depth FROM cands
        UNION ALL
        SELECT fr.trace_id, -1 FROM frame fr ANTI JOIN nodes n ON n.trace_id = fr.trace_id AND n.ev_idx = fr.ev_idx
    ) GROUP BY trace_id
),
roots AS (
    SELECT c.* FROM cands c LEFT JOIN min_depth m USING (trace_id)
    WHERE CASE WHEN compat THEN c.depth = m.depth
               ELSE NOT EXISTS (SELECT 1 FROM nested x WHERE x.trace_id = c.trace_id AND x.ev_idx = c.ev_idx) END
),
agg AS (
    SELECT s.trace_id, s.root,
           list(n.name ORDER BY n.ts, n.ev_idx) FILTER (n.is_gpu) AS kernels,
           count(*) FILTER (n.is_gpu) AS num_kernels,
           coalesce(sum(n.dur) FILTER (n.is_gpu), 0) AS kernel_dur,
           list(s.ev_idx) AS members
    FROM sub s JOIN nodes n ON n.trace_id = s.trace_id AND n.ev_idx = s.ev_idx
    SEMI JOIN roots r ON r.trace_id = s.trace_id AND r.ev_idx = s.root
    GROUP BY ALL
)
SELECT r.trace_id, r.label, r.rank, r.ev_idx AS root_idx,
       array_to_string(list_prepend(r.name, coalesce(a.kernels, [])), '|') AS pattern,
       a.num_kernels, a.kernel_dur, r.dur AS root_dur, a.members
FROM roots r JOIN agg a ON a.trace_id = r.trace_id AND a.root = r.ev_idx
WHERE a.num_kernels >= min_len;

-- @macro frequent_kernel_sequences(operator_name, min_pattern_len := 3, top_k := 5, rank := 0, label := NULL, hta_compat := NULL)  One row per GPU-kernel sequence launched below a CPU op whose name contains operator_name (HTA get_frequent_cuda_kernel_sequences), most frequent first. top_k keeps the k most frequent per trace (0 or less: all); compat mode returns every pattern, as HTA, whose top_k limits only the overlay. label NULL = every loaded label; a rank (or rank and label) that is not loaded is an error. hta_compat: true or false overrides the session's hta_compat for this call (NULL = the session's).
-- @column label                   Trace set
-- @column rank                    Rank
-- @column pattern                 Root op name, then the names of the GPU events below it in start order, joined by |
-- @column count                   Occurrences of the pattern
-- @column gpu_kernel_duration_us  Sum of the durations of the GPU events of every occurrence, µs
-- @column cpu_op_duration_us      Sum of the durations of the root ops, µs
CREATE OR REPLACE MACRO frequent_kernel_sequences(operator_name, min_pattern_len := 3, top_k := 5, rank := 0, label := NULL,
                                                  hta_compat := NULL) AS TABLE
-- A rank (and label) that is not loaded is an error, as in export_kernel_sequences_overlay and critical_path, not an
-- empty result. The check is a branch of the UNION ALL so that it runs even when no occurrence is found.
WITH missing AS (
    SELECT CASE WHEN _str_arg(operator_name, '', 'frequent_kernel_sequences: operator_name') = ''
                THEN error('frequent_kernel_sequences: operator_name is required (a substring of the CPU op names, e.g. ''aten::linear'')')
                -- (0, as HTA: every occurrence counts, one that launched nothing as the op's name alone)
                WHEN _int_arg(min_pattern_len, 3, 'frequent_kernel_sequences: min_pattern_len') < 0
                THEN error(format('frequent_kernel_sequences: min_pattern_len must be at least 0, not {}', min_pattern_len))
                -- (never true: it makes _int_arg check top_k even when no occurrence reads it)
                WHEN _int_arg(top_k, 5, 'frequent_kernel_sequences: top_k') IS NULL THEN NULL
                WHEN NOT EXISTS (SELECT 1 FROM traces t WHERE t.rank = _int_arg(rank, 0, 'frequent_kernel_sequences: rank') AND (_str_arg(label, NULL, 'frequent_kernel_sequences: label') IS NULL OR t.label = _str_arg(label, NULL, 'frequent_kernel_sequences: label')))
                THEN error(CASE WHEN _str_arg(label, NULL, 'frequent_kernel_sequences: label') IS NULL
                                THEN format('frequent_kernel_sequences: no trace with rank {} is loaded ({})', _int_arg(rank, 0, 'frequent_kernel_sequences: rank'),
                                            (SELECT coalesce('ranks loaded: ' || string_agg(r::VARCHAR, ', ' ORDER BY r), 'no trace is loaded')
                                             FROM (SELECT DISTINCT t.rank AS r FROM traces t)))
                                ELSE format('frequent_kernel_sequences: no trace with label "{}" and rank {} is loaded',
                                            _str_arg(label, NULL, 'frequent_kernel_sequences: label'), _int_arg(rank, 0, 'frequent_kernel_sequences: rank')) END) END AS err
)
SELECT x.label, x.rank, x.pattern, x.count, x.gpu_kernel_duration_us, x.cpu_op_duration_us FROM (
    SELECT p.label, p.rank, p.pattern, p.count, p.gpu_kernel_duration_us, p.cpu_op_duration_us
    FROM (
        SELECT r.trace_id, r.label, r.rank, r.pattern, count(*) AS count,
               sum(r.kernel_dur) / 1000.0 AS gpu_kernel_duration_us, sum(r.root_dur) / 1000.0 AS cpu_op_duration_us,
               row_number() OVER (PARTITION BY r.trace_id ORDER BY count(*) DESC, r.pattern) AS k
        FROM _sq_kseq_roots(_hta_mode(hta_compat, 'frequent_kernel_sequences'), _str_arg(operator_name, '', 'frequent_kernel_sequences: operator_name'), _int_arg(min_pattern_len, 3, 'frequent_kernel_sequences: min_pattern_len'), _int_arg(rank, 0, 'frequent_kernel_sequences: rank'), _str_arg(label, NULL, 'frequent_kernel_sequences: label')) r
        GROUP BY r.trace_id, r.label, r.rank, r.pattern
    ) p
    -- (compat: every pattern, as HTA returns them; its top_k limits only the overlay)
    WHERE _int_arg(top_k, 5, 'frequent_kernel_sequences: top_k') <= 0 OR p.k <= _int_arg(top_k, 5, 'frequent_kernel_sequences: top_k')
       OR _hta_mode(hta_compat, 'frequent_kernel_sequences')
    UNION ALL
    SELECT NULL, NULL, NULL, NULL, NULL, NULL FROM missing WHERE err IS NOT NULL
) x
ORDER BY x.label, x.rank, x.count DESC, x.pattern;

-- @macro export_kernel_sequences_overlay(operator_name, output_dir, min_pattern_len := 3, top_k := 5, rank := 0, compress_other_kernels := true, label := NULL, hta_compat := NULL)  Writes output_dir/overlaid_<trace file name>: the trace of that rank with args.Patterns = {pattern: count} on every event of the top_k patterns of frequent_kernel_sequences (top_k 0 or less: all); with compress_other_kernels every other complete event loses its args and gets a symbol id for a name, and the "PyTorch Profiler" span the id → name dictionary (HTA get_frequent_cuda_kernel_sequences' output file; a trace without that span gets the dictionary as the top-level key tracesqlSymbols). Output is gzip when the name ends in .gz (compat: always, as HTA). No pattern (no op of that name with min_pattern_len kernels) is an error, and no file is written (as HTA). label NULL = the only trace of that rank. hta_compat: true or false overrides the session's hta_compat for this call (NULL = the session's). One row.
-- @column path           The file written
-- @column patterns       Patterns overlaid
-- @column marked_events  Events that got args.Patterns
CREATE OR REPLACE MACRO export_kernel_sequences_overlay(operator_name, output_dir, min_pattern_len := 3, top_k := 5, rank := 0,
        compress_other_kernels := true, label := NULL, hta_compat := NULL) AS TABLE
SELECT * FROM _export_kernel_sequences_overlay(_str_arg(operator_name, '', 'export_kernel_sequences_overlay: operator_name'), _str_arg(output_dir, '', 'export_kernel_sequences_overlay: output_dir'),
    _int_arg(min_pattern_len, 3, 'export_kernel_sequences_overlay: min_pattern_len'), _int_arg(top_k, 5, 'export_kernel_sequences_overlay: top_k'), _int_arg(rank, 0, 'export_kernel_sequences_overlay: rank'), _str_arg(label, '', 'export_kernel_sequences_overlay: label'),
    _bool_arg(compress_other_kernels, true, 'export_kernel_sequences_overlay: compress_other_kernels'), _hta_mode(hta_compat, 'export_kernel_sequences_overlay'));
