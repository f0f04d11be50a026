-- Trace diff: compare the ops and kernels of two labelled trace sets loaded into one database (HTA TraceDiff,
-- hta-spec.md §6). Load them with different labels (`tracesql --label control a/ ; .load b/ --label test`).
--
-- HTA's LabeledTrace only parses the traces: no alignment and no last-step filter. So the input here is events
-- itself (every complete event except cat Trace), not hta_frame:
--   default  exact ns durations; an event is GPU when it lives on a device (kernels, memcpy, memset, cuda_sync,
--            gpu_user_annotation, CUPTI ranges); iteration = events.step (the ProfilerStep that contains it, a GPU
--            event the step of its launch), gpu_user_annotation rows by time containment.
--   compat   HTA's parse: durations of sub-µs traces rounded inward to whole µs, GPU = raw stream arg != -1 (so a
--            gpu_user_annotation, which has no stream arg, is a CPU op, and Context Sync on stream 4294967295 a GPU
--            one), iteration by containment for stream < 0 rows (and stream 0 cpu_op), of the launch for stream > 0
--            rows, none for other stream 0 rows.
-- Defaults as HTA: rank NULL = the label's lowest rank, iteration NULL = its lowest ProfilerStep number (a trace with no
-- ProfilerStep at all: the whole trace, where HTA has no iteration to pick). A single rank
-- and a single iteration per side (HTA also accepts lists).

-- @macro sq_short_name(name)  HTA's shortened op/kernel name: drops (...) argument lists, <...> template arguments and
-- "->", keeps the last space-separated token; memory kernels (Memcpy/Memset/dma…) and names without < or ( unchanged.
CREATE OR REPLACE MACRO sq_short_name(name) AS
CASE
    WHEN name IS NULL THEN NULL
    WHEN regexp_matches(name, '^((hip)?Memcpy|(hip)?Memset|dma)') OR (NOT contains(name, '<') AND NOT contains(name, '('))
        THEN name
    ELSE string_split(
        list_reduce(string_split(replace(name, '->', ''), ''), lambda acc, c:
            CASE
                WHEN c = '>' THEN left(acc, greatest(length(acc) - strpos(reverse(acc), '<'), 0) * (strpos(acc, '<') > 0)::INT)
                WHEN c = ')' THEN left(acc, greatest(length(acc) - strpos(reverse(acc), '('), 0) * (strpos(acc, '(') > 0)::INT)
                ELSE acc || c
            END, ''),
        ' ')[-1]
END;

-- The name trace_diff compares by default: with Python object addresses (`<built-in method acquire of
-- _thread.lock object at 0x7f51…>`) written as `at 0x…`, since they change from run to run and split one op
-- into a deleted and an added row.
CREATE OR REPLACE MACRO _sq_run_name(name) AS
    CASE WHEN contains(name, ' at 0x') THEN regexp_replace(name, ' at 0x[0-9A-Fa-f]+', ' at 0x…', 'g') ELSE name END;

-- The name trace_diff compares: sq_short_name of it when short, except that by default a name whose short
-- form is empty keeps its _sq_run_name (sq_short_name drops every <…> group, so `<built-in function
-- isinstance>`, `<genexpr>` frames and the like all became one '' row); compat: as HTA, names as written.
CREATE OR REPLACE MACRO _sq_diff_name(compat, short, name) AS
    CASE WHEN short AND compat THEN sq_short_name(name)
         WHEN short THEN coalesce(nullif(_sq_run_name(sq_short_name(name)), ''), _sq_run_name(name))
         WHEN compat THEN name
         ELSE _sq_run_name(name) END;

-- _hta_step_number(name): N of a name HTA reads as ProfilerStep#N (starting with ProfilerStep, then any space, '#',
-- any space and digits), else NULL.
CREATE OR REPLACE MACRO _hta_step_number(name) AS
    CASE WHEN starts_with(name, 'ProfilerStep') THEN TRY_CAST(regexp_extract(name, '^ProfilerStep\s*#\s*(\d+)', 1) AS BIGINT) END;

