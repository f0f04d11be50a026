-- @title Queue length over time
-- @about Operations launched but not yet started on each stream of each GPU: the longest queue in each of 200 time
-- @about buckets of the trace.
-- @chart step
-- @facet label, rank
-- @series device, stream
-- @x t_ms (ms)
-- @y queue_length (operations)
-- @xlabel time since trace start (ms)
-- @ylabel queue length
WITH q AS (
    SELECT q.label, q.rank, q.pid AS device, q.stream, q.queue_length,
           q.ts - t.min_ts AS dt, greatest(t.max_ts - t.min_ts, 1) AS span
    FROM queue_length q JOIN traces t ON t.label = q.label AND t.rank = q.rank
)
SELECT label, rank, device, stream, round(floor(dt * 200 / span) * span / 200 / 1e6, 3) AS t_ms,
       max(queue_length) AS queue_length
FROM q
GROUP BY ALL
ORDER BY label, rank, device, stream, t_ms;
