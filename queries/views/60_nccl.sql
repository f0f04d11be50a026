-- NCCL profiler-plugin traces beside Kineto traces: clock alignment, one row per collective, where its time
-- went, and which rank arrived late. Plugin times (nccl_events) are ns of the plugin's steady clock; every
-- *_ts column below is moved onto the Kineto clock of the same trace set by nccl_clock_alignment.offset_ns
-- (the `clock` column says kineto, or plugin when no offset is known).

-- @view nccl_unmatched  One row per plugin begin without an end, or end without a begin (kept, never dropped).
-- @column trace_id    Plugin file
-- @column label       Trace set
-- @column rank        Rank in the communicator
-- @column comm_hash   Communicator
-- @column ev_idx      Position of the record in the file's array
-- @column cat         Category
-- @column name        Name
-- @column id          Async id as written
-- @column status      begin_only or end_only
-- @column ts          Begin, plugin ns (begin_only)
-- @column end_ts      End, plugin ns (end_only)
-- @column parent_idx  Enclosing event when it was read
-- @column path        Plugin file path
CREATE OR REPLACE VIEW nccl_unmatched AS
SELECT e.trace_id, f.label, e.rank, e.comm_hash, e.ev_idx, e.cat, e.name, e.id, e.status, e.ts, e.end_ts,
       e.parent_idx, f.path
FROM nccl_events e JOIN nccl_traces f USING (trace_id)
WHERE e.status <> 'complete';

