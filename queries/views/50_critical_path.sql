-- Critical path (design.md §5): NULL-safe public macros over the internal Go table functions of
-- sqlfuncs/critical_path*.go. Every argument is coalesced to its default here, because duckdb-go
-- table functions abort the process on a NULL argument and have no optional arguments.
--
-- Common parameters (HTA's critical_path_analysis):
--   rank := 0, annotation := 'ProfilerStep' (substring of the window annotation's name; '' = whole
--   trace), instance := 0 (0-based, file order, counting CPU annotations only: Kineto's GPU-timeline copies
--   of ProfilerStep are counted too in compat mode, as HTA), instance_end := -1 (inclusive; -1 = instance),
--   algorithm := 'hta' | 'ctda' (cross-thread, graph/ctda.go; 52_ctda.sql), label := NULL (any label
--   holding the rank),
--   data_load_events := NULL (list of name substrings: nodes + the data_loading bound),
--   add_zero_weight_launch_edges := false (HTA's CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE),
--   strict_negative_weights := false (HTA's CRITICAL_PATH_STRICT_NEGATIVE_WEIGHT_CHECKS),
--   compat := NULL (NULL = hta_compat, then the session's hta_compat(); true reads HTA's µs-rounded frame),
--   hta_compat := NULL (a synonym of compat, the name the other analyses use; compat wins when both are set),
--   aggregate := true (ctda: aggregate events into CDG nodes; false = one node per event).
-- Edge weights are ns internally; every *_us column is µs. Negative weights are clamped to 0 for the
-- longest path (compat: only those ≤ -1 µs, exactly as HTA).

-- @macro critical_path(rank := 0, annotation := 'ProfilerStep', instance := 0, instance_end := -1, algorithm := 'hta', label := NULL, data_load_events := NULL, add_zero_weight_launch_edges := false, strict_negative_weights := false, compat := NULL, aggregate := true, hta_compat := NULL)  One row per critical-path edge, in path order. A NULL argument takes its default. instance counts the CPU annotations matching annotation, in file order (a trace with none: its GPU annotations; never kernels or copies; compat: Kineto's GPU copies of each step too, as HTA). A window of 0 ns, or holding no operator, runtime call or GPU work (the whole trace too, annotation := ''), is an error, and so is, under hta, a window whose only work is GPU work launched before it (compat: HTA's empty result under hta; ctda, which HTA does not have, still checks). compat: true computes HTA 0.6.1's path (NULL = the session's hta_compat; hta_compat := says the same). data_load_events: a list of name substrings; CPU events whose names contain one become graph nodes, and the path's edges attributed to them are bound_by data_loading (HTA's rule: their own time, not that of the operators inside them, which keep their buckets; compat: only where the pattern, a regular expression, is found in HTA's shortened name, which drops "(…)", so that 'enumerate(DataLoader)' finds nothing there, as in HTA). add_zero_weight_launch_edges: also a zero-weight edge from each launch call to its kernel where HTA adds none (HTA's CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE). strict_negative_weights: an edge weight below -1 µs is an error instead of 0 (HTA's CRITICAL_PATH_STRICT_NEGATIVE_WEIGHT_CHECKS). algorithm: 'hta' or 'ctda' (the cross-thread method; aggregate := false keeps ctda's event-level graph instead of the aggregated CDG).
-- @column label       Trace set
-- @column rank        Rank
-- @column seq         Position on the path (0 = first edge)
-- @column src_node    Graph node the edge leaves (cp_graph_nodes.node)
-- @column dst_node    Graph node the edge enters
-- @column src_ev_idx  Event of src_node
-- @column dst_ev_idx  Event of dst_node
-- @column ev_idx      Event the edge's time is attributed to (NULL for dependency, launch and sync edges)
-- @column name        Name of the attributed event
-- @column cat         Category of the attributed event
-- @column pid         Process of the attributed event
-- @column tid         Thread of the attributed event
-- @column stream      Stream of the attributed event (-1 = CPU)
-- @column edge_type   critical_path_operator, _dependency, _kernel_launch_delay, _kernel_kernel_delay, _sync_dependency, _cross_thread (ctda: operator rows are a CDG node's counted span, the others the dependency into it; a GPU node's span weighs its events' time, and its gaps follow over the same ts..end_ts: an operator row of the launcher's work while the stream waited for a launch, a kernel_kernel_delay row naming no event for the rest)
-- @column weight_us   Edge weight used by the longest path, µs
-- @column bound_by    cpu_bound, data_loading, gpu_compute_bound, gpu_communication_bound, gpu_kernel_launch_overhead, gpu_kernel_kernel_overhead or '' (hta: dependency and sync edges, as HTA; ctda names every edge: a dependency's gap counts as kernel_kernel_overhead into a GPU node, cpu_bound into a CPU node)
-- @column ts          Time of src_node, ns
-- @column end_ts      Time of dst_node, ns
CREATE OR REPLACE MACRO critical_path(rank := 0, annotation := 'ProfilerStep', instance := 0, instance_end := -1,
    algorithm := 'hta', label := NULL, data_load_events := NULL, add_zero_weight_launch_edges := false,
    strict_negative_weights := false, compat := NULL, aggregate := true, hta_compat := NULL) AS TABLE
SELECT * FROM _cp_path(_str_arg(label, '', 'critical_path: label'), _int_arg(rank, 0, 'critical_path: rank'), _str_arg(annotation, 'ProfilerStep', 'critical_path: annotation'),
    _int_arg(instance, 0, 'critical_path: instance'), _int_arg(instance_end, -1, 'critical_path: instance_end'), _str_arg(algorithm, 'hta', 'critical_path: algorithm'),
    coalesce(to_json(_str_list_arg(data_load_events, 'critical_path: data_load_events'))::VARCHAR, '[]'), _bool_arg(add_zero_weight_launch_edges, false, 'critical_path: add_zero_weight_launch_edges'),
    _bool_arg(strict_negative_weights, false, 'critical_path: strict_negative_weights'), _bool_arg(compat, _hta_mode(hta_compat, 'critical_path'), 'critical_path: compat'), _bool_arg(aggregate, true, 'critical_path: aggregate'));

-- @macro critical_path_summary(same parameters as critical_path)  HTA's summary(): one row per bound_by bucket of the critical path; a path of no edges (a window of blocking calls only, whose spans weigh 0) gives one row with bound_by NULL, to report its window, CPCR and busy bound.
-- @column label           Trace set
-- @column rank            Rank
-- @column bound_by        Bucket ('' = dependency and sync edges)
-- @column duration_us     Sum of the bucket's edge weights, µs
-- @column pct             Share of the path's summed weights, %
-- @column path_length_us  Critical-path length, µs
-- @column path_edges      Edges on the path
-- @column window_us       Length of the analysed span, µs: from the window's start to its end or to the end of the last GPU work launched in it, whichever is later (a GPU running behind the CPU finishes the window's kernels after it)
-- @column cpcr            Critical-path coverage ratio: time the path's events cover ÷ window length (hta: Σ weights of path edges attributed to events; ctda: event-covered time of each node's counted span)
-- @column busy_bound      Share of the window covered by cpu_op, runtime/driver and GPU events: no path can cover more
CREATE OR REPLACE MACRO critical_path_summary(rank := 0, annotation := 'ProfilerStep', instance := 0, instance_end := -1,
    algorithm := 'hta', label := NULL, data_load_events := NULL, add_zero_weight_launch_edges := false,
    strict_negative_weights := false, compat := NULL, aggregate := true, hta_compat := NULL) AS TABLE
