-- The overview printed after loading: what was loaded, what is in it, where GPU time goes.
-- Each statement is one section; its @title comment names it.

-- @title Traces
SELECT label, rank, regexp_extract(path, '[^/]+$') AS file, events,
       device_type, round((max_ts - min_ts) / 1e6, 3) AS span_ms
FROM traces ORDER BY label, rank;

-- @title Events by class
SELECT cat_class, count(*) AS events, round(sum(dur) / 1e3, 1) AS total_us
FROM events GROUP BY cat_class ORDER BY events DESC;

-- @title Top kernels by GPU time
SELECT CASE WHEN length(name) > 60 THEN name[:59] || '…' ELSE name END AS kernel,
       count(*) AS count, round(sum(dur) / 1e3, 1) AS total_us,
       round(100 * sum(dur) / sum(sum(dur)) OVER (), 1) AS pct
FROM kernels GROUP BY name ORDER BY sum(dur) DESC LIMIT 10;
