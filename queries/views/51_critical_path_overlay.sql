-- Critical-path overlay (design.md §5, hta-spec.md §5.7): a NULL-safe macro over the internal Go table
-- function _cp_overlay (sqlfuncs/critical_path_overlay.go).

-- @macro export_critical_path_overlay(rank := 0, output_dir := NULL, annotation := 'ProfilerStep', instance := 0, instance_end := -1, label := NULL, only_show_critical_events := true, show_all_edges := false, add_zero_weight_launch_edges := false, data_load_events := NULL, compat := NULL, hta_compat := NULL)  Writes HTA's overlaid trace of a rank's critical path and returns one row with the path written. The file is <output_dir>/overlaid_critical_path_<file name of the loaded trace>, gzip JSON (always, as HTA, whatever the name ends with): the original trace, streamed from traces.path (one in the plain array form comes out in the object form), with args.critical = 1 on the critical-path events, a critical_path flow-event pair (s/f, args weight/critical/type) per shown edge, and (only_show_critical_events) the non-critical X events dropped except user_annotation and python_function; critical_path flows of an earlier overlay (the source is an overlaid trace) are dropped so ids stay paired. Shown edges: the path's dependency, launch-delay and sync edges; show_all_edges (only when only_show_critical_events is false): every graph edge but zero-weight launch edges. output_dir is required; the window parameters are critical_path's.
-- @column label            Trace set
-- @column rank             Rank
-- @column path             File written
-- @column events           Events in its traceEvents (flow events included)
-- @column critical_events  Events marked args.critical = 1
-- @column flow_pairs       critical_path flow pairs added
-- @column dropped_events   Events left out: non-critical X events (only_show_critical_events), earlier critical_path flows
CREATE OR REPLACE MACRO export_critical_path_overlay(rank := 0, output_dir := NULL, annotation := 'ProfilerStep',
    instance := 0, instance_end := -1, label := NULL, only_show_critical_events := true, show_all_edges := false,
    add_zero_weight_launch_edges := false, data_load_events := NULL, compat := NULL, hta_compat := NULL) AS TABLE
SELECT * FROM _cp_overlay(_str_arg(label, '', 'export_critical_path_overlay: label'), _int_arg(rank, 0, 'export_critical_path_overlay: rank'), _str_arg(annotation, 'ProfilerStep', 'export_critical_path_overlay: annotation'),
    _int_arg(instance, 0, 'export_critical_path_overlay: instance'), _int_arg(instance_end, -1, 'export_critical_path_overlay: instance_end'), 'hta',
    coalesce(to_json(_str_list_arg(data_load_events, 'export_critical_path_overlay: data_load_events'))::VARCHAR, '[]'), _bool_arg(add_zero_weight_launch_edges, false, 'export_critical_path_overlay: add_zero_weight_launch_edges'),
    false, _bool_arg(compat, _hta_mode(hta_compat, 'export_critical_path_overlay'), 'export_critical_path_overlay: compat'), true,
    _str_arg(output_dir, '', 'export_critical_path_overlay: output_dir'), _bool_arg(only_show_critical_events, true, 'export_critical_path_overlay: only_show_critical_events'),
    _bool_arg(show_all_edges, false, 'export_critical_path_overlay: show_all_edges'));
