-- @title Top kernels per type
-- @about The five longest-running kernels of each type: the bar is the mean over the ranks that ran a kernel
-- @about of its total time on the rank, the whisker spans the rank with the least to the rank with the most.
-- @chart bar
-- @facet label, kernel_type
-- @x name
-- @y mean_rank_us (µs)
-- @range min_rank_us, max_rank_us
-- @xlabel kernel
-- @ylabel total time per rank (µs)
-- Every kernel of every rank (no top-k folding: a rank's own top five would leave out the ranks where a
-- kernel ran but ranked lower), then the five per type by their mean.
SELECT label, kernel_type, name, ranks, min_rank_us, mean_rank_us, max_rank_us
FROM (SELECT label, kernel_type, name, count(*) AS ranks,
             min(sum_us) AS min_rank_us, avg(sum_us) AS mean_rank_us, max(sum_us) AS max_rank_us
      FROM kernel_breakdown(num_kernels := 2147483647, duration_ratio := 1)
      WHERE name <> 'others'
      GROUP BY label, kernel_type, name
      QUALIFY row_number() OVER (PARTITION BY label, kernel_type ORDER BY avg(sum_us) DESC, name) <= 5)
ORDER BY label, kernel_type, mean_rank_us DESC, name;
