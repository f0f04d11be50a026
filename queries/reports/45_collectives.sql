-- @title Waiting in collectives, by the rank that arrived last
-- @about For each rank, the longest wait it caused: the spread of the kernel starts of every collective it started
-- @about last, which the earliest rank spent waiting for it (collectives view, matched by process group, step and
-- @about order). Only trace sets with several ranks, and collectives whose ranks line up (consistent); a rank that
-- @about never arrived last has no bar.
-- @chart bar
-- @empty hide
-- @x label, rank
-- @y waited_us (µs)
-- @xlabel label · rank
-- @ylabel longest wait caused (µs)
SELECT label, last_rank AS rank, sum(start_skew_us) AS waited_us, count(*) AS times_last
FROM collectives
WHERE ranks > 1 AND consistent
GROUP BY label, last_rank
ORDER BY label, rank;
