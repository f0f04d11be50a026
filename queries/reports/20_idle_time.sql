-- @title Idle time per stream
-- @about Why each GPU stream sat idle: waiting on the host (host_wait), on other kernels (kernel_wait), or other.
-- @chart stacked_bar
-- @x label, rank, device, stream
-- @y idle_time_us (µs)
-- @series idle_category
-- @xlabel label · rank · device · stream
-- @ylabel idle time (µs)
SELECT label, rank, device, stream, idle_category, idle_time_us
FROM idle_time_breakdown()
ORDER BY label, rank, device, stream, idle_category;
