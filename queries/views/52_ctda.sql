-- Cross-thread critical path (CTDA-CPA, design.md §5; graph/ctda.go, sqlfuncs/critical_path_ctda.go): hotspots
-- and the computation dependency graph. critical_path / critical_path_summary take algorithm := 'ctda' too.
-- Parameters are critical_path's (50_critical_path.sql); phases come from the phase_rules table.

-- @macro hotspots(rank := 0, annotation := 'ProfilerStep', instance := 0, top := 20, algorithm := 'ctda', instance_end := -1, label := NULL, data_load_events := NULL, compat := NULL, aggregate := true, hta_compat := NULL)  The critical path's time grouped by event name and category (a Triton kernel and its host op of one name are two rows), longest first (CTDA-CPA's hotspot list). top: the longest top names (0 or less: all). ctda counts each path node's counted span only (a CPU node that launches the next GPU node: its start to the end of its first launch call), each instant attributed to the innermost event running, synchronisation calls and the window's own annotation (with annotation := '', ProfilerStep annotations) left out; hta sums the path's attributed edge weights, each only inside the window and inside its event, as cpcr (HTA attributes the gap between two kernels of a stream to the first one). Both lists include time in annotations (an nccl:all_reduce range on an hta path) and, for ctda, Python frames with no operator beneath (a DataLoader's __next__ waiting for its worker processes), which critical_path_summary's cpcr does not count, and ctda's cpcr counts the synchronisation calls on the path, which the list leaves out: the prop_in_total of all rows can add up to more or less than cpcr.
-- @column label          Trace set
-- @column rank           Rank
-- @column name           Event name
-- @column category       Event category
-- @column duration_us    Path time attributed to events of this name, µs
-- @column proportion     Share of the path's attributed time (0–1)
-- @column prop_in_total  Share of the window's end-to-end time (0–1)
CREATE OR REPLACE MACRO hotspots(rank := 0, annotation := 'ProfilerStep', instance := 0, top := 20, algorithm := 'ctda',
    instance_end := -1, label := NULL, data_load_events := NULL, compat := NULL, aggregate := true, hta_compat := NULL) AS TABLE
SELECT * FROM _hotspots(_str_arg(label, '', 'hotspots: label'), _int_arg(rank, 0, 'hotspots: rank'), _str_arg(annotation, 'ProfilerStep', 'hotspots: annotation'),
    _int_arg(instance, 0, 'hotspots: instance'), _int_arg(instance_end, -1, 'hotspots: instance_end'), _str_arg(algorithm, 'ctda', 'hotspots: algorithm'),
    coalesce(to_json(_str_list_arg(data_load_events, 'hotspots: data_load_events'))::VARCHAR, '[]'), false, false, _bool_arg(compat, _hta_mode(hta_compat, 'hotspots'), 'hotspots: compat'),
    _bool_arg(aggregate, true, 'hotspots: aggregate'), _int_arg(top, 20, 'hotspots: top'));

-- @macro cdg_nodes(rank := 0, annotation := 'ProfilerStep', instance := 0, instance_end := -1, label := NULL, compat := NULL, aggregate := true, hta_compat := NULL)  One row per node of the computation dependency graph (CDG) of algorithm 'ctda': a run of a thread's CPU events in one phase, launching onto one stream, not crossing a synchronisation call; or the GPU events one CPU node launched.
-- @column label                Trace set
-- @column rank                 Rank
-- @column node                 Node id (CPU nodes first, in logical-thread order, then GPU nodes)
-- @column kind                 cpu or gpu
-- @column pid                  Process (GPU: the GPU's process)
-- @column tid                  Thread (NULL for GPU nodes)
-- @column stream               Stream the node launches onto (CPU; -1 none) or runs on (GPU)
-- @column phase                Training phase from phase_rules (GPU: the launcher's); NULL when no rule applies
-- @column ts                   Start, ns
-- @column end_ts               End, ns
-- @column dur_us               end_ts − ts, µs
-- @column first_launch_end_ts  End of the node's first launch call, ns (its effective end towards its GPU node; the call's start when the call was still running as its GPU work began)
-- @column events               Events in the node
-- @column name                 Name of the event starting in the node that covers most of it (CPU: not the window's annotation; GPU: the first on a tie)
-- @column ev_idx               Event index of that event
-- @column on_critical_path     Node lies on the critical path
-- @column counted_us           Time the node's cpu_op, runtime/driver or GPU events cover inside its counted span on the path, µs (what CPCR counts; Python frames and annotations are not; NULL off the path)
CREATE OR REPLACE MACRO cdg_nodes(rank := 0, annotation := 'ProfilerStep', instance := 0, instance_end := -1,
    label := NULL, compat := NULL, aggregate := true, hta_compat := NULL) AS TABLE
SELECT * FROM _cdg_nodes(_str_arg(label, '', 'cdg_nodes: label'), _int_arg(rank, 0, 'cdg_nodes: rank'), _str_arg(annotation, 'ProfilerStep', 'cdg_nodes: annotation'),
    _int_arg(instance, 0, 'cdg_nodes: instance'), _int_arg(instance_end, -1, 'cdg_nodes: instance_end'), 'ctda', '[]', false, false,
    _bool_arg(compat, _hta_mode(hta_compat, 'cdg_nodes'), 'cdg_nodes: compat'), _bool_arg(aggregate, true, 'cdg_nodes: aggregate'));

-- @macro cdg_edges(rank := 0, annotation := 'ProfilerStep', instance := 0, instance_end := -1, label := NULL, compat := NULL, aggregate := true, hta_compat := NULL)  One row per dependency of the CDG (algorithm 'ctda').
-- @column label             Trace set
-- @column rank              Rank
-- @column src_node          Node the dependency leaves (cdg_nodes.node)
-- @column dst_node          Node that waits for it
-- @column dependency        sequential (thread or stream order), call (CPU node → its GPU node), sync (device, stream or event synchronisation; GPU → GPU for cudaStreamWaitEvent) or cross_thread (GIL hand-off within a process's Python threads)
-- @column edge_type         The critical_path edge type it appears as
-- @column gap_us            dst's start − src's effective end, µs (negative when they overlap)
-- @column on_critical_path  Edge lies on the critical path
CREATE OR REPLACE MACRO cdg_edges(rank := 0, annotation := 'ProfilerStep', instance := 0, instance_end := -1,
    label := NULL, compat := NULL, aggregate := true, hta_compat := NULL) AS TABLE
SELECT * FROM _cdg_edges(_str_arg(label, '', 'cdg_edges: label'), _int_arg(rank, 0, 'cdg_edges: rank'), _str_arg(annotation, 'ProfilerStep', 'cdg_edges: annotation'),
    _int_arg(instance, 0, 'cdg_edges: instance'), _int_arg(instance_end, -1, 'cdg_edges: instance_end'), 'ctda', '[]', false, false,
    _bool_arg(compat, _hta_mode(hta_compat, 'cdg_edges'), 'cdg_edges: compat'), _bool_arg(aggregate, true, 'cdg_edges: aggregate'));
