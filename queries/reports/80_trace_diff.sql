-- @title Trace diff
-- @about With two or more trace sets loaded (--label), the ops and kernels whose total time changed most from the
-- @about first set loaded (control) to the second (test): trace_diff over the lowest rank both sets have (when they
-- @about share none, each set's lowest rank) and each side's first ProfilerStep. No rows with a single trace set.
-- @chart table
-- @foreach WITH sets AS (SELECT label, min(trace_id) AS first_id, list(DISTINCT rank) AS ranks FROM traces GROUP BY label), pair AS (SELECT list(label ORDER BY first_id)[1] AS report_control, list(label ORDER BY first_id)[2] AS report_test, list(ranks ORDER BY first_id)[1] AS cr, list(ranks ORDER BY first_id)[2] AS tr FROM sets HAVING count(*) >= 2) SELECT report_control, report_test, coalesce(list_min(list_intersect(cr, tr)), list_min(cr)) AS report_control_rank, coalesce(list_min(list_intersect(cr, tr)), list_min(tr)) AS report_test_rank FROM pair
-- (the change first, the sets compared last: ten columns, four the same on every row, put the change off the page)
SELECT name, diff_duration_us, control_total_duration_us, test_total_duration_us, control_counts, test_counts,
       format('{} rank {} → {} rank {}', getvariable('report_control'), getvariable('report_control_rank'),
              getvariable('report_test'), getvariable('report_test_rank')) AS compared
FROM trace_diff(getvariable('report_control'), getvariable('report_test'),
                control_rank := getvariable('report_control_rank'), test_rank := getvariable('report_test_rank'))
WHERE diff_duration_us <> 0 OR diff_counts <> 0
ORDER BY abs(diff_duration_us) DESC, name
LIMIT 20;
