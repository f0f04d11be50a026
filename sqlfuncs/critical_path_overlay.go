package sqlfuncs

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"tracesql/graph"
)

// _cp_overlay (public macro export_critical_path_overlay, queries/views/51_critical_path_overlay.sql)
// writes HTA's overlaid trace (hta-spec.md §5.7): the rank's raw trace file, streamed event by event,
// with args.critical = 1 on every event of the critical path (by array position = ev_idx), one
// s/f flow-event pair per shown graph edge appended to traceEvents, and, with
// only_show_critical_events, every non-critical "X" event dropped except user_annotation and
// python_function events. Flow events of an earlier overlay (cat critical_path, when the source is
// itself an overlaid trace) are left out so that flow ids stay paired. The output is gzip JSON, always (as HTA), named
// overlaid_critical_path_<basename of the trace file>, in output_dir (created).
//
// Arguments: the ten cpArgs, then output_dir, only_show_critical_events, show_all_edges.

// ovOptions are the overlay's own parameters.
type ovOptions struct {
	OnlyCritical bool // drop non-critical X events (except user_annotation / python_function)
	ShowAllEdges bool // a flow per graph edge (zero-weight launch edges excepted); forced off by OnlyCritical
	// Exact: flow timestamps exactly at their events' (default mode); HTA truncates them to whole µs, which on a
	// trace of sub-µs times put a start before its event, binding the arrow to the parent slice or none.
	Exact bool
}

// ovResult counts what an overlay wrote.
type ovResult struct {
	Path           string
	Events         int64 // events in the written traceEvents (flows included)
	CriticalEvents int64 // events marked args.critical
	FlowPairs      int64 // critical_path flow pairs added
	Dropped        int64 // X events dropped (OnlyCritical)
}

// ovFlow is one edge shown as a flow pair.
type ovFlow struct {
	src, dst           int64 // ev_idx of the endpoints' events
	srcStart, dstStart bool
	srcTS, dstTS       int64 // ns: the endpoints' node times, as critical_path's rows show them
	srcDur, dstDur     int64 // ns: the endpoints' events' durations
	weight             int64 // µs, truncated (HTA writes int(weight))
	critical           bool
	typ                uint8
}

// ovEndpoint is what a flow needs of a raw event.
type ovEndpoint struct {
	pid, tid json.RawMessage
	ts, dur  json.RawMessage
	gpu      bool // args.device >= 0
	seen     bool
}

func ovFlows(g *graph.CPGraph, o ovOptions) []ovFlow {
	onPath := make([]bool, len(g.G.Src))
	for _, e := range g.Path.Edges {
		onPath[e] = true
	}
	mk := func(e int32) ovFlow {
		u, v := g.G.Src[e], g.G.Dst[e]
		return ovFlow{src: g.EvIdx(g.NodeRow[u]), dst: g.EvIdx(g.NodeRow[v]),
			srcStart: g.NodeStart[u], dstStart: g.NodeStart[v],
			srcTS: g.NodeTS[u], dstTS: g.NodeTS[v], srcDur: g.F.Dur[g.NodeRow[u]], dstDur: g.F.Dur[g.NodeRow[v]],
			weight: g.G.W[e] / 1000, critical: onPath[e], typ: g.G.Type[e]}
	}
	var out []ovFlow
	if o.ShowAllEdges && !o.OnlyCritical {
		for e := range g.G.Src {
			// Zero-weight launch edges (CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE) are not shown.
			if g.G.Type[e] == graph.EdgeLaunchDelay && g.G.W[e] == 0 {
				continue
			}
			out = append(out, mk(int32(e)))
		}
		return out
	}
	for _, e := range g.Path.Edges {
		switch g.G.Type[e] {
		case graph.EdgeDependency, graph.EdgeLaunchDelay, graph.EdgeSyncDependency:
			out = append(out, mk(e))
		}
	}
	return out
}

