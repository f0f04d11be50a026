-- The overview printed after loading: what was loaded, what is in it, where GPU time goes.
-- Each statement is one section; its @title comment names it.

-- @title Traces
SELECT label, rank, regexp_extract(path, '[^/]+$') AS file, events,
       device_type, round((max_ts - min_ts) / 1e6, 3) AS span_ms
FROM traces ORDER BY label, rank;

-- @title Ranks missing
-- @about A trace set of several ranks holds fewer than its traces' world_size: cross-rank analyses see only these.
-- @empty hide
SELECT label, count(DISTINCT rank) AS ranks, max(world_size) AS world_size,
       array_to_string(list_filter(range(max(world_size)), r -> NOT list_contains(list(rank), r)), ', ') AS missing
FROM traces GROUP BY label
HAVING count(DISTINCT rank) > 1 AND count(DISTINCT rank) < max(world_size)
ORDER BY label;

-- @title Events by class
-- (per trace set: two sets, control and test, are two jobs, not one)
SELECT t.label, e.cat_class, count(*) AS events, round(sum(e.dur) / 1e3, 1) AS total_us
FROM events e JOIN traces t USING (trace_id)
GROUP BY t.label, e.cat_class ORDER BY t.label, events DESC, e.cat_class;

-- @title Top kernels by GPU time
-- (a long name keeps its start and its end, where kernels of one family differ: template arguments)
SELECT t.label, CASE WHEN length(k.name) > 60 THEN k.name[:40] || '…' || k.name[-19:] ELSE k.name END AS kernel,
       count(*) AS count, round(sum(k.dur) / 1e3, 1) AS total_us,
       round(100 * sum(k.dur) / sum(sum(k.dur)) OVER (PARTITION BY t.label), 1) AS pct
FROM kernels k JOIN traces t USING (trace_id) GROUP BY t.label, k.name
QUALIFY row_number() OVER (PARTITION BY t.label ORDER BY sum(k.dur) DESC, k.name) <= 10
ORDER BY t.label, sum(k.dur) DESC, k.name;
