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
-- 2(n−1)/n; all-gather, reduce-scatter, all-to-all, gather, scatter (n−1)/n (nccl-tests' GatherGetBw and
-- ScatterGetBw: the whole buffer × (n−1)/n, the root's own part moving nowhere); broadcast, reduce, send, recv 1;
-- NULL for the rest (barrier, coalesced groups).
CREATE OR REPLACE MACRO _collective_busbw_factor(collective, n) AS
    CASE WHEN collective IS NULL OR n IS NULL OR n < 1 THEN NULL
         WHEN regexp_matches(collective, 'all_?reduce') THEN 2.0 * (n - 1) / n
         WHEN regexp_matches(collective, 'all_?gather|reduce_?scatter|all_?to_?all|^_?(gather|scatter)(_base)?$') THEN (n - 1) / n::DOUBLE
         WHEN regexp_matches(collective, '^_?(broadcast|reduce|send|recv)(_base)?$') THEN 1.0 END;

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
-- @column collective      Collective name (allreduce, _allgather_base, …) from the kernel's args or its record_param_comms op, else the kernel name's operation in lower case (allreduce, sendrecv, …)
-- @column pg_name         Process group: Process Group Name (the kernel's args, else its record_param_comms op's), else Process Group ID; NULL when the trace records neither
-- @column pg_desc         Process Group Description (default_pg, …)
-- @column group_size      Ranks of the process group (Group size; NULL when not above 0)
-- @column dtype           Element type (c10 name: Float, BFloat16, …)
-- @column in_nelems       In msg nelems
-- @column out_nelems      Out msg nelems
-- @column msg_bytes       The larger of input and output, bytes (the whole buffer of a gather or scatter); NULL when a size or the dtype is unknown (newer c10 types such as UInt16 or Float4_e2m1fn_x2 included), negative, or past BIGINT
-- @column op_ev_idx       ev_idx of the record_param_comms op (NULL: none around the launch)
-- @column seq             Position (1, 2, …) of the collective among those of its process group in its step on this rank, in the order they were issued: with step, the key that pairs a collective across ranks (TraceLens' index in group, per step so that a rank whose window opened a step earlier still lines up)
-- @column busbw_gbps      msg_bytes ÷ dur × the nccl-tests bus factor for group_size ranks, GB/s; a lower bound when the kernel waited for late ranks (collectives has the across-rank figure)
CREATE OR REPLACE VIEW comm_kernels AS
WITH k AS (
    SELECT t.label, l.rank, l.trace_id, l.ev_idx, l.name, l.stream, l.step, l.ts, l.dur, l.runtime_pid, l.runtime_tid,
           l.runtime_ts, l.runtime_ts + coalesce(l.runtime_dur, 0) AS runtime_end,
           regexp_extract(l.name, '^nccl(?:Dev)?Kernel_([A-Za-z]+)', 1) AS kernel_op, e.args AS kargs
    FROM kernel_launches l
    JOIN traces t USING (trace_id)
    JOIN events e ON e.trace_id = l.trace_id AND e.ev_idx = l.ev_idx
    LEFT JOIN kernel_types kt ON kt.name = l.name
    WHERE l.cat_class = 'kernel' AND _comm_kernel(l.name, kt.kernel_type)
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
-- Each field from the kernel's own args first (Kineto copies the collective's args onto its kernels since
-- PyTorch ~2.3, so a kernel whose op the join missed still has its process group), then from the op's. A
-- negative size or group size is unknown (NULL); a size whose bytes overflow BIGINT too.
parsed AS (
    SELECT label, rank, trace_id, ev_idx, name, stream, step, ts, dur, op_ev_idx, issued,
           coalesce(kargs->>'Collective name', a->>'Collective name',
                    CASE kernel_op WHEN '' THEN NULL WHEN 'ReduceScatter' THEN 'reduce_scatter' WHEN 'AllToAll' THEN 'all_to_all'
                                   ELSE lower(kernel_op) END) AS collective,
           coalesce(kargs->>'Process Group Name', a->>'Process Group Name', kargs->>'Process Group ID', a->>'Process Group ID') AS pg_name,
           coalesce(kargs->>'Process Group Description', a->>'Process Group Description') AS pg_desc,
           TRY_CAST(coalesce(kargs->>'Group size', a->>'Group size') AS BIGINT) AS gs,
           coalesce(kargs->>'dtype', a->>'dtype') AS dtype,
           TRY_CAST(coalesce(kargs->>'In msg nelems', a->>'In msg nelems') AS BIGINT) AS inn,
           TRY_CAST(coalesce(kargs->>'Out msg nelems', a->>'Out msg nelems') AS BIGINT) AS outn
    FROM named
),
sized AS (
    SELECT * EXCLUDE (gs, inn, outn),
           CASE WHEN gs > 0 THEN gs END AS group_size,
           CASE WHEN inn >= 0 THEN inn END AS in_nelems, CASE WHEN outn >= 0 THEN outn END AS out_nelems,
           TRY_CAST(greatest(CASE WHEN inn >= 0 THEN inn END, CASE WHEN outn >= 0 THEN outn END)::HUGEINT
                    * _torch_dtype_bytes(dtype) AS BIGINT) AS msg_bytes
    FROM parsed
)
SELECT label, rank, trace_id, ev_idx, name, stream, step, ts, dur, collective, pg_name, pg_desc, group_size, dtype,
       in_nelems, out_nelems, msg_bytes, op_ev_idx,
       dense_rank() OVER (PARTITION BY trace_id, pg_name, step ORDER BY issued, coalesce(op_ev_idx, ev_idx)) AS seq,
       CASE WHEN dur > 0 THEN msg_bytes / dur * _collective_busbw_factor(collective, group_size) END AS busbw_gbps
FROM sized;

-- @view collectives  One row per collective of a trace set across its ranks: the kernels of one process group's n-th collective of a step (comm_kernels.step, seq) on every rank. When each rank's kernel starts, how far apart, and the bandwidth, timed as TraceLens does by the shortest rank's kernel time (the last rank to arrive waits for no one; the others' kernels include their wait).
-- @column label              Trace set
-- @column pg_name            Process group (comm_kernels.pg_name)
-- @column step               ProfilerStep (NULL: kernels outside every step, paired by their order alone)
-- @column seq                Position of the collective among its process group's in that step (comm_kernels.seq)
-- @column collective         Collective name (when the ranks disagree, the first in alphabetical order)
-- @column ranks              Ranks whose trace has this collective
-- @column group_size         Ranks of the process group (Group size; else ranks when above 1, 1 in a job of world size 1, NULL: unknown)
-- @column consistent         The ranks line up: each holds as many of the process group's collectives in the step as the others (a rank of the trace set that has the step and recorded the group in another step, but none of its collectives in this one, holds 0; a rank that never recorded the group may not be in it and holds nothing, as do kernels outside every step and an unknown group), names the same collective and size (or all none; an all-to-all's sizes may differ, each rank's own split), and they are no more than group_size; false means a rank recorded a collective the others did not, and the row pairs unrelated kernels
-- @column msg_bytes          Message size, bytes (the largest among the ranks: an uneven all-to-all's largest rank's)
-- @column first_start        Earliest kernel start, ns
-- @column start_skew_us      Latest − earliest kernel start among the ranks, µs
-- @column end_skew_us        Latest − earliest kernel end, µs
-- @column last_rank          The rank whose kernel started last (the straggler; the lowest rank on a tie)
-- @column min_us             Shortest rank's kernel time, µs: the collective's own time (a rank's kernels of one collective that run at once count once)
-- @column max_us             Longest rank's kernel time, µs (the earliest rank's wait included)
-- @column algbw_gbps         msg_bytes ÷ min_us, GB/s
-- @column busbw_gbps         algbw × the nccl-tests factor for group_size ranks (all-reduce 2(n−1)/n; all-gather, reduce-scatter, all-to-all, gather, scatter (n−1)/n; broadcast, reduce, send, recv 1)
CREATE OR REPLACE VIEW collectives AS
WITH kernels AS (
    -- the time a rank's kernels of one collective cover (their union: kernels of one collective on two
    -- streams at once count once)
    SELECT *, greatest(0, ts + dur - greatest(ts, coalesce(max(ts + dur) OVER (
                  PARTITION BY label, pg_name, step, seq, rank ORDER BY ts, ev_idx
                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), ts))) AS covers
    FROM comm_kernels
),
per_rank AS (
    SELECT label, pg_name, step, seq, rank, min(ts) AS start_ts, max(ts + dur) AS end_ts, sum(covers) AS busy,
           any_value(collective) AS collective, count(DISTINCT collective) AS collectives, count(collective) AS named,
           max(msg_bytes) AS msg_bytes, max(group_size) AS group_size
    FROM kernels
    GROUP BY label, pg_name, step, seq, rank
),
-- a rank whose window holds more or fewer collectives of a process group in a step than another's: its
-- sequence does not line up with theirs. A rank of the trace set that has the step (its ProfilerStep) and
-- recorded the group in some step, but holds none of its collectives in this one, holds 0 (the collective
-- was recorded on the other ranks only). A rank that never recorded the group holds nothing: it may not
-- belong to the group, whose ranks need not all be loaded. Nor does a rank hold 0 of kernels outside every
-- step (step NULL: where a rank's window began or ended) or of an unknown process group (pg_name NULL: old
-- traces, where it stands for every group, and a rank need not be in those used in a step); those compare
-- the ranks holding some only.
rank_steps AS (
    SELECT DISTINCT t.label, p.rank, p.step
    FROM profiler_steps p JOIN traces t ON t.trace_id = p.trace_id
    WHERE p.step IS NOT NULL
),
counts AS (
    SELECT label, pg_name, step, min(n) = max(n) AS same_count
    FROM (SELECT label, pg_name, step, rank, sum(n) AS n
          FROM (SELECT label, pg_name, step, rank, count(*) AS n FROM per_rank GROUP BY ALL
                UNION ALL
                SELECT g.label, g.pg_name, s.step, g.rank, 0
                FROM (SELECT DISTINCT label, pg_name, rank FROM per_rank WHERE pg_name IS NOT NULL) g
                JOIN rank_steps s ON s.label = g.label AND s.rank = g.rank)
          GROUP BY ALL)
    GROUP BY ALL
),
c AS (
    SELECT label, pg_name, step, seq, min(collective) AS collective,
           -- one rank alone says nothing of the others: 1 only in a job of world size 1, else unknown
           count(*) AS ranks, coalesce(max(group_size), CASE WHEN count(*) > 1 OR any_value(world_size) = 1 THEN count(*) END) AS group_size,
           max(collectives) <= 1 AND count(DISTINCT collective) <= 1 AND (min(named) > 0 OR max(named) = 0)
               -- an all-to-all's size is each rank's own (uneven splits: all_to_allv under MoE or DLRM)
               AND (count(DISTINCT msg_bytes) <= 1 OR regexp_matches(min(collective), 'all_?to_?all'))
               AND (count(msg_bytes) = 0 OR count(msg_bytes) = count(*))
               AND count(*) <= coalesce(max(group_size), count(*)) AS consistent,
           max(msg_bytes) AS msg_bytes, min(start_ts) AS first_start,
           (max(start_ts) - min(start_ts)) / 1000.0 AS start_skew_us, (max(end_ts) - min(end_ts)) / 1000.0 AS end_skew_us,
           arg_max(rank, (start_ts, -rank)) AS last_rank, min(busy) / 1000.0 AS min_us, max(busy) / 1000.0 AS max_us
    FROM per_rank LEFT JOIN (SELECT label, max(world_size) AS world_size FROM traces GROUP BY label) USING (label)
    GROUP BY label, pg_name, step, seq
)
SELECT c.label, c.pg_name, c.step, seq, collective, ranks, group_size, consistent AND same_count AS consistent, msg_bytes,
       first_start, start_skew_us, end_skew_us, last_rank, min_us, max_us,
       CASE WHEN min_us > 0 THEN msg_bytes / (min_us * 1000) END AS algbw_gbps,
       CASE WHEN min_us > 0 THEN msg_bytes / (min_us * 1000) * _collective_busbw_factor(collective, group_size) END AS busbw_gbps
FROM c JOIN counts k ON k.label = c.label AND k.pg_name IS NOT DISTINCT FROM c.pg_name AND k.step IS NOT DISTINCT FROM c.step
ORDER BY c.label, c.pg_name NULLS LAST, c.step NULLS FIRST, seq;
