-- @title Critical path by cause (CTDA algorithm)
-- @about The same breakdown with the CTDA-CPA algorithm (cross-thread dependencies), over the same window.
-- @chart stacked_bar
-- @foreach SELECT label AS report_label, rank AS report_rank, CASE WHEN EXISTS (SELECT 1 FROM profiler_steps p WHERE p.trace_id = t.trace_id) THEN 'ProfilerStep' ELSE '' END AS report_annotation FROM traces t ORDER BY label, rank
-- @x label, rank_cpcr
-- @y duration_us (µs)
-- @series bound_by
-- @xlabel label · rank (CPCR)
-- @ylabel time on the critical path (µs)
SELECT label, format('{} (CPCR {:.2f})', rank, cpcr) AS rank_cpcr, bound_by, duration_us, pct, path_length_us, cpcr
FROM critical_path_summary(rank := getvariable('report_rank'), label := getvariable('report_label'),
                           annotation := getvariable('report_annotation'), algorithm := 'ctda')
WHERE bound_by <> '';
