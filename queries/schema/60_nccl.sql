-- NCCL profiler-plugin traces (NVIDIA/nccl plugins/profiler/example): one file per communicator and rank,
-- <prefix>_<commHash>_<rank>.json, a JSON array of async b/e events whose ts is µs of the plugin's own
-- steady clock (not Kineto's). Loaded beside the Kineto traces of the same --label; views/60_nccl.sql
-- aligns the two clocks and explains each collective.

-- @table nccl_traces  One row per loaded NCCL profiler-plugin file.
-- @column trace_id      Id of the file, from the same sequence as traces.trace_id (a plugin file has no traces row)
-- @column label         Trace set (--label) it was loaded with; joins it to the Kineto traces of the same run
-- @column rank          Rank inside the communicator (from the file name, else the COLL/P2P Rank arg)
-- @column comm_hash     Communicator hash as written (decimal text of a uint64)
-- @column path          Absolute path of the file
-- @column file_bytes    Size on disk, bytes
-- @column file_mtime    Modification time when loaded
-- @column pid           Process id written by the plugin (getpid(); matches Kineto's CPU pid)
-- @column records       b/e records read
-- @column intervals     Rows in nccl_events
-- @column begin_only    Begins without an end (see nccl_unmatched)
-- @column end_only      Ends without a begin (see nccl_unmatched)
-- @column quirks        Irregularities of older plugin versions that were accepted, NULL if none
-- @column loaded_at     When the file was loaded
CREATE TABLE IF NOT EXISTS nccl_traces (
    trace_id INTEGER, label VARCHAR, rank INTEGER, comm_hash VARCHAR, path VARCHAR, file_bytes BIGINT,
    file_mtime TIMESTAMP, pid BIGINT, records BIGINT, intervals BIGINT, begin_only BIGINT, end_only BIGINT,
    quirks VARCHAR, loaded_at TIMESTAMP
);

-- @table nccl_events  One row per plugin event: a b/e pair matched into an interval (or a lone begin or end),
-- with its place in the hierarchy GroupApi ⊃ CollApi ⊃ Coll ⊃ {KernelCh, ProxyOp ⊃ ProxyStep ⊃ NetPlugin}.
-- @column trace_id    Plugin file (nccl_traces.trace_id)
-- @column rank        Rank inside the communicator
-- @column comm_hash   Communicator hash
-- @column ev_idx      0-based position of the begin record in the file's array (of the end, for a lone end)
-- @column cat         GROUP_API, COLL_API, P2P_API, KERNEL_LAUNCH, GROUP, COLL, P2P, PROXY, NET, GPU, NET_IB, NET_SOCK, CE_*
-- @column name        AllReduce, Send, ScheduleSend, ProgressRecv, SendWait, KernelCh, Idle, …
-- @column id          Async id as written (per-category counter; not unique: KernelCh ids repeat)
-- @column parent_idx  ev_idx of the enclosing event (from the plugin's depth-first print order); NULL at the top
-- @column root_idx    ev_idx of the outermost enclosing event (the Group API call), itself at the top
-- @column op_idx      ev_idx of the enclosing (or own) COLL / P2P event; NULL outside one
-- @column depth       Nesting depth (0 = top)
-- @column pid         Process id written by the plugin
-- @column ts          Begin, ns since plugin start (plugin clock; NULL when unknown: lone end, or ts 0 on an older API event)
-- @column dur         end_ts − ts, ns (NULL unless both are known)
-- @column end_ts      End, ns since plugin start (NULL for a lone begin)
-- @column status      complete, begin_only or end_only
-- @column quirk       Accepted irregularities of this event: ts_zero, stop_gpu_clk_zero, unquoted_value
-- @column args        The begin's args, as JSON (unquoted values of older plugins kept as strings)
CREATE TABLE IF NOT EXISTS nccl_events (
    trace_id INTEGER, rank INTEGER, comm_hash VARCHAR, ev_idx BIGINT, cat VARCHAR, name VARCHAR, id BIGINT,
    parent_idx BIGINT, root_idx BIGINT, op_idx BIGINT, depth INTEGER, pid BIGINT, ts BIGINT, dur BIGINT,
    end_ts BIGINT, status VARCHAR, quirk VARCHAR, args JSON
);

-- @table nccl_clock_override  Plugin→Kineto clock offsets set by hand (--nccl-clock-offset, or INSERT): they replace the estimate of nccl_clock_alignment (every row needs an offset; two rows for one label, rank and comm_hash must agree, else the NCCL views name them in an error).
-- @column label      Trace set
-- @column rank       Kineto rank of the process whose files it applies to (nccl_clock_alignment.kineto_rank); NULL = every rank
-- @column comm_hash  Communicator it applies to; NULL = every communicator
-- @column offset_ns  Kineto time − plugin time, ns
CREATE TABLE IF NOT EXISTS nccl_clock_override (label VARCHAR, rank INTEGER, comm_hash VARCHAR, offset_ns BIGINT);