-- Which Kineto trace a plugin file belongs to: same label, same process id (the plugin writes getpid(),
-- Kineto's CPU lanes carry the same pid) and rank, else the same pid, else the same rank.
CREATE OR REPLACE VIEW _nccl_trace_map AS
WITH kpids AS (SELECT trace_id, pid FROM events WHERE cat_class = 'cpu_op' GROUP BY ALL)
SELECT n.trace_id, t.trace_id AS kineto_trace_id, t.rank AS kineto_rank
FROM nccl_traces n
JOIN traces t ON t.label = n.label
LEFT JOIN kpids k ON k.trace_id = t.trace_id AND k.pid = n.pid
WHERE k.pid IS NOT NULL OR t.rank = n.rank
QUALIFY row_number() OVER (PARTITION BY n.trace_id
                           ORDER BY (k.pid IS NOT NULL) DESC, (t.rank = n.rank) DESC, t.trace_id) = 1;

-- One row per kernel-launching NCCL operation of a plugin file (a unit): the outermost group around
-- its COLL / P2P events, with the plugin times usable as alignment anchors.
CREATE OR REPLACE VIEW _nccl_units AS
WITH ops AS (
    SELECT trace_id, root_idx AS unit_idx,
           coalesce(arg_min(name, ev_idx) FILTER (WHERE cat = 'COLL'), 'SendRecv') AS op_type,
           min(ts) AS task_ts, count(*) AS ops
    FROM nccl_events WHERE cat IN ('COLL', 'P2P') GROUP BY ALL
),
kl AS (SELECT trace_id, root_idx AS unit_idx, min(ts) AS launch_ts FROM nccl_events WHERE cat = 'KERNEL_LAUNCH' GROUP BY ALL),
kc AS (SELECT trace_id, root_idx AS unit_idx, min(ts) AS kernel_ts FROM nccl_events WHERE cat = 'GPU' GROUP BY ALL)
SELECT f.label, f.rank, f.comm_hash, o.trace_id, m.kineto_trace_id, m.kineto_rank, o.unit_idx, o.op_type, o.ops,
       kl.launch_ts, kc.kernel_ts, o.task_ts
FROM ops o
JOIN nccl_traces f USING (trace_id)
LEFT JOIN _nccl_trace_map m USING (trace_id)
LEFT JOIN kl USING (trace_id, unit_idx)
LEFT JOIN kc USING (trace_id, unit_idx);

-- The NCCL kernels of each Kineto trace, in time order, with the runtime call that launched each.
CREATE OR REPLACE VIEW _nccl_kineto_kernels AS
SELECT k.trace_id, k.rank, k.ev_idx, k.name, k.ts, k.dur, l.runtime_ts,
       regexp_extract(k.name, '^nccl(?:Dev)?Kernel_([A-Za-z0-9]+)', 1) AS op_type,
       row_number() OVER (PARTITION BY k.trace_id ORDER BY k.ts, k.ev_idx) - 1 AS k_idx
FROM kernels k
LEFT JOIN kernel_launches l ON l.trace_id = k.trace_id AND l.ev_idx = k.ev_idx
WHERE regexp_matches(k.name, '^nccl(Dev)?Kernel')
  AND k.trace_id IN (SELECT kineto_trace_id FROM _nccl_trace_map);

-- Unit ↔ Kineto kernel pairs for every candidate shift of the two sequences, per Kineto trace (process).
-- The anchor is the most precise time every unit of the process has: the plugin's KernelLaunch begin ↔
-- the runtime launch call, else the first KernelCh begin ↔ the kernel start, else the COLL/P2P begin ↔
-- the launch call. The plugin records the whole run and Kineto a window, so sequences are matched at the
-- shift where operation types agree most, then where the clock differences are most constant.
-- _nccl_overrides: nccl_clock_override's rows, two that disagree for one label, rank and communicator, or a row
-- without an offset, being an error naming them (one of two silently won, and maybe another in each view; a NULL
-- offset hid a less specific row and read 'estimated').
CREATE OR REPLACE VIEW _nccl_overrides AS
SELECT * FROM nccl_clock_override
QUALIFY CASE WHEN offset_ns IS NULL
                 THEN error(format('nccl_clock_override: the row for label {}, rank {}, comm_hash {} has no offset_ns: give one or delete the row',
                                   label, coalesce(rank::VARCHAR, 'NULL (every rank)'), coalesce(comm_hash, 'NULL (every communicator)')))
             WHEN offset_ns NOT BETWEEN -4611686018427387904 AND 4611686018427387904
                 THEN error(format('nccl_clock_override: the row for label {}, rank {}, comm_hash {} has offset_ns {}, out of range (at most ±2^62 ns): correct or delete the row',
                                   label, coalesce(rank::VARCHAR, 'NULL (every rank)'), coalesce(comm_hash, 'NULL (every communicator)'), offset_ns))
             WHEN count(DISTINCT offset_ns) OVER (PARTITION BY label, rank, comm_hash) > 1
                 THEN error(format('nccl_clock_override: rows for label {}, rank {}, comm_hash {} disagree ({}): delete all but one',
                                   label, coalesce(rank::VARCHAR, 'NULL (every rank)'), coalesce(comm_hash, 'NULL (every communicator)'),
                                   string_agg(DISTINCT offset_ns::VARCHAR, ' and ') OVER (PARTITION BY label, rank, comm_hash)))
             ELSE true END;

CREATE OR REPLACE VIEW _nccl_pairs AS
WITH un AS (FROM _nccl_units WHERE kineto_trace_id IS NOT NULL),
kind AS (
    SELECT kineto_trace_id,
           CASE WHEN count(launch_ts) = count(*) THEN 'launch'
                WHEN count(kernel_ts) = count(*) THEN 'kernel' ELSE 'task' END AS anchor
    FROM un GROUP BY ALL
),
u AS (
    SELECT u.*, kind.anchor,
           CASE kind.anchor WHEN 'launch' THEN launch_ts WHEN 'kernel' THEN kernel_ts ELSE task_ts END AS anchor_ts,
           row_number() OVER (PARTITION BY u.kineto_trace_id
                              ORDER BY CASE kind.anchor WHEN 'launch' THEN launch_ts WHEN 'kernel' THEN kernel_ts ELSE task_ts END,
                                       u.trace_id, u.unit_idx) - 1 AS u_idx
    FROM un u JOIN kind USING (kineto_trace_id)
),
-- The kernels of operation types no loaded unit of the process has are another communicator's, whose
-- files are not loaded: left in, they are holes no single shift can step over (AllGather kernels between
-- the AllReduces of the one communicator loaded matched 1 of 3 at a 4 ms wrong offset).
types AS (SELECT DISTINCT kineto_trace_id, op_type FROM un),
k AS (
    SELECT k.* EXCLUDE (k_idx), row_number() OVER (PARTITION BY k.trace_id ORDER BY k.ts, k.ev_idx) - 1 AS k_idx
    FROM _nccl_kineto_kernels k
    WHERE k.op_type IN ('', 'Generic')
       OR (k.trace_id, k.op_type) IN (SELECT (kineto_trace_id, op_type) FROM types)
)
SELECT u.label, u.kineto_trace_id, u.kineto_rank, u.trace_id, u.rank, u.comm_hash, u.unit_idx, u.u_idx, u.op_type,
       u.anchor, k.ev_idx AS kineto_ev_idx, k.k_idx, k.op_type AS kineto_op_type,
       u.u_idx - k.k_idx AS shift,
       (CASE u.anchor WHEN 'kernel' THEN k.ts ELSE coalesce(k.runtime_ts, k.ts) END) - u.anchor_ts AS diff,
       (k.op_type = u.op_type OR k.op_type IN ('', 'Generic')) AS agree
FROM u JOIN k ON k.trace_id = u.kineto_trace_id
WHERE u.anchor_ts IS NOT NULL;

-- The chosen shift per Kineto trace: of the shifts whose types agree most, the one whose median clock difference is
-- nearest a --nccl-clock-offset override of the process (the override fixes the clock, and so which operations
-- match), then the one with the most constant differences: the median deviation, then the mean one (a warm-up
-- collective outside Kineto's window, paired with its first kernel, leaves the median of an evenly spaced job at 0
-- and only the mean sees it), then the smallest shift.
CREATE OR REPLACE VIEW _nccl_shift AS
WITH p AS (FROM _nccl_pairs),
s AS (
    SELECT kineto_trace_id, shift, count(*) FILTER (WHERE agree) - count(*) FILTER (WHERE NOT agree) AS score,
           quantile_disc(diff, 0.5) AS med
    FROM p GROUP BY ALL
),
best AS (SELECT * FROM s QUALIFY score = max(score) OVER (PARTITION BY kineto_trace_id)),
spread AS (
    SELECT b.kineto_trace_id, b.shift, b.score, b.med, quantile_disc(abs(p.diff - b.med), 0.5) AS mad,
           avg(abs(p.diff - b.med)) AS mean_dev
    FROM best b JOIN p ON p.kineto_trace_id = b.kineto_trace_id AND p.shift = b.shift AND p.agree
    GROUP BY ALL
),
ov AS (
    SELECT k.kineto_trace_id, o.offset_ns
    FROM (SELECT DISTINCT kineto_trace_id, label, kineto_rank, comm_hash FROM p) k
    JOIN _nccl_overrides o ON o.label = k.label AND (o.rank IS NULL OR o.rank = k.kineto_rank)
         AND (o.comm_hash IS NULL OR o.comm_hash = k.comm_hash)
    QUALIFY row_number() OVER (PARTITION BY k.kineto_trace_id ORDER BY (o.rank IS NULL), (o.comm_hash IS NULL)) = 1
)
SELECT kineto_trace_id, shift, score, mad, count(*) OVER (PARTITION BY kineto_trace_id) - 1 AS alternatives
FROM spread LEFT JOIN ov USING (kineto_trace_id)
QUALIFY row_number() OVER (PARTITION BY kineto_trace_id ORDER BY abs(med - ov.offset_ns), mad, mean_dev, abs(shift), shift) = 1;

-- @view nccl_clock_alignment  One row per plugin file (rank, communicator): the offset that moves its times onto Kineto's clock.
-- Collectives are matched in order with the NCCL kernels of the same process's Kineto trace (see _nccl_pairs);
-- the offset is the median of the matched clock differences, so a few late launches do not move it.
-- @column label            Trace set
-- @column rank             Rank in the communicator
-- @column comm_hash        Communicator
-- @column trace_id         Plugin file
-- @column kineto_trace_id  Kineto trace of the same process (NULL if none is loaded)
-- @column kineto_rank      Its rank
-- @column anchor           Times matched: launch (KernelLaunch ↔ runtime launch call), kernel (KernelCh ↔ kernel start) or task (COLL/P2P begin ↔ launch call)
-- @column offset_ns        Kineto time − plugin time, ns (the override when one is set)
-- @column source           estimated, override, or NULL when no offset is known
-- @column estimated_ns     The median estimate, ns (even when overridden)
-- @column matched          Operations matched to a Kineto kernel of the same type
-- @column units            Kernel-launching operations in the plugin file
-- @column kineto_kernels   NCCL kernels in the Kineto trace
-- @column residual_p50_ns  Median |difference − offset| over the matched operations, ns
-- @column residual_max_ns  Largest |difference − offset|, ns
-- @column shift            Plugin operations before the first Kineto NCCL kernel matched (plugin order index − Kineto order index, among the kernels of the loaded files' operation types)
-- @column alternatives     Other shifts whose types agree as well (a periodic job: the residual spread chose)
CREATE OR REPLACE VIEW nccl_clock_alignment AS
-- Here and in the views above, a view used twice is named once, in a CTE: DuckDB binds and plans a CTE once,
-- where each mention of a view expands it again (planning nccl_kernel_explain took 0.37 s, now 0.03 s).
WITH tmap AS (FROM _nccl_trace_map),
matched AS (
    SELECT p.trace_id, p.anchor, p.diff, s.shift, s.alternatives
    FROM _nccl_pairs p JOIN _nccl_shift s ON s.kineto_trace_id = p.kineto_trace_id AND s.shift = p.shift
    WHERE p.agree
),
m AS (
    SELECT trace_id, anchor, count(*) AS matched, quantile_disc(diff, 0.5) AS est, any_value(shift) AS shift,
           any_value(alternatives) AS alternatives
    FROM matched GROUP BY ALL
),
r AS (
    SELECT p.trace_id, quantile_disc(abs(p.diff - m.est), 0.5) AS p50, max(abs(p.diff - m.est)) AS mx
    FROM matched p JOIN m USING (trace_id)
    GROUP BY ALL
),
units AS (SELECT trace_id, count(*) AS units FROM _nccl_units GROUP BY ALL),
kk AS (SELECT trace_id, count(*) AS n FROM _nccl_kineto_kernels GROUP BY ALL),
ov AS (
    SELECT f.trace_id, o.offset_ns
    FROM nccl_traces f LEFT JOIN tmap tm USING (trace_id)
    JOIN _nccl_overrides o ON o.label = f.label
         AND (o.rank IS NULL OR o.rank = coalesce(tm.kineto_rank, f.rank))
         AND (o.comm_hash IS NULL OR o.comm_hash = f.comm_hash)
    QUALIFY row_number() OVER (PARTITION BY f.trace_id ORDER BY (o.rank IS NULL), (o.comm_hash IS NULL)) = 1
)
SELECT f.label, f.rank, f.comm_hash, f.trace_id, tm.kineto_trace_id, tm.kineto_rank, m.anchor,
       coalesce(ov.offset_ns, m.est) AS offset_ns,
       CASE WHEN ov.offset_ns IS NOT NULL THEN 'override' WHEN m.est IS NOT NULL THEN 'estimated' END AS source,
       m.est AS estimated_ns, coalesce(m.matched, 0) AS matched, coalesce(units.units, 0) AS units,
       coalesce(kk.n, 0) AS kineto_kernels, r.p50 AS residual_p50_ns, r.mx AS residual_max_ns, m.shift, m.alternatives
FROM nccl_traces f
LEFT JOIN tmap tm USING (trace_id)
LEFT JOIN m USING (trace_id)
LEFT JOIN r USING (trace_id)
LEFT JOIN units USING (trace_id)
LEFT JOIN kk ON kk.trace_id = tm.kineto_trace_id
LEFT JOIN ov USING (trace_id)
ORDER BY f.label, f.rank, f.comm_hash, f.trace_id;

-- The communication CPU ops (nccl:*, record_param_comms, c10d::*) around the launch of each NCCL kernel of a
-- Kineto trace that plugin files map to: ev_idx is the kernel's, op_ev_idx the op's.
CREATE OR REPLACE VIEW _nccl_kernel_ops AS
SELECT l.trace_id, l.ev_idx, a.ev_idx AS op_ev_idx, a.name, a.depth, a.args
FROM kernel_launches l
JOIN events a ON a.trace_id = l.trace_id AND a.pid = l.runtime_pid AND a.tid = l.runtime_tid
     AND a.ts <= l.runtime_ts AND a.ts + a.dur >= l.runtime_ts + coalesce(l.runtime_dur, 0)
     AND (a.name LIKE 'nccl:%' OR a.name = 'record_param_comms' OR a.name LIKE 'c10d::%')
WHERE l.trace_id IN (SELECT kineto_trace_id FROM _nccl_trace_map) AND regexp_matches(l.name, '^nccl(Dev)?Kernel');

-- Element size in bytes of NCCL's datatype names (ncclDatatypeToString).
CREATE OR REPLACE MACRO _nccl_dtype_bytes(dt) AS
    CASE WHEN dt IN ('ncclInt8', 'ncclUint8', 'ncclChar', 'ncclFloat8e4m3', 'ncclFloat8e5m2') THEN 1
         WHEN dt IN ('ncclFloat16', 'ncclHalf', 'ncclBfloat16') THEN 2
         WHEN dt IN ('ncclInt32', 'ncclUint32', 'ncclInt', 'ncclFloat32', 'ncclFloat') THEN 4
         WHEN dt IN ('ncclInt64', 'ncclUint64', 'ncclFloat64', 'ncclDouble') THEN 8 END;

-- @view nccl_collectives  One row per collective (COLL) or point-to-point (P2P) operation of a plugin file, times on Kineto's clock.
-- @column label              Trace set
-- @column rank               Rank in the communicator
-- @column comm_hash          Communicator
-- @column trace_id           Plugin file
-- @column op_idx             ev_idx of the COLL / P2P event (nccl_events)
-- @column unit_idx           ev_idx of its group (operations of one group share one kernel)
-- @column coll_key           Identity across the ranks of a communicator: op#SeqNum for collectives, SendRecv#N for P2P: the N-th exchange (groups joined by matching Send/Recv pairs: the k-th Send from r to p with the k-th Recv on p from r)
-- @column op                 AllReduce, AllGather, ReduceScatter, Broadcast, Send, Recv, …
-- @column seq                SeqNum (per communicator and operation type; NULL for P2P)
-- @column peer               Peer rank (P2P)
-- @column count              Elements
-- @column datatype           ncclFloat32, …
-- @column bytes              count × element size, bytes
-- @column algorithm          RING, TREE, NVLS, … (collectives)
-- @column protocol           SIMPLE, LL, LL128 (collectives)
-- @column n_channels         Channels used
-- @column clock              kineto (times moved by the file's offset) or plugin (no offset known)
-- @column api_ts             Start of the user's API call (CollApi / P2pApi begin; else the group's), ns
-- @column enqueue_ts         COLL / P2P begin: NCCL starts enqueuing the task, ns
-- @column enqueued_ts        COLL / P2P end: task enqueued (not completed), ns
-- @column kernel_start_ts    First channel's kernel start (KernelCh begin), ns
-- @column kernel_end_ts      Last channel's kernel end (KernelCh end), ns
-- @column completion_ts      Last kernel-channel or proxy-operation end, ns
-- @column api_to_kernel_us   api_ts → kernel_start_ts, µs
-- @column kernel_us          kernel_start_ts → kernel_end_ts, µs
-- @column total_us           api_ts → completion_ts, µs
-- @column kineto_trace_id    Matched Kineto trace
-- @column kineto_rank        Its rank
-- @column kineto_ev_idx      ev_idx of the matched NCCL kernel in events (NULL if unmatched)
-- @column kineto_kernel_us   Duration of that kernel, µs
-- @column algbw_gbps         bytes ÷ kernel time (Kineto kernel, else plugin kernel span), GB/s
-- @column busbw_gbps         algbw × nccl-tests factor for n = comm_size: AllReduce 2(n−1)/n; AllGather, ReduceScatter, AlltoAll, Gather, Scatter (n−1) (count is per rank); others 1
-- @column comm_size          Ranks of the communicator: record_param_comms' Group size, else the most of the ranks loaded, the highest rank + 1 and the highest P2P peer + 1 when that is above 1 (else 1 in a job of world size 1, NULL: unknown)
-- @column offset_ns          Clock offset applied, ns
CREATE OR REPLACE VIEW nccl_collectives AS
WITH RECURSIVE ops AS (
    SELECT e.*, f.label FROM nccl_events e JOIN nccl_traces f USING (trace_id) WHERE e.cat IN ('COLL', 'P2P')
),
api AS (
    SELECT trace_id, ev_idx, ts FROM nccl_events WHERE cat IN ('COLL_API', 'P2P_API', 'GROUP_API', 'GROUP')
),
kch AS (
    SELECT trace_id, op_idx, min(ts) AS k0, max(end_ts) AS k1 FROM nccl_events WHERE cat = 'GPU' GROUP BY ALL
),
px AS (
    SELECT trace_id, op_idx, max(end_ts) AS p1 FROM nccl_events WHERE cat = 'PROXY' GROUP BY ALL
),
-- P2P groups have no SeqNum: an operation's counterpart on its peer is the one of the same direction and
-- number (the k-th Send from r to p is the k-th Recv on p from r), and the groups (units) that such pairs
-- join form one exchange: an all-to-all joins every rank's k-th group, a pipeline stage's send only its
-- two ranks. Numbering groups per rank instead made unrelated pairs one "collective".
p2p_only AS (
    SELECT trace_id, root_idx AS unit_idx
    FROM nccl_events WHERE cat IN ('COLL', 'P2P') GROUP BY ALL HAVING bool_and(cat = 'P2P')
),
p2p_ops AS (
    SELECT o.trace_id, o.root_idx AS unit_idx, o.label, o.comm_hash,
           CASE WHEN o.name = 'Recv' THEN TRY_CAST(o.args->>'Peer' AS INTEGER) ELSE o.rank END AS src,
           CASE WHEN o.name = 'Recv' THEN o.rank ELSE TRY_CAST(o.args->>'Peer' AS INTEGER) END AS dst,
           row_number() OVER (PARTITION BY o.trace_id, (o.name = 'Recv'), TRY_CAST(o.args->>'Peer' AS INTEGER)
                              ORDER BY o.ts, o.ev_idx) - 1 AS k
    FROM ops o SEMI JOIN p2p_only u ON u.trace_id = o.trace_id AND u.unit_idx = o.root_idx
),
p2p_links AS (
    SELECT DISTINCT a.trace_id AS from_trace, a.unit_idx AS from_unit, b.trace_id AS to_trace, b.unit_idx AS to_unit
    FROM p2p_ops a JOIN p2p_ops b ON b.label = a.label AND b.comm_hash = a.comm_hash AND b.src = a.src
         AND b.dst = a.dst AND b.k = a.k AND b.trace_id <> a.trace_id
),
-- Each group takes the smallest (k, src, dst) of the exchange it belongs to (label propagation).
p2p_exchange(trace_id, unit_idx, ex) USING KEY (trace_id, unit_idx) AS (
    SELECT trace_id, unit_idx, min({'k': k, 'src': src, 'dst': dst}) FROM p2p_ops GROUP BY ALL
    UNION
    SELECT l.to_trace, l.to_unit, min(x.ex)
    FROM p2p_exchange x
    JOIN p2p_links l ON l.from_trace = x.trace_id AND l.from_unit = x.unit_idx
    JOIN recurring.p2p_exchange r ON r.trace_id = l.to_trace AND r.unit_idx = l.to_unit
    GROUP BY l.to_trace, l.to_unit
    HAVING min(x.ex) < any_value(r.ex)
),
p2p_units AS (
    SELECT x.trace_id, x.unit_idx, dense_rank() OVER (PARTITION BY f.label, f.comm_hash ORDER BY x.ex) - 1 AS n
    FROM p2p_exchange x JOIN nccl_traces f USING (trace_id)
),
matched AS (
    SELECT p.trace_id, p.unit_idx, p.kineto_ev_idx, p.kineto_trace_id
    FROM _nccl_pairs p JOIN _nccl_shift s ON s.kineto_trace_id = p.kineto_trace_id AND s.shift = p.shift
    WHERE p.agree
),
-- "Group size" of the record_param_comms op around a matched kernel's launch (PyTorch ≥ 2.1 writes it).
group_size AS (
    SELECT m.trace_id, max(TRY_CAST(o.args->>'Group size' AS INTEGER)) AS n
    FROM matched m
    JOIN _nccl_kernel_ops o ON o.trace_id = m.kineto_trace_id AND o.ev_idx = m.kineto_ev_idx
    WHERE o.name = 'record_param_comms'
    GROUP BY ALL
),
-- The communicator's size: its Group size, else at least the ranks and peers its loaded files name (a job
-- whose files are not all loaded still gets nccl-tests' factor for the whole communicator). One rank's file
-- alone says nothing of the others: 1 only in a job of world size 1, else unknown (AllReduce's factor made it
-- a bus bandwidth of 0).
nranks AS (
    SELECT f.label, f.comm_hash,
           coalesce(max(g.n), CASE WHEN greatest(count(DISTINCT f.rank), max(f.rank) + 1, max(pe.peer) + 1) > 1
                                   THEN greatest(count(DISTINCT f.rank), max(f.rank) + 1, max(pe.peer) + 1)
                                   WHEN max(ws.world_size) = 1 THEN 1 END) AS n
    FROM nccl_traces f
    LEFT JOIN (SELECT label, max(world_size) AS world_size FROM traces GROUP BY label) ws USING (label)
    LEFT JOIN group_size g USING (trace_id)
    LEFT JOIN (SELECT trace_id, max(TRY_CAST(args->>'Peer' AS INTEGER)) AS peer FROM nccl_events WHERE cat = 'P2P' GROUP BY ALL) pe
         USING (trace_id)
    GROUP BY ALL
),
base AS (
    SELECT o.label, o.rank, o.comm_hash, o.trace_id, o.ev_idx AS op_idx, o.root_idx AS unit_idx,
           CASE WHEN o.cat = 'COLL' THEN o.name || '#' || coalesce(o.args->>'SeqNum', '?') ELSE 'SendRecv#' || pu.n END AS coll_key,
           o.name AS op, TRY_CAST(o.args->>'SeqNum' AS BIGINT) AS seq, TRY_CAST(o.args->>'Peer' AS INTEGER) AS peer,
           TRY_CAST(o.args->>'Count' AS BIGINT) AS count, o.args->>'Datatype' AS datatype,
           TRY_CAST(o.args->>'Count' AS BIGINT) * _nccl_dtype_bytes(o.args->>'Datatype') AS bytes,
           o.args->>'Algorithm' AS algorithm, o.args->>'Protocol' AS protocol,
           TRY_CAST(o.args->>'nChannels' AS INTEGER) AS n_channels,
           a.offset_ns, coalesce(a.offset_ns, 0) AS off,
           coalesce(pa.ts, ra.ts, o.ts) AS api_ts0, o.ts AS enqueue_ts0, o.end_ts AS enqueued_ts0,
           kch.k0, kch.k1, greatest(kch.k1, px.p1) AS done0,
           a.kineto_trace_id, a.kineto_rank, mt.kineto_ev_idx, nr.n AS nranks
    FROM ops o
    LEFT JOIN api pa ON pa.trace_id = o.trace_id AND pa.ev_idx = o.parent_idx
    LEFT JOIN api ra ON ra.trace_id = o.trace_id AND ra.ev_idx = o.root_idx
    LEFT JOIN kch ON kch.trace_id = o.trace_id AND kch.op_idx = o.ev_idx
    LEFT JOIN px ON px.trace_id = o.trace_id AND px.op_idx = o.ev_idx
    LEFT JOIN p2p_units pu ON pu.trace_id = o.trace_id AND pu.unit_idx = o.root_idx
    LEFT JOIN nccl_clock_alignment a ON a.trace_id = o.trace_id
    LEFT JOIN matched mt ON mt.trace_id = o.trace_id AND mt.unit_idx = o.root_idx
    LEFT JOIN nranks nr ON nr.label = o.label AND nr.comm_hash = o.comm_hash
)
SELECT b.label, b.rank, b.comm_hash, b.trace_id, b.op_idx, b.unit_idx, b.coll_key, b.op, b.seq, b.peer, b.count,
       b.datatype, b.bytes, b.algorithm, b.protocol, b.n_channels,
       CASE WHEN b.offset_ns IS NULL THEN 'plugin' ELSE 'kineto' END AS clock,
       b.api_ts0 + b.off AS api_ts, b.enqueue_ts0 + b.off AS enqueue_ts, b.enqueued_ts0 + b.off AS enqueued_ts,
       b.k0 + b.off AS kernel_start_ts, b.k1 + b.off AS kernel_end_ts, b.done0 + b.off AS completion_ts,
       (b.k0 - b.api_ts0) / 1e3 AS api_to_kernel_us, (b.k1 - b.k0) / 1e3 AS kernel_us,
       (b.done0 - b.api_ts0) / 1e3 AS total_us,
       b.kineto_trace_id, b.kineto_rank, b.kineto_ev_idx, k.dur / 1e3 AS kineto_kernel_us,
       b.bytes / nullif(coalesce(k.dur, b.k1 - b.k0), 0) AS algbw_gbps,
       b.bytes / nullif(coalesce(k.dur, b.k1 - b.k0), 0) *
           CASE WHEN b.op = 'AllReduce' THEN 2.0 * (b.nranks - 1) / b.nranks
                WHEN b.op IN ('AllGather', 'ReduceScatter', 'AlltoAll', 'Gather', 'Scatter') THEN b.nranks - 1
                ELSE 1 END AS busbw_gbps,
       b.nranks AS comm_size, b.offset_ns
FROM base b
LEFT JOIN events k ON k.trace_id = b.kineto_trace_id AND k.ev_idx = b.kineto_ev_idx;

-- @view nccl_collective_breakdown  One row per (operation, channel): where the proxy and the kernel spent the operation's time.
-- Proxy-step states (print_event.cc): SendGpuWait = waiting for the GPU to fill the buffer; SendPeerWait =
-- waiting for the receiver's credit; SendWait = network send in flight; RecvWait = waiting for data from the
-- network; RecvFlushWait = flushing received data to the GPU; RecvGpuWait = waiting for the GPU to consume it.
-- @column label                Trace set
-- @column rank                 Rank in the communicator
-- @column comm_hash            Communicator
-- @column trace_id             Plugin file
-- @column op_idx               COLL / P2P event (nccl_collectives.op_idx)
-- @column op                   Operation name
-- @column channel              Channel id
-- @column kernel_ch_us         KernelCh begin → end on this channel, µs
-- @column proxy_ops            Proxy operations (ProgressSend / ProgressRecv)
-- @column steps                Proxy steps
-- @column trans_bytes          Σ transSize of the proxy operations, bytes
-- @column schedule_us          Σ ScheduleSend / ScheduleRecv (posted → progressing), µs
-- @column send_gpu_wait_us     Σ SendGpuWait, µs
-- @column send_peer_wait_us    Σ SendPeerWait, µs
-- @column send_wait_us         Σ SendWait, µs
-- @column recv_wait_us         Σ RecvWait, µs
-- @column recv_flush_wait_us   Σ RecvFlushWait, µs
-- @column recv_gpu_wait_us     Σ RecvGpuWait, µs
-- @column net_us               Σ network-plugin events (NET_IB / NET_SOCK), µs
-- @column dominant             The largest of the step states above (NULL when none has time: no proxy steps)
CREATE OR REPLACE VIEW nccl_collective_breakdown AS
WITH ch AS (
    SELECT trace_id, op_idx, ev_idx, name, dur, TRY_CAST(args->>'Channel' AS INTEGER) AS channel,
           TRY_CAST(args->>'transSize' AS BIGINT) AS trans
    FROM nccl_events WHERE cat IN ('GPU', 'PROXY') AND op_idx IS NOT NULL
),
steps AS (
    SELECT s.trace_id, s.op_idx, p.channel, s.name, s.dur, s.cat, s.ev_idx
    FROM nccl_events s
    JOIN nccl_events pe ON pe.trace_id = s.trace_id AND pe.ev_idx = s.parent_idx
    JOIN ch p ON p.trace_id = s.trace_id AND p.ev_idx = CASE WHEN s.cat = 'NET' THEN s.parent_idx ELSE pe.parent_idx END
    WHERE s.cat IN ('NET', 'NET_IB', 'NET_SOCK') AND s.op_idx IS NOT NULL
),
agg AS (
    SELECT trace_id, op_idx, channel,
           sum(dur) FILTER (WHERE name = 'KernelCh') / 1e3 AS kernel_ch_us,
           count(*) FILTER (WHERE name IN ('ProgressSend', 'ProgressRecv')) AS proxy_ops,
           sum(trans) FILTER (WHERE name IN ('ProgressSend', 'ProgressRecv'))::BIGINT AS trans_bytes,
           coalesce(sum(dur) FILTER (WHERE name IN ('ScheduleSend', 'ScheduleRecv')), 0) / 1e3 AS schedule_us
    FROM ch GROUP BY ALL
),
st AS (
    SELECT trace_id, op_idx, channel,
           count(DISTINCT ev_idx) FILTER (WHERE name IN ('SendGpuWait', 'RecvWait')) AS steps,
           coalesce(sum(dur) FILTER (WHERE name = 'SendGpuWait'), 0) / 1e3 AS send_gpu_wait_us,
           coalesce(sum(dur) FILTER (WHERE name = 'SendPeerWait'), 0) / 1e3 AS send_peer_wait_us,
           coalesce(sum(dur) FILTER (WHERE name = 'SendWait'), 0) / 1e3 AS send_wait_us,
           coalesce(sum(dur) FILTER (WHERE name = 'RecvWait'), 0) / 1e3 AS recv_wait_us,
           coalesce(sum(dur) FILTER (WHERE name = 'RecvFlushWait'), 0) / 1e3 AS recv_flush_wait_us,
           coalesce(sum(dur) FILTER (WHERE name = 'RecvGpuWait'), 0) / 1e3 AS recv_gpu_wait_us,
           coalesce(sum(dur) FILTER (WHERE cat IN ('NET_IB', 'NET_SOCK')), 0) / 1e3 AS net_us
    FROM steps GROUP BY ALL
)
SELECT f.label, f.rank, f.comm_hash, a.trace_id, a.op_idx, o.name AS op, a.channel, a.kernel_ch_us,
       a.proxy_ops, coalesce(st.steps, 0) AS steps, a.trans_bytes, a.schedule_us,
       coalesce(st.send_gpu_wait_us, 0) AS send_gpu_wait_us, coalesce(st.send_peer_wait_us, 0) AS send_peer_wait_us,
       coalesce(st.send_wait_us, 0) AS send_wait_us, coalesce(st.recv_wait_us, 0) AS recv_wait_us,
       coalesce(st.recv_flush_wait_us, 0) AS recv_flush_wait_us, coalesce(st.recv_gpu_wait_us, 0) AS recv_gpu_wait_us,
       coalesce(st.net_us, 0) AS net_us,
       CASE WHEN coalesce(st.steps, 0) > 0 THEN
           (SELECT arg_max(k, v) FROM (VALUES ('send_gpu_wait', st.send_gpu_wait_us), ('send_peer_wait', st.send_peer_wait_us),
                   ('send_wait', st.send_wait_us), ('recv_wait', st.recv_wait_us),
                   ('recv_flush_wait', st.recv_flush_wait_us), ('recv_gpu_wait', st.recv_gpu_wait_us)) t(k, v) WHERE v > 0) END AS dominant
FROM agg a
JOIN nccl_traces f USING (trace_id)
JOIN nccl_events o ON o.trace_id = a.trace_id AND o.ev_idx = a.op_idx
LEFT JOIN st ON st.trace_id = a.trace_id AND st.op_idx = a.op_idx AND st.channel IS NOT DISTINCT FROM a.channel;

-- @view nccl_rank_skew  One row per collective instance of a communicator (coll_key): when each rank arrived, and which rank was last.
-- Arrival is the API call start on Kineto's clock, so only ranks with a known offset are compared; the first
-- rank to arrive waited (at least) arrival_spread_us inside the collective for the last one.
-- @column label                   Trace set
-- @column comm_hash               Communicator
-- @column coll_key                op#SeqNum, or SendRecv#N for the N-th point-to-point exchange (see nccl_collectives)
-- @column op                      Operation (SendRecv for a point-to-point group)
-- @column seq                     SeqNum (NULL for P2P)
-- @column ranks                   Ranks that recorded it (loaded)
-- @column comm_size               Ranks of the communicator (nccl_collectives.comm_size)
-- @column aligned_ranks           Of those, ranks on Kineto's clock (compared below)
-- @column first_rank              Rank that arrived first (the lowest of ranks arriving at the same ns)
-- @column last_rank               Rank that arrived last: the straggler (the lowest of ranks arriving at the same ns)
-- @column first_arrival_ts        Its arrival, ns
-- @column last_arrival_ts         Last arrival, ns
-- @column arrival_spread_us       last − first arrival, µs
-- @column kernel_start_spread_us  Spread of kernel starts (first KernelCh) across ranks, µs
-- @column completion_spread_us    Spread of completions across ranks, µs
-- @column last_rank_kernel_us     Kernel time on the last rank (short: it did not wait), µs
-- @column first_rank_kernel_us    Kernel time on the first rank (includes waiting for the others), µs
CREATE OR REPLACE VIEW nccl_rank_skew AS
WITH per_rank AS (
    SELECT label, comm_hash, coll_key, any_value(op) AS op, any_value(seq) AS seq, rank, any_value(clock) AS clock,
           max(comm_size) AS comm_size,
           min(api_ts) AS arrival, min(kernel_start_ts) AS k0, max(completion_ts) AS done,
           max(kernel_end_ts) - min(kernel_start_ts) AS kernel_ns
    FROM nccl_collectives GROUP BY label, comm_hash, coll_key, rank
)
SELECT label, comm_hash, coll_key, split_part(coll_key, '#', 1) AS op, any_value(seq) AS seq, count(*) AS ranks,
       max(comm_size) AS comm_size,
       count(*) FILTER (WHERE clock = 'kineto') AS aligned_ranks,
       -- ties (ranks arriving at the same ns) go to the lowest rank, the same one in every column and every run
       arg_min(rank, (arrival, rank)) FILTER (WHERE clock = 'kineto' AND arrival IS NOT NULL) AS first_rank,
       arg_max(rank, (arrival, -rank)) FILTER (WHERE clock = 'kineto' AND arrival IS NOT NULL) AS last_rank,
       min(arrival) FILTER (WHERE clock = 'kineto') AS first_arrival_ts,
       max(arrival) FILTER (WHERE clock = 'kineto') AS last_arrival_ts,
       (max(arrival) FILTER (WHERE clock = 'kineto') - min(arrival) FILTER (WHERE clock = 'kineto')) / 1e3 AS arrival_spread_us,
       (max(k0) FILTER (WHERE clock = 'kineto') - min(k0) FILTER (WHERE clock = 'kineto')) / 1e3 AS kernel_start_spread_us,
       (max(done) FILTER (WHERE clock = 'kineto') - min(done) FILTER (WHERE clock = 'kineto')) / 1e3 AS completion_spread_us,
       arg_max_null(kernel_ns, (arrival, -rank)) FILTER (WHERE clock = 'kineto' AND arrival IS NOT NULL) / 1e3 AS last_rank_kernel_us,
       arg_min_null(kernel_ns, (arrival, rank)) FILTER (WHERE clock = 'kineto' AND arrival IS NOT NULL) / 1e3 AS first_rank_kernel_us
FROM per_rank
GROUP BY label, comm_hash, coll_key;

-- @view nccl_kernel_explain  One row per Kineto NCCL kernel matched to plugin operations: what inside it dominated.
-- The critical-path hook: join critical_path on label, rank = kineto_rank and ev_idx IN (kineto_ev_idx, kineto_op_ev_idx),
-- since the path crosses a collective either through its kernel or through the CPU op that waits for it.
-- @column label               Trace set
-- @column kineto_trace_id     Kineto trace
-- @column kineto_rank         Its rank
-- @column kineto_ev_idx       ev_idx of the NCCL kernel in events
-- @column kineto_op_ev_idx    ev_idx of the innermost nccl:* / record_param_comms / c10d::* CPU event around its launch
-- @column comm_hash           Communicator
-- @column coll_key            Collective instance (see nccl_rank_skew)
-- @column ops                 Plugin operations launched by this kernel (a P2P group has several)
-- @column bytes               Σ bytes of those operations
-- @column kernel_us           Kineto kernel duration, µs
-- @column arrival_wait_us     Time this rank waited for the last rank to arrive (last arrival − own arrival), µs
-- @column send_gpu_wait_us    Largest per-channel SendGpuWait (channels run in parallel), µs (see nccl_collective_breakdown)
-- @column send_peer_wait_us   Largest per-channel SendPeerWait, µs
-- @column send_wait_us        Largest per-channel SendWait, µs
-- @column recv_wait_us        Largest per-channel RecvWait, µs
-- @column recv_flush_wait_us  Largest per-channel RecvFlushWait, µs
-- @column recv_gpu_wait_us    Largest per-channel RecvGpuWait, µs
-- @column dominant            peer_arrival when waiting for the last rank covers half the kernel or more (the proxy then sits in RecvWait / SendPeerWait for it), else the largest step state: send_gpu_wait, send_peer_wait, send_wait, recv_wait, recv_flush_wait, recv_gpu_wait (NULL when none has time: no proxy data, as for collectives over NVLink within a node)
CREATE OR REPLACE VIEW nccl_kernel_explain AS
-- nccl_rank_skew's last_arrival_ts, computed from the same nccl_collectives: naming nccl_rank_skew would expand
-- nccl_collectives a second time (planning took 66 ms, now 30)
WITH coll AS (FROM nccl_collectives),
skew AS (
    SELECT label, comm_hash, coll_key, max(arrival) AS last_arrival_ts
    FROM (SELECT label, comm_hash, coll_key, rank, min(api_ts) AS arrival FROM coll WHERE clock = 'kineto' GROUP BY ALL)
    GROUP BY ALL
),
c AS (
    SELECT c.*, s.last_arrival_ts FROM coll c
    LEFT JOIN skew s USING (label, comm_hash, coll_key)
    WHERE c.kineto_ev_idx IS NOT NULL
),
b AS (
    SELECT trace_id, op_idx, max(send_gpu_wait_us) AS sgw, max(send_peer_wait_us) AS spw, max(send_wait_us) AS sw,
           max(recv_wait_us) AS rw, max(recv_flush_wait_us) AS rfw, max(recv_gpu_wait_us) AS rgw
    FROM nccl_collective_breakdown GROUP BY ALL
),
cpu AS (SELECT trace_id, ev_idx, arg_max(op_ev_idx, depth) AS op_ev_idx FROM _nccl_kernel_ops GROUP BY ALL),
k AS (
    SELECT c.label, c.kineto_trace_id, c.kineto_rank, c.kineto_ev_idx, any_value(cpu.op_ev_idx) AS kineto_op_ev_idx,
           any_value(c.comm_hash) AS comm_hash,
           min(c.coll_key) AS coll_key, count(*) AS ops, sum(c.bytes)::BIGINT AS bytes, any_value(c.kineto_kernel_us) AS kernel_us,
           greatest(max(c.last_arrival_ts) - min(c.api_ts), 0) / 1e3 AS arrival_wait_us,
           coalesce(max(b.sgw), 0) AS send_gpu_wait_us, coalesce(max(b.spw), 0) AS send_peer_wait_us,
           coalesce(max(b.sw), 0) AS send_wait_us, coalesce(max(b.rw), 0) AS recv_wait_us,
           coalesce(max(b.rfw), 0) AS recv_flush_wait_us, coalesce(max(b.rgw), 0) AS recv_gpu_wait_us
    FROM c LEFT JOIN b USING (trace_id, op_idx)
    LEFT JOIN cpu ON cpu.trace_id = c.kineto_trace_id AND cpu.ev_idx = c.kineto_ev_idx
    GROUP BY c.label, c.kineto_trace_id, c.kineto_rank, c.kineto_ev_idx
)
SELECT k.*,
       CASE WHEN k.arrival_wait_us >= 0.5 * k.kernel_us THEN 'peer_arrival'
            ELSE (SELECT arg_max(n, v) FROM (VALUES ('send_gpu_wait', k.send_gpu_wait_us),
                  ('send_peer_wait', k.send_peer_wait_us), ('send_wait', k.send_wait_us), ('recv_wait', k.recv_wait_us),
                  ('recv_flush_wait', k.recv_flush_wait_us), ('recv_gpu_wait', k.recv_gpu_wait_us)) t(n, v) WHERE v > 0) END AS dominant
FROM k;
