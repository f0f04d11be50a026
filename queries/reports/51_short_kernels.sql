-- @title Short kernels
-- @about GPU duration of the kernels that run shorter than their launch call takes on the CPU (HTA's short
-- @about kernels: launch call ≤ 50 µs), in 30 equal bins.
-- @chart histogram
-- @x bin_lo_us, bin_hi_us (µs)
-- @y kernels (count)
-- @series label, rank
-- @xlabel GPU duration (µs)
-- @ylabel kernels
WITH d AS (SELECT label, rank, gpu_duration_us AS v FROM kernel_launch_stats() WHERE short_kernel),
     w AS (SELECT greatest(max(v), 0.001) / 30 AS w FROM d),
     b AS (SELECT label, rank, least(floor(v / w), 29) AS bin, w FROM d, w)
SELECT label, rank, bin * w AS bin_lo_us, (bin + 1) * w AS bin_hi_us, count(*) AS kernels
FROM b
GROUP BY ALL
ORDER BY label, rank, bin_lo_us;
