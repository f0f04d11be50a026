-- Memory bandwidth family (HTA get_memory_bw_time_series / get_memory_bw_summary): the bandwidth the trace reports
-- for each memcpy/memset (args "memory bandwidth (GB/s)") summed over the operations of one kind in flight.

-- @macro _ct_memory_kind(name)  HTA's memory sub-type of a MEMORY event name: Memset, the first 11 characters of a
-- Memcpy name (Memcpy HtoD, Memcpy DtoH, Memcpy DtoD, Memcpy PtoP, …), else Memcpy Unknown.
CREATE OR REPLACE MACRO _ct_memory_kind(name) AS
    CASE WHEN left(name, 6) = 'Memset' THEN 'Memset'
         WHEN left(name, 6) <> 'Memcpy' THEN 'Memcpy Unknown'
         ELSE left(name, 11) END;

-- _memory_ops: the memory operations of the current mode's frame, with their kind and bandwidth.
CREATE OR REPLACE VIEW _memory_ops AS
SELECT trace_id, label, rank, ev_idx, pid, ts, CASE WHEN dur = 0 THEN 1000 ELSE dur END AS dur, gpu_side,
       _ct_memory_kind(name) AS kind, memory_bw_gbps AS bw
FROM gpu_frame
WHERE kernel_type = 'MEMORY';

-- _memory_bw_compat / _memory_bw_default: memory_bw in each mode.
CREATE OR REPLACE VIEW _memory_bw_compat AS
WITH
m AS (
    SELECT m.* EXCLUDE (gpu_side), CASE WHEN r.trace_id IS NOT NULL AND NOT m.gpu_side THEN 1 ELSE 0 END AS frame_part
    FROM _memory_ops m LEFT JOIN _ct_hta_reordered r USING (trace_id)
),
c_rows AS (
    SELECT *, 0 AS k0 FROM m
    UNION ALL
    SELECT * REPLACE (ts + dur AS ts, -bw AS bw), 1 AS k0 FROM m
),
c_num AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id ORDER BY k0, frame_part, ev_idx) - 1 AS pos FROM c_rows
),
c_perm AS (
    SELECT trace_id, unnest(_np_argsort(list(ts ORDER BY pos))) AS pos, unnest(range(count(*))) AS sorted_pos
    FROM c_num GROUP BY trace_id
),
c_sorted AS (
    SELECT n.*, p.sorted_pos FROM c_num n JOIN c_perm p USING (trace_id, pos)
),
c_cum AS (
    SELECT trace_id, kind, unnest(list(sorted_pos ORDER BY sorted_pos)) AS sorted_pos,
           unnest(_cumsum(list(bw ORDER BY sorted_pos))) AS value
    FROM c_sorted GROUP BY trace_id, kind
)
SELECT s.label, s.rank, s.ts, s.pid, s.kind AS name, c.value AS memory_bw_gbps,
       row_number() OVER (PARTITION BY s.trace_id, s.kind ORDER BY s.sorted_pos) - 1 AS seq
FROM c_sorted s JOIN c_cum c USING (trace_id, kind, sorted_pos);

-- _memory_ops_in(first_trace, last_trace): _memory_ops of the default mode, for those traces only.
CREATE OR REPLACE MACRO _memory_ops_in(first_trace, last_trace) AS TABLE
SELECT f.trace_id, f.label, f.rank, f.ev_idx, f.pid, f.ts, CASE WHEN f.dur = 0 THEN 1000 ELSE f.dur END AS dur,
       _ct_memory_kind(f.name) AS kind, f.memory_bw_gbps AS bw
