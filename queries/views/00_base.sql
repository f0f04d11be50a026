-- The vocabulary for ad-hoc SQL: named slices of the events table. Every join across events
-- includes trace_id, because correlation ids collide across ranks.

-- @view threads  One row per (trace, process, thread) lane: every lane that has events of any phase but counters
-- (which are per process) or a name.
-- @column trace_id            Loaded file
-- @column pid                 Process id
-- @column tid                 Thread id (NULL for a process-level name without threads)
-- @column process_name        From process_name metadata (or the string pid as written; the last one written wins, as in Perfetto)
-- @column thread_name         From thread_name metadata (or the string tid as written)
-- @column sort_index          thread_sort_index metadata (the last one written)
-- @column process_sort_index  process_sort_index metadata (the last one written)
-- @column events              Complete events on this lane
CREATE OR REPLACE VIEW threads AS
WITH m AS (
    SELECT trace_id, pid, tid, name, args->>'name' AS value_name, TRY_CAST(args->>'sort_index' AS BIGINT) AS sort_index,
           ev_idx IS NULL AS synthetic, ev_idx
    FROM metadata_events
),
-- a name the trace gives wins over the one synthesised from a string pid/tid; of two it gives, the later (Perfetto's
-- importer overwrites a process's name and sort index with each one it reads)
pn AS (SELECT trace_id, pid, coalesce(arg_max(value_name, ev_idx) FILTER (WHERE NOT synthetic), max(value_name)) AS process_name
       FROM m WHERE name = 'process_name' GROUP BY ALL),
ps AS (SELECT trace_id, pid, arg_max(sort_index, ev_idx) AS process_sort_index FROM m WHERE name = 'process_sort_index' GROUP BY ALL),
-- A thread named twice (PyTorch 2.11 names the autograd thread "thread 466 (pt_autograd_0)" and "thread 466
-- (python3)", in either order) keeps the name that says more than the process's name, else the first in the file.
tn AS (SELECT m.trace_id, m.pid, m.tid,
              coalesce(arg_min(m.value_name, m.ev_idx) FILTER (WHERE NOT m.synthetic
                                                               AND NOT contains(m.value_name, '(' || coalesce(pn.process_name, '') || ')')),
                       arg_min(m.value_name, m.ev_idx) FILTER (WHERE NOT m.synthetic), max(m.value_name)) AS thread_name
       FROM m LEFT JOIN pn ON pn.trace_id = m.trace_id AND pn.pid = m.pid
       WHERE m.name = 'thread_name' GROUP BY ALL),
ts_ AS (SELECT trace_id, pid, tid, arg_max(sort_index, ev_idx) AS sort_index FROM m WHERE name = 'thread_sort_index' GROUP BY ALL),
lanes AS (
    SELECT trace_id, pid, tid, count(*) AS events FROM events GROUP BY ALL
),
all_lanes AS (
    SELECT trace_id, pid, tid FROM lanes
    UNION SELECT trace_id, pid, tid FROM tn
    UNION SELECT trace_id, pid, tid FROM ts_
    -- lanes with only instants (Kineto's [memory] events), flows or async events
    UNION SELECT trace_id, pid, tid FROM instants
    UNION SELECT trace_id, pid, tid FROM flows
    UNION SELECT trace_id, pid, tid FROM other_events
)
SELECT a.trace_id, a.pid, a.tid, pn.process_name, tn.thread_name, ts_.sort_index, ps.process_sort_index,
       coalesce(l.events, 0) AS events
FROM all_lanes a
LEFT JOIN pn USING (trace_id, pid)
LEFT JOIN ps USING (trace_id, pid)
LEFT JOIN tn ON tn.trace_id = a.trace_id AND tn.pid = a.pid AND tn.tid IS NOT DISTINCT FROM a.tid
LEFT JOIN ts_ ON ts_.trace_id = a.trace_id AND ts_.pid = a.pid AND ts_.tid IS NOT DISTINCT FROM a.tid
LEFT JOIN lanes l ON l.trace_id = a.trace_id AND l.pid IS NOT DISTINCT FROM a.pid AND l.tid IS NOT DISTINCT FROM a.tid;

-- @view async_events  Async events (ph b, e, n) of other_events.
CREATE OR REPLACE VIEW async_events AS
SELECT * FROM other_events WHERE ph IN ('b', 'e', 'n');

-- @view cpu_ops  PyTorch operators (cat cpu_op; legacy Operator).
CREATE OR REPLACE VIEW cpu_ops AS
SELECT * FROM events WHERE cat_class = 'cpu_op';

-- @view annotations  record_function ranges on CPU threads (cat user_annotation), ProfilerStep#N included.
CREATE OR REPLACE VIEW annotations AS
SELECT * FROM events WHERE cat_class = 'user_annotation';

-- @view profiler_steps  One row per ProfilerStep#N annotation (an Operator, cat_class cpu_op, in 2021 traces).
-- @column step    N
-- @column end_ts  ts + dur, ns
-- Every column is qualified: inlined into a macro with a rank parameter (frequent_kernel_sequences, through
-- the compat frame), an unqualified rank would be replaced by the parameter.
CREATE OR REPLACE VIEW profiler_steps AS
SELECT e.trace_id, e.rank, e.ev_idx, e.name,
       TRY_CAST(regexp_extract(e.name, '^ProfilerStep[ \t]*#[ \t]*(\d+)', 1) AS BIGINT) AS step,
       e.pid, e.tid, e.ts, e.dur, e.ts + e.dur AS end_ts
FROM events e
WHERE e.cat_class IN ('user_annotation', 'cpu_op') AND regexp_matches(e.name, '^ProfilerStep[ \t]*#[ \t]*\d+');

-- @view runtime_calls  CUDA/HIP/MTIA runtime and driver calls on CPU threads.
CREATE OR REPLACE VIEW runtime_calls AS
SELECT * FROM events WHERE cat_class IN ('runtime', 'driver');

-- @view gpu_events  Work on a device stream: kernels, memcpy and memset.
CREATE OR REPLACE VIEW gpu_events AS
SELECT * FROM events WHERE cat_class IN ('kernel', 'memcpy', 'memset');

-- @view kernels  GPU kernels (cat kernel; legacy Kernel; MTIA mtia_ccp_events).
CREATE OR REPLACE VIEW kernels AS
SELECT * FROM events WHERE cat_class = 'kernel';

-- @view sync_events  GPU-side synchronisation records (cat cuda_sync: Event Sync, Stream Sync, Context Sync, Stream Wait Event).
CREATE OR REPLACE VIEW sync_events AS
SELECT * FROM events WHERE cat_class = 'sync';

-- @view python_functions  Python stack frames recorded with with_stack=True.
CREATE OR REPLACE VIEW python_functions AS
SELECT * FROM events WHERE cat_class = 'python_function';

-- @view kernel_launches  One row per GPU event with the runtime call that launched it (same trace, same correlation).
-- @column runtime_ev_idx   ev_idx of the runtime (or driver) call
-- @column runtime_name     e.g. cudaLaunchKernel
-- @column runtime_ts       Start of the call, ns
-- @column runtime_dur      Duration of the call, ns
-- @column runtime_pid      CPU process of the call
-- @column runtime_tid      CPU thread of the call
-- @column ev_idx           ev_idx of the GPU event
-- @column name             GPU event name
-- @column cat_class        kernel, memcpy or memset
-- @column ts               GPU start, ns
-- @column dur              GPU duration, ns
-- @column launch_delay     GPU start − end of the runtime call, ns (negative when the GPU work started before the call returned; kernel_launch_stats clips it at 0, as HTA)
-- @column graph_replay     The call is a CUDA/HIP graph launch, which enqueues every event of its graph at once: launch_delay is then that event's place in the replay, not a launch delay (kernel_launch_stats and queue_length leave such events out)
CREATE OR REPLACE VIEW kernel_launches AS
SELECT g.trace_id, g.rank, g.correlation,
       r.ev_idx AS runtime_ev_idx, r.name AS runtime_name, r.ts AS runtime_ts, r.dur AS runtime_dur,
       r.pid AS runtime_pid, r.tid AS runtime_tid,
       g.ev_idx, g.name, g.cat_class, g.device, g.stream, g.ts, g.dur, g.step,
       g.ts - (r.ts + r.dur) AS launch_delay,
       regexp_matches(r.name, '^(cuda|hip|cu)GraphLaunch') AS graph_replay  -- graph/ctda.go's graphLaunchName too
FROM gpu_events g
JOIN runtime_calls r ON r.trace_id = g.trace_id AND r.correlation = g.correlation
QUALIFY row_number() OVER (PARTITION BY g.trace_id, g.ev_idx ORDER BY (r.cat_class = 'runtime') DESC, r.ev_idx) = 1;
