-- @title Short kernels
-- @about GPU duration of the kernels that run shorter than their launch call takes on the CPU (HTA's short
-- @about kernels: launch call ≤ 50 µs), in 30 equal bins.
-- @about One series per rank up to 10 ranks (the colours repeat past 10); more ranks are stacked as one.
-- @chart histogram
-- @x bin_lo_us, bin_hi_us (µs)
-- @y kernels (count)
-- @series label, ranks
-- @xlabel GPU duration (µs)
-- @ylabel kernels
WITH d AS (SELECT label, rank, gpu_duration_us AS v FROM kernel_launch_stats() WHERE short_kernel),
     w AS (SELECT greatest(max(v), 0.001) / 30 AS w FROM d),
     n AS (SELECT count(DISTINCT (label, rank)) AS ranks FROM d),
     b AS (SELECT label, CASE WHEN n.ranks <= 10 THEN rank END AS rank, least(floor(v / w), 29) AS bin, w FROM d, w, n)
SELECT label, coalesce('rank ' || rank, 'all ranks') AS ranks, bin * w AS bin_lo_us, (bin + 1) * w AS bin_hi_us, count(*) AS kernels
FROM b
GROUP BY label, b.rank, bin, w
ORDER BY label, b.rank, bin_lo_us;
