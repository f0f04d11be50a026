-- Communication/computation overlap (HTA get_comm_comp_overlap): the share of communication time during
-- which computation runs too: the sweep of kernel_type_breakdown over merged COMPUTATION and COMMUNICATION
-- intervals, time with both running ÷ merged communication time. compat: rounded to 2 decimals like HTA.

-- _overlap_times_compat / _overlap_times_default: per trace, the communication time (comm_ns) and the time with
-- both computation and communication running (both_ns), in each mode. compat sums HTA's merged communication
-- intervals (negative ones included); default reads the sweep stored at load (memory kernels projected out).
CREATE OR REPLACE VIEW _overlap_times_compat AS
WITH comm AS (
    SELECT trace_id, sum(e - s) AS comm_ns FROM _bd_merged_types(false) WHERE bit = 2 GROUP BY trace_id
),
both_ AS (
    SELECT trace_id, sum(len_ns) AS both_ns FROM _bd_type_segments_compat(false) WHERE mask = 3 GROUP BY trace_id
)
SELECT trace_id, c.comm_ns, b.both_ns FROM comm c FULL JOIN both_ b USING (trace_id);

CREATE OR REPLACE VIEW _overlap_times_default AS
SELECT trace_id, sum(len_ns) FILTER (WHERE mask & 2 <> 0) AS comm_ns, sum(len_ns) FILTER (WHERE mask & 3 = 3) AS both_ns
FROM _bd_type_segments_default
GROUP BY trace_id;

-- @view comm_comp_overlap  One row per loaded rank: how much of its communication overlaps computation.
-- @column label                  Trace set
-- @column rank                   Rank
-- @column comp_comm_overlap_pct  Overlapped time / communication time · 100; NULL when no communication
--
-- The view picks the current mode's times when the query is bound (query()): the other is neither planned nor run.
CREATE OR REPLACE VIEW comm_comp_overlap AS
SELECT t.label, t.rank,
       CASE WHEN o.comm_ns > 0
            THEN _bd_hta_round(100.0 * coalesce(o.both_ns, 0) / o.comm_ns, 2, hta_compat()) END AS comp_comm_overlap_pct
FROM traces t
LEFT JOIN query(CASE WHEN hta_compat() THEN 'FROM _overlap_times_compat' ELSE 'FROM _overlap_times_default' END) o
       USING (trace_id)
ORDER BY t.label, t.rank;
