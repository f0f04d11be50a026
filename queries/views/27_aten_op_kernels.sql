-- ATen op → kernels and delays (HTA get_aten_op_kernels_and_delay, hta-spec.md §4.13).
--
-- Each kernel launch call is attributed to the aten:: op that wraps it (op.ts <= call.ts and op end >= call end) and
-- to its one GPU event. Per op instance, the names of the GPU events it launched, in launch order (the calls' starts;
-- compat: file order, as HTA), joined by ' -> ' make its kernel sequence; its delays are those of its first launch:
-- call start − op start (the op's launch delay)
-- and GPU start − call start (the runtime delay, the call's own duration included, as HTA). Rows: per (aten op name,
-- kernel sequence) the number of instances and the mean delays.
--
-- Default mode:
--   launch calls  the kernel launches of _ct_launch_names (cudaLaunchKernel[ExC], cuLaunchKernel[Ex], HIP's, MTIA's
--                 runFunction; not memcpy/memset) on a CPU thread, each with the GPU work the loader pairs with it
--                 (_gpu_frame_default.launch_idx: the runtime call when a driver call shares its correlation id);
--                 a call with no GPU event, or with several, is left out
--   wrapping op   the deepest aten:: op holding the call on the call's own thread (pid, tid): latest start, then
--                 earliest end, then the later in the file (the loader nests an op of equal start and end inside the
--                 earlier one: events.depth); a call outside every aten:: op of its thread is left out
--   delays        exact ns, reported as µs
--   order         per (label, rank): sort_by descending, then occurrence_count descending, aten_op_name,
--                 kernel_sequence
-- Compat mode (HTA 0.6.1), on HTA's frame (_hta_frame_compat, µs rounded inward):
--   launch calls  every row whose name matches ^(cuda.*LaunchKernel|cuLaunchKernel|runFunction), paired with the
--                 rows on a stream (stream != -1, cuda_sync included) whose index_correlation is the call's index
--   wrapping op   among the aten:: ops of every thread of the rank holding the call, the one pandas'
--                 sort_values('ts', ascending=False) puts first: the latest start, and among equal starts numpy's
--                 quicksort order (the first in frame order for up to 16 candidates; _np_argsort beyond)
--   instances     per (thread id, op name, op start), so two instances of one name starting in the same µs on one
--                 thread id are one (their kernels concatenated)
--   ranks         HTA's launch_stats list outlives its loop over the ranks (quirk): the rows of each rank also
--                 count the launches of the ranks before it in the list (NULL: ascending order), so only the first
--                 rank's rows are its own
--   means         pandas' (float64 sum / count), rounded by numpy's round(x, 3) after sorting
--   order         per (label, rank): HTA's sort_values(sort_by, ascending=False) of its groupby result (ascending
--                 (aten_op_name, kernel_sequence)): one column, numpy's quicksort of the reversed values, reversed back
--                 (equal values keep groupby order up to 16 rows, not beyond); several columns, a stable sort
--   HTA raises    (ValueError) when a call inside an aten:: op has no GPU event or several: compat leaves such a call out
--                 (cupti_profiler's launches); with no call inside an aten:: op at all (KeyError 'thread_id': AMD,
--                 Triton, CPU-only traces) compat has no rows.

