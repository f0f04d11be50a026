-- @title Kernel launch delay
-- @about Time from the end of each launch call to the start of its GPU work, in 30 equal bins up to the
-- @about 99th percentile; the last bin also counts every longer delay.
-- @chart histogram
-- @x bin_lo_us, bin_hi_us (µs)
-- @y launches (count)
-- @series label, rank
-- @xlabel launch delay (µs)
-- @ylabel launches
WITH d AS (SELECT label, rank, launch_delay_us AS v FROM kernel_launch_stats()),
     w AS (SELECT greatest(quantile_cont(v, 0.99), 0.001) / 30 AS w FROM d),
     b AS (SELECT label, rank, least(floor(v / w), 29) AS bin, w FROM d, w)
SELECT label, rank, bin * w AS bin_lo_us, (bin + 1) * w AS bin_hi_us, count(*) AS launches
FROM b
GROUP BY ALL
ORDER BY label, rank, bin_lo_us;
