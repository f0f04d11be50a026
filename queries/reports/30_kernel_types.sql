-- @title Kernel types
-- @about GPU busy time by kernel type, summed over ranks; overlapping types get their own slice.
-- @chart pie
-- @facet label
-- @x kernel_type
-- @y sum_us (µs)
SELECT label, kernel_type, sum_us, round(pct, 1) AS pct
FROM kernel_type_breakdown()
ORDER BY label, sum_us DESC;
