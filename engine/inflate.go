package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
)

// InflateOptions sizes a synthetic job made from one real trace.
type InflateOptions struct {
	Ranks  int    // files to write, one per rank
	Steps  int    // ProfilerSteps per rank
	Seed   uint64 // jitter seed: the same seed gives byte-identical files
	Gzip   bool   // write .json.gz
	OutDir string
}

var stepName = regexp.MustCompile(`^(ProfilerStep\s*#\s*)(\d+)$`)

// inflateGap separates two replicated step windows, ns; per-copy jitter stays below it so copies
// never overlap.
const inflateGap = 20_000

// Inflate writes opts.Ranks trace files of opts.Steps ProfilerSteps each, made by replicating the
// ProfilerStep window of the trace at src: every replica is shifted in time (plus a per-rank offset and
// a small per-copy jitter, deterministic in Seed), gets fresh correlation, External id and flow ids and
// renumbered step names, and keeps every phase of the original (flows, counters, sync events, every
// thread). GPU work goes with the step that launched it. Events before the first step are written once;
// events after the last step's end follow the last replica. It returns the paths written.
//
// The source is read whole (it is a real trace of modest size); the output is streamed.
func Inflate(ctx context.Context, src string, opts InflateOptions) ([]string, error) {
	if opts.Ranks < 1 || opts.Steps < 1 {
		return nil, fmt.Errorf("inflate: --ranks and --steps must be >= 1")
	}
	tr, err := readWholeTrace(src)
	if err != nil {
		return nil, fmt.Errorf("inflate %s: %w", src, err)
	}
	if len(tr.steps) == 0 {
		return nil, fmt.Errorf("inflate %s: no ProfilerStep#N events to replicate", src)
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(src), ".gz"), ".json")
	base = strings.TrimSuffix(base, ".pt.trace")
	base = strings.Trim(rankInName.ReplaceAllString(base, ""), "-_. ") // the output names its own rank
	if base == "" {
		base = "trace"
	}
	var out []string
	for r := 0; r < opts.Ranks; r++ {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		name := fmt.Sprintf("%s_rank%d.json", base, r)
		if opts.Gzip {
			name += ".gz"
		}
		path := filepath.Join(opts.OutDir, name)
		if err := tr.writeRank(path, r, opts); err != nil {
			return out, fmt.Errorf("inflate: write %s: %w", path, err)
		}
		out = append(out, path)
	}
	return out, nil
}

// inflEvent is one source event, decoded, with the facts replication needs.
type inflEvent struct {
	fields map[string]any
	ts     int64 // ns; valid when hasTS
	anchor int64 // ts of the launch for GPU work, else ts: decides the step an event belongs to
	hasTS  bool
	phase  int // 0 before the steps, 1 inside the step window, 2 after it
}

type wholeTrace struct {
	topKeys  []string
	top      map[string]json.RawMessage
	events   []inflEvent
	steps    []int64 // step start times, ns, ascending
	winStart int64
	winEnd   int64
	corrSpan int64 // ids are offset by copy·span
	extSpan  int64
	flowSpan int64
}

