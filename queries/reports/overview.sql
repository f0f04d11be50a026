-- The overview printed after loading: what was loaded, what is in it, where GPU time goes.
-- Each statement is one section; its @title comment names it.

-- @title Traces
SELECT label, rank, regexp_extract(path, '[^/]+$') AS file, events,
       device_type, round((max_ts - min_ts) / 1e6, 3) AS span_ms
FROM traces ORDER BY label, rank;

-- @title Ranks missing
-- @about A trace set of several ranks holds fewer than its traces' world_size: cross-rank analyses see only these.
-- @empty hide
-- (the first 20 missing ranks and a count: a world_size of 2e8 listed in full took 99 s, 12.5 GB and a 2 GB report;
-- the first 20 lie below the set's rank count + 20)
SELECT label, ranks, world_size,
       array_to_string(list_filter(range(least(world_size, ranks + 20)), r -> NOT list_contains(held, r))[:20], ', ')
       || CASE WHEN world_size - held_below > 20 THEN format(', … and {} more', world_size - held_below - 20) ELSE '' END AS missing
FROM (SELECT label, count(DISTINCT rank) AS ranks, max(world_size) AS world_size, list(DISTINCT rank) AS held,
             len(list_filter(list(DISTINCT rank), r -> r < max(world_size))) AS held_below
      FROM traces GROUP BY label)
WHERE ranks > 1 AND ranks < world_size
ORDER BY label;

-- @title Events by class
-- (per trace set: two sets, control and test, are two jobs, not one)
SELECT t.label, e.cat_class, count(*) AS events, round(sum(e.dur) / 1e3, 1) AS total_us
FROM events e JOIN traces t USING (trace_id)
GROUP BY t.label, e.cat_class ORDER BY t.label, events DESC, e.cat_class;

-- @title Top kernels by GPU time
-- (a long name keeps its start and its end, where kernels of one family usually differ: template arguments;
-- kernels that would still read alike are named in full. Kernels on a stream, as kernel_breakdown counts them:
-- MTIA's 137 dma_request events without one made its total differ between two sections of the report.)
WITH top AS (
    SELECT t.label, k.name, count(*) AS count, sum(k.dur) AS dur,
           round(100 * sum(k.dur) / sum(sum(k.dur)) OVER (PARTITION BY t.label), 1) AS pct
    FROM kernels k JOIN traces t USING (trace_id) WHERE k.stream IS NOT NULL GROUP BY t.label, k.name
    QUALIFY row_number() OVER (PARTITION BY t.label ORDER BY sum(k.dur) DESC, k.name) <= 10),
short AS (
    SELECT *, CASE WHEN length(name) > 60 THEN name[:40] || '…' || name[-19:] ELSE name END AS short_name FROM top)
SELECT label, CASE WHEN count(*) OVER (PARTITION BY label, short_name) > 1 THEN name ELSE short_name END AS kernel,
       count, round(dur / 1e3, 1) AS total_us, pct
FROM short
ORDER BY label, dur DESC, name;
