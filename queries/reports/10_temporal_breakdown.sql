-- @title Temporal breakdown per rank
-- @about Where each rank's GPU time goes, from its first kernel to its last: idle, computation, and busy
-- @about without computation (communication, memory copies).
-- @chart stacked_bar
-- @x label, rank
-- @y idle_time_us, compute_time_us, non_compute_time_us (µs)
-- @xlabel label · rank
-- @ylabel GPU time (µs)
SELECT label, rank, idle_time_us, compute_time_us, non_compute_time_us
FROM temporal_breakdown
ORDER BY label, rank;
