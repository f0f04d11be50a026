-- Shared pieces of the breakdown analyses (21_–25_): HTA's rounding and its top-k / "others" folding.
--
-- Interval arithmetic used throughout (HTA's merge-intervals, touching intervals merge): rows sorted by
-- (ts, ev_idx); M = running max of the ends of the rows before; a row starts a new merged interval when
-- ts > M. The length of the union of a set of intervals is Σ greatest(end − greatest(ts, M), 0): each row
-- adds only the part that sticks out past everything before it. One window pass, no self-join.

-- Every analysis macro takes hta_compat := NULL (NULL = the session variable, hta_compat()) and hands the
-- effective mode, _hta_mode(hta_compat, fn) (10_hta_frame.sql), down to the internal macros as
-- compat_mode; those read each mode's frames by name (_hta_frame_compat, _gpu_frame_compat, _hta_frame_default,
-- _gpu_frame_default; 10_hta_frame.sql), never the views that follow the variable (hta_frame, gpu_frame,
-- kernel_types).

-- _bd_hta_round(x, n, compat_mode): numpy's round (x·10ⁿ rounded half to even, then ÷10ⁿ) in compat mode, x
-- otherwise.
CREATE OR REPLACE MACRO _bd_hta_round(x, n, compat_mode) AS
    CASE WHEN compat_mode THEN round_even(x * pow(10, n), 0) / pow(10, n) ELSE x END;

-- _bd_hta_round_list(l, n, compat_mode): _bd_hta_round of every element of the list l, for a row with several
-- rounded columns. Each use of _bd_hta_round is bound, rounding included, even when the mode folds it away:
-- 0.25 ms per column, where the lambda is bound once.
CREATE OR REPLACE MACRO _bd_hta_round_list(l, n, compat_mode) AS
    CASE WHEN compat_mode THEN list_transform(l, lambda v: round_even(v * pow(10, n), 0) / pow(10, n)) ELSE l END;

-- _var_samp_exact(x): the sample variance of integers x (NULL below two), from exact HUGEINT sums rounded once.
-- DuckDB's var_samp and stddev_samp update a running mean in double precision row by row, so their last bits
-- follow the order rows arrive in: a database rebuilt by import-parquet gave 365.60924700343054 for an idle
-- interval stddev of 365.6092470034305, and 54.81326797457165 for a queue length's 54.81326797457174. The sums
-- fit a HUGEINT while every |x| < 1e15 and count × max|x| < 1e19 (then n·Σx² and (Σx)² < 1e38); past that
-- (durations of weeks in ns), var_samp.
CREATE OR REPLACE MACRO _var_samp_exact(x) AS
    CASE WHEN count(x) < 2 THEN NULL
         WHEN max(abs(x)) < 1000000000000000 AND count(x)::DOUBLE * max(abs(x)) < 1e19
             THEN (count(x)::HUGEINT * sum(x::HUGEINT * x) FILTER (WHERE abs(x) < 1000000000000000)
                   - sum(x::HUGEINT) * sum(x::HUGEINT))::DOUBLE / (count(x)::DOUBLE * (count(x) - 1))
         ELSE var_samp(x) END;