-- _aok_launches_default(lbl, rl) / _aok_launches_compat(lbl, rl): one row per launch call attributed to an aten:: op
-- with one GPU event, in each mode, for label lbl (NULL: every label) and the ranks rl (NULL: every rank):
--   inst_tid, inst_key  the op instance (default: the op's ev_idx; compat: HTA's (thread id, op start) with op_name)
--   call_idx            the call (launch order within an instance: by call_idx, file order, as HTA iterates)
--   op_delay, rt_delay  call start − op start, GPU start − call start, ns
-- Both find the ops that hold a call (op.ts <= call.ts and op end >= call end) on a lane (default: the call's thread;
-- compat: its trace) with hash joins (ops, probes): each op goes into the time buckets that its span [ts, max(end, ts)
-- + 1 µs] touches, of one size per op, 2^e ns with e even, from 10, about the span's length (_aok_level), so one or
-- two buckets; each call looks in the bucket of its start at every size the lane's ops use. A holder spans the call's
-- start, so it is found, once (the extra µs covers compat's sub-µs calls, whose rounded end may precede their start
-- and whose start may then follow their holder's rounded end). (A range join on the lane ran as a hash join on the
-- lane that compared every call with every op of it; DuckDB's IEJoin on packed keys avoided that only in statements
-- without a materialized CTE, the user's included: 6.5 s on mtia_trace_single_rank, against 0.1 s.)
CREATE OR REPLACE MACRO _aok_level(ext) AS greatest(10, 2 * ceil(log2(greatest(ext, 1)) / 2))::INTEGER;

CREATE OR REPLACE MACRO _aok_launches_default(lbl, rl) AS TABLE
WITH calls AS (
    SELECT f.trace_id, f.label, f.rank, f.ev_idx, f.pid, f.tid, f.ts, f.end_ts
    FROM _hta_frame_default f JOIN _ct_launch_names() n ON n.name = f.name AND NOT n.is_memory
    WHERE f.stream = -1 AND (lbl IS NULL OR f.label = lbl) AND (rl IS NULL OR list_contains(rl, f.rank))
),
ops AS (
    SELECT trace_id, pid, tid, ev_idx, name, ts, end_ts, e, unnest(range(ts >> e, ((ts + ext) >> e) + 1)) AS bucket
    FROM (SELECT *, greatest(end_ts, ts) + 1000 - ts AS ext, _aok_level(greatest(end_ts, ts) + 1000 - ts) AS e
          FROM _hta_frame_default
          -- (a cpu_op may carry a stream arg: Triton's host ops, stream 0)
          WHERE starts_with(name, 'aten::') AND (stream = -1 OR cat_class = 'cpu_op') AND (lbl IS NULL OR label = lbl)
            AND (rl IS NULL OR list_contains(rl, rank)))
),
probes AS (
    SELECT c.trace_id, c.pid, c.tid, c.ev_idx, c.ts, c.end_ts, l.e, c.ts >> l.e AS bucket
    FROM calls c JOIN (SELECT DISTINCT trace_id, pid, tid, e FROM ops) l USING (trace_id, pid, tid)
),
-- the deepest holder on the thread: latest start, then earliest end, then the later in the file
picked AS (
    SELECT p.trace_id, p.ev_idx AS call_idx,
           arg_max({'idx': o.ev_idx, 'name': o.name, 'ts': o.ts}, {'ts': o.ts, 'end': -o.end_ts, 'idx': o.ev_idx}) AS op
    FROM probes p JOIN ops o USING (trace_id, pid, tid, e, bucket)
    WHERE o.ts <= p.ts AND o.end_ts >= p.end_ts
    GROUP BY p.trace_id, p.ev_idx
),
-- the GPU work the loader pairs with each call; a call with several GPU events (or none) is left out
gpu AS (
    SELECT g.trace_id, g.launch_idx AS call_idx, any_value(g.name) AS name, any_value(g.ts) AS ts
    FROM _gpu_frame_default g SEMI JOIN calls c ON c.trace_id = g.trace_id AND c.ev_idx = g.launch_idx
    WHERE g.gpu_work
    GROUP BY g.trace_id, g.launch_idx HAVING count(*) = 1
)
SELECT c.trace_id, c.label, c.rank, NULL::BIGINT AS inst_tid, p.op.idx AS inst_key, p.op.name AS op_name,
       c.ev_idx AS call_idx, coalesce(g.name, '') AS kernel_name,
       c.ts - p.op.ts AS op_delay, g.ts - c.ts AS rt_delay
FROM calls c
JOIN picked p ON p.trace_id = c.trace_id AND p.call_idx = c.ev_idx
JOIN gpu g ON g.trace_id = c.trace_id AND g.call_idx = c.ev_idx;

CREATE OR REPLACE MACRO _aok_launches_compat(lbl, rl) AS TABLE
WITH f AS (
    SELECT trace_id, label, rank, ev_idx, tid, name, ts, end_ts, stream, index_correlation,
           starts_with(name, 'aten::') AS is_op,
           (starts_with(name, 'cu') OR starts_with(name, 'runFunction'))
               AND regexp_matches(name, '^(?:cuda.*LaunchKernel|cuLaunchKernel|runFunction)') AS is_call
    FROM _hta_frame_compat
    WHERE (lbl IS NULL OR label = lbl) AND (rl IS NULL OR list_contains(rl, rank))
      AND (stream <> -1 OR starts_with(name, 'aten::') OR starts_with(name, 'cu') OR starts_with(name, 'runFunction'))
),
calls AS (
    SELECT trace_id, label, rank, ev_idx, ts, end_ts FROM f WHERE is_call
),
ops AS (
    SELECT trace_id, ev_idx, tid, name, ts, end_ts, e, unnest(range(ts >> e, ((ts + ext) >> e) + 1)) AS bucket
    FROM (SELECT *, greatest(end_ts, ts) + 1000 - ts AS ext, _aok_level(greatest(end_ts, ts) + 1000 - ts) AS e
          FROM f WHERE is_op)
),
probes AS (
    SELECT c.trace_id, c.ev_idx, c.ts, c.end_ts, l.e, c.ts >> l.e AS bucket
    FROM calls c JOIN (SELECT DISTINCT trace_id, e FROM ops) l USING (trace_id)
),
holders AS (
    SELECT p.trace_id, p.ev_idx AS call_idx, o.ev_idx AS op_idx, o.tid, o.name, o.ts
    FROM probes p JOIN ops o USING (trace_id, e, bucket)
    WHERE o.ts <= p.ts AND o.end_ts >= p.end_ts
),
-- sort_values('ts', ascending=False).iloc[0] over the holding ops of every thread, in frame order: the last element
-- of numpy's quicksort of the reversed starts. Up to 16 elements that is an insertion sort (stable): the latest start
-- that comes first in the frame. More (none in the reference traces) go through _np_argsort, their list sorted by
-- list_sort, which costs less than an ordered aggregate.
picked AS (
    SELECT trace_id, call_idx, count(*) AS n,
           arg_max({'idx': op_idx, 'tid': tid, 'name': name, 'ts': ts}, _run_pack(ts, -op_idx)) AS op
    FROM holders GROUP BY trace_id, call_idx
),
many AS (
    SELECT trace_id, call_idx, ops_rev[list_last(_np_argsort(list_transform(ops_rev, x -> x.ts))) + 1].op AS op
    FROM (SELECT h.trace_id, h.call_idx,
                 list_sort(list({'rev': -h.op_idx, 'ts': h.ts, 'op': {'idx': h.op_idx, 'tid': h.tid, 'name': h.name, 'ts': h.ts}})) AS ops_rev
          FROM holders h SEMI JOIN picked p ON p.trace_id = h.trace_id AND p.call_idx = h.call_idx AND p.n > 16
          GROUP BY h.trace_id, h.call_idx)
),
-- kernels[kernels.index_correlation == call.index]: exactly one, or HTA raises (the call is left out here)
gpu AS (
    SELECT g.trace_id, g.index_correlation AS call_idx, any_value(g.name) AS name, any_value(g.ts) AS ts
    FROM f g SEMI JOIN picked p ON p.trace_id = g.trace_id AND p.call_idx = g.index_correlation
    WHERE g.stream <> -1
    GROUP BY g.trace_id, g.index_correlation HAVING count(*) = 1
)
SELECT c.trace_id, c.label, c.rank, p.op.tid AS inst_tid, p.op.ts AS inst_key, p.op.name AS op_name,
       c.ev_idx AS call_idx, coalesce(g.name, '') AS kernel_name,
       c.ts - p.op.ts AS op_delay, g.ts - c.ts AS rt_delay
FROM calls c
JOIN (SELECT p.trace_id, p.call_idx, coalesce(m.op, p.op) AS op
      FROM picked p LEFT JOIN many m ON m.trace_id = p.trace_id AND m.call_idx = p.call_idx) p
  ON p.trace_id = c.trace_id AND p.call_idx = c.ev_idx
JOIN gpu g ON g.trace_id = c.trace_id AND g.call_idx = c.ev_idx;

-- _aok_sort_by(x): sort_by as a list of output column names: NULL or [] = ['occurrence_count'] (HTA's default), a
-- single name as a one-element list, HTA's names avg_aten_op_launch_delay / avg_runtime_delay taken for the _us
-- columns; anything else is an error naming the columns.
CREATE OR REPLACE MACRO _aok_sort_by(x) AS
    CASE WHEN x IS NULL THEN ['occurrence_count']
         WHEN typeof(x) NOT IN ('VARCHAR', 'VARCHAR[]', '"NULL"[]')
             THEN error(format('aten_op_kernels_and_delay: sort_by must be a column name or a list of them such as [''occurrence_count''], not {} ({})',
                               x::VARCHAR, typeof(x)))
         ELSE list_transform(
                  coalesce(nullif(from_json(CASE WHEN typeof(x) = 'VARCHAR' THEN to_json([x]) ELSE to_json(x) END, '["VARCHAR"]'), []),
                           ['occurrence_count']),
                  c -> CASE WHEN c = 'avg_aten_op_launch_delay' THEN 'avg_aten_op_launch_delay_us'
                            WHEN c = 'avg_runtime_delay' THEN 'avg_runtime_delay_us'
                            WHEN c IN ('aten_op_name', 'kernel_sequence', 'occurrence_count', 'avg_aten_op_launch_delay_us',
                                       'avg_runtime_delay_us') THEN c
                            ELSE error(format('aten_op_kernels_and_delay: sort_by: no column {} (columns: aten_op_name, kernel_sequence, occurrence_count, avg_aten_op_launch_delay_us, avg_runtime_delay_us)',
                                              coalesce('''' || c || '''', 'NULL'))) END) END;

-- _aok_rows(compat, rl, sort_cols, lbl): the result rows with pos, their order within (label, rank).
CREATE OR REPLACE MACRO _aok_rows(compat, rl, sort_cols, lbl) AS TABLE
WITH launches AS (
    SELECT * FROM query(format('FROM {}({}, {})',
                               CASE WHEN compat THEN '_aok_launches_compat' ELSE '_aok_launches_default' END,
                               coalesce('''' || replace(lbl, '''', '''''') || '''', 'NULL'),
                               coalesce(rl::VARCHAR || '::BIGINT[]', 'NULL')))
),
-- the ranks of each label in HTA's loop order (p): the list's, else ascending
sel AS (
    SELECT t.label, t.rank, coalesce(u.p, t.rank) AS p
    FROM (SELECT DISTINCT label, rank FROM traces WHERE lbl IS NULL OR label = lbl) t
    LEFT JOIN (SELECT unnest(rl) AS rank, unnest(range(1, len(rl) + 1)) AS p) u ON u.rank = t.rank
    WHERE rl IS NULL OR u.p IS NOT NULL
),
outs AS (
    SELECT label, rank, max(p) AS last_p FROM sel GROUP BY label, rank
),
-- which rank's launches make which rank's rows, q: the position of the feeding rank (compat: every rank up to the
-- last position of the output rank, a rank listed twice feeding twice; default: the rank itself)
feed AS (
    SELECT o.label, o.rank AS out_rank, s.rank AS src_rank, s.p AS q
    FROM outs o JOIN sel s ON s.label = o.label
    WHERE CASE WHEN compat THEN s.p <= o.last_p ELSE s.rank = o.rank AND s.p = o.last_p END
),
-- one row per op instance (default: one op event, trace_id and ev_idx; compat: HTA's (thread id, op name, op
-- start)) with its launches in launch order (feeding position, then call); a plain list sorted afterwards costs a
-- fifth of an ordered aggregate (string_agg(… ORDER BY …): 1.7 s for 400 k instances)
inst AS (
    SELECT label, rank, op_name, array_to_string(list_transform(ls, x -> x.kernel), ' -> ') AS kernel_sequence,
           ls[1].op_delay AS op_delay, ls[1].rt_delay AS rt_delay
    FROM (SELECT l.label, f.out_rank AS rank, l.op_name,
                 -- (op_delay orders an instance's calls by start: a trace written out of time order gave the
                 -- later launch as the first)
                 list_sort(list({'q': f.q, 'start': CASE WHEN compat THEN 0 ELSE l.op_delay END, 'idx': l.call_idx,
                                 'kernel': l.kernel_name, 'op_delay': l.op_delay, 'rt_delay': l.rt_delay})) AS ls
          FROM launches l JOIN feed f ON f.label = l.label AND f.src_rank = l.rank
          GROUP BY l.label, f.out_rank, CASE WHEN compat THEN NULL ELSE l.trace_id END, l.inst_tid, l.inst_key, l.op_name)
),
seqs AS (
    SELECT label, rank, op_name AS aten_op_name, kernel_sequence, count(*) AS occurrence_count,
           -- float64 sums of whole µs in compat (exact, as pandas'), then ÷ count
           sum(op_delay)::DOUBLE / 1000 / count(*) AS op_us, sum(rt_delay)::DOUBLE / 1000 / count(*) AS rt_us
    FROM inst GROUP BY label, rank, op_name, kernel_sequence
),
-- g: the groupby's order; sk: the sort_by columns' values as dense ranks (a sort compares nothing else)
keyed AS (
    SELECT *, row_number() OVER (PARTITION BY label, rank ORDER BY aten_op_name, kernel_sequence) - 1 AS g,
           list_transform(sort_cols, c -> CASE c WHEN 'occurrence_count' THEN r_count WHEN 'avg_aten_op_launch_delay_us' THEN r_op
                                                 WHEN 'avg_runtime_delay_us' THEN r_rt WHEN 'aten_op_name' THEN r_name
                                                 ELSE r_seq END) AS sk
    FROM (SELECT *,
                 dense_rank() OVER (PARTITION BY label, rank ORDER BY occurrence_count) AS r_count,
                 dense_rank() OVER (PARTITION BY label, rank ORDER BY op_us) AS r_op,
                 dense_rank() OVER (PARTITION BY label, rank ORDER BY rt_us) AS r_rt,
                 dense_rank() OVER (PARTITION BY label, rank ORDER BY aten_op_name) AS r_name,
                 dense_rank() OVER (PARTITION BY label, rank ORDER BY kernel_sequence) AS r_seq
          FROM seqs)
),
-- compat, one sort column: pandas' nargsort, numpy's quicksort of the reversed values, reversed back
np_order AS (
    SELECT label, rank, n - 1 - p AS g, n - 1 - i AS hta_pos
    FROM (SELECT label, rank, unnest(_np_argsort(list(sk[1] ORDER BY g DESC))) AS p, unnest(range(count(*))) AS i,
                 count(*) AS n
          FROM keyed WHERE compat AND len(sort_cols) = 1 GROUP BY label, rank)
)
SELECT k.label, k.rank, k.aten_op_name, k.kernel_sequence, k.occurrence_count,
       _bd_hta_round(k.op_us, 3, compat) AS avg_aten_op_launch_delay_us,
       _bd_hta_round(k.rt_us, 3, compat) AS avg_runtime_delay_us,
       CASE WHEN compat AND len(sort_cols) = 1 THEN n.hta_pos
            -- several columns: pandas' lexsort, stable over the groupby's order
            WHEN compat THEN row_number() OVER (PARTITION BY k.label, k.rank ORDER BY k.sk DESC, k.g) - 1
            ELSE row_number() OVER (PARTITION BY k.label, k.rank ORDER BY k.sk DESC, k.occurrence_count DESC,
                                                                          k.aten_op_name, k.kernel_sequence) - 1 END AS pos
FROM keyed k LEFT JOIN np_order n ON n.label = k.label AND n.rank = k.rank AND n.g = k.g;

-- @macro aten_op_kernels_and_delay(ranks := NULL, sort_by := NULL, label := NULL, hta_compat := NULL)  One row per (aten:: op name, sequence of GPU kernels an instance of it launched) of a rank: how many instances launched that sequence, and their mean delays from the op's start to its first launch call and from that call to its kernel's start (HTA get_aten_op_kernels_and_delay). A launch call belongs to the deepest aten:: op that holds it on its own thread (compat: on any thread of the rank, as HTA); a call with no GPU event or several (compat: where HTA raises) is left out. ranks: a list of ranks (NULL or [] = all; compat: each rank's rows also count the launches of the ranks before it in the list, HTA's quirk). sort_by: a column name or a list of them, rows sorted by them descending within (label, rank) (NULL = occurrence_count; HTA's avg_aten_op_launch_delay and avg_runtime_delay name the _us columns); ties by default by aten_op_name, kernel_sequence (compat: HTA's order). label NULL = every label. hta_compat: true or false overrides the session's hta_compat for this call (NULL = the session's).
-- @column label                        Trace set
-- @column rank                         Rank
-- @column aten_op_name                 The aten:: op
-- @column kernel_sequence              Names of the GPU kernels an instance launched, in launch order, joined by ' -> '
-- @column occurrence_count             Instances of the op that launched this sequence
-- @column avg_aten_op_launch_delay_us  Mean over them of first launch call start − op start, µs (compat: rounded to 3 decimals, as HTA)
-- @column avg_runtime_delay_us         Mean over them of first kernel start − first launch call start, µs (compat: rounded to 3 decimals)
CREATE OR REPLACE MACRO aten_op_kernels_and_delay(ranks := NULL, sort_by := NULL, label := NULL, hta_compat := NULL) AS TABLE
-- A label or listed rank that is not loaded is an error, and so is a sort_by column that does not exist; the check is
-- a branch of the UNION ALL so that it runs even when there are no rows.
WITH chk AS (
    SELECT CASE WHEN _aok_sort_by(sort_by) IS NULL THEN NULL
                WHEN _str_arg(label, NULL, 'aten_op_kernels_and_delay: label') IS NOT NULL
                     AND NOT EXISTS (SELECT 1 FROM traces t WHERE t.label = _str_arg(label, NULL, 'aten_op_kernels_and_delay: label'))
                THEN error(format('aten_op_kernels_and_delay: no trace with label "{}" is loaded ({})',
                                  _str_arg(label, NULL, 'aten_op_kernels_and_delay: label'),
                                  (SELECT coalesce('labels loaded: ' || string_agg(l, ', ' ORDER BY l), 'no trace is loaded')
                                   FROM (SELECT DISTINCT t.label AS l FROM traces t))))
                ELSE (SELECT error(format('aten_op_kernels_and_delay: ranks: no trace with {}rank {} is loaded ({})',
                                          coalesce('label "' || _str_arg(label, NULL, 'aten_op_kernels_and_delay: label') || '" and ', ''), u.x,
                                          (SELECT coalesce('ranks loaded: ' || string_agg(r::VARCHAR, ', ' ORDER BY r), 'no trace is loaded')
                                           FROM (SELECT DISTINCT t.rank AS r FROM traces t
                                                 WHERE _str_arg(label, NULL, 'aten_op_kernels_and_delay: label') IS NULL
                                                    OR t.label = _str_arg(label, NULL, 'aten_op_kernels_and_delay: label')))))
                      FROM unnest(coalesce(_int_list_arg(ranks, 'aten_op_kernels_and_delay: ranks'), [])) u(x)
                      WHERE u.x NOT IN (SELECT t.rank FROM traces t
                                        WHERE _str_arg(label, NULL, 'aten_op_kernels_and_delay: label') IS NULL
                                           OR t.label = _str_arg(label, NULL, 'aten_op_kernels_and_delay: label'))
                      LIMIT 1) END AS err
)
SELECT x.label, x.rank, x.aten_op_name, x.kernel_sequence, x.occurrence_count, x.avg_aten_op_launch_delay_us,
       x.avg_runtime_delay_us
FROM (
    SELECT * FROM _aok_rows(_hta_mode(hta_compat, 'aten_op_kernels_and_delay'),
                            _int_list_arg(ranks, 'aten_op_kernels_and_delay: ranks'), _aok_sort_by(sort_by),
                            _str_arg(label, NULL, 'aten_op_kernels_and_delay: label'))
    UNION ALL
    SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM chk WHERE err IS NOT NULL
) x
ORDER BY x.label, x.rank, x.pos;