-- _sq_diff_ops(compat, lbl, rnk, iter): the ops of one side, one row per event, with device (CPU/GPU) and dur_us.
CREATE OR REPLACE MACRO _sq_diff_ops(compat, lbl, rnk, iter) AS TABLE
WITH side AS (
    SELECT t.trace_id, t.label, t.rank FROM traces t
    WHERE t.label = lbl
      AND t.rank = coalesce(rnk, (SELECT min(t2.rank) FROM traces t2 WHERE t2.label = lbl))
),
it AS (
    -- the side's first ProfilerStep (compat: the label's, HTA's symbol table being the whole set's); a trace
    -- without any compares as a whole (every event is in "iteration" -1)
    SELECT coalesce(iter, CASE WHEN compat
                               THEN (SELECT min(_hta_step_number(e.name)) FROM events e JOIN traces t2 USING (trace_id)
                                     WHERE t2.label = lbl AND _hta_step_number(e.name) IS NOT NULL)
                               ELSE (SELECT min(p.step) FROM profiler_steps p JOIN side s USING (trace_id)) END, -1) AS n
),
base AS (
    SELECT e.trace_id, e.ev_idx, e.cat, e.cat_class, e.name, e.correlation, e.step, e.pid, e.tid,
           CASE WHEN compat THEN _hta_start(e.ts) ELSE e.ts END AS ts,
           CASE WHEN compat THEN _hta_end(e.ts, e.dur) - _hta_start(e.ts) ELSE e.dur END AS dur,
           CASE
               WHEN e.stream IS NOT NULL THEN e.stream
               WHEN e.cat_class IN ('sync', 'kernel', 'memcpy', 'memset', 'other', 'gpu_user_annotation')
                    AND regexp_full_match(e.args->>'stream', '-?[0-9]+(\.0*)?')
                   THEN TRY_CAST(TRY_CAST(e.args->>'stream' AS DOUBLE) AS BIGINT)
               ELSE -1
           END AS raw_stream
    FROM events e JOIN side s USING (trace_id)
    WHERE e.dur IS NOT NULL AND e.cat IS NOT NULL AND e.cat <> 'Trace'
),
-- compat: HTA's steps are every row named ProfilerStep#N, Kineto's GPU-lane copies (gpu_user_annotation) too, so
-- that where the GPU copy of a step runs into the next CPU step, the CPU events under it, later in the file, are
-- the GPU copy's step
steps AS (
    SELECT p.trace_id, p.ev_idx, p.step, p.ts, p.end_ts
    FROM profiler_steps p JOIN side s USING (trace_id)
    WHERE NOT compat
    UNION ALL
    SELECT b.trace_id, b.ev_idx, _hta_step_number(b.name), b.ts, b.ts + b.dur
    FROM base b
    WHERE compat AND _hta_step_number(b.name) IS NOT NULL
),
contained AS (
    SELECT b.trace_id, b.ev_idx, arg_max(p.step, p.ev_idx) AS step
    FROM base b JOIN steps p ON p.trace_id = b.trace_id AND b.ts >= p.ts AND b.ts < p.end_ts
    GROUP BY ALL
),
annotated AS (
    -- default mode: a GPU annotation is in the iteration of the first GPU work it covers on its lane.
    -- The GPU runs behind the CPU, so the CPU step whose range holds the annotation's start is often a
    -- later one (or none, past the last step), which split a step's annotations from its kernels.
    SELECT a.trace_id, a.ev_idx, arg_min(g.step, (g.ts, g.ev_idx)) AS step
    FROM (SELECT * FROM base WHERE NOT compat AND cat_class = 'gpu_user_annotation') a
    JOIN (SELECT * FROM base WHERE NOT compat AND cat_class IN ('kernel', 'memcpy', 'memset') AND step IS NOT NULL) g
      ON g.trace_id = a.trace_id AND g.pid = a.pid AND g.tid = a.tid AND g.ts >= a.ts AND g.ts < a.ts + a.dur
    GROUP BY ALL
),
sided AS (
    SELECT b.*, _hta_gpu_side(b.raw_stream, coalesce(b.correlation, -1), b.name) AS gpu_side
    FROM base b
),
link AS (
    SELECT g.trace_id, g.ev_idx, max(c.ev_idx) AS cpu_idx
    FROM sided g JOIN sided c ON c.trace_id = g.trace_id AND c.correlation = g.correlation
    WHERE g.gpu_side AND NOT c.gpu_side AND g.raw_stream > 0
    GROUP BY ALL
),
classified AS (
    SELECT b.trace_id, b.ev_idx, b.cat, b.name, b.dur,
           CASE WHEN compat THEN b.raw_stream <> -1
                ELSE b.cat_class IN ('kernel', 'memcpy', 'memset', 'sync', 'gpu_user_annotation', 'cupti_range') END AS is_gpu,
           CASE
               WHEN compat AND b.raw_stream > 0 THEN coalesce(lc.step, -1)
               WHEN compat AND b.raw_stream = 0 AND b.cat <> 'cpu_op' THEN NULL
               WHEN compat THEN coalesce(c.step, -1)
               WHEN b.cat_class = 'gpu_user_annotation' THEN coalesce(an.step, c.step, -1)
               ELSE coalesce(b.step, -1)
           END AS iteration
    FROM base b
    LEFT JOIN contained c ON c.trace_id = b.trace_id AND c.ev_idx = b.ev_idx
    LEFT JOIN link l ON l.trace_id = b.trace_id AND l.ev_idx = b.ev_idx
    LEFT JOIN contained lc ON lc.trace_id = l.trace_id AND lc.ev_idx = l.cpu_idx
    LEFT JOIN annotated an ON an.trace_id = b.trace_id AND an.ev_idx = b.ev_idx
)
SELECT c.*, c.dur / 1000.0 AS dur_us FROM classified c, it WHERE c.iteration = it.n;

