-- @title Kernel launch delay
-- @about Time from the end of each launch call to the start of its GPU work, in 30 equal bins up to the
-- @about 99th percentile (the longest delay when that is 0); the last bin also counts every longer delay,
-- @about and then has no upper bound (bin_hi_us NULL, shown as ≥).
-- @about One series per rank up to 10 ranks (the colours repeat past 10); more ranks are stacked as one.
-- @chart histogram
-- @x bin_lo_us, bin_hi_us (µs)
-- @y launches (count)
-- @series label, ranks
-- @xlabel launch delay (µs)
-- @ylabel launches
WITH d AS (SELECT label, rank, launch_delay_us AS v FROM kernel_launch_stats()),
     -- (when 99 % of the delays are 0 the bins span them all: up to the 99th percentile they were 1 ns wide)
     w AS (SELECT greatest(coalesce(nullif(quantile_cont(v, 0.99), 0), max(v)), 0.001) / 30 AS w FROM d),
     n AS (SELECT count(DISTINCT (label, rank)) AS ranks FROM d),
     b AS (SELECT label, CASE WHEN n.ranks <= 10 THEN rank END AS rank, least(floor(v / w), 29) AS bin, w, v FROM d, w, n),
     -- the last bin is open-ended when any delay of any series lies past it (one bin, so one label, for all)
     o AS (SELECT max(v) > 30 * any_value(w) AS open FROM b)
SELECT label, coalesce('rank ' || rank, 'all ranks') AS ranks, bin * w AS bin_lo_us,
       CASE WHEN bin < 29 OR NOT o.open THEN (bin + 1) * w END AS bin_hi_us, count(*) AS launches
FROM b, o
GROUP BY label, b.rank, bin, w, o.open
ORDER BY label, b.rank, bin_lo_us;
