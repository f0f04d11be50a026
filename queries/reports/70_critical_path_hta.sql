-- @title Critical path by cause (HTA algorithm)
-- @about What bounds each rank's critical path over its first ProfilerStep (the whole trace when it has
-- @about none); CPCR is the share of that window the path's events cover.
-- @chart stacked_bar
-- @foreach SELECT label AS report_label, rank AS report_rank, CASE WHEN EXISTS (SELECT 1 FROM profiler_steps p WHERE p.trace_id = t.trace_id) THEN 'ProfilerStep' ELSE '' END AS report_annotation FROM traces t ORDER BY label, rank
-- @x label, rank_cpcr
-- @y duration_us (µs)
-- @series bound_by
-- @xlabel label · rank (CPCR)
-- @ylabel time on the critical path (µs)
SELECT label, format('{} (CPCR {:.2f})', rank, cpcr) AS rank_cpcr, bound_by, duration_us, pct, path_length_us, cpcr
FROM critical_path_summary(rank := getvariable('report_rank'), label := getvariable('report_label'),
                           annotation := getvariable('report_annotation'), algorithm := 'hta')
WHERE bound_by <> '';
