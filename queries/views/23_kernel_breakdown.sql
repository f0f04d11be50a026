-- GPU kernel breakdown (HTA get_gpu_kernel_breakdown).
-- Kernel types analysed: COMPUTATION (bit 1), COMMUNICATION (bit 2) and, with include_memory_kernels,
-- MEMORY (bit 4); OTHER (syncs, ...) is ignored. Each type's events are merged into disjoint intervals; a
-- sweep over all types' merged intervals labels every instant by the set of types running then, e.g.
-- "COMPUTATION overlapping COMMUNICATION", so the labels partition busy time exclusively.
-- GPU events: gpu_frame.gpu_work (compat: every stream != -1 row, as HTA).

-- _bd_merged_types(include_memory_kernels): HTA's merged intervals [s, e) per trace and analysed kernel type
-- (bit 1 COMPUTATION, 2 COMMUNICATION, 4 MEMORY), in compat mode (its only user). e < s is possible (negative
-- rounded durations).
CREATE OR REPLACE MACRO _bd_merged_types(include_memory_kernels) AS TABLE
WITH g AS (
    SELECT trace_id, ev_idx, ts, end_ts,
           CASE kernel_type WHEN 'COMPUTATION' THEN 1 WHEN 'COMMUNICATION' THEN 2 ELSE 4 END AS bit
    FROM _gpu_frame_compat
    WHERE gpu_work AND (kernel_type IN ('COMPUTATION', 'COMMUNICATION')
                        OR (kernel_type = 'MEMORY' AND coalesce(include_memory_kernels, true)))
),
starts AS (
    SELECT *, ts > max(end_ts) OVER (PARTITION BY trace_id, bit ORDER BY ts, ev_idx
                                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) IS NOT false AS new_group
    FROM g
),
grouped AS (
    SELECT *, sum(new_group::INTEGER) OVER (PARTITION BY trace_id, bit ORDER BY ts, ev_idx
                                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS grp
    FROM starts
)
SELECT trace_id, bit, min(ts) AS s, max(end_ts) AS e FROM grouped GROUP BY trace_id, bit, grp;

-- _bd_type_segments_default: busy time per trace and set of running kernel types (mask, MEMORY included): the
-- sweep stored at load (_type_segments, 11_trace_summary.sql); unless _stored_fresh() vouches for it, swept
-- again for the traces stored under other kernel_classes (_bd_type_segments_checked).
CREATE OR REPLACE VIEW _bd_type_segments_checked AS
SELECT trace_id, mask, len_ns FROM _type_segments
WHERE trace_id IN (SELECT trace_id FROM _trace_summary WHERE classes_fp = _kernel_classes_fp())
UNION ALL
SELECT trace_id, mask, len_ns FROM _type_sweep(-2147483648, 2147483647, true);

CREATE OR REPLACE VIEW _bd_type_segments_default AS
SELECT * FROM query(CASE WHEN _stored_fresh() THEN 'SELECT trace_id, mask, len_ns FROM _type_segments'
                         ELSE 'FROM _bd_type_segments_checked' END);

-- _bd_type_segments_compat(include_memory_kernels): the same in compat mode: HTA's sweep over each type's
-- merged intervals: +bit at each start, −bit at each end, mask = running sum (the same for durations >= 0;
-- exact for compat's negative ones). As in the default sweep, with s the running value after an instant and
-- d its value, the mask before it is s − d and after it s: an instant t adds +t to the mask that ends there
-- and −t to the one that starts there.
CREATE OR REPLACE MACRO _bd_type_segments_compat(include_memory_kernels) AS TABLE
WITH merged AS MATERIALIZED (
    SELECT * FROM _bd_merged_types(include_memory_kernels)
),
merged_edges AS (
    SELECT trace_id, t, sum(delta) AS d
    FROM (SELECT trace_id, s AS t, bit AS delta FROM merged
          UNION ALL
          SELECT trace_id, e AS t, -bit AS delta FROM merged)
    GROUP BY ALL
),
merged_masks AS (
    SELECT trace_id, t, s - d AS m_before, s AS m_after
    FROM (SELECT *, sum(d) OVER (PARTITION BY trace_id ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s
          FROM merged_edges)
)
SELECT trace_id, mask, sum(c)::BIGINT AS len_ns
FROM (SELECT trace_id,
             CASE WHEN side = 0 THEN m_before ELSE m_after END AS mask,
             CASE WHEN side = 0 THEN t::HUGEINT ELSE -t::HUGEINT END AS c
      FROM merged_masks, (VALUES (0), (1)) v(side)
      WHERE m_before <> m_after)
WHERE mask > 0
GROUP BY ALL;

-- _bd_type_segments(include_memory_kernels, compat_mode): busy time per trace and set of running kernel types
-- (mask), in that mode, picked when the query is bound (query()) so that the other mode is neither planned nor
-- run; without memory kernels, the default sets are projected (mask & 3).
CREATE OR REPLACE MACRO _bd_type_segments(include_memory_kernels, compat_mode) AS TABLE
WITH segs AS (
    SELECT trace_id, mask, sum(len_ns)::BIGINT AS len_ns
    FROM (SELECT trace_id, CASE WHEN coalesce(include_memory_kernels, true) THEN mask ELSE mask & 3 END AS mask, len_ns
          FROM query(CASE WHEN compat_mode
                          THEN format('FROM _bd_type_segments_compat({})', coalesce(include_memory_kernels, true))
                          ELSE 'FROM _bd_type_segments_default' END))
    WHERE mask > 0
    GROUP BY ALL
)
SELECT s.trace_id, t.label, t.rank, s.mask,
       concat_ws(' overlapping ',
                 CASE WHEN s.mask & 1 <> 0 THEN 'COMPUTATION' END,
                 CASE WHEN s.mask & 2 <> 0 THEN 'COMMUNICATION' END,
                 CASE WHEN s.mask & 4 <> 0 THEN 'MEMORY' END) AS kernel_type,
       s.len_ns
FROM segs s JOIN traces t USING (trace_id)
WHERE s.len_ns > 0;

-- @macro kernel_type_breakdown(include_memory_kernels := true, hta_compat := NULL)  GPU busy time by exclusive
-- kernel-type label, summed over the ranks of each trace set (HTA's kernel_type_df). include_memory_kernels:
-- memcpy and memset count as MEMORY kernels (false: they are left out, as HTA's flag). hta_compat: true or false
-- overrides the session's hta_compat for this call (NULL = the session's).
-- @column label        Trace set
-- @column kernel_type  COMPUTATION, COMMUNICATION, MEMORY or "A overlapping B[ overlapping C]"
-- @column sum_us       Time with exactly these types running, summed over ranks, µs
-- @column pct          Share of the label's time with a COMPUTATION, COMMUNICATION or (with include_memory_kernels) MEMORY kernel running: OTHER work (MTIA pe_exe, syncs) is not counted, as in HTA, so this total can be below temporal_breakdown's busy time (compat: rounded to 1 decimal)
-- s is read twice (its rows and the label totals), so DuckDB computes it once. A stored macro loses AS MATERIALIZED
-- (duckdb_functions().macro_definition shows the CTE without it), and a window sum over s PARTITION BY label is
-- rewritten into a join of s with its own aggregate, which planned and ran the whole sweep twice (12 ms against
-- 7 ms on df_index_resolver).
CREATE OR REPLACE MACRO kernel_type_breakdown(include_memory_kernels := true, hta_compat := NULL) AS TABLE
WITH s AS (
    SELECT label, kernel_type, sum(len_ns) / 1000.0 AS sum_us
    FROM _bd_type_segments(TRY_CAST(include_memory_kernels AS BOOLEAN), _hta_mode(hta_compat, 'kernel_type_breakdown')) GROUP BY label, kernel_type
),
totals AS (
    SELECT label, sum(sum_us) AS total_us FROM s GROUP BY label
)
SELECT s.label, s.kernel_type, s.sum_us,
       _bd_hta_round(100 * s.sum_us / t.total_us, 1, _hta_mode(hta_compat, 'kernel_type_breakdown')) AS pct
FROM s JOIN totals t ON t.label IS NOT DISTINCT FROM s.label,
     (SELECT _bool_check(include_memory_kernels, 'kernel_type_breakdown: include_memory_kernels') AS args_ok) args_check
WHERE args_check.args_ok
ORDER BY s.label, s.sum_us DESC, s.kernel_type;

-- @macro kernel_type_breakdown_by_rank(include_memory_kernels := true, hta_compat := NULL)  kernel_type_breakdown
-- per rank (hta_compat as there).
-- @column label        Trace set
-- @column rank         Rank
-- @column kernel_type  COMPUTATION, COMMUNICATION, MEMORY or "A overlapping B[ overlapping C]"
-- @column sum_us       Time with exactly these types running on the rank, µs
-- @column pct          Share of the rank's time with a COMPUTATION, COMMUNICATION or (with include_memory_kernels) MEMORY kernel running (OTHER work is not counted, as in HTA; compat: rounded to 1 decimal)
CREATE OR REPLACE MACRO kernel_type_breakdown_by_rank(include_memory_kernels := true, hta_compat := NULL) AS TABLE
-- read twice, as in kernel_type_breakdown, so that the segments are computed once
WITH s AS (
    SELECT * FROM _bd_type_segments(TRY_CAST(include_memory_kernels AS BOOLEAN), _hta_mode(hta_compat, 'kernel_type_breakdown_by_rank'))
),
totals AS (
    SELECT trace_id, sum(len_ns) AS total_ns FROM s GROUP BY trace_id
)
SELECT s.label, s.rank, s.kernel_type, s.len_ns / 1000.0 AS sum_us,
       _bd_hta_round(100 * s.len_ns / t.total_ns, 1, _hta_mode(hta_compat, 'kernel_type_breakdown_by_rank')) AS pct
FROM s JOIN totals t USING (trace_id),
     (SELECT _bool_check(include_memory_kernels, 'kernel_type_breakdown_by_rank: include_memory_kernels') AS args_ok) args_check
WHERE args_check.args_ok
ORDER BY s.label, s.rank, sum_us DESC, s.kernel_type;

-- @macro kernel_breakdown(num_kernels := 10, duration_ratio := 0.8, include_memory_kernels := true, hta_compat := NULL)
-- Time per kernel name, per rank and kernel type (COMPUTATION, COMMUNICATION, MEMORY), the tail folded into "others"
-- (HTA's kernel_df); include_memory_kernels: memcpy and memset are the MEMORY type (false: left out). A type with more than num_kernels names keeps the top names by total time: at most
-- num_kernels, and (default) only as many as needed to cover duration_ratio of the type's time, or (compat)
-- those whose cumulative sum is not above the duration_ratio quantile of the cumulative sums. Default mode
-- keeps per-launch statistics for every row; compat reproduces HTA's collapse (a kept kernel's max = min =
-- mean = its total, stddev 0; "others" statistics over the folded kernels' totals). hta_compat: true or false
-- overrides the session's hta_compat for this call (NULL = the session's).
-- @column label        Trace set
-- @column name         Kernel name, or others
-- @column kernel_type  COMPUTATION, COMMUNICATION or MEMORY
-- @column rank         Rank
-- @column sum_us       Total duration, µs
-- @column max_us       Longest launch, µs
-- @column min_us       Shortest launch, µs
-- @column stddev_us    Sample standard deviation of the durations, µs (0 for one launch)
-- @column mean_us      Mean duration, µs
-- @column count        Launches aggregated into the row
CREATE OR REPLACE MACRO kernel_breakdown(num_kernels := 10, duration_ratio := 0.8, include_memory_kernels := true,
                                         hta_compat := NULL) AS TABLE
SELECT label, name, grp AS kernel_type, rank, sum_us, max_us, min_us, stddev_us, mean_us, count
FROM _bd_fold('kernel', TRY_CAST(num_kernels AS DOUBLE), TRY_CAST(duration_ratio AS DOUBLE), TRY_CAST(include_memory_kernels AS BOOLEAN), true, NULL, _hta_mode(hta_compat, 'kernel_breakdown')),
     (SELECT _num_check(TRY_CAST(num_kernels AS DOUBLE) >= 0 AND TRY_CAST(num_kernels AS DOUBLE) = trunc(TRY_CAST(num_kernels AS DOUBLE)), 'kernel_breakdown: num_kernels', num_kernels, 'an integer >= 0')
            AND _num_check(TRY_CAST(duration_ratio AS DOUBLE) BETWEEN 0 AND 1, 'kernel_breakdown: duration_ratio', duration_ratio, 'between 0 and 1')
            AND _bool_check(include_memory_kernels, 'kernel_breakdown: include_memory_kernels')
            AS args_ok) args_check
WHERE args_check.args_ok
ORDER BY label, kernel_type, name, rank;

-- @macro kernel_duration_distribution(num_kernels := 10, duration_ratio := 0.8, include_memory_kernels := true, hta_compat := NULL)
-- Across-ranks distribution of the top kernels (HTA's per-kernel bar charts): for every kernel name that
-- kernel_breakdown keeps on some rank, its real launch statistics on every rank where it ran. hta_compat: true
-- or false overrides the session's hta_compat for this call (NULL = the session's).
-- @column label        Trace set
-- @column kernel_type  COMPUTATION, COMMUNICATION or MEMORY
-- @column name         Kernel name
-- @column rank         Rank
-- @column count        Launches
-- @column min_us       Shortest launch, µs
-- @column mean_us      Mean duration, µs
-- @column max_us       Longest launch, µs
-- @column stddev_us    Sample standard deviation, µs (0 for one launch)
-- @column sum_us       Total duration, µs
CREATE OR REPLACE MACRO kernel_duration_distribution(num_kernels := 10, duration_ratio := 0.8, include_memory_kernels := true,
                                                     hta_compat := NULL) AS TABLE
WITH f AS (
    SELECT * FROM _bd_fold_flags('kernel', TRY_CAST(num_kernels AS DOUBLE), TRY_CAST(duration_ratio AS DOUBLE), TRY_CAST(include_memory_kernels AS BOOLEAN), true, NULL,
                                 _hta_mode(hta_compat, 'kernel_duration_distribution'))
),
top AS (
    SELECT DISTINCT label, grp, name FROM f WHERE NOT fold
)
SELECT f.label, f.grp AS kernel_type, f.name, f.rank, f.n AS count, f.min_ns / 1000.0 AS min_us, f.mean_us,
       f.max_ns / 1000.0 AS max_us, f.stddev_us, f.total_ns / 1000.0 AS sum_us
FROM f JOIN top ON top.label = f.label AND top.grp = f.grp AND top.name IS NOT DISTINCT FROM f.name,
     (SELECT _num_check(TRY_CAST(num_kernels AS DOUBLE) >= 0 AND TRY_CAST(num_kernels AS DOUBLE) = trunc(TRY_CAST(num_kernels AS DOUBLE)), 'kernel_duration_distribution: num_kernels', num_kernels, 'an integer >= 0')
            AND _num_check(TRY_CAST(duration_ratio AS DOUBLE) BETWEEN 0 AND 1, 'kernel_duration_distribution: duration_ratio', duration_ratio, 'between 0 and 1')
            AND _bool_check(include_memory_kernels, 'kernel_duration_distribution: include_memory_kernels')
            AS args_ok) args_check
WHERE args_check.args_ok
ORDER BY f.label, kernel_type, f.name, f.rank;
