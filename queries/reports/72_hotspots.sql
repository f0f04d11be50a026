-- @title Critical-path hotspots (CTDA)
-- @about The operators that hold the most time on each rank's CTDA critical path.
-- @chart table
-- @foreach SELECT label AS report_label, rank AS report_rank, CASE WHEN EXISTS (SELECT 1 FROM profiler_steps p WHERE p.trace_id = t.trace_id) THEN 'ProfilerStep' ELSE '' END AS report_annotation FROM traces t ORDER BY label, rank
SELECT getvariable('report_label') AS label, getvariable('report_rank') AS rank, *
FROM hotspots(rank := getvariable('report_rank'), label := getvariable('report_label'),
              annotation := getvariable('report_annotation'), top := 10);
