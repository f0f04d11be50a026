-- Kernel launch statistics (HTA get_cuda_kernel_launch_stats); the launch-name vocabulary, _ct_launch_names,
-- is in 10_hta_frame.sql (the stored GPU frame pairs GPU events with their launch calls at load).

-- @macro kernel_launch_stats(runtime_cutoff := 50, launch_delay_cutoff := 100, include_memory_events := true, ranks := NULL, hta_compat := NULL)  One row per (launch call, GPU event) pair: how long the CPU call took, how long the GPU work took, and how long the work waited after the call returned. runtime_cutoff and launch_delay_cutoff are in µs (the outlier thresholds below); include_memory_events: memcpy and memset enqueues (cudaMemcpyAsync, …) count as launches, as in HTA. ranks: a list of ranks (NULL or [] = all). hta_compat: true or false overrides the session's hta_compat for this call (NULL = the session's).
-- @column label                 Trace set
-- @column rank                  Rank
-- @column correlation           Launch correlation id
-- @column cpu_duration_us       Duration of the launch call, µs
-- @column gpu_duration_us       Duration of the GPU event, µs
-- @column launch_delay_us       GPU start − end of the launch call, clipped at 0, µs
-- @column short_kernel          cpu_duration_us <= runtime_cutoff and gpu_duration_us < cpu_duration_us (the GPU work is shorter than its launch)
-- @column runtime_outlier       cpu_duration_us > runtime_cutoff
-- @column launch_delay_outlier  launch_delay_us > launch_delay_cutoff
--
-- Default mode: launches are every enqueueing call of _ct_launch_names (cuLaunchKernel*, HIP included; HTA
-- skips them, quirk §7.6) on a CPU thread, paired with the kernels/memcpys/memsets of the same correlation,
-- one launch per GPU event (the runtime call when a runtime and a driver call share the correlation, paired at
-- load: _gpu_frame_default.launch_*); include_memory_events := false drops the pairs whose launch is a
-- memcpy/memset call.
-- Compat mode (HTA 0.6.1): the correlation ids of HTA's launch names select every stream −1 row (a driver call
-- sharing the id is paired too) and every stream != −1 row (cuda_sync included), all pairs joined.
-- _launch_pairs_compat / _launch_pairs_default(include_memory_events): those pairs, in each mode, with
-- launch_order, the pair's position in its trace's (cpu_ts, cpu_idx, gpu_idx) order (default: stored at load).
CREATE OR REPLACE MACRO _launch_pairs_compat(include_memory_events) AS TABLE
WITH names AS (
    SELECT name, hta_stats FROM _ct_launch_names()
    WHERE coalesce(include_memory_events, true) OR NOT is_memory
),
frame AS NOT MATERIALIZED (
    SELECT * FROM _hta_frame_compat
),
-- HTA's correlation set, then every CPU × GPU pair with such a correlation
hta_corr AS (
    SELECT DISTINCT f.trace_id, f.correlation
    FROM frame f JOIN names n ON n.name = f.name AND n.hta_stats
)
SELECT c.trace_id, c.label, c.rank, c.correlation, c.ts AS cpu_ts, c.dur AS cpu_dur, g.ts AS gpu_ts, g.dur AS gpu_dur,
       row_number() OVER (PARTITION BY c.trace_id ORDER BY c.ts, c.ev_idx, g.ev_idx) AS launch_order
FROM frame c
JOIN hta_corr k ON k.trace_id = c.trace_id AND k.correlation = c.correlation
JOIN frame g ON g.trace_id = c.trace_id AND g.correlation = c.correlation
WHERE c.stream = -1 AND g.stream <> -1;

-- default: one launch call per GPU event, paired when the frame was stored (_gpu_frame_default.launch_*)
CREATE OR REPLACE MACRO _launch_pairs_default(include_memory_events) AS TABLE
SELECT trace_id, label, rank, correlation, launch_ts AS cpu_ts, launch_dur AS cpu_dur, ts AS gpu_ts, dur AS gpu_dur,
       launch_seq AS launch_order
FROM _gpu_frame_default
WHERE launch_idx IS NOT NULL AND (coalesce(include_memory_events, true) OR NOT launch_is_memory);

-- the call's mode's pairs are picked when the query is bound (query()): the other mode is neither planned nor run
CREATE OR REPLACE MACRO kernel_launch_stats(runtime_cutoff := 50, launch_delay_cutoff := 100,
                                            include_memory_events := true, ranks := NULL, hta_compat := NULL) AS TABLE
WITH us AS (
    SELECT label, rank, correlation, cpu_dur / 1000.0 AS cpu_duration_us, gpu_dur / 1000.0 AS gpu_duration_us,
           greatest(0, gpu_ts - cpu_ts - cpu_dur) / 1000.0 AS launch_delay_us, trace_id, launch_order
    FROM query(format('FROM {}({})',
                      CASE WHEN _hta_mode(hta_compat, 'kernel_launch_stats') THEN '_launch_pairs_compat' ELSE '_launch_pairs_default' END,
                      coalesce(TRY_CAST(include_memory_events AS BOOLEAN), true)))
    WHERE coalesce(list_contains(_int_list_arg(ranks, 'kernel_launch_stats: ranks'), rank), true)
),
-- Rows sort by (label, rank) through an integer: every row of a trace has the same label, so a sort on
-- the string compares whole strings on every tie (1 GB trace: 90 → 55 ms); with the pair's launch order
-- below it, one BIGINT key (1 GB trace: 58 → 41 ms against (k, cpu_ts, cpu_idx, gpu_idx)).
trace_order AS (
    SELECT trace_id, (row_number() OVER (ORDER BY label, rank, trace_id))::INTEGER AS k FROM traces
)
SELECT label, rank, correlation, cpu_duration_us, gpu_duration_us, launch_delay_us,
       cpu_duration_us <= coalesce(TRY_CAST(runtime_cutoff AS DOUBLE), 50) AND gpu_duration_us < cpu_duration_us AS short_kernel,
       cpu_duration_us > coalesce(TRY_CAST(runtime_cutoff AS DOUBLE), 50) AS runtime_outlier,
       launch_delay_us > coalesce(TRY_CAST(launch_delay_cutoff AS DOUBLE), 100) AS launch_delay_outlier
FROM us JOIN trace_order USING (trace_id), (SELECT _num_check(TRY_CAST(runtime_cutoff AS DOUBLE) >= 0, 'kernel_launch_stats: runtime_cutoff', runtime_cutoff, 'a finite number >= 0 (µs)')
            AND _num_check(TRY_CAST(launch_delay_cutoff AS DOUBLE) >= 0, 'kernel_launch_stats: launch_delay_cutoff', launch_delay_cutoff, 'a finite number >= 0 (µs)')
            AND _bool_check(include_memory_events, 'kernel_launch_stats: include_memory_events')
            AS args_ok) args_check,
     _ranks_loaded(ranks, NULL, 'kernel_launch_stats') ranks_check
WHERE args_check.args_ok AND ranks_check.ranks_ok
ORDER BY (trace_order.k::BIGINT << 32) + launch_order;
