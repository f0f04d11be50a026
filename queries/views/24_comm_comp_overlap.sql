-- Communication/computation overlap (HTA get_comm_comp_overlap): the share of communication time during
-- which computation runs too: the sweep of kernel_type_breakdown over merged COMPUTATION and COMMUNICATION
-- intervals, time with both running ÷ merged communication time. compat: rounded to 2 decimals like HTA.

-- @view comm_comp_overlap  One row per loaded rank: how much of its communication overlaps computation.
-- @column label                  Trace set
-- @column rank                   Rank
-- @column comp_comm_overlap_pct  Overlapped time / communication time · 100; NULL when no communication
CREATE OR REPLACE VIEW comm_comp_overlap AS
WITH seg AS MATERIALIZED (
    SELECT trace_id, mask, len_ns FROM _bd_type_segments(false)
),
-- communication time: compat sums HTA's merged intervals (negative ones included), default the sweep.
comm AS (
    SELECT trace_id, sum(e - s) AS comm_ns FROM _bd_merged_types(false) WHERE hta_compat() AND bit = 2 GROUP BY trace_id
    UNION ALL
    SELECT trace_id, sum(len_ns) FROM seg WHERE NOT hta_compat() AND mask & 2 <> 0 GROUP BY trace_id
),
both_ AS (
    SELECT trace_id, sum(len_ns) AS both_ns FROM seg WHERE mask = 3 GROUP BY trace_id
)
SELECT t.label, t.rank,
       CASE WHEN c.comm_ns > 0
            THEN _bd_hta_round(100.0 * coalesce(b.both_ns, 0) / c.comm_ns, 2) END AS comp_comm_overlap_pct
FROM traces t LEFT JOIN comm c USING (trace_id) LEFT JOIN both_ b USING (trace_id)
ORDER BY t.label, t.rank;
