-- @title Top kernels per type
-- @about The five longest-running kernels of each type: the bar is the mean over ranks of a kernel's total
-- @about time on the rank, the whisker spans the rank with the least to the rank with the most.
-- @chart bar
-- @facet label, kernel_type
-- @x name
-- @y mean_rank_us (µs)
-- @range min_rank_us, max_rank_us
-- @xlabel kernel
-- @ylabel total time per rank (µs)
SELECT label, kernel_type, name, count(*) AS ranks,
       min(sum_us) AS min_rank_us, avg(sum_us) AS mean_rank_us, max(sum_us) AS max_rank_us
FROM kernel_breakdown(num_kernels := 5)
WHERE name <> 'others'
GROUP BY label, kernel_type, name
ORDER BY label, kernel_type, mean_rank_us DESC, name;