-- _sq_diff_rank(compat, lbl, other_lbl, rnk, other_rnk): the rank compared on side lbl. Given, it is used; else in
-- compat NULL (_sq_diff_ops then takes the label's lowest rank, as HTA); else the other side's given rank, or the
-- lowest rank both sets have (NULL when they share none). Comparing each side's lowest rank compared rank 0 of one
-- run with rank 3 of the other when the second lacked ranks 0-2, and called the difference a regression.
CREATE OR REPLACE MACRO _sq_diff_rank(compat, lbl, other_lbl, rnk, other_rnk) AS
CASE WHEN rnk IS NOT NULL THEN rnk
     WHEN compat THEN NULL
     WHEN other_rnk IS NOT NULL THEN other_rnk
     ELSE (SELECT min(a.rank) FROM traces a JOIN traces b ON a.rank = b.rank WHERE a.label = lbl AND b.label = other_lbl) END;

-- _sq_diff_side_rank(hta_compat, lbl, other_lbl, rnk, other_rnk): the rank side lbl compares (_sq_diff_rank; in compat
-- with none given, the label's lowest, as _sq_diff_ops takes it). _sq_diff_has_step: whether that rank has
-- ProfilerStep#iteration (true for a NULL iteration, the side's first step).
CREATE OR REPLACE MACRO _sq_diff_side_rank(hta_compat, lbl, other_lbl, rnk, other_rnk) AS
coalesce(_sq_diff_rank(_hta_mode(hta_compat, NULL), lbl, other_lbl, rnk, other_rnk), (SELECT min(r.rank) FROM traces r WHERE r.label = lbl));

CREATE OR REPLACE MACRO _sq_diff_has_step(hta_compat, lbl, other_lbl, rnk, other_rnk, iteration) AS
iteration IS NULL OR EXISTS (SELECT 1 FROM profiler_steps p JOIN traces t USING (trace_id)
    WHERE t.label = lbl AND p.step = iteration AND t.rank = _sq_diff_side_rank(hta_compat, lbl, other_lbl, rnk, other_rnk));

-- The body, with arguments of the types it compares (trace_diff and ops_diff check them: a number as a label was
-- DuckDB's "Could not convert string 'control' to INT32", a list as a rank a CASE type error); fn, the macro
-- called (trace_diff or ops_diff), names it in the errors.
CREATE OR REPLACE MACRO _trace_diff(fn, control_label, test_label, control_rank, test_rank, control_iteration, test_iteration,
        device_type, use_short_name, hta_compat) AS TABLE
WITH sel AS (
    -- Bad arguments are errors, not an empty side (which would read as "everything added/deleted").
    SELECT CASE
               -- (error(format(..., NULL)) is error(NULL), which raises nothing: a NULL label needs its own test)
               WHEN control_label IS NULL THEN error(fn || ': control_label is required (a trace set label, see .ranks)')
               WHEN test_label IS NULL THEN error(fn || ': test_label is required (a trace set label, see .ranks)')
               WHEN upper(coalesce(device_type, 'ALL')) NOT IN ('CPU', 'GPU', 'ALL')
                   THEN error(format('{}: device_type must be CPU, GPU or ALL, not {}', fn, _quoted(device_type)))
               WHEN NOT EXISTS (SELECT 1 FROM traces t WHERE t.label = control_label)
                   THEN error(format('{}: no trace set labelled {} (control_label)', fn, _quoted(control_label)))
               WHEN NOT EXISTS (SELECT 1 FROM traces t WHERE t.label = test_label)
                   THEN error(format('{}: no trace set labelled {} (test_label)', fn, _quoted(test_label)))
               WHEN control_rank IS NOT NULL AND NOT EXISTS (SELECT 1 FROM traces t WHERE t.label = control_label AND t.rank = control_rank)
                   THEN error(format('{}: trace set {} has no rank {} (control_rank)', fn, _quoted(control_label), control_rank))
               WHEN test_rank IS NOT NULL AND NOT EXISTS (SELECT 1 FROM traces t WHERE t.label = test_label AND t.rank = test_rank)
                   THEN error(format('{}: trace set {} has no rank {} (test_rank)', fn, _quoted(test_label), test_rank))
               WHEN NOT _hta_mode(hta_compat, fn) AND control_rank IS NULL AND test_rank IS NULL
                    AND _sq_diff_rank(false, control_label, test_label, NULL, NULL) IS NULL
                   THEN error(format('{}: trace sets ''{}'' and ''{}'' have no rank in common: name control_rank and test_rank', fn, control_label, test_label))
               WHEN NOT _hta_mode(hta_compat, fn) AND control_rank IS NULL AND test_rank IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM traces t WHERE t.label = control_label AND t.rank = test_rank)
                   THEN error(format('{}: trace set {} has no rank {} (control_rank, which defaults to test_rank)', fn, _quoted(control_label), test_rank))
               WHEN NOT _hta_mode(hta_compat, fn) AND test_rank IS NULL AND control_rank IS NOT NULL
                    AND NOT EXISTS (SELECT 1 FROM traces t WHERE t.label = test_label AND t.rank = control_rank)
                   THEN error(format('{}: trace set {} has no rank {} (test_rank, which defaults to control_rank)', fn, _quoted(test_label), control_rank))
               -- the iteration of the rank compared, which another rank of the set having it does not make up for
               WHEN NOT _sq_diff_has_step(hta_compat, control_label, test_label, control_rank, test_rank, control_iteration)
                   THEN error(format('{}: rank {} of trace set {} has no ProfilerStep#{} (control_iteration)', fn,
                        _sq_diff_side_rank(hta_compat, control_label, test_label, control_rank, test_rank), _quoted(control_label), control_iteration))
               WHEN NOT _sq_diff_has_step(hta_compat, test_label, control_label, test_rank, control_rank, test_iteration)
                   THEN error(format('{}: rank {} of trace set {} has no ProfilerStep#{} (test_iteration)', fn,
                        _sq_diff_side_rank(hta_compat, test_label, control_label, test_rank, control_rank), _quoted(test_label), test_iteration))
               ELSE upper(coalesce(device_type, 'ALL'))
           END AS dev,
           coalesce(use_short_name, false) AS short
),
ctl AS (
    SELECT _sq_diff_name(_hta_mode(hta_compat, fn), sel.short, o.name) AS name, count(*) AS n, sum(o.dur) / 1000.0 AS d
    FROM _sq_diff_ops(_hta_mode(hta_compat, fn), control_label,
                      _sq_diff_rank(_hta_mode(hta_compat, fn), control_label, test_label, control_rank, test_rank), control_iteration) o, sel
    WHERE sel.dev = 'ALL' OR (sel.dev = 'GPU') = o.is_gpu
    GROUP BY 1
),
tst AS (
    SELECT _sq_diff_name(_hta_mode(hta_compat, fn), sel.short, o.name) AS name, count(*) AS n, sum(o.dur) / 1000.0 AS d
    FROM _sq_diff_ops(_hta_mode(hta_compat, fn), test_label,
                      _sq_diff_rank(_hta_mode(hta_compat, fn), test_label, control_label, test_rank, control_rank), test_iteration) o, sel
    WHERE sel.dev = 'ALL' OR (sel.dev = 'GPU') = o.is_gpu
    GROUP BY 1
)
SELECT coalesce(c.name, t.name) AS name,
       coalesce(c.n, 0) AS control_counts, coalesce(c.d, 0) AS control_total_duration_us,
       coalesce(t.n, 0) AS test_counts, coalesce(t.d, 0) AS test_total_duration_us,
       coalesce(t.n, 0) - coalesce(c.n, 0) AS diff_counts,
       coalesce(t.d, 0) - coalesce(c.d, 0) AS diff_duration_us,
       CASE WHEN coalesce(t.n, 0) > coalesce(c.n, 0) THEN '+' WHEN coalesce(t.n, 0) < coalesce(c.n, 0) THEN '-' ELSE '=' END
           AS counts_change_category
-- Events without a name are one group (joined on name, NULL never matched NULL: a deleted and an added row, even
-- for a set against itself); compat drops them, as pandas' groupby does in HTA.
FROM ctl c FULL OUTER JOIN tst t ON c.name IS NOT DISTINCT FROM t.name
WHERE NOT (_hta_mode(hta_compat, fn) AND coalesce(c.name, t.name) IS NULL)
-- compat: HTA's order (control's names sorted, then the names only the test side has, sorted); default: by name
ORDER BY _hta_mode(hta_compat, fn) AND c.n IS NULL, name;

-- @macro trace_diff(control_label, test_label, control_rank := NULL, test_rank := NULL, control_iteration := NULL, test_iteration := NULL, device_type := 'ALL', use_short_name := false, hta_compat := NULL)  One row per op/kernel name seen in either side: counts and total durations in the chosen rank and iteration of each side (HTA TraceDiff.compare_traces). A rank left NULL is the other side's rank, or the lowest rank both sets have (an error when they share none; compat: each set's lowest rank, as HTA). An iteration left NULL is that side's lowest ProfilerStep number (a trace without ProfilerStep compares as a whole). device_type: CPU, GPU or ALL. hta_compat: true or false overrides the session's hta_compat for this call (NULL = the session's).
-- @column name                       Op or kernel name (sq_short_name of it when use_short_name; Python object addresses written `at 0x…`, except in compat)
-- @column control_counts             Occurrences in the control side
-- @column control_total_duration_us  Sum of their durations, µs
-- @column test_counts                Occurrences in the test side
-- @column test_total_duration_us     Sum of their durations, µs
-- @column diff_counts                test_counts − control_counts
-- @column diff_duration_us           test_total_duration_us − control_total_duration_us, µs
-- @column counts_change_category     + (more in test), - (fewer), = (same)
CREATE OR REPLACE MACRO trace_diff(control_label, test_label, control_rank := NULL, test_rank := NULL,
        control_iteration := NULL, test_iteration := NULL, device_type := 'ALL', use_short_name := false,
        hta_compat := NULL) AS TABLE
FROM _trace_diff('trace_diff', _str_arg(control_label, NULL, 'trace_diff: control_label'), _str_arg(test_label, NULL, 'trace_diff: test_label'),
                 _int_arg(control_rank, NULL, 'trace_diff: control_rank'), _int_arg(test_rank, NULL, 'trace_diff: test_rank'),
                 _int_arg(control_iteration, NULL, 'trace_diff: control_iteration'), _int_arg(test_iteration, NULL, 'trace_diff: test_iteration'),
                 _str_arg(device_type, 'ALL', 'trace_diff: device_type'), _bool_arg(use_short_name, false, 'trace_diff: use_short_name'), hta_compat);

-- @macro ops_diff(control_label, test_label, control_rank := NULL, test_rank := NULL, control_iteration := NULL, test_iteration := NULL, device_type := 'ALL', use_short_name := false, hta_compat := NULL)  One row per op/kernel name with how its count changed from control to test (HTA TraceDiff.ops_diff). Ranks, iterations and hta_compat as in trace_diff.
-- @column category  added (absent in control), deleted (absent in test), increased, decreased, unchanged
-- @column name      Op or kernel name
CREATE OR REPLACE MACRO ops_diff(control_label, test_label, control_rank := NULL, test_rank := NULL,
        control_iteration := NULL, test_iteration := NULL, device_type := 'ALL', use_short_name := false,
        hta_compat := NULL) AS TABLE
SELECT category, name FROM (
    SELECT d.name,
           CASE WHEN d.control_counts = 0 AND d.test_counts > 0 THEN 'added'
                WHEN d.control_counts > 0 AND d.test_counts = 0 THEN 'deleted'
                WHEN d.control_counts > 0 AND d.diff_counts > 0 THEN 'increased'
                WHEN d.test_counts > 0 AND d.diff_counts < 0 THEN 'decreased'
                WHEN d.test_counts > 0 AND d.diff_counts = 0 THEN 'unchanged' END AS category
    FROM _trace_diff('ops_diff', _str_arg(control_label, NULL, 'ops_diff: control_label'), _str_arg(test_label, NULL, 'ops_diff: test_label'),
                     _int_arg(control_rank, NULL, 'ops_diff: control_rank'), _int_arg(test_rank, NULL, 'ops_diff: test_rank'),
                     _int_arg(control_iteration, NULL, 'ops_diff: control_iteration'), _int_arg(test_iteration, NULL, 'ops_diff: test_iteration'),
                     _str_arg(device_type, 'ALL', 'ops_diff: device_type'), _bool_arg(use_short_name, false, 'ops_diff: use_short_name'), hta_compat) d
)
WHERE category IS NOT NULL
ORDER BY list_position(['added', 'deleted', 'increased', 'decreased', 'unchanged'], category), name;