func readWholeTrace(path string) (*wholeTrace, error) {
	rc, err := openTrace(path, new(atomic.Int64))
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	raw, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	tr := &wholeTrace{top: map[string]json.RawMessage{}}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a Kineto trace object")
	}
	var evRaw []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if key == "traceEvents" {
			if err := json.Unmarshal(v, &evRaw); err != nil {
				return nil, fmt.Errorf("traceEvents: %w", err)
			}
			continue
		}
		tr.topKeys = append(tr.topKeys, key)
		tr.top[key] = v
	}
	tr.events = make([]inflEvent, 0, len(evRaw))
	tr.winStart, tr.winEnd = 1<<62, -1<<62
	for i, r := range evRaw {
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil || m == nil {
			continue // the trailing {} some writers add, or junk: not replicated
		}
		ev := inflEvent{fields: m}
		if n, ok := m["ts"].(json.Number); ok {
			if ns, err := usToNs([]byte(n)); err == nil {
				ev.ts, ev.hasTS = ns, true
			}
		}
		if name, _ := m["name"].(string); m["ph"] == "X" && ev.hasTS && stepName.MatchString(name) {
			if cat, _ := m["cat"].(string); cat == "user_annotation" || cat == "" {
				dur, err := usToNs([]byte(fmt.Sprint(m["dur"])))
				if err != nil {
					return nil, fmt.Errorf("event %d: step without a dur", i)
				}
				tr.steps = append(tr.steps, ev.ts)
				tr.winStart = min(tr.winStart, ev.ts)
				tr.winEnd = max(tr.winEnd, ev.ts+dur)
			}
		}
		args, _ := m["args"].(map[string]any)
		tr.corrSpan = max(tr.corrSpan, numArg(args, "correlation")+1, numArg(args, "wait_on_cuda_event_record_corr_id")+1)
		tr.extSpan = max(tr.extSpan, numArg(args, "External id")+1)
		if ph, _ := m["ph"].(string); ph == "s" || ph == "t" || ph == "f" {
			if id, err := strconv.ParseInt(fmt.Sprint(m["id"]), 10, 64); err == nil {
				tr.flowSpan = max(tr.flowSpan, id+1)
			}
		}
		tr.events = append(tr.events, ev)
	}
	sort.Slice(tr.steps, func(a, b int) bool { return tr.steps[a] < tr.steps[b] })
	tr.flowSpan = max(tr.flowSpan, tr.corrSpan)
	// GPU work belongs to the step of its launch: anchor every event sharing a correlation id (the
	// launch, its kernel, their ac2g flow) at the earliest of them, the launch call.
	launchTS := map[int64]int64{}
	for i := range tr.events {
		if c := tr.events[i].corr(); c >= 0 && tr.events[i].hasTS {
			if t, ok := launchTS[c]; !ok || tr.events[i].ts < t {
				launchTS[c] = tr.events[i].ts
			}
		}
	}
	for i := range tr.events {
		ev := &tr.events[i]
		ev.anchor = ev.ts
		if t, ok := launchTS[ev.corr()]; ok {
			ev.anchor = t
		}
		switch {
		case !ev.hasTS || ev.fields["ph"] == "M":
			ev.phase = 0
		case ev.anchor < tr.winStart:
			ev.phase = 0
		case ev.anchor < tr.winEnd:
			ev.phase = 1
		default:
			ev.phase = 2
		}
	}
	return tr, nil
}

// corr returns the correlation id that ties the event to a launch (args.correlation, or the id of an
// ac2g flow), -1 if none.
func (ev *inflEvent) corr() int64 {
	args, _ := ev.fields["args"].(map[string]any)
	if c := numArg(args, "correlation"); c >= 0 {
		return c
	}
	if cat, _ := ev.fields["cat"].(string); cat == "ac2g" || cat == "async_cpu_to_gpu" {
		if id, err := strconv.ParseInt(fmt.Sprint(ev.fields["id"]), 10, 64); err == nil {
			return id
		}
	}
	return -1
}

func numArg(args map[string]any, key string) int64 {
	if n, ok := args[key].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			return v
		}
	}
	return -1
}

