-- User-annotation breakdown and kernel attribution (HTA get_gpu_user_annotation_breakdown and
-- get_gpu_kernels_with_user_annotations).

-- @macro user_annotation_breakdown(use_gpu_annotation := true, num_kernels := 1000, duration_ratio := 0.8, allowlist_patterns := NULL, hta_compat := NULL)
-- Time per annotation name and rank: gpu_user_annotation ranges (use_gpu_annotation) or CPU user_annotation
-- ranges, the tail folded into "others" exactly like kernel_breakdown; names containing any of
-- allowlist_patterns (a list of plain substrings) are never folded. hta_compat: true or false overrides the
-- session's hta_compat for this call (NULL = the session's).
-- @column label      Trace set
-- @column name       Annotation name, or others
-- @column rank       Rank
-- @column sum_us     Total duration, µs
-- @column max_us     Longest range, µs
-- @column min_us     Shortest range, µs
-- @column stddev_us  Sample standard deviation, µs (0 for one range)
-- @column mean_us    Mean duration, µs
-- @column count      Ranges aggregated into the row
CREATE OR REPLACE MACRO user_annotation_breakdown(use_gpu_annotation := true, num_kernels := 1000, duration_ratio := 0.8,
                                                  allowlist_patterns := NULL, hta_compat := NULL) AS TABLE
SELECT label, name, rank, sum_us, max_us, min_us, stddev_us, mean_us, count
FROM _bd_fold('annotation', coalesce(TRY_CAST(num_kernels AS DOUBLE), 1000), TRY_CAST(duration_ratio AS DOUBLE), true, TRY_CAST(use_gpu_annotation AS BOOLEAN),
              _str_list_arg(allowlist_patterns, 'user_annotation_breakdown: allowlist_patterns'), _hta_mode(hta_compat, 'user_annotation_breakdown')),
     (SELECT _num_check(TRY_CAST(num_kernels AS DOUBLE) >= 0 AND TRY_CAST(num_kernels AS DOUBLE) = trunc(TRY_CAST(num_kernels AS DOUBLE)), 'user_annotation_breakdown: num_kernels', num_kernels, 'an integer >= 0')
            AND _num_check(TRY_CAST(duration_ratio AS DOUBLE) BETWEEN 0 AND 1, 'user_annotation_breakdown: duration_ratio', duration_ratio, 'between 0 and 1')
            AND _bool_check(use_gpu_annotation, 'user_annotation_breakdown: use_gpu_annotation')
            -- checked here too, where it runs without rows to fold (a bad list passed where there were none)
            AND coalesce(len(_str_list_arg(allowlist_patterns, 'user_annotation_breakdown: allowlist_patterns')), 0) >= 0
            AS args_ok) args_check
WHERE args_check.args_ok
ORDER BY label, rank, name;