// ovWriteOverlay writes the overlay of g's critical path for the raw trace file lf into dir.
func ovWriteOverlay(ctx context.Context, db *sql.DB, g *graph.CPGraph, lf loadedFile, dir string, o ovOptions) (ovResult, error) {
	res := ovResult{}
	src := lf.path
	if dir == "" {
		return res, errors.New("output_dir is required (export_critical_path_overlay(output_dir := '...'))")
	}
	dir = expandHome(dir)
	if err := lf.unchanged(); err != nil {
		return res, err
	}
	res.Path = filepath.Join(dir, "overlaid_critical_path_"+lf.exportBase())
	if err := RefuseOwnFiles(ctx, db, res.Path); err != nil {
		return res, err
	}

	critical := map[int64]bool{}
	for _, v := range g.Path.Nodes {
		critical[g.EvIdx(g.NodeRow[v])] = true
	}
	flows := ovFlows(g, o)
	ends := map[int64]*ovEndpoint{}
	for _, fl := range flows {
		for _, ev := range [2]int64{fl.src, fl.dst} {
			if ends[ev] == nil {
				ends[ev] = &ovEndpoint{}
			}
		}
	}

	// gzip always, as HTA, whatever the name ends with.
	err := rewriteTrace(lf, res.Path, true, func(r io.Reader, w *bufio.Writer) error {
		if err := ovStream(ctx, r, w, critical, ends, flows, o, &res); err != nil {
			return fmt.Errorf("overlay of %s: %w", src, err)
		}
		return nil
	})
	return res, err
}

// ovStream copies the trace of r to w, rewriting traceEvents (copyTrace).
func ovStream(ctx context.Context, r io.Reader, w *bufio.Writer, critical map[int64]bool,
	ends map[int64]*ovEndpoint, flows []ovFlow, o ovOptions, res *ovResult) error {
	dec := newRawDecoder(r)
	return copyTrace(dec, w, func() error { return ovEvents(ctx, dec, w, critical, ends, flows, o, res) }, nil)
}

// ovEvents copies the events array whose '[' dec has just read to w, marking the critical events, leaving
// out what o drops, and appending the critical path's flow pairs.
func ovEvents(ctx context.Context, dec *rawDecoder, w *bufio.Writer, critical map[int64]bool,
	ends map[int64]*ovEndpoint, flows []ovFlow, o ovOptions, res *ovResult) error {
	w.WriteString("[\n")
	n := int64(0)
	idx := int64(-1)
	var fields objFields
	for {
		more, err := dec.more()
		if err != nil {
			return fmt.Errorf("read event %d: %w", idx+1, err)
		} else if !more {
			break
		}
		idx++
		if idx&0xffff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		ev, err := dec.value()
		if err != nil {
			return fmt.Errorf("read event %d: %w", idx, err)
		}
		var isObj bool
		fields, isObj = splitObject(ev, fields[:0])
		if !isObj {
			// Not an object: kept as is (HTA would fail on it; nothing to mark).
			ovWriteEvent(w, &n, ev)
			continue
		}
		if ep := ends[idx]; ep != nil {
			ep.seen = true
			// Copies: ev's buffer is reused by the next event.
			cp := func(k string) json.RawMessage {
				if v := fields.get(ev, k); v != nil {
					return append(json.RawMessage{}, v...)
				}
				return nil
			}
			ep.pid, ep.tid, ep.ts, ep.dur = cp("pid"), cp("tid"), cp("ts"), cp("dur")
			if args := fields.get(ev, "args"); args != nil {
				if af, ok := splitObject(args, nil); ok {
					if d := af.get(args, "device"); d != nil {
						if v, err := strconv.ParseFloat(string(d), 64); err == nil && v >= 0 {
							ep.gpu = true
						}
					}
				}
			}
		}
		if critical[idx] {
			ev = ovMarkCritical(ev, fields)
			res.CriticalEvents++
			ovWriteEvent(w, &n, ev)
			continue
		}
		ph, cat := ovJSONString(fields.get(ev, "ph")), ovJSONString(fields.get(ev, "cat"))
		if o.OnlyCritical && ph == "X" && cat != "user_annotation" && cat != "python_function" {
			res.Dropped++
			continue
		}
		if cat == "critical_path" && (ph == "s" || ph == "f") {
			// A flow of an earlier overlay (the source is an overlaid trace): left out, or its
			// ids would collide with the new ones (HTA keeps them).
			res.Dropped++
			continue
		}
		// An earlier overlay's mark, off the new path: kept, the trace would show two paths as one
		// (review r78 #1).
		ovWriteEvent(w, &n, ovClearCritical(ev, fields))
	}
	if err := dec.expect(']'); err != nil {
		return fmt.Errorf("read traceEvents: %w", err)
	}
	// Flow pairs, ids 0, 1, 2, ...
	var buf []byte
	for i, fl := range flows {
		se, de := ends[fl.src], ends[fl.dst]
		if !se.seen || !de.seen {
			return fmt.Errorf("critical-path event %d or %d is not in the trace file (was the file changed after loading?)", fl.src, fl.dst)
		}
		for k, ph := range [2]string{"s", "f"} {
			ep, start, ts, dur := se, fl.srcStart, fl.srcTS, fl.srcDur
			if k == 1 {
				ep, start, ts, dur = de, fl.dstStart, fl.dstTS, fl.dstDur
			}
			buf = buf[:0]
			buf = append(buf, `{"ph":"`...)
			buf = append(buf, ph...)
			buf = append(buf, `","id":`...)
			buf = strconv.AppendInt(buf, int64(i), 10)
			buf = append(buf, `,"pid":`...)
			buf = ovAppendRaw(buf, ep.pid)
			buf = append(buf, `,"tid":`...)
			buf = ovAppendRaw(buf, ep.tid)
			buf = append(buf, `,"ts":`...)
			buf = ovAppendFlowTS(buf, ep, start, ts, dur, o.Exact)
			buf = append(buf, `,"cat":"critical_path","name":"critical_path","args":{"weight":`...)
			buf = strconv.AppendInt(buf, fl.weight, 10)
			buf = append(buf, `,"critical":`...)
			buf = strconv.AppendBool(buf, fl.critical)
			buf = append(buf, `,"type":"`...)
			buf = append(buf, graph.EdgeTypeName(fl.typ)...)
			buf = append(buf, `"}`...)
			if k == 1 {
				buf = append(buf, `,"bp":"e"`...)
			}
			buf = append(buf, '}')
			ovWriteEvent(w, &n, buf)
		}
		res.FlowPairs++
	}
	w.WriteString("\n]")
	res.Events = n
	return nil
}

