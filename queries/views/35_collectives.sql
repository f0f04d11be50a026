-- Collectives from the Kineto traces alone (no NCCL profiler plugin): each communication kernel with the
-- PyTorch collective that launched it (the record_param_comms op around its launch call: name, process
-- group, sizes), and, across the ranks of a trace set, each collective's skew and bandwidth.

-- Element size in bytes of the dtype names record_param_comms writes (c10 ScalarType names); NULL if unknown.
CREATE OR REPLACE MACRO _torch_dtype_bytes(dt) AS
    CASE WHEN dt IN ('Byte', 'Char', 'Bool', 'QInt8', 'QUInt8') OR dt LIKE 'Float8%' THEN 1
         WHEN dt IN ('Short', 'Half', 'BFloat16') THEN 2
         WHEN dt IN ('Int', 'Float', 'ComplexHalf', 'QInt32') THEN 4
         WHEN dt IN ('Long', 'Double', 'ComplexFloat', 'UInt64') THEN 8
         WHEN dt = 'ComplexDouble' THEN 16 END;

-- _collective_busbw_factor(collective, n): nccl-tests' bus-bandwidth factor for n ranks, with the message size
-- taken as the larger of the input and the output (the whole gathered or scattered buffer): all-reduce
-- 2(n−1)/n; all-gather, reduce-scatter, all-to-all (n−1)/n; broadcast, reduce, send, recv, gather, scatter 1;
-- NULL for the rest (barrier, coalesced groups).
CREATE OR REPLACE MACRO _collective_busbw_factor(collective, n) AS
    CASE WHEN collective IS NULL OR n IS NULL OR n < 1 THEN NULL
         WHEN regexp_matches(collective, 'all_?reduce') THEN 2.0 * (n - 1) / n
         WHEN regexp_matches(collective, 'all_?gather|reduce_?scatter|all_?to_?all') THEN (n - 1) / n::DOUBLE
         WHEN regexp_matches(collective, '^_?(broadcast|reduce|send|recv|gather|scatter)(_base)?$') THEN 1.0 END;