-- @view gpu_kernels_with_annotations  One row per GPU event with the leaf gpu_user_annotation covering it: among
-- the annotations on the same GPU lane (pid, tid) whose [ts, end) overlaps the event's [ts, end) (a zero-length
-- event's: those holding its instant; a zero-length annotation holds none; compat: HTA's overlap, none at an
-- annotation's start), the shortest
-- (ties: the later start, then the later event; compat: HTA's order, the last in the file up to 16 annotations). GPU events are the work temporal_breakdown counts: kernels, memcpy
-- and memset on a stream (hta_frame.gpu_work), with or without a correlation id; no cuda_sync record. Compat
-- (HTA 0.6.1): HTA's GPU side (hta_frame.gpu_side), so Stream Sync, Event Sync, Context Sync and Stream Wait
-- Event records are rows and work without a correlation id is not.
-- @column label                Trace set
-- @column rank                 Rank
-- @column ev_idx               The GPU event
-- @column name                 Its name
-- @column cat                  Its category
-- @column pid                  Process id (GPU device lane)
-- @column tid                  Thread id (stream lane)
-- @column stream               Stream
-- @column ts                   Start, ns
-- @column dur                  Duration, ns
-- @column kernel_type          COMPUTATION, COMMUNICATION, MEMORY or OTHER
-- @column annotation_ev_idx    ev_idx of the leaf gpu_user_annotation, NULL when none covers the event
-- @column annotation_name      Its name
CREATE OR REPLACE VIEW gpu_kernels_with_annotations AS
WITH k AS MATERIALIZED (
    SELECT f.trace_id, f.label, f.rank, f.ev_idx, f.name, f.cat, f.pid, f.tid, f.stream, f.ts, f.dur, f.end_ts,
           coalesce(kt.kernel_type, 'OTHER') AS kernel_type
    FROM hta_frame f LEFT JOIN kernel_types kt USING (name)
    -- default: GPU work, correlated or not (the annotation is found by overlap on the lane, not by launch);
    -- compat: HTA's GPU side, cuda_sync records included, uncorrelated work left out
    WHERE CASE WHEN hta_compat() THEN f.gpu_side ELSE f.gpu_work END
),
a AS (
    SELECT trace_id, pid, tid, ev_idx, name, ts, end_ts, dur FROM hta_frame WHERE cat_class = 'gpu_user_annotation'
),
-- compat: HTA labels the GPU events annotation by annotation in sort_values("dur", ascending=False) order, the last
-- label staying: the shortest wins, and among equal ones the last in that order, which pandas computes as numpy's
-- quicksort of the reversed durations, reversed back (_np_argsort): up to 16 annotations, the last in the file
hta_order AS (
    -- (permuted inside the list, as _bd_fold_flags' hta_order: 10k annotations took 6.7 s)
    SELECT trace_id, unnest(list_transform(perm, lambda p: evs_rev[p + 1])) AS ev_idx, unnest(range(n - 1, -1, -1)) AS hta_pos
    FROM (SELECT trace_id, _np_argsort(list(dur ORDER BY ev_idx DESC)) AS perm,
                 list(ev_idx ORDER BY ev_idx DESC) AS evs_rev, count(*) AS n
          FROM a WHERE hta_compat() GROUP BY trace_id)
),
-- each annotation's rank among those over one event, lowest first (joined per annotation, not per overlapping pair);
-- compat: HTA labels lane by lane, in the order of each lane's first annotation, so the last label written is that
-- of the latest lane, then the latest annotation in it
ranked AS (
    SELECT a.*, CASE WHEN o.hta_pos IS NULL THEN {'dur': a.dur, 'ts': -a.ts, 'idx': -a.ev_idx}
                     ELSE {'dur': -min(o.hta_pos) OVER (PARTITION BY a.trace_id, a.pid, a.tid), 'ts': -o.hta_pos, 'idx': 0} END AS pick
    FROM a LEFT JOIN hta_order o USING (trace_id, ev_idx)
),
-- the lanes whose annotations label each event: its own; compat, every lane holding an event of the very same
-- [ts, end) (HTA writes a label through the events' interval index, and .loc with an interval selects every event
-- of that interval, on any stream or GPU)
lanes AS (
    SELECT trace_id, ev_idx, ts, end_ts, pid, tid FROM k WHERE NOT hta_compat()
    UNION ALL
    SELECT DISTINCT k.trace_id, k.ev_idx, k.ts, k.end_ts, o.pid, o.tid
    FROM k JOIN k o ON o.trace_id = k.trace_id AND o.ts = k.ts AND o.end_ts = k.end_ts
    WHERE hta_compat()
),
best AS (
    SELECT l.trace_id, l.ev_idx, arg_min({'idx': a.ev_idx, 'name': a.name}, a.pick) AS ann
    -- a zero-length event lies in the annotations holding its instant: [50, 60) holds one at 50 (HTA's interval
    -- overlap finds none there, so the event at an annotation's start took the enclosing one: compat keeps that)
    FROM lanes l JOIN ranked a ON a.trace_id = l.trace_id AND a.pid = l.pid AND a.tid = l.tid
                              AND a.ts < CASE WHEN l.end_ts > l.ts OR hta_compat() THEN l.end_ts ELSE l.ts + 1 END
                              AND l.ts < a.end_ts
                              -- a zero-length annotation holds no time (r77 #2: a marker inside a kernel named it;
                              -- HTA's overlap test finds it there, and compat keeps that)
                              AND (a.end_ts > a.ts OR hta_compat())
    GROUP BY l.trace_id, l.ev_idx
)
SELECT k.label, k.rank, k.ev_idx, k.name, k.cat, k.pid, k.tid, k.stream, k.ts, k.dur, k.kernel_type,
       b.ann.idx AS annotation_ev_idx, b.ann.name AS annotation_name
FROM k LEFT JOIN best b ON b.trace_id = k.trace_id AND b.ev_idx = k.ev_idx
ORDER BY k.label, k.rank, k.ts, k.ev_idx;