func ovWriteEvent(w *bufio.Writer, n *int64, ev []byte) {
	if *n > 0 {
		w.WriteString(",\n")
	}
	w.Write(ev)
	*n++
}

func ovAppendRaw(buf []byte, raw json.RawMessage) []byte {
	if raw == nil {
		return append(buf, "null"...)
	}
	return append(buf, raw...)
}

// ovAppendFlowTS writes a flow event's ts: its node's time, nodeTS (the event's start, or its end for an end
// node, minus min(1 µs, dur) for a GPU event, args.device >= 0, so the arrow ends inside the kernel). exact:
// in ns, written as µs with three decimals. Else as HTA, from the raw event's ts and dur, truncated to an
// integer, with integer arithmetic when both numbers are integers, float64 otherwise (as Python); where
// they are no numbers (a "ts" string, a B event's end, which has no dur), from nodeTS truncated. (The raw
// fields drew a B/E event's end at its start, and a string ts at 0.)
func ovAppendFlowTS(buf []byte, ep *ovEndpoint, start bool, nodeTS, dur int64, exact bool) []byte {
	if !start && ep.gpu {
		nodeTS -= min(1000, dur)
	}
	if exact {
		return appendTS(buf, nodeTS, false, false)
	}
	tsF, tsErr := strconv.ParseFloat(string(ep.ts), 64)
	durF, durErr := 0.0, error(nil)
	if ep.dur != nil {
		durF, durErr = strconv.ParseFloat(string(ep.dur), 64)
	}
	if tsErr != nil || durErr != nil || !start && ep.dur == nil {
		return strconv.AppendInt(buf, nodeTS/1000, 10)
	}
	tsI, tsIsInt := ovJSONInt(ep.ts)
	durI, durIsInt := ovJSONInt(ep.dur)
	if ep.dur == nil {
		durI, durIsInt = 0, true
	}
	if tsIsInt && durIsInt {
		v := tsI
		if !start {
			v += durI
		}
		if !start && ep.gpu {
			v -= min(1, durI)
		}
		return strconv.AppendInt(buf, v, 10)
	}
	v := tsF
	if !start {
		v += durF
	}
	if !start && ep.gpu {
		v -= math.Min(1, durF)
	}
	return strconv.AppendInt(buf, int64(math.Trunc(v)), 10)
}

