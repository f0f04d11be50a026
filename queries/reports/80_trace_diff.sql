-- @title Trace diff
-- @about With two or more trace sets loaded (--label), the ops and kernels whose total time changed most from the
-- @about first set loaded (control) to the second (test): trace_diff over each side's lowest rank and first
-- @about ProfilerStep. No rows with a single trace set.
-- @chart table
-- @foreach SELECT list(label ORDER BY first_id)[1] AS report_control, list(label ORDER BY first_id)[2] AS report_test FROM (SELECT label, min(trace_id) AS first_id FROM traces GROUP BY label) HAVING count(*) >= 2
SELECT getvariable('report_control') AS control, getvariable('report_test') AS test, name,
       control_counts, test_counts, control_total_duration_us, test_total_duration_us, diff_duration_us
FROM trace_diff(getvariable('report_control'), getvariable('report_test'))
WHERE diff_duration_us <> 0 OR diff_counts <> 0
ORDER BY abs(diff_duration_us) DESC, name
LIMIT 20;
