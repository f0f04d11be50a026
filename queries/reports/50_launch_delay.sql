-- @title Kernel launch delay
-- @about Time from the end of each launch call to the start of its GPU work, in 30 equal bins up to the
-- @about 99th percentile; the last bin also counts every longer delay.
-- @about One series per rank up to 10 ranks (the colours repeat past 10); more ranks are stacked as one.
-- @chart histogram
-- @x bin_lo_us, bin_hi_us (µs)
-- @y launches (count)
-- @series label, ranks
-- @xlabel launch delay (µs)
-- @ylabel launches
WITH d AS (SELECT label, rank, launch_delay_us AS v FROM kernel_launch_stats()),
     w AS (SELECT greatest(quantile_cont(v, 0.99), 0.001) / 30 AS w FROM d),
     n AS (SELECT count(DISTINCT (label, rank)) AS ranks FROM d),
     b AS (SELECT label, CASE WHEN n.ranks <= 10 THEN rank END AS rank, least(floor(v / w), 29) AS bin, w FROM d, w, n)
SELECT label, coalesce('rank ' || rank, 'all ranks') AS ranks, bin * w AS bin_lo_us, (bin + 1) * w AS bin_hi_us, count(*) AS launches
FROM b
GROUP BY label, b.rank, bin, w
ORDER BY label, b.rank, bin_lo_us;
