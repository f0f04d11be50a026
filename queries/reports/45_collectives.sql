-- @title Waiting in collectives, by the rank that arrived last
-- @about For each rank, how long the other ranks' collective kernels waited for it: the spread of the kernel
-- @about starts of every collective it started last (collectives view, matched by process group and order).
-- @about Only trace sets with several ranks; a rank that never arrived last has no bar.
-- @chart bar
-- @empty hide
-- @x label, rank
-- @y waited_us (µs)
-- @xlabel label · rank
-- @ylabel others' wait (µs)
SELECT label, last_rank AS rank, sum(start_skew_us) AS waited_us, count(*) AS times_last
FROM collectives
WHERE ranks > 1
GROUP BY label, last_rank
ORDER BY label, rank;
