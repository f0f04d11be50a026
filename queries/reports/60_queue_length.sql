-- @title Queue length over time
-- @about Operations launched but not yet started on each stream of each GPU: in each of 200 time buckets of the
-- @about trace, the longest queue from the bucket's start, then the length left by its last change from that
-- @about change on (a burst that drains within a bucket is not drawn as lasting until the next one). Past 40
-- @about streams in all, fewer buckets (at least 20), so that every stream of every chart is drawn.
-- @chart step
-- @facet label, rank
-- @series device, stream
-- @x t_ms (ms)
-- @y queue_length (operations)
-- @xlabel time since trace start (ms)
-- @ylabel queue length
-- (a report reads at most 20,000 rows of a section: 200 buckets of 64 ranks × 4 streams were 100,000, and the
-- charts after the cut lost streams, or were not drawn, with no word said)
WITH q AS MATERIALIZED (
    SELECT q.label, q.rank, q.pid AS device, q.stream, q.queue_length, q.seq,
           q.ts - t.min_ts AS dt, greatest(t.max_ts - t.min_ts, 1) AS span
    FROM queue_length q JOIN traces t ON t.label = q.label AND t.rank = q.rank
),
n AS (
    SELECT greatest(20, least(200, 8000 // count(*))) AS buckets
    FROM (SELECT DISTINCT label, rank, device, stream FROM q)
),
b AS (
    SELECT label, rank, device, stream, floor(dt * buckets / span) * span / buckets AS bucket_dt,
           max(queue_length) AS longest, arg_max(queue_length, seq) AS last_length, arg_max(dt, seq) AS last_dt
    FROM q, n
    GROUP BY ALL
)
SELECT label, rank, device, stream, t_ms, queue_length
FROM (
    SELECT label, rank, device, stream, round(bucket_dt / 1e6, 3) AS t_ms, longest AS queue_length, 0 AS part, bucket_dt
    FROM b
    UNION ALL
    SELECT label, rank, device, stream, round(last_dt / 1e6, 3), last_length, 1, bucket_dt
    FROM b WHERE last_length <> longest
)
ORDER BY label, rank, device, stream, bucket_dt, part;
