-- Raw tables: one row per trace event, timestamps in integer nanoseconds (Perfetto's convention).
-- Every row carries trace_id (one loaded file); join across tables on trace_id as well as any id:
-- correlation ids collide across ranks.

-- @table traces  One row per loaded trace file.
-- @column trace_id        Id of the loaded file, unique in the database
-- @column label           Name of the trace set (--label), e.g. control / test
-- @column rank            Rank (distributedInfo.rank, else from the file name, else file order)
-- @column path            Absolute path of the file
-- @column file_bytes      Size of the file on disk, bytes
-- @column file_mtime      Modification time of the file when loaded
-- @column events          Number of elements in traceEvents
-- @column schema_version  Kineto schemaVersion
-- @column device_type     NVIDIA GPU, AMD GPU, MTIA or UNKNOWN GPU (from backend and launch calls)
-- @column backend         distributedInfo.backend
-- @column world_size      distributedInfo.world_size
-- @column base_time_ns    baseTimeNanoseconds
-- @column min_ts          Earliest ts of a complete event, ns (Kineto's whole-session Trace span left out, as in HTA's trace duration)
-- @column max_ts          Latest end (ts + dur) of a complete event, ns (the Trace span left out)
-- @column metadata        Every top-level key except traceEvents, as JSON
-- @column array_form      True when the file is a bare JSON array of events
-- @column loaded_at       When the file was loaded
-- @column loader_version  Version of the loader's derived columns (NULL: before versions were kept); an older one is reloaded by --replace
CREATE TABLE IF NOT EXISTS traces (
    trace_id INTEGER, label VARCHAR, rank INTEGER, path VARCHAR, file_bytes BIGINT, file_mtime TIMESTAMP,
    events BIGINT, schema_version BIGINT, device_type VARCHAR, backend VARCHAR, world_size BIGINT,
    base_time_ns BIGINT, min_ts BIGINT, max_ts BIGINT, metadata JSON, array_form BOOLEAN, loaded_at TIMESTAMP,
    loader_version INTEGER
);

-- @table events  One row per complete event (ph X) of traceEvents, and per B/E pair (ph B, made complete as Perfetto pairs them).
-- @column trace_id     Loaded file (traces.trace_id)
-- @column rank         Rank of the file
-- @column ev_idx       0-based position in traceEvents: the stable event id (as in HTA)
-- @column ph           X, or B for a B/E pair
-- @column cat          Category as written (cpu_op, kernel, Operator, …)
-- @column cat_class    Normalised category: cpu_op, user_annotation, gpu_user_annotation, runtime, driver, kernel, memcpy, memset, sync, python_function, cupti_range, other
-- @column name         Event name
-- @column pid          Process id; GPU lanes use the device. Non-numeric string pids get ids above 2^40 (see threads)
-- @column tid          Thread id; GPU lanes use the stream. Non-numeric string tids get ids above 2^40
-- @column ts           Start, ns (exact: parsed from the decimal µs text)
-- @column dur          Duration, ns (NULL when the event has none)
-- @column stream       args.stream (NULL when absent, negative or uint32 -1)
-- @column device       args.device, else the pid of a GPU-side event
-- @column correlation  args.correlation: links a runtime launch to its GPU event
-- @column external_id  args["External id"]: links a CPU op to its runtime calls
-- @column step         ProfilerStep number containing the event (CPU) or its launch (GPU); NULL if none
-- @column parent_idx   ev_idx of the innermost CPU event on the same thread that holds the whole event; NULL for roots and GPU events
-- @column depth        Call-stack depth on its thread: the parent's + 1, 0 for a root; NULL for GPU events
-- @column args         Every arg, as JSON
-- @column link_idx     ev_idx of the event paired by correlation: a launch's GPU event, a GPU event's launch (the last in file order if several); NULL when none
CREATE TABLE IF NOT EXISTS events (
    trace_id INTEGER, rank INTEGER, ev_idx BIGINT, ph VARCHAR, cat VARCHAR, cat_class VARCHAR, name VARCHAR,
    pid BIGINT, tid BIGINT, ts BIGINT, dur BIGINT, stream BIGINT, device BIGINT, correlation BIGINT,
    external_id BIGINT, step BIGINT, parent_idx BIGINT, depth INTEGER, args JSON, link_idx BIGINT
);

-- @table metadata_events  One row per metadata event (ph M): process/thread names, sort indexes, labels.
-- @column trace_id  Loaded file
-- @column ev_idx    Position in traceEvents; NULL for names synthesised for string pid/tid values
-- @column name      process_name, thread_name, process_sort_index, thread_sort_index, process_labels, …
-- @column pid       Process id
-- @column tid       Thread id
-- @column ts        ts if written, ns
-- @column args      The args object, as JSON
CREATE TABLE IF NOT EXISTS metadata_events (
    trace_id INTEGER, ev_idx BIGINT, name VARCHAR, pid BIGINT, tid BIGINT, ts BIGINT, args JSON
);

-- @table flows  One row per flow event (ph s, t, f): ac2g (CPU launch → GPU), fwdbwd, async, …
-- @column trace_id  Loaded file
-- @column ev_idx    Position in traceEvents
-- @column ph        s (start), t (step) or f (finish)
-- @column id        Flow id as written (for ac2g: the correlation id); a flow's events share id, cat and name (Perfetto's key; it also reads a string id as hex, which this column does not)
-- @column cat       Flow category
-- @column name      Flow name
-- @column pid       Process id
-- @column tid       Thread id
-- @column ts        Time, ns
-- @column bp        Binding point (e = enclosing slice)
-- @column args      Arguments (JSON; HTA's critical-path overlay writes weight, critical and type here)
CREATE TABLE IF NOT EXISTS flows (
    trace_id INTEGER, ev_idx BIGINT, ph VARCHAR, id VARCHAR, cat VARCHAR, name VARCHAR, pid BIGINT, tid BIGINT,
    ts BIGINT, bp VARCHAR, args JSON
);

-- @table counters  One row per (counter event, args key) (ph C).
-- @column trace_id  Loaded file
-- @column ev_idx    Position in traceEvents
-- @column name      Counter name
-- @column cat       Category
-- @column pid       Process id
-- @column tid       Thread id
-- @column ts        Time, ns
-- @column id        Counter id if written (e.g. the stream of HTA's Queue Length counters)
-- @column key       Series name (args key)
-- @column value     Value (NULL when not numeric)
CREATE TABLE IF NOT EXISTS counters (
    trace_id INTEGER, ev_idx BIGINT, name VARCHAR, cat VARCHAR, pid BIGINT, tid BIGINT, ts BIGINT, id VARCHAR,
    key VARCHAR, value DOUBLE
);

-- @table instants  One row per instant event (ph i, I or R), e.g. [memory] allocations.
-- @column trace_id  Loaded file
-- @column ev_idx    Position in traceEvents
-- @column ph        i or I (R, a mark, also lands here, as Perfetto reads it)
-- @column cat       Category
-- @column name      Name
-- @column pid       Process id
-- @column tid       Thread id
-- @column ts        Time, ns
-- @column scope     s: g (global), p (process) or t (thread)
-- @column args      Args as JSON
CREATE TABLE IF NOT EXISTS instants (
    trace_id INTEGER, ev_idx BIGINT, ph VARCHAR, cat VARCHAR, name VARCHAR, pid BIGINT, tid BIGINT, ts BIGINT,
    scope VARCHAR, args JSON
);

-- @table other_events  Every event of any other phase: async b/e/n, B/E left unpaired, X with a negative dur or without ts, object and sample events.
-- @column trace_id  Loaded file
-- @column ev_idx    Position in traceEvents
-- @column ph        Phase as written
-- @column cat       Category
-- @column name      Name
-- @column id        Async id as written
-- @column pid       Process id
-- @column tid       Thread id
-- @column ts        Time, ns
-- @column dur       Duration if written, ns
-- @column args      Args as JSON
CREATE TABLE IF NOT EXISTS other_events (
    trace_id INTEGER, ev_idx BIGINT, ph VARCHAR, cat VARCHAR, name VARCHAR, id VARCHAR, pid BIGINT, tid BIGINT,
    ts BIGINT, dur BIGINT, args JSON
);