FROM _gpu_frame_default f JOIN _kernel_types_in(false, first_trace, last_trace) k USING (name)
WHERE f.trace_id BETWEEN first_trace AND last_trace AND k.kernel_type = 'MEMORY'
  -- a NaN bandwidth (Python's json writes one) is unknown: the operation changes no sum, as pandas skips it
  AND NOT coalesce(isnan(f.memory_bw_gbps), false);

-- _memory_bw_beyond(rank, label, ev_idx, bw): the error of a bandwidth the default series cannot sum exactly
-- (DECIMAL(38, 12) holds under 1e26; past it was DuckDB's cast error, naming no trace or event).
CREATE OR REPLACE MACRO _memory_bw_beyond(rank, label, ev_idx, bw) AS
    format('memory_bw: rank {} of trace set {}, event {}: a memory bandwidth of {} GB/s is beyond what the analysis sums (under 1e26)',
           rank, label, ev_idx, bw);

-- _memory_bw_values_in(first_trace, last_trace, summable_only): memory_bw of the default mode without seq, for
-- those traces (summable_only: the operations of a bandwidth under 1e26 only, where any other is an error) (memory_bw_summary does not read it, and
-- DuckDB does not drop an unused window: 1.6 ms). Each series' deltas sum to exactly 0 (decimal arithmetic), so
-- one running sum over all series in (trace_id, pid, kind, ts) order equals the per-series sums: DuckDB streams
-- it in its input's order, where a window partitioned by series built a segment tree of HUGEINT sums (4 ms for
-- df_index_resolver's 5,839 rows, against 1 ms). One scan of _memory_ops (unnest of start and end) instead of two.
CREATE OR REPLACE MACRO _memory_bw_values_in(first_trace, last_trace, summable_only) AS TABLE
WITH d_ts AS (
    SELECT trace_id, label, rank, pid, kind, t AS ts, sum(d) AS d
    FROM (SELECT trace_id, label, rank, pid, kind, unnest([ts, ts + dur]) AS t,
                 unnest([bw, -bw]) AS d
          FROM (SELECT * REPLACE (
                    CASE WHEN bw IS NULL OR abs(bw) < 1e26 THEN bw::DECIMAL(38, 12)
                         ELSE error(_memory_bw_beyond(rank, label, ev_idx, bw)) END AS bw)
                FROM _memory_ops_in(first_trace, last_trace)
                WHERE NOT summable_only OR bw IS NULL OR abs(bw) < 1e26))
    GROUP BY ALL
)
SELECT trace_id, label, rank, ts, pid, kind AS name,
       (sum(d) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))::DOUBLE AS memory_bw_gbps
FROM (SELECT * FROM d_ts ORDER BY trace_id, pid, kind, ts);

CREATE OR REPLACE VIEW _memory_bw_values_default AS
FROM _memory_bw_values_in(-2147483648, 2147483647, false);

-- (ts is unique within a series: the rows were grouped by it)
CREATE OR REPLACE VIEW _memory_bw_default AS
SELECT label, rank, ts, pid, name, memory_bw_gbps,
       row_number() OVER (PARTITION BY trace_id, pid, name ORDER BY ts) - 1 AS seq
FROM _memory_bw_values_default;

-- @view memory_bw  One row per change of the memory bandwidth of one kind of memory operation: an operation of
-- that kind starts (+its bandwidth) or ends (−its bandwidth). A step function: the value holds until the next row of
-- its series (rows come ordered by label, rank, pid, name and seq; compat: label, rank, name and seq, a kind's
-- series spanning the rank's GPUs as in HTA).
-- @column label           Trace set
-- @column rank            Rank
-- @column ts              Time of the change, ns
-- @column pid             GPU process (device)
-- @column name            Memory operation kind (_ct_memory_kind): Memcpy HtoD, Memcpy DtoH, Memcpy DtoD, Memset, …
-- @column memory_bw_gbps  Bandwidth of the operations of this kind in flight after the change, GB/s
-- @column seq             Position of the row in its series (0-based)
--
-- Memory operations are the stream != −1 events of kernel type MEMORY; a zero-duration one lasts 1 µs (as HTA).
-- Default mode: one series per (device, kind), one row per distinct timestamp (simultaneous changes merged, so
-- the value does not depend on tie order), sums in decimal arithmetic: each bandwidth rounded to 1e-12 GB/s,
-- then exact (no 1e-16 residues, and a series returns to exactly 0). A finer scale costs time: at
-- df_index_resolver's size, scale 15 took ~1 ms more of ~8, scale 18 ~2 ms.
-- Compat mode (HTA 0.6.1): one series per kind across devices, one row per start/end, equal timestamps in numpy's
-- quicksort order (_np_argsort), float64 running sum in that order (_cumsum), as HTA.
--
-- The view picks the current mode's series (_memory_bw_compat or _default) when the query is bound (query()):
-- the other is neither planned nor run.
CREATE OR REPLACE VIEW memory_bw AS
SELECT * FROM query(CASE WHEN hta_compat() THEN 'FROM _memory_bw_compat ORDER BY label, rank, name, seq'
                         ELSE 'FROM _memory_bw_default ORDER BY label, rank, pid, name, seq' END);

-- _memory_bw_summary_compat: memory_bw_summary of compat mode, HTA's one series per kind across the rank's
-- GPUs. _memory_bw_stats_in(first_trace, last_trace, summable_only): the default mode's statistics of those
-- traces, a series per device. One quantile_cont with a list of fractions sorts each group once; three sorted it
-- three times.
CREATE OR REPLACE VIEW _memory_bw_summary_compat AS
SELECT label, rank, device, name, count, mean, std, min, q[1] AS p25, q[2] AS p50, q[3] AS p75, max
FROM (SELECT label, rank, CASE WHEN min(pid) = max(pid) THEN min(pid) END AS device, name,
             count(*) AS count, avg(memory_bw_gbps) AS mean, stddev_samp(memory_bw_gbps) AS std,
             min(memory_bw_gbps) AS min, quantile_cont(memory_bw_gbps, [0.25, 0.5, 0.75]) AS q,
             max(memory_bw_gbps) AS max
      FROM _memory_bw_compat
      WHERE memory_bw_gbps > 0 AND NOT isnan(memory_bw_gbps) -- (pandas' describe leaves NaN out; DuckDB's NaN > 0)
      GROUP BY label, rank, name);

CREATE OR REPLACE MACRO _memory_bw_stats_in(first_trace, last_trace, summable_only) AS TABLE
SELECT trace_id, device, name, count, mean, std, min, q[1] AS p25, q[2] AS p50, q[3] AS p75, max
FROM (SELECT trace_id, pid AS device, name,
             count(*) AS count, avg(memory_bw_gbps) AS mean, stddev_samp(memory_bw_gbps) AS std,
             min(memory_bw_gbps) AS min, quantile_cont(memory_bw_gbps, [0.25, 0.5, 0.75]) AS q,
             max(memory_bw_gbps) AS max
      FROM _memory_bw_values_in(first_trace, last_trace, summable_only)
      WHERE memory_bw_gbps > 0
      GROUP BY trace_id, pid, name);

-- _memory_bw_stats_source(first_trace, last_trace): the _memory_bw_stats rows of those traces. A trace with a
-- bandwidth the series cannot sum gets one row that holds the error (count NULL, the message in name), which
-- memory_bw_summary raises when it reads the row: the load stores what it can and fails on nothing.
CREATE OR REPLACE MACRO _memory_bw_stats_source(first_trace, last_trace) AS TABLE
SELECT * FROM _memory_bw_stats_in(first_trace, last_trace, true)
WHERE trace_id NOT IN (SELECT trace_id FROM _memory_ops_in(first_trace, last_trace) WHERE abs(bw) >= 1e26)
UNION ALL
SELECT trace_id, NULL, arg_min(_memory_bw_beyond(rank, label, ev_idx, bw), ev_idx), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM _memory_ops_in(first_trace, last_trace)
WHERE abs(bw) >= 1e26
GROUP BY trace_id;

CREATE TABLE IF NOT EXISTS _memory_bw_stats (
    trace_id INTEGER, device BIGINT, name VARCHAR, count BIGINT, mean DOUBLE, std DOUBLE, min DOUBLE,
    p25 DOUBLE, p50 DOUBLE, p75 DOUBLE, max DOUBLE
);

-- @view memory_bw_summary  One row per (label, rank, device, memory kind): statistics of the memory_bw samples above 0
-- (one per change, not time-weighted, as HTA's describe(); compat: one row per kind, the rank's GPUs merged as HTA
-- merges them).
-- @column label   Trace set
-- @column rank    Rank
-- @column device  GPU (memory_bw.pid; compat: NULL when the kind's operations are on several GPUs)
-- @column name    Memory operation kind
-- @column count   Samples with bandwidth > 0
-- @column mean    Mean bandwidth, GB/s
-- @column std     Sample standard deviation, GB/s (NULL for one sample)
-- @column min     Minimum, GB/s
-- @column p25     25th percentile (linear interpolation), GB/s
-- @column p50     Median, GB/s
-- @column p75     75th percentile, GB/s
-- @column max     Maximum, GB/s
--
-- Default mode: the statistics stored at load (_memory_bw_stats, engine derivedFrameInserts) while
-- _stored_fresh() vouches for them (the 1 GB trace's sort for the quantiles took ~100 ms a query), else
-- computed again (they depend on kernel_classes, which may have changed since).
CREATE OR REPLACE VIEW memory_bw_summary AS
SELECT * FROM query(CASE WHEN hta_compat() THEN 'FROM _memory_bw_summary_compat'
                         WHEN _stored_fresh() THEN 'SELECT t.label, t.rank, s.* EXCLUDE (trace_id) FROM _memory_bw_stats s JOIN traces t USING (trace_id)
                                                    WHERE CASE WHEN s.count IS NULL THEN error(s.name) ELSE true END'
                         ELSE 'SELECT t.label, t.rank, s.* EXCLUDE (trace_id) FROM _memory_bw_stats_in(-2147483648, 2147483647, false) s JOIN traces t USING (trace_id)' END)
ORDER BY label, rank, device, name;