-- _bd_name_stats_compat / _bd_name_stats_default_kernel / _bd_name_stats_default_annotation(kind,
-- include_memory_kernels, use_gpu_annotation): one row per
-- (trace, group, name) of the events to aggregate with their statistics (var_us: sample variance of the
-- durations in µs, 0 for one event), in each mode:
--   kind = 'kernel':     GPU work (gpu_frame.gpu_work) of type COMPUTATION, COMMUNICATION and (optionally)
--                        MEMORY; group = kernel type.
--   kind = 'annotation': gpu_user_annotation rows (use_gpu_annotation) or user_annotation rows; group = ''.
-- The default ones (one per kind, so that the other kind's half is not bound: 0.5-1 ms) read the stored frames
-- and type each distinct name once instead of every event.
CREATE OR REPLACE MACRO _bd_name_stats_compat(kind, include_memory_kernels, use_gpu_annotation) AS TABLE
WITH src AS (
    SELECT trace_id, kernel_type AS grp, name, dur
    FROM _gpu_frame_compat
    WHERE kind = 'kernel' AND gpu_work
      AND (kernel_type IN ('COMPUTATION', 'COMMUNICATION')
           OR (kernel_type = 'MEMORY' AND coalesce(include_memory_kernels, true)))
    UNION ALL
    SELECT trace_id, '' AS grp, name, dur
    FROM _hta_frame_compat
    WHERE kind = 'annotation'
      AND cat_class = CASE WHEN coalesce(use_gpu_annotation, true) THEN 'gpu_user_annotation' ELSE 'user_annotation' END
)
SELECT trace_id, grp, name,
       sum(dur) AS total_ns, max(dur) AS max_ns, min(dur) AS min_ns,
       avg(dur / 1000.0) AS mean_us, coalesce(var_samp(dur / 1000.0), 0) AS var_us, count(*) AS n
FROM src GROUP BY ALL;

CREATE OR REPLACE MACRO _bd_name_stats_default_kernel(kind, include_memory_kernels, use_gpu_annotation) AS TABLE
WITH per_name AS (
    SELECT trace_id, name,
           sum(dur) AS total_ns, max(dur) AS max_ns, min(dur) AS min_ns,
           sum(dur) / 1000.0 / count(dur) AS mean_us, coalesce(_var_samp_exact(dur) / 1e6, 0) AS var_us, count(*) AS n
    FROM _gpu_frame_default
    WHERE kind = 'kernel' AND gpu_work
    GROUP BY ALL
),
types AS (
    SELECT n.name, arg_min(k.kernel_type, (k.priority, k.rule_pattern, k.kernel_type)) AS kernel_type
    FROM (SELECT DISTINCT name FROM per_name WHERE name IS NOT NULL) n
    JOIN _kernel_class_rules(false) k ON _kernel_rule_matches(n.name, k.like_pattern, k.pattern)
    GROUP BY n.name
)
SELECT p.trace_id, coalesce(t.kernel_type, 'OTHER') AS grp, p.name, p.total_ns, p.max_ns, p.min_ns, p.mean_us, p.var_us, p.n
FROM per_name p LEFT JOIN types t ON t.name = p.name
WHERE t.kernel_type IN ('COMPUTATION', 'COMMUNICATION')
   OR (t.kernel_type = 'MEMORY' AND coalesce(include_memory_kernels, true));

CREATE OR REPLACE MACRO _bd_name_stats_default_annotation(kind, include_memory_kernels, use_gpu_annotation) AS TABLE
SELECT trace_id, '' AS grp, name,
       sum(dur) AS total_ns, max(dur) AS max_ns, min(dur) AS min_ns,
       sum(dur) / 1000.0 / count(dur) AS mean_us, coalesce(_var_samp_exact(dur) / 1e6, 0) AS var_us, count(*) AS n
FROM _hta_frame_default
WHERE kind = 'annotation'
  AND cat_class = CASE WHEN coalesce(use_gpu_annotation, true) THEN 'gpu_user_annotation' ELSE 'user_annotation' END
GROUP BY ALL;

-- _bd_name_stats(kind, include_memory_kernels, use_gpu_annotation, compat_mode): that mode's (and, by default,
-- that kind's), picked when the query is bound (query()), so that the others are neither planned nor run.
CREATE OR REPLACE MACRO _bd_name_stats(kind, include_memory_kernels, use_gpu_annotation, compat_mode) AS TABLE
FROM query(format('FROM {}({}, {}, {})',
                  CASE WHEN compat_mode THEN '_bd_name_stats_compat' WHEN kind = 'kernel' THEN '_bd_name_stats_default_kernel'
                       ELSE '_bd_name_stats_default_annotation' END,
                  CASE kind WHEN 'kernel' THEN '''kernel''' ELSE '''annotation''' END,
                  coalesce(include_memory_kernels, true), coalesce(use_gpu_annotation, true)));

-- _bd_fold_flags(kind, ..., compat_mode): one row per (trace, group, name) of _bd_name_stats, with whether the name is
-- folded into "others".
-- Folding happens only when a group has more than num_kernels names; names matching an allowlist pattern
-- (plain substring) are never folded, nor in compat without patterns a name whose total is negative. A name
-- is folded when its position (by total time, descending) is >= num_kernels, or
--   compat:  its cumulative sum is above the duration_ratio quantile (linear) of the cumulative sums,
--            HTA 0.6.1's rule (quirk §7.3: a quantile of the cumsum values, not a share of the time);
--   default: the names before it already account for duration_ratio of the group's total time (so the
--            kept names are the fewest that together reach that share).
-- Ties in total time: by name ascending by default; compat takes HTA's order, that of sort_values(ascending=False)
-- over its groupby's names in ascending order, which pandas computes as numpy's quicksort of the reversed totals,
-- reversed back (_np_argsort): a tie keeps name order up to 16 names (numpy's insertion sort), not beyond.
CREATE OR REPLACE MACRO _bd_fold_flags(kind, num_kernels, duration_ratio, include_memory_kernels,
                                      use_gpu_annotation, allowlist_patterns, compat_mode) AS TABLE
WITH per_name AS MATERIALIZED (
    SELECT s.trace_id, t.label, t.rank, s.grp, s.name, s.total_ns, s.max_ns, s.min_ns, s.mean_us,
           sqrt(s.var_us) AS stddev_us, s.var_us, s.n
    FROM _bd_name_stats(kind, include_memory_kernels, use_gpu_annotation, compat_mode) s JOIN traces t USING (trace_id)
),
hta_order AS (
    -- (the permutation applied inside the list: names_rev[p + 1] on the unnested rows copied the list onto each,
    -- quadratic: 10k names took 14 s)
    SELECT trace_id, grp, unnest(list_transform(perm, lambda p: names_rev[p + 1])) AS name, unnest(range(n - 1, -1, -1)) AS hta_pos
    FROM (SELECT trace_id, grp, _np_argsort(list(total_ns::BIGINT ORDER BY name DESC)) AS perm,
                 list(name ORDER BY name DESC) AS names_rev, count(*) AS n
          FROM per_name WHERE compat_mode GROUP BY trace_id, grp)
),
ranked AS (
    SELECT *,
           row_number() OVER w - 1 AS pos,
           sum(total_ns) OVER w AS cum_ns,
           count(*) OVER p AS names,
           sum(total_ns) OVER p AS group_ns,
           -- HTA joins the patterns into one regex with '|': an empty list is the empty regex, which
           -- matches every name (compat); by default an empty list allows nothing. Without patterns HTA
           -- keeps the names whose total is negative (its "always false" test, sum < 0, is true for a
           -- kernel whose µs durations sum below 0, as 1 µs kernels can in compat's rounding).
           coalesce(CASE WHEN compat_mode AND allowlist_patterns IS NULL THEN total_ns < 0
                         WHEN compat_mode AND len(allowlist_patterns) = 0 THEN true
                         ELSE len(list_filter(allowlist_patterns, pat -> contains(name, pat))) > 0 END, false) AS allowed
    FROM per_name LEFT JOIN hta_order USING (trace_id, grp, name)
    -- p is w's whole partition, in w's order: one sort for both, and no self-join (DuckDB rewrites an
    -- unordered partition aggregate into a join with the input, which would compute per_name twice)
    WINDOW w AS (PARTITION BY trace_id, grp
                 ORDER BY total_ns DESC, hta_pos ASC, name ASC
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
           p AS (PARTITION BY trace_id, grp
                 ORDER BY total_ns DESC, hta_pos ASC, name ASC
                 ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
),
-- compat only: numpy's linear quantile of each group's cumulative sums (µs), step for step, so that ties with
-- a cumulative sum break exactly as in HTA: virtual index v = n·q + (1 − q) − 1, lerp from the lower neighbour
-- below 0.5 and from the upper one at or above it. An aggregate over a list, not a window, so that in default
-- mode (WHERE false) DuckDB plans nothing for it (a window over the rows stayed in the plan, 1 ms).
vindex AS (
    SELECT trace_id, grp, list(cum_ns ORDER BY pos) AS cums, count(*) AS names,
           count(*) * any_value(r) + (1 + any_value(r) * -1.0) - 1 AS v
    FROM (SELECT *, (coalesce(duration_ratio, 0.8) * 100.0) / 100.0 AS r FROM ranked WHERE compat_mode)
    GROUP BY trace_id, grp
),
bounds AS (
    SELECT *,
           CASE WHEN v >= names - 1 THEN names - 1 WHEN v < 0 THEN 0 ELSE floor(v) END AS lo,
           CASE WHEN v >= names - 1 THEN names - 1 WHEN v < 0 THEN 0 ELSE floor(v) + 1 END AS hi,
           v - floor(v) AS t
    FROM vindex
),
quantile AS (
    SELECT trace_id, grp, CASE WHEN t >= 0.5 THEN b - (b - a) * (1 - t) ELSE a + (b - a) * t END AS q_us
    FROM (SELECT *, cums[lo::BIGINT + 1] / 1000.0 AS a, cums[hi::BIGINT + 1] / 1000.0 AS b FROM bounds)
),
quantiled AS (
    SELECT * FROM ranked LEFT JOIN quantile USING (trace_id, grp)
)
SELECT trace_id, label, rank, grp, name, total_ns, max_ns, min_ns, mean_us, stddev_us, var_us, n, pos,
       names > coalesce(num_kernels, 10) AS folding,
       names > coalesce(num_kernels, 10) AND NOT allowed AND (
           pos >= coalesce(num_kernels, 10)
           OR CASE WHEN compat_mode THEN cum_ns / 1000.0 > q_us
                   -- a quotient of integers, correctly rounded, equals the DOUBLE duration_ratio exactly when
                   -- the share is that decimal (2 of 10 names' time against 0.2); ratio × total could round off it
                   WHEN group_ns = 0 THEN true
                   ELSE (cum_ns - total_ns) / group_ns >= coalesce(duration_ratio, 0.8) END
       ) AS fold
FROM quantiled;

-- _bd_fold(kind, ..., compat_mode): the aggregated table (HTA's _aggr_gpu_kernel_time): one row per kept name and one
-- "others" row per (trace, group) that folded something.
--   compat:  once a group folds, every kept name's statistics collapse to its total (sum = max = min = mean,
--            stddev 0) and the "others" statistics are taken over the folded names' totals (quirk §7.3).
--   default: kept names keep their per-event statistics; "others" gets statistics over the events folded
--            into it, pooled from the names' (sample variance: (Σ (n−1)·var + Σ n·(mean − pooled mean)²)
--            / (N − 1)), so that no event is read twice.
-- count is always the number of events aggregated into the row.
CREATE OR REPLACE MACRO _bd_fold(kind, num_kernels, duration_ratio, include_memory_kernels,
                                use_gpu_annotation, allowlist_patterns, compat_mode) AS TABLE
WITH f AS (
    SELECT * FROM _bd_fold_flags(kind, num_kernels, duration_ratio, include_memory_kernels,
                                 use_gpu_annotation, allowlist_patterns, compat_mode)
),
compat AS (
    SELECT trace_id, label, rank, grp, CASE WHEN fold THEN 'others' ELSE name END AS name,
           sum(total_ns) / 1000.0 AS sum_us,
           CASE WHEN folding THEN max(total_ns) ELSE max(max_ns) END / 1000.0 AS max_us,
           CASE WHEN folding THEN min(total_ns) ELSE min(min_ns) END / 1000.0 AS min_us,
           CASE WHEN folding THEN coalesce(stddev_samp(total_ns / 1000.0), 0) ELSE max(stddev_us) END AS stddev_us,
           CASE WHEN folding THEN avg(total_ns / 1000.0) ELSE max(mean_us) END AS mean_us,
           sum(n)::BIGINT AS count
    FROM f WHERE compat_mode
    GROUP BY trace_id, label, rank, grp, folding, 5
),
others AS (
    SELECT trace_id, label, rank, grp,
           sum(total_ns) / 1000.0 AS sum_us, max(max_ns) / 1000.0 AS max_us, min(min_ns) / 1000.0 AS min_us,
           sum(n)::BIGINT AS count,
           sum(total_ns) / 1000.0 / sum(n) AS pooled_mean,
           list({'n': n, 'mean': mean_us, 'var': var_us} ORDER BY name) AS parts  -- summed in one order
    FROM f WHERE NOT compat_mode AND fold
    GROUP BY trace_id, label, rank, grp
)
SELECT * FROM compat
UNION ALL
SELECT trace_id, label, rank, grp, 'others', sum_us, max_us, min_us,
       CASE WHEN count > 1
            THEN sqrt(list_sum(list_transform(parts, p -> (p.n - 1) * p.var + p.n * (p.mean - pooled_mean) ** 2))
                      / (count - 1))
            ELSE 0 END,
       pooled_mean, count
FROM others
UNION ALL
SELECT trace_id, label, rank, grp, name, total_ns / 1000.0, max_ns / 1000.0, min_ns / 1000.0, stddev_us, mean_us, n
FROM f WHERE NOT compat_mode AND NOT fold;
