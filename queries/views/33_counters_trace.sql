-- Trace with counters (HTA generate_trace_with_counters).

-- @macro export_counters_trace(rank, output_dir, label := NULL, time_series := 'queue_length,memory_bw', hta_compat := NULL)  Writes
-- <output_dir>/<trace file name with its last ".json" → "_with_counters.json" (compat: every ".json", as HTA)> = the rank's original trace plus Chrome
-- counter events (ph "C") for the queue length of every stream ("Queue Length", id = stream) and the memory
-- bandwidth of every memory kind ("Memcpy HtoD", … with args "Memcpy BW"), viewable in Perfetto / chrome://tracing;
-- gzip when the name ends in .gz (compat: always, as HTA, even under a .json name).
-- label selects the trace set when the rank is loaded more than once; time_series is a comma-separated subset of
-- queue_length, memory_bw. hta_compat: true or false overrides the session's hta_compat for this call (NULL = the
-- session's). One row: the file written; no row and no file when the rank has no sample of the series (a CPU-only
-- trace, or memory_bw where nothing is copied), as HTA writes none.
-- @column path            File written
-- @column counter_events  Counter events appended
--
-- Default mode: exact timestamps (µs with three decimals), gzip only when the name ends in .gz, series per
-- (device, stream). Compat mode (HTA 0.6.1): HTA's events (whole-µs timestamps, its queue/bandwidth series), always
-- gzip (HTA writes gzip even for a .json name).
CREATE OR REPLACE MACRO export_counters_trace(rank, output_dir, label := NULL, time_series := 'queue_length,memory_bw',
                                              hta_compat := NULL) AS TABLE
SELECT * FROM _export_counters_trace(rank := _int_arg(coalesce(rank, error('export_counters_trace: rank is required')), 0, 'export_counters_trace: rank'),
    output_dir := _str_arg(output_dir, '', 'export_counters_trace: output_dir'),
    label := _str_arg(label, '', 'export_counters_trace: label'),
    time_series := _str_arg(time_series, 'queue_length,memory_bw', 'export_counters_trace: time_series'),
    compat := _hta_mode(hta_compat, 'export_counters_trace'));