func (tr *wholeTrace) writeRank(path string, rank int, opts InflateOptions) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var w io.Writer = f
	var gz *gzip.Writer
	if opts.Gzip {
		gz, _ = gzip.NewWriterLevel(f, gzip.BestSpeed)
		w = gz
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	rng := rand.New(rand.NewPCG(opts.Seed, uint64(rank)))
	rankOffset := rng.Int64N(50_000) // ns
	period := tr.winEnd - tr.winStart + inflateGap
	perCopy := len(tr.steps)
	copies := (opts.Steps + perCopy - 1) / perCopy
	lastCopySteps := opts.Steps - (copies-1)*perCopy
	cutLast := int64(1 << 62) // events of the last copy at or after this source ts are dropped
	if lastCopySteps < perCopy {
		cutLast = tr.steps[lastCopySteps]
	}

	bw.WriteString("{\n")
	for _, k := range tr.topKeys {
		v := tr.top[k]
		if k == "distributedInfo" {
			v = rankInfo(v, rank, opts.Ranks)
		}
		fmt.Fprintf(bw, "  %q: %s,\n", k, v)
	}
	if _, ok := tr.top["distributedInfo"]; !ok {
		fmt.Fprintf(bw, "  \"distributedInfo\": {\"rank\": %d, \"world_size\": %d},\n", rank, opts.Ranks)
	}
	bw.WriteString("  \"traceEvents\": [\n")
	first := true
	emit := func(ev *inflEvent, copyIdx int, shift int64) error {
		b, err := json.Marshal(tr.replica(ev, copyIdx, shift, perCopy))
		if err != nil {
			return err
		}
		if !first {
			bw.WriteString(",\n")
		}
		first = false
		_, err = bw.Write(b)
		return err
	}
	for i := range tr.events {
		if ev := &tr.events[i]; ev.phase == 0 {
			if err := emit(ev, 0, rankOffset); err != nil {
				return err
			}
		}
	}
	var lastShift int64
	for c := 0; c < copies; c++ {
		jitter := int64(0)
		if c > 0 {
			jitter = rng.Int64N(inflateGap / 2)
		}
		shift := rankOffset + int64(c)*period + jitter
		lastShift = shift
		for i := range tr.events {
			ev := &tr.events[i]
			if ev.phase != 1 || (c == copies-1 && ev.anchor >= cutLast) {
				continue
			}
			if err := emit(ev, c, shift); err != nil {
				return err
			}
		}
	}
	for i := range tr.events {
		if ev := &tr.events[i]; ev.phase == 2 {
			if err := emit(ev, copies-1, lastShift); err != nil {
				return err
			}
		}
	}
	bw.WriteString("\n  ]\n}\n")
	if err := bw.Flush(); err != nil {
		return err
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			return err
		}
	}
	return f.Close()
}

// replica returns the event of copy c shifted by shift ns, with ids and step numbers renumbered. The
// source map is not modified (it is shared by every copy and rank).
func (tr *wholeTrace) replica(ev *inflEvent, c int, shift int64, perCopy int) map[string]any {
	out := make(map[string]any, len(ev.fields))
	for k, v := range ev.fields {
		out[k] = v
	}
	if ev.hasTS {
		out["ts"] = json.Number(nsToUs(ev.ts + shift))
	}
	if c == 0 {
		return out
	}
	if name, ok := out["name"].(string); ok {
		if m := stepName.FindStringSubmatch(name); m != nil {
			n, _ := strconv.Atoi(m[2])
			out["name"] = m[1] + strconv.Itoa(n+c*perCopy)
		}
	}
	if args, ok := out["args"].(map[string]any); ok {
		na := make(map[string]any, len(args))
		for k, v := range args {
			na[k] = v
		}
		for key, span := range map[string]int64{"correlation": tr.corrSpan, "wait_on_cuda_event_record_corr_id": tr.corrSpan, "External id": tr.extSpan} {
			if v := numArg(args, key); v > 0 {
				na[key] = json.Number(strconv.FormatInt(v+int64(c)*span, 10))
			}
		}
		out["args"] = na
	}
	if ph, _ := out["ph"].(string); ph == "s" || ph == "t" || ph == "f" {
		if id, err := strconv.ParseInt(fmt.Sprint(out["id"]), 10, 64); err == nil {
			span := tr.flowSpan
			if cat, _ := out["cat"].(string); cat == "ac2g" || cat == "async_cpu_to_gpu" {
				span = tr.corrSpan // ac2g flow ids are correlation ids
			}
			out["id"] = json.Number(strconv.FormatInt(id+int64(c)*span, 10))
		}
	}
	return out
}

// nsToUs writes ns as Kineto's decimal microseconds with three decimals.
func nsToUs(ns int64) string {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%03d", sign, ns/1000, ns%1000)
}

// rankInfo rewrites distributedInfo's rank and world_size, keeping its other keys.
func rankInfo(raw json.RawMessage, rank, world int) json.RawMessage {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&m) != nil || m == nil {
		m = map[string]any{}
	}
	m["rank"] = rank
	m["world_size"] = world
	b, _ := json.Marshal(m)
	return b
}
