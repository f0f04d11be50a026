-- @title Critical-path hotspots (CTDA)
-- @about The operators that hold the most time on each rank's CTDA critical path.
-- @chart table
-- @foreach SELECT label AS report_label, rank AS report_rank, CASE WHEN EXISTS (SELECT 1 FROM profiler_steps p WHERE p.trace_id = t.trace_id) THEN 'ProfilerStep' ELSE '' END AS report_annotation FROM traces t ORDER BY label, rank
SELECT *
FROM hotspots(rank := getvariable('report_rank'), label := getvariable('report_label'),
              annotation := getvariable('report_annotation'), algorithm := 'ctda', top := 10);