func ovJSONInt(raw json.RawMessage) (int64, bool) {
	if raw == nil {
		return 0, false
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	return v, err == nil
}

// ovJSONString returns the value of a JSON string (raw, with quotes), "" when not a string.
func ovJSONString(raw json.RawMessage) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// ovMarkCritical sets args.critical = 1 in an event, keeping every other byte: appended to args when
// args has no "critical" key, replaced in place otherwise; an event without args gets one.
func ovMarkCritical(ev json.RawMessage, fields objFields) json.RawMessage {
	f, ok := fields.find(ev, "args")
	if !ok {
		// {"...":...} → {"...":...,"args":{"critical":1}}
		end := bytes.LastIndexByte(ev, '}')
		out := make([]byte, 0, len(ev)+24)
		out = append(out, ev[:end]...)
		if len(fields) > 0 {
			out = append(out, ',')
		}
		out = append(out, `"args":{"critical":1}`...)
		return append(out, ev[end:]...)
	}
	args := ev[f.vs:f.ve]
	af, isObj := splitObject(args, nil)
	if !isObj {
		// args is not an object: replace it.
		out := append([]byte{}, ev[:f.vs]...)
		out = append(out, `{"critical":1}`...)
		return append(out, ev[f.ve:]...)
	}
	var newArgs []byte
	if c, ok := af.find(args, "critical"); ok {
		newArgs = append(append(append([]byte{}, args[:c.vs]...), '1'), args[c.ve:]...)
	} else {
		end := bytes.LastIndexByte(args, '}')
		newArgs = append([]byte{}, args[:end]...)
		if len(af) > 0 {
			newArgs = append(newArgs, ',')
		}
		newArgs = append(newArgs, `"critical":1`...)
		newArgs = append(newArgs, args[end:]...)
	}
	out := make([]byte, 0, len(ev)+16)
	out = append(out, ev[:f.vs]...)
	out = append(out, newArgs...)
	return append(out, ev[f.ve:]...)
}

// ovClearCritical returns ev without args.critical (every member of that name), ev itself when its
// args have none.
func ovClearCritical(ev json.RawMessage, fields objFields) json.RawMessage {
	f, ok := fields.find(ev, "args")
	if !ok {
		return ev
	}
	args := ev[f.vs:f.ve]
	af, isObj := splitObject(args, nil)
	if !isObj {
		return ev
	}
	keep := make([]objField, 0, len(af))
	for _, m := range af {
		if string(args[m.ks:m.ke]) != "critical" {
			keep = append(keep, m)
		}
	}
	if len(keep) == len(af) {
		return ev
	}
	out := append(make([]byte, 0, len(ev)), ev[:f.vs]...)
	out = append(out, '{')
	for i, m := range keep {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, args[m.ks-1:m.ve]...)
	}
	out = append(out, '}')
	return append(out, ev[f.ve:]...)
}

func init() {
	cpRegister("_cp_overlay", cpArgTypes(duckdb.TYPE_VARCHAR, duckdb.TYPE_BOOLEAN, duckdb.TYPE_BOOLEAN),
		func(ctx context.Context, env *Env, args []any) (*cpTable, error) {
			a, err := parseCPArgs(args)
			if err != nil {
				return nil, err
			}
			dir := args[cpArgCount].(string)
			if dir == "" {
				return nil, errors.New("export_critical_path_overlay: output_dir is required (output_dir := '/some/dir')")
			}
			o := ovOptions{OnlyCritical: args[cpArgCount+1].(bool), ShowAllEdges: args[cpArgCount+2].(bool), Exact: !a.opts.Compat}
			g, tr, err := cpGraph(ctx, env, a)
			if err != nil {
				return nil, err
			}
			res, err := ovWriteOverlay(ctx, env.DB, g, tr.file, dir, o)
			if err != nil {
				return nil, fmt.Errorf("export_critical_path_overlay: %w", err)
			}
			t := &cpTable{n: 1}
			t.col("label", cpString).addString(tr.label, true)
			t.col("rank", cpInt).addInt(tr.rank, true)
			t.col("path", cpString).addString(res.Path, true)
			t.col("events", cpInt).addInt(res.Events, true)
			t.col("critical_events", cpInt).addInt(res.CriticalEvents, true)
			t.col("flow_pairs", cpInt).addInt(res.FlowPairs, true)
			t.col("dropped_events", cpInt).addInt(res.Dropped, true)
			return t, nil
		})
}