-- @view comm_kernels  One row per communication kernel that a CPU call launched (kernel_classes COMMUNICATION, or an NCCL kernel), with the PyTorch collective it belongs to: the innermost record_param_comms op around its launch call.
-- @column label           Trace set
-- @column rank            Rank
-- @column trace_id        Trace
-- @column ev_idx          ev_idx of the kernel
-- @column name            Kernel name
-- @column stream          GPU stream
-- @column step            ProfilerStep of the kernel (via its launch)
-- @column ts              Kernel start, ns
-- @column dur             Kernel duration, ns (on a rank that arrives early it includes the wait for the others)
-- @column collective      record_param_comms' Collective name (allreduce, _allgather_base, …), else the kernel name's operation in lower case (allreduce, sendrecv, …)
-- @column pg_name         Process group: record_param_comms' Process Group Name, else its Process Group ID; NULL when the trace records neither
-- @column pg_desc         Process Group Description (default_pg, …)
-- @column group_size      Ranks of the process group (Group size)
-- @column dtype           Element type (c10 name: Float, BFloat16, …)
-- @column in_nelems       In msg nelems
-- @column out_nelems      Out msg nelems
-- @column msg_bytes       The larger of input and output, bytes (the whole buffer of a gather or scatter); NULL when a size or the dtype is unknown
-- @column op_ev_idx       ev_idx of the record_param_comms op (NULL: none around the launch)
-- @column seq             Position (1, 2, …) of the collective among those of its process group on this rank, in the order they were issued: the key that pairs a collective across ranks (TraceLens' index in group)
-- @column busbw_gbps      msg_bytes ÷ dur × the nccl-tests bus factor for group_size ranks, GB/s; a lower bound when the kernel waited for late ranks (collectives has the across-rank figure)
CREATE OR REPLACE VIEW comm_kernels AS
WITH k AS (
    SELECT t.label, l.rank, l.trace_id, l.ev_idx, l.name, l.stream, l.step, l.ts, l.dur, l.runtime_pid, l.runtime_tid,
           l.runtime_ts, l.runtime_ts + coalesce(l.runtime_dur, 0) AS runtime_end,
           regexp_extract(l.name, '^nccl(?:Dev)?Kernel_([A-Za-z]+)', 1) AS kernel_op
    FROM kernel_launches l
    JOIN traces t USING (trace_id)
    WHERE l.cat_class = 'kernel'
      AND (regexp_matches(l.name, '^nccl(Dev)?Kernel') OR l.name IN (SELECT name FROM kernel_types WHERE kernel_type = 'COMMUNICATION'))
),
-- The record_param_comms op of a launch: the latest to start on the launch's thread at or before it, if it
-- holds the whole call (an ASOF join: a range join on the thread compared every launch with every op of it,
-- 4.8 s on a 1.1 M-event trace). Ops nest properly, so that is the innermost one around the call, unless one
-- ended in between inside an outer one, which then goes unnamed.
ops AS (
    SELECT trace_id, pid, tid, ev_idx AS op_ev_idx, ts AS op_ts, ts + dur AS op_end, args
    FROM events WHERE name = 'record_param_comms' AND dur IS NOT NULL
),
named AS (
    SELECT k.*, CASE WHEN o.op_end >= k.runtime_end THEN o.op_ev_idx END AS op_ev_idx,
           coalesce(CASE WHEN o.op_end >= k.runtime_end THEN o.op_ts END, k.runtime_ts) AS issued,
           CASE WHEN o.op_end >= k.runtime_end THEN o.args END AS a
    FROM k ASOF LEFT JOIN ops o
      ON o.trace_id = k.trace_id AND o.pid = k.runtime_pid AND o.tid = k.runtime_tid AND o.op_ts <= k.runtime_ts
),
parsed AS (
    SELECT label, rank, trace_id, ev_idx, name, stream, step, ts, dur, op_ev_idx, issued,
           coalesce(a->>'Collective name',
                    CASE kernel_op WHEN '' THEN NULL WHEN 'ReduceScatter' THEN 'reduce_scatter' WHEN 'AllToAll' THEN 'all_to_all'
                                   ELSE lower(kernel_op) END) AS collective,
           coalesce(a->>'Process Group Name', a->>'Process Group ID') AS pg_name,
           a->>'Process Group Description' AS pg_desc,
           TRY_CAST(a->>'Group size' AS BIGINT) AS group_size,
           a->>'dtype' AS dtype,
           TRY_CAST(a->>'In msg nelems' AS BIGINT) AS in_nelems,
           TRY_CAST(a->>'Out msg nelems' AS BIGINT) AS out_nelems
    FROM named
)
SELECT label, rank, trace_id, ev_idx, name, stream, step, ts, dur, collective, pg_name, pg_desc, group_size, dtype,
       in_nelems, out_nelems, greatest(in_nelems, out_nelems) * _torch_dtype_bytes(dtype) AS msg_bytes, op_ev_idx,
       dense_rank() OVER (PARTITION BY trace_id, pg_name ORDER BY issued, coalesce(op_ev_idx, ev_idx)) AS seq,
       CASE WHEN dur > 0 THEN greatest(in_nelems, out_nelems) * _torch_dtype_bytes(dtype) / dur
                              * _collective_busbw_factor(collective, group_size) END AS busbw_gbps
FROM parsed;

-- @view collectives  One row per collective of a trace set across its ranks: the kernels of one process group's n-th collective (comm_kernels.seq) on every rank. When each rank's kernel starts, how far apart, and the bandwidth, timed as TraceLens does by the shortest rank's kernel time (the last rank to arrive waits for no one; the others' kernels include their wait).
-- @column label              Trace set
-- @column pg_name            Process group (comm_kernels.pg_name)
-- @column seq                Position of the collective in its process group (comm_kernels.seq)
-- @column collective         Collective name (when the ranks disagree, the first in alphabetical order)
-- @column step               ProfilerStep (the lowest among the ranks)
-- @column ranks              Ranks whose trace has this collective
-- @column group_size         Ranks of the process group (Group size; else ranks)
-- @column consistent         Every rank names the same collective and size: false means the ranks' sequences do not line up (a rank recorded a collective the others did not)
-- @column msg_bytes          Message size, bytes (the largest among the ranks)
-- @column first_start        Earliest kernel start, ns
-- @column start_skew_us      Latest − earliest kernel start among the ranks, µs
-- @column end_skew_us        Latest − earliest kernel end, µs
-- @column last_rank          The rank whose kernel started last (the straggler; the lowest rank on a tie)
-- @column min_us             Shortest rank's kernel time, µs: the collective's own time
-- @column max_us             Longest rank's kernel time, µs (the earliest rank's wait included)
-- @column algbw_gbps         msg_bytes ÷ min_us, GB/s
-- @column busbw_gbps         algbw × the nccl-tests factor for group_size ranks (all-reduce 2(n−1)/n; all-gather, reduce-scatter, all-to-all (n−1)/n; broadcast, reduce, send, recv 1)
CREATE OR REPLACE VIEW collectives AS
WITH per_rank AS (
    SELECT label, pg_name, seq, rank, min(ts) AS start_ts, max(ts + dur) AS end_ts, sum(dur) AS busy,
           min(step) AS step, any_value(collective) AS collective, count(DISTINCT collective) AS collectives,
           max(msg_bytes) AS msg_bytes, max(group_size) AS group_size
    FROM comm_kernels
    GROUP BY label, pg_name, seq, rank
),
c AS (
    SELECT label, pg_name, seq, min(collective) AS collective, min(step) AS step,
           count(*) AS ranks, coalesce(max(group_size), count(*)) AS group_size,
           max(collectives) = 1 AND count(DISTINCT collective) <= 1 AND count(DISTINCT msg_bytes) <= 1 AS consistent,
           max(msg_bytes) AS msg_bytes, min(start_ts) AS first_start,
           (max(start_ts) - min(start_ts)) / 1000.0 AS start_skew_us, (max(end_ts) - min(end_ts)) / 1000.0 AS end_skew_us,
           arg_max(rank, (start_ts, -rank)) AS last_rank, min(busy) / 1000.0 AS min_us, max(busy) / 1000.0 AS max_us
    FROM per_rank
    GROUP BY label, pg_name, seq
)
SELECT label, pg_name, seq, collective, step, ranks, group_size, consistent, msg_bytes, first_start, start_skew_us,
       end_skew_us, last_rank, min_us, max_us,
       CASE WHEN min_us > 0 THEN msg_bytes / (min_us * 1000) END AS algbw_gbps,
       CASE WHEN min_us > 0 THEN msg_bytes / (min_us * 1000) * _collective_busbw_factor(collective, group_size) END AS busbw_gbps
FROM c
ORDER BY label, pg_name NULLS LAST, seq;