SELECT * FROM _cp_summary(_str_arg(label, '', 'critical_path_summary: label'), _int_arg(rank, 0, 'critical_path_summary: rank'), _str_arg(annotation, 'ProfilerStep', 'critical_path_summary: annotation'),
    _int_arg(instance, 0, 'critical_path_summary: instance'), _int_arg(instance_end, -1, 'critical_path_summary: instance_end'), _str_arg(algorithm, 'hta', 'critical_path_summary: algorithm'),
    coalesce(to_json(_str_list_arg(data_load_events, 'critical_path_summary: data_load_events'))::VARCHAR, '[]'), _bool_arg(add_zero_weight_launch_edges, false, 'critical_path_summary: add_zero_weight_launch_edges'),
    _bool_arg(strict_negative_weights, false, 'critical_path_summary: strict_negative_weights'), _bool_arg(compat, _hta_mode(hta_compat, 'critical_path_summary'), 'critical_path_summary: compat'), _bool_arg(aggregate, true, 'critical_path_summary: aggregate'));

-- @macro cp_graph_nodes(same parameters as critical_path)  One row per node of the critical-path DAG (an event's start or end).
-- @column label             Trace set
-- @column rank              Rank
-- @column node              Node id (nodes sorted by time, then event index)
-- @column ev_idx            Event
-- @column ts                Time of the node, ns
-- @column is_start          True for the event's start, false for its end
-- @column is_blocking       Event is a blocking CUDA call (its inner time has zero weight)
-- @column name              Event name
-- @column cat               Event category
-- @column pid               Process
-- @column tid               Thread
-- @column stream            Stream (-1 = CPU)
-- @column on_critical_path  Node lies on the critical path
-- @column has_edges         Node has at least one edge (HTA's graph counts only these nodes)
CREATE OR REPLACE MACRO cp_graph_nodes(rank := 0, annotation := 'ProfilerStep', instance := 0, instance_end := -1,
    algorithm := 'hta', label := NULL, data_load_events := NULL, add_zero_weight_launch_edges := false,
    strict_negative_weights := false, compat := NULL, aggregate := true, hta_compat := NULL) AS TABLE
SELECT * FROM _cp_nodes(_str_arg(label, '', 'cp_graph_nodes: label'), _int_arg(rank, 0, 'cp_graph_nodes: rank'), _str_arg(annotation, 'ProfilerStep', 'cp_graph_nodes: annotation'),
    _int_arg(instance, 0, 'cp_graph_nodes: instance'), _int_arg(instance_end, -1, 'cp_graph_nodes: instance_end'), _str_arg(algorithm, 'hta', 'cp_graph_nodes: algorithm'),
    coalesce(to_json(_str_list_arg(data_load_events, 'cp_graph_nodes: data_load_events'))::VARCHAR, '[]'), _bool_arg(add_zero_weight_launch_edges, false, 'cp_graph_nodes: add_zero_weight_launch_edges'),
    _bool_arg(strict_negative_weights, false, 'cp_graph_nodes: strict_negative_weights'), _bool_arg(compat, _hta_mode(hta_compat, 'cp_graph_nodes'), 'cp_graph_nodes: compat'), _bool_arg(aggregate, true, 'cp_graph_nodes: aggregate'));

-- @macro cp_graph_edges(same parameters as critical_path)  One row per edge of the critical-path DAG, in construction order.
-- @column label             Trace set
-- @column rank              Rank
-- @column src_node          Node the edge leaves
-- @column dst_node          Node the edge enters
-- @column src_ev_idx        Event of src_node
-- @column dst_ev_idx        Event of dst_node
-- @column ev_idx            Attributed event (NULL when none)
-- @column edge_type         Edge type (see critical_path)
-- @column weight_us         Weight the longest path uses, µs (negative weights clamped)
-- @column edge_weight_us    The edge's own weight (HTA's CPEdge.weight), µs
-- @column name              Name of the attributed event
-- @column stream            Stream of the attributed event
-- @column bound_by          Bound-by bucket the edge would count in
-- @column ts                Time of src_node, ns
-- @column end_ts            Time of dst_node, ns
-- @column on_critical_path  Edge lies on the critical path
CREATE OR REPLACE MACRO cp_graph_edges(rank := 0, annotation := 'ProfilerStep', instance := 0, instance_end := -1,
    algorithm := 'hta', label := NULL, data_load_events := NULL, add_zero_weight_launch_edges := false,
    strict_negative_weights := false, compat := NULL, aggregate := true, hta_compat := NULL) AS TABLE
SELECT * FROM _cp_edges(_str_arg(label, '', 'cp_graph_edges: label'), _int_arg(rank, 0, 'cp_graph_edges: rank'), _str_arg(annotation, 'ProfilerStep', 'cp_graph_edges: annotation'),
    _int_arg(instance, 0, 'cp_graph_edges: instance'), _int_arg(instance_end, -1, 'cp_graph_edges: instance_end'), _str_arg(algorithm, 'hta', 'cp_graph_edges: algorithm'),
    coalesce(to_json(_str_list_arg(data_load_events, 'cp_graph_edges: data_load_events'))::VARCHAR, '[]'), _bool_arg(add_zero_weight_launch_edges, false, 'cp_graph_edges: add_zero_weight_launch_edges'),
    _bool_arg(strict_negative_weights, false, 'cp_graph_edges: strict_negative_weights'), _bool_arg(compat, _hta_mode(hta_compat, 'cp_graph_edges'), 'cp_graph_edges: compat'), _bool_arg(aggregate, true, 'cp_graph_edges: aggregate'));

-- @macro critical_path_whatif(rank := 0, annotation := 'ProfilerStep', instance := 0, instance_end := -1, algorithm := 'hta', label := NULL, data_load_events := NULL, add_zero_weight_launch_edges := NULL, strict_negative_weights := false, compat := NULL, aggregate := true, scale, factor := 0.5, hta_compat := NULL)  The critical path recomputed after multiplying by factor the own time (operator span edges) of the events matching scale, a SQL predicate on events (e.g. 'name LIKE ''%gemm%'''): an op's children keep theirs, so match them too to shrink a whole subtree. A predicate that re-weights no span of the window's graph is an error, not the unchanged path (a blocking call's own span weighs 0: its wait is its sync edge's). scale is required. add_zero_weight_launch_edges is true by default here, and with it each kernel also gets a zero-weight edge from the kernel before it on its stream: HTA's graph keeps only the edge that held a kernel back in the trace, and without the other a shortened kernel's successor started before its launch call, or a lengthened kernel overlapped the next one on its stream. Those edges can make the unchanged path longer than critical_path's: compare with baseline_path_us. scale runs on a connection of its own: the session's variables and TEMP tables are not visible to it. A path whose every edge then weighs 0 has no edges, so no rows (as HTA's longest path of such a graph: one node): its length is 0.
-- @column (all)  As critical_path; weight_us and bound_by are those of the re-weighted graph
-- @column path_length_us    Length of the re-weighted path, µs (exact: summed in ns, where sum(weight_us) leaves float residues)
-- @column baseline_path_us  Length of the same graph's critical path before re-weighting, µs: what path_length_us compares with
CREATE OR REPLACE MACRO critical_path_whatif(rank := 0, annotation := 'ProfilerStep', instance := 0, instance_end := -1,
    algorithm := 'hta', label := NULL, data_load_events := NULL, add_zero_weight_launch_edges := NULL,
    strict_negative_weights := false, compat := NULL, aggregate := true, scale := NULL, factor := 0.5, hta_compat := NULL) AS TABLE
SELECT * FROM _cp_whatif(_str_arg(label, '', 'critical_path_whatif: label'), _int_arg(rank, 0, 'critical_path_whatif: rank'), _str_arg(annotation, 'ProfilerStep', 'critical_path_whatif: annotation'),
    _int_arg(instance, 0, 'critical_path_whatif: instance'), _int_arg(instance_end, -1, 'critical_path_whatif: instance_end'), _str_arg(algorithm, 'hta', 'critical_path_whatif: algorithm'),
    coalesce(to_json(_str_list_arg(data_load_events, 'critical_path_whatif: data_load_events'))::VARCHAR, '[]'), _bool_arg(add_zero_weight_launch_edges, lower(_str_arg(algorithm, 'hta', 'critical_path_whatif: algorithm')) = 'hta', 'critical_path_whatif: add_zero_weight_launch_edges'),
    _bool_arg(strict_negative_weights, false, 'critical_path_whatif: strict_negative_weights'), _bool_arg(compat, _hta_mode(hta_compat, 'critical_path_whatif'), 'critical_path_whatif: compat'), _bool_arg(aggregate, true, 'critical_path_whatif: aggregate'),
    _str_arg(scale, '', 'critical_path_whatif: scale'), _float_arg(factor, 0.5, 'critical_path_whatif: factor'));

-- @macro longest_path(edges_table)  The longest path over any table (named by a string; not a TEMP table) with columns src_node, dst_node, weight_us: e.g. a saved cp_graph_edges result with changed weights. Ties: networkx's rule (graph/longest_path.go).
-- @column seq             Position on the path
-- @column src_node        Edge source
-- @column dst_node        Edge target
-- @column weight_us       Edge weight, µs
-- @column path_length_us  Length of the whole path, µs
CREATE OR REPLACE MACRO longest_path(edges_table) AS TABLE
SELECT * FROM _longest_path(_str_arg(edges_table, '', 'longest_path: edges_table'));
