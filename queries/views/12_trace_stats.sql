-- What the loader kept but a reader may not expect, counted per trace (Perfetto's stats table has the same
-- purpose): each row says how many events of the trace are in an odd state, and what that means for the
-- analyses. Computed when queried, from the loaded tables. Only states that normal Kineto output does not
-- have: its ac2g flows often lack a start (df_index_resolver: 20,083 of 42,373 finishes), its "Spans" and
-- "Traces" lanes are strings, and its events are not in ts order on a lane; counting those would say
-- nothing. The one exception, gpu_graph_replayed, is normal output that some analyses leave out.

-- @view trace_stats  One row per (trace, check): counts of loaded events in an odd state (0 = none), with what each means.
-- @column label        Trace set
-- @column rank         Rank
-- @column name         The check: x_without_dur, x_negative_dur, without_ts, unpaired_begin_end, cpu_not_nested, gpu_without_launch, launch_without_gpu, gpu_graph_replayed
-- @column value        Events in that state
-- @column description  What the state means for the analyses
CREATE OR REPLACE VIEW trace_stats AS
WITH checks(name, description) AS (VALUES
    ('x_without_dur', 'complete (X) events without dur: kept with dur NULL; duration analyses leave them out'),
    ('x_negative_dur', 'complete (X) events with a negative dur: kept in other_events (ph X), not in events; no analysis counts them (Perfetto drops them)'),
    ('without_ts', 'events of any phase but M without ts: kept with ts NULL (complete ones in other_events, not in events); no analysis places them in time (Perfetto drops them)'),
    ('unpaired_begin_end', 'B or E events without their partner on the thread: kept in other_events, not in events'),
    ('cpu_not_nested', 'CPU events that start inside an earlier event of the same parent (parent_idx) and end after it; one that overlaps an event under another parent is not counted, so this is a lower bound: a record_function range opened inside the Python call that opens it (traces with Python stacks), or clock jitter between two records. parent_idx is the innermost event that holds the whole event; the critical path clips the end'),
    ('gpu_without_launch', 'GPU events whose correlation id no runtime or driver call of the trace has (launched before the profiler started, or a dropped record): no launch delay, no host_wait'),
    ('launch_without_gpu', 'kernel launch calls whose correlation id no GPU event of the trace has (the kernel ran after the profiler stopped, or its record was dropped; a trace of CUPTI range profiling has none). Memcpy and memset calls are not counted: many have no GPU record in normal traces (small or host-side copies)'),
    ('gpu_graph_replayed', 'GPU events a CUDA/HIP graph launch replays (kernel_launches.graph_replay): no launch call of their own, so kernel_launch_stats, queue_length and time_blocked_on_full_queue leave them out; idle time before one that starts after its graph launch returned is host_wait')
),
counts AS (
    SELECT trace_id, 'x_without_dur' AS name, count(*) AS value FROM events WHERE ph = 'X' AND dur IS NULL GROUP BY ALL
    UNION ALL
    SELECT trace_id, 'x_negative_dur', count(*) FROM other_events WHERE ph = 'X' AND dur < 0 GROUP BY ALL
    UNION ALL
    SELECT trace_id, 'without_ts', count(DISTINCT ev_idx) FROM (
        SELECT trace_id, ev_idx FROM other_events WHERE ts IS NULL AND coalesce(ph, '') <> ''  -- (an element without ph is no event)
        UNION ALL SELECT trace_id, ev_idx FROM flows WHERE ts IS NULL
        UNION ALL SELECT trace_id, ev_idx FROM counters WHERE ts IS NULL
        UNION ALL SELECT trace_id, ev_idx FROM instants WHERE ts IS NULL)
    GROUP BY ALL
    UNION ALL
    SELECT trace_id, 'unpaired_begin_end', count(*) FROM other_events WHERE ph IN ('B', 'E') GROUP BY ALL
    UNION ALL
    -- An event that starts inside an earlier sibling (or a root inside an earlier root) and was not
    -- given it as parent outlives it: the siblings that started before it reach past its start. Only
    -- siblings: a self-join that also finds an event overlapping one under another parent (a Python
    -- frame leaving a record_function range it is not a sibling of; recorded/control: 147, not 72) took
    -- 103 s on mtia_trace_single_rank's 456k events.
    SELECT trace_id, 'cpu_not_nested', count(*) FROM (
        SELECT trace_id, ts, max(ts + dur) OVER (PARTITION BY trace_id, pid, tid, parent_idx ORDER BY ts, dur DESC, ev_idx
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS earlier_end
        FROM events WHERE depth IS NOT NULL)
    WHERE earlier_end > ts GROUP BY ALL
    UNION ALL
    -- (-1: no correlation id, as a missing one)
    SELECT g.trace_id, 'gpu_without_launch', count(*) FROM gpu_events g
    WHERE g.correlation <> -1
      AND NOT EXISTS (SELECT 1 FROM runtime_calls r WHERE r.trace_id = g.trace_id AND r.correlation = g.correlation)
    GROUP BY ALL
    UNION ALL
    SELECT r.trace_id, 'launch_without_gpu', count(*) FROM runtime_calls r
    WHERE r.correlation <> -1 AND r.name IN (SELECT name FROM _ct_launch_names() WHERE NOT is_memory)
      AND NOT EXISTS (SELECT 1 FROM gpu_events g WHERE g.trace_id = r.trace_id AND g.correlation = r.correlation)
    GROUP BY ALL
    UNION ALL
    SELECT trace_id, 'gpu_graph_replayed', count(*) FROM kernel_launches WHERE graph_replay GROUP BY ALL
)
SELECT t.label, t.rank, k.name, coalesce(c.value, 0) AS value, k.description
FROM traces t CROSS JOIN checks k
LEFT JOIN counts c ON c.trace_id = t.trace_id AND c.name = k.name
ORDER BY t.label, t.rank, t.trace_id, list_position(['x_without_dur', 'x_negative_dur', 'without_ts', 'unpaired_begin_end', 'cpu_not_nested',
    'gpu_without_launch', 'launch_without_gpu', 'gpu_graph_replayed'], k.name);
