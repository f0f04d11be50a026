-- @title Waiting in collectives, by the rank that arrived last
-- @about For each rank, the wait it caused in the collectives it started last: the spread of their kernel starts,
-- @about which the earliest rank spent waiting for it (collectives view, matched by process group, step and order),
-- @about in all (total_wait_us) and in the longest one (longest_wait_us). Only trace sets with several ranks, and
-- @about collectives whose ranks line up (consistent); a rank that never arrived last has no bar.
-- @chart bar
-- @empty hide
-- @x label, rank
-- @y total_wait_us, longest_wait_us (µs)
-- @xlabel label · rank
-- @ylabel wait caused (µs)
SELECT label, last_rank AS rank, sum(start_skew_us) AS total_wait_us, max(start_skew_us) AS longest_wait_us,
       count(*) AS times_last
FROM collectives
WHERE ranks > 1 AND consistent
GROUP BY label, last_rank
ORDER BY label, rank;
