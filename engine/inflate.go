package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"

	"tracesql/internal/arrayrepair"
	"tracesql/internal/outdir"
)

// InflateOptions sizes a synthetic job made from one real trace.
type InflateOptions struct {
	Ranks  int    // files to write, one per rank
	Steps  int    // ProfilerSteps per rank
	Seed   uint64 // jitter seed: the same seed gives byte-identical files
	Gzip   bool   // write .json.gz
	OutDir string
}

// InflateVersion changes whenever Inflate writes different bytes for the same input and options, so
// that inputs cached by the benchmarks are made again. 2: replicas after the GPU work of the previous
// one, GPU annotations with their steps, step numbers with gaps. 3: events spanning the window span
// every copy; the events after a last copy cut short follow its end. 4: the steps are the loader's
// (cpu_op steps, names with text after N; no step without a category), the 2021 spellings of the
// external id and of launch flows are renumbered and replicated with their launch, top-level keys are
// JSON-quoted. 5: the CPU events leading into the window are copied with it; strings are those the loader
// reads (a backslash that starts no escape, raw control characters, invalid UTF-8).
const InflateVersion = 5

// inflateGap separates two replicated step windows, ns; per-copy jitter stays below it so copies
// never overlap.
const inflateGap = 20_000

// Inflate writes opts.Ranks trace files of opts.Steps ProfilerSteps each, made by replicating the
// ProfilerStep window of the trace at src: every replica is shifted in time (plus a per-rank offset and
// a small per-copy jitter, deterministic in Seed), gets fresh correlation, External id and flow ids and
// renumbered step names, and keeps every phase of the original (flows, counters, sync events, every
// thread). GPU work goes with the step that launched it (a GPU-side annotation with the work it
// covers), and a replica starts only after the previous one's GPU work has ended, so that no stream
// runs two kernels at once. Events before the first step are written once; events after the last
// step's end follow the last replica. opts.OutDir must not exist or be empty (files of an earlier
// job left there would be loaded with this one). It returns the paths written.
//
// The source is read whole (it is a real trace of modest size); the output is streamed.
func Inflate(ctx context.Context, src string, opts InflateOptions) ([]string, error) {
	if opts.Ranks < 1 || opts.Steps < 1 {
		return nil, fmt.Errorf("inflate %s: --ranks and --steps must be >= 1", src)
	}
	if opts.OutDir == "" {
		return nil, fmt.Errorf("inflate %s: no output directory", src)
	}
	if st, err := os.Stat(opts.OutDir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("inflate %s: output %s is not a directory", src, opts.OutDir)
	}
	if ents, err := os.ReadDir(opts.OutDir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("inflate %s: output directory %s is not empty (refusing to mix two jobs)", src, opts.OutDir)
	}
	// Before reading the source (which can take a while): a directory that cannot be written is
	// reported as such, not as whatever the free-space check makes of it (read-only file systems
	// and /proc report 0 bytes free).
	created, err := makeWritableDir(opts.OutDir)
	if err != nil {
		return nil, fmt.Errorf("inflate %s: %w", src, err)
	}
	writing := false
	defer func() {
		if !writing { // a refused job leaves no directories behind
			outdir.RemoveEmpty(created)
		}
	}()
	// The loader's parse first: the inflator reads with encoding/json, which takes what the loader refuses
	// (text after the trace) and says less of what both refuse (no event, no byte offset). A source the
	// loader cannot load would make output it cannot load either.
	st, err := os.Stat(src)
	if err != nil {
		return nil, fmt.Errorf("inflate %s: %w", src, err)
	}
	if IsNCCLProfile(src) {
		// (its events are no Chrome trace's: encoding/json's words about its quirks came out, r71 #4)
		return nil, fmt.Errorf("inflate %s: an NCCL profiler-plugin file, not a Kineto trace: inflate replicates a Kineto trace's ProfilerSteps", src)
	}
	pf, err := parseFile(ctx, src, st.Size(), LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("inflate %s: %w", src, err)
	}
	pf.release()
	tr, err := readWholeTrace(src)
	if err != nil {
		return nil, fmt.Errorf("inflate %s: %w", src, err)
	}
	if len(tr.steps) == 0 {
		return nil, fmt.Errorf("inflate %s: no ProfilerStep#N events to replicate", src)
	}
	if err := tr.checkRange(opts); err != nil {
		return nil, fmt.Errorf("inflate %s: %w", src, err)
	}
	// Fail now rather than after hours of writing (a typo in --ranks or --steps).
	if need, free := tr.estimateBytes(opts), freeBytes(opts.OutDir); free >= 0 && need > float64(free) {
		return nil, fmt.Errorf("inflate %s: %d ranks × %d steps need about %s, and %s has %s free",
			src, opts.Ranks, opts.Steps, sizeText(need), opts.OutDir, sizeText(float64(free)))
	}
	writing = true
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(src), ".gz"), ".json")
	base = strings.TrimSuffix(base, ".pt.trace")
	base = strings.Trim(stripRanks(base), "-_. ") // the output names its own rank
	if base == "" {
		base = "trace"
	}
	// Each rank is written under a .part name that no load takes, and renamed once all are written: a
	// run killed where it cannot clean up (kill -9, out of memory) leaves no files that pass for a job
	// of fewer ranks.
	var out, parts []string
	fail := func(err error) ([]string, error) {
		// A truncated file would fail the load of the whole directory, and the ranks already written
		// would pass for a smaller job: the directory is left as it was found.
		for _, p := range append(out, parts...) {
			os.Remove(p)
		}
		outdir.RemoveEmpty(created)
		return nil, fmt.Errorf("inflate %s: %w", src, err)
	}
	for r := 0; r < opts.Ranks; r++ {
		name := fmt.Sprintf("%s_rank%d.json", base, r)
		if opts.Gzip {
			name += ".gz"
		}
		path := filepath.Join(opts.OutDir, name)
		parts = append(parts, path+".part")
		if err := tr.writeRank(ctx, path+".part", r, opts); err != nil {
			return fail(fmt.Errorf("write %s: %w", path, unwrapPath(err)))
		}
	}
	for _, p := range parts {
		path := strings.TrimSuffix(p, ".part")
		if err := os.Rename(p, path); err != nil {
			return fail(err)
		}
		out = append(out, path)
	}
	return out, nil
}

// sizeText writes a byte count in GB, or in MB below 1 GB (both sides of "need 0.0 GB, 0.0 GB free").
func sizeText(b float64) string {
	if b < 1e9 {
		return fmt.Sprintf("%.1f MB", b/1e6)
	}
	return fmt.Sprintf("%.1f GB", b/1e9)
}

// unwrapPath drops the *os.PathError around err, whose message names the file again ("write x: write
// x: no space left on device").
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// freeBytes is diskFree, replaced in tests.
var freeBytes = diskFree

// makeWritableDir creates dir (and its missing parents) and checks that a file can be created in
// it, by creating one: permission bits say nothing of read-only mounts, ACLs or root. It returns the
// directories it created, deepest last.
func makeWritableDir(dir string) (created []string, err error) {
	if created, err = outdir.Make(dir); err != nil {
		return nil, fmt.Errorf("cannot create output directory %s: %w", dir, err)
	}
	probe, err := os.CreateTemp(dir, ".tracesql-inflate-probe-*")
	if err != nil {
		outdir.RemoveEmpty(created)
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the probe's random name would only confuse
		}
		return nil, fmt.Errorf("output directory %s is not writable: %w", dir, err)
	}
	probe.Close()
	if err := os.Remove(probe.Name()); err != nil {
		outdir.RemoveEmpty(created)
		return nil, fmt.Errorf("output directory %s: remove %s: %w", dir, probe.Name(), err)
	}
	return created, nil
}

// estimateBytes estimates the size of the files Inflate writes, from the source's bytes per event:
// the events outside the step window once per rank, those inside once per copy of the window.
func (tr *wholeTrace) estimateBytes(opts InflateOptions) float64 {
	if len(tr.events) == 0 || len(tr.steps) == 0 {
		return 0
	}
	var once, window float64
	for i := range tr.events {
		if tr.events[i].phase == 1 {
			window++
		} else {
			once++
		}
	}
	perEvent := float64(tr.srcBytes) / float64(len(tr.events))
	copies := float64(opts.Steps) / float64(len(tr.steps))
	total := float64(opts.Ranks) * perEvent * (once + window*copies)
	if opts.Gzip {
		total /= 10 // Kineto JSON compresses 10–20× at BestSpeed
	}
	return total
}

// leadsIn reports a CPU event that starts shortly before the window and ends inside it: the Python frames
// of the profiler.step() call that opened the step (sglang's trace has seven). Each copy of the window
// gets one, as each step of a real job does; written once, the copies' events sat seven levels
// shallower than the original's.
func (tr *wholeTrace) leadsIn(ev *inflEvent) bool {
	ph, _ := ev.fields["ph"].(string)
	return ph == "X" && ev.corr() < 0 && ev.end > tr.winStart && ev.end < tr.winEnd &&
		tr.winStart-ev.ts <= tr.winEnd-tr.winStart
}

// maxRankOffset bounds the per-rank offset writeRank adds to every time, ns.
const maxRankOffset = 50_000

// copiesOf is the number of copies of a window of perCopy steps that make steps (the last one cut short).
func copiesOf(steps, perCopy int) int {
	n := steps / perCopy
	if steps%perCopy != 0 {
		n++
	}
	return n
}

// period is the time between two copies of the window, ns (before jitter): the window's events, those
// leading into it and a gap.
func (tr *wholeTrace) period() int64 { return tr.extEnd - tr.winStart + tr.lead + inflateGap }

// checkRange refuses a job whose last copy would end past what the loader takes (an end in ns that fits
// int64): a trace already near the end of that range, or with a huge dur, overflowed into negative times
// or a file the loader refused, after an exit status 0.
func (tr *wholeTrace) checkRange(opts InflateOptions) error {
	copies := int64(copiesOf(opts.Steps, len(tr.steps)))
	maxEnd := int64(math.MinInt64)
	for i := range tr.events {
		maxEnd = max(maxEnd, tr.events[i].end)
	}
	period := tr.period()
	if period > 0 && copies-1 > (math.MaxInt64-maxRankOffset-inflateGap)/period {
		return fmt.Errorf("%d steps (%d copies of the source's %d steps, %s apart) go past the times a trace can hold (ns in int64)", opts.Steps, copies, len(tr.steps), time.Duration(period))
	}
	shift := maxRankOffset + (copies-1)*period + inflateGap/2
	if maxEnd > math.MaxInt64-shift {
		return fmt.Errorf("%d steps would end past the times a trace can hold (ns in int64): the source's events end at %s µs, and the copies add %s µs",
			opts.Steps, nsToUs(maxEnd), nsToUs(shift))
	}
	return nil
}

// inflEvent is one source event, decoded, with the facts replication needs.
type inflEvent struct {
	fields map[string]any
	ts     int64 // ns; valid when hasTS
	end    int64 // ts + dur, ns (ts without a dur)
	anchor int64 // ts of the launch for GPU work, else ts: decides the step an event belongs to
	hasTS  bool
	phase  int // 0 before the steps, 1 inside the step window, 2 after it
}

type wholeTrace struct {
	topKeys  []string
	top      map[string]json.RawMessage
	events   []inflEvent
	steps    []int64 // start time of each step number (its earliest event, over every thread), ns, ascending
	stepLo   int64   // lowest and highest N of ProfilerStep#N: a copy renumbers by hi-lo+1
	stepHi   int64
	winStart int64
	winEnd   int64
	extEnd   int64 // end of the last event of the window, GPU work included: the next copy starts after it
	lead     int64 // how long before the window the events leading into it start (leadsIn), ns
	srcBytes int64 // size of the decompressed source JSON
	subUS    bool  // some time has a fraction of a µs: else the copies' offsets are whole µs too
	bare     bool  // the source holds NaN or ±Infinity outside strings, read as their holders (holdBareNumbers)
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
	raw, err := io.ReadAll(rc) // without a leading byte order mark: openTrace dropped it, as for the load
	if err != nil {
		return nil, err
	}
	if arrayrepair.IsArray(raw) {
		// an array that ends without its ']' (or inside its last event): the events the loader keeps
		if raw, err = io.ReadAll(arrayrepair.NewReader(bytes.NewReader(raw))); err != nil {
			return nil, err
		}
	}
	raw = loaderStrings(raw)
	srcBytes := int64(len(raw))
	raw, bare := holdBareNumbers(raw)
	tr := &wholeTrace{top: map[string]json.RawMessage{}, srcBytes: srcBytes, bare: bare}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var evRaw []json.RawMessage
	tok, err := dec.Token()
	switch {
	case err == nil && tok == json.Delim('['):
		// The plain array form: events only, no metadata (the copies get a distributedInfo).
		if err := json.Unmarshal(raw, &evRaw); err != nil {
			return nil, fmt.Errorf("traceEvents: %w", err)
		}
	case err == nil && tok == json.Delim('{'):
	default:
		return nil, fmt.Errorf("not a Chrome trace: neither an object nor an array of events")
	}
	for tok == json.Delim('{') && dec.More() {
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
	tr.stepLo, tr.stepHi = 1<<62, -1
	stepStart := map[int64]int64{} // step number → earliest start
	beSteps := 0                   // steps written as B/E pairs
	for i, r := range evRaw {
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil || m == nil {
			continue // the trailing {} some writers add, or junk: not replicated
		}
		ev := inflEvent{fields: m}
		if n, ok := timeText(m["ts"]); ok {
			if ns, err := usToNs(n); err == nil {
				ev.ts, ev.hasTS = ns, true
			}
		}
		ev.end = ev.ts
		if n, ok := timeText(m["dur"]); ok && ev.hasTS {
			if dur, err := usToNs(n); err == nil && dur > 0 {
				ev.end = ev.ts + dur
			}
		}
		if ev.hasTS && (ev.ts%1000 != 0 || ev.end%1000 != 0) {
			tr.subUS = true
		}
		name, _ := m["name"].(string)
		if m["ph"] == "B" && ev.hasTS && isStepEvent(m, name) {
			beSteps++
		}
		if m["ph"] == "X" && ev.hasTS && isStepEvent(m, name) {
			dur, err := usToNs([]byte(fmt.Sprint(m["dur"])))
			if err != nil {
				return nil, fmt.Errorf("event %d: step without a dur", i)
			}
			if dur < 0 {
				// the loader keeps it in other_events, outside every step
				tr.events = append(tr.events, ev)
				continue
			}
			// The loader takes any N that fits int64; a copy adds hi-lo+1 to it, so N is kept small.
			n := profilerStep([]byte(name))
			if n < 0 || n >= 1<<40 {
				return nil, fmt.Errorf("event %d: step number of %q out of range", i, name)
			}
			tr.stepLo, tr.stepHi = min(tr.stepLo, n), max(tr.stepHi, n)
			// A step annotated on two threads is one step: --steps counts step numbers.
			if t, ok := stepStart[n]; !ok || ev.ts < t {
				stepStart[n] = ev.ts
			}
			tr.winStart = min(tr.winStart, ev.ts)
			tr.winEnd = max(tr.winEnd, ev.ts+dur)
		}
		args, _ := m["args"].(map[string]any)
		tr.corrSpan = max(tr.corrSpan, numArg(args, "correlation")+1, numArg(args, "wait_on_cuda_event_record_corr_id")+1)
		tr.extSpan = max(tr.extSpan, numArg(args, externalIDKey)+1, numArg(args, legacyExternalIDKey)+1)
		if ph, _ := m["ph"].(string); ph == "s" || ph == "t" || ph == "f" {
			if id, err := strconv.ParseInt(fmt.Sprint(m["id"]), 10, 64); err == nil {
				tr.flowSpan = max(tr.flowSpan, id+1)
				if isLaunchFlow(m) {
					// Renumbered by corrSpan, as the correlation id it stands for: one whose launch
					// is not in the trace must not take the next copy's id either.
					tr.corrSpan = max(tr.corrSpan, id+1)
				}
			}
		}
		tr.events = append(tr.events, ev)
	}
	if len(stepStart) == 0 && beSteps > 0 {
		return nil, fmt.Errorf("its %d ProfilerStep#N are written as B/E pairs: inflate replicates steps written as complete (X) events only", beSteps)
	}
	for _, t := range stepStart {
		tr.steps = append(tr.steps, t)
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
	}
	tr.anchorGPUAnnotations()
	tr.extEnd = tr.winEnd
	for i := range tr.events {
		ev := &tr.events[i]
		switch {
		case !ev.hasTS || ev.fields["ph"] == "M":
			ev.phase = 0
		case ev.anchor < tr.winStart && tr.leadsIn(ev):
			ev.phase = 1
			tr.lead = max(tr.lead, tr.winStart-ev.ts)
		case ev.anchor < tr.winStart:
			ev.phase = 0
		case ev.anchor < tr.winEnd:
			ev.phase = 1
		default:
			ev.phase = 2
		}
		if ev.phase == 1 {
			tr.extEnd = max(tr.extEnd, ev.end)
		}
	}
	return tr, nil
}

// bareNumbers are the values outside JSON that Python's json writes for floats (args such as {"alpha": NaN})
// and the loader takes: encoding/json refused them, and inflate with them (r71 #4).
var bareNumbers = []string{"-Infinity", "Infinity", "NaN"}

// bareHolder is the JSON string that stands for a bare number while encoding/json reads and writes the
// events (a NUL starts it: no trace's string is it).
func bareHolder(lit string) string { return `"\u0000tracesql-` + lit + `"` }

// holdBareNumbers replaces each bare number outside strings with its holder, and says whether there was one.
func holdBareNumbers(raw []byte) ([]byte, bool) {
	var out []byte // nil until the first change
	done := 0      // raw[:done] is in out
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
			continue
		case c == '"':
			inString = true
			continue
		case c != 'N' && c != 'I' && c != '-':
			continue
		}
		for _, lit := range bareNumbers {
			if bytes.HasPrefix(raw[i:], []byte(lit)) {
				out = append(append(out, raw[done:i]...), bareHolder(lit)...)
				i += len(lit) - 1
				done = i + 1
				break
			}
		}
	}
	if out == nil {
		return raw, false
	}
	return append(out, raw[done:]...), true
}

// restoreBare writes the bare numbers of b back in place of their holders.
func (tr *wholeTrace) restoreBare(b []byte) []byte {
	if !tr.bare {
		return b
	}
	for _, lit := range bareNumbers {
		b = bytes.ReplaceAll(b, []byte(bareHolder(lit)), []byte(lit))
	}
	return b
}

// loaderStrings rewrites what the loader takes and encoding/json refuses or reads otherwise, so that the
// copies hold the strings the loader reads in the source: a backslash that starts no JSON escape
// ("C:\Users", loaded as written) is escaped itself, a raw control character becomes its \u escape, and a
// run of invalid UTF-8 one U+FFFD (encoding/json made one per byte). Text with none is returned as it is.
func loaderStrings(raw []byte) []byte {
	raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	isHex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	var out []byte // nil until the first change
	done := 0      // raw[:done] is in out
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !inString {
			inString = c == '"'
			continue
		}
		var repl []byte
		switch {
		case c == '"':
			inString = false
			continue
		case c < 0x20:
			repl = fmt.Appendf(nil, `\u%04x`, c)
		case c == '\\':
			if i+1 < len(raw) && bytes.IndexByte([]byte(`"\/bfnrt`), raw[i+1]) >= 0 {
				i++
				continue
			}
			if i+5 < len(raw) && raw[i+1] == 'u' && isHex(raw[i+2]) && isHex(raw[i+3]) && isHex(raw[i+4]) && isHex(raw[i+5]) {
				i += 5
				continue
			}
			repl = []byte(`\\`)
		default:
			continue
		}
		out = append(append(out, raw[done:i]...), repl...)
		done = i + 1
	}
	if out == nil {
		return raw
	}
	return append(out, raw[done:]...)
}

// anchorGPUAnnotations anchors each GPU-side annotation (gpu_user_annotation: a range on a stream,
// without a correlation id of its own) at the anchor of the first correlated event of its lane that
// starts inside it, so that a step's GPU range goes with that step's kernels, however late the GPU
// runs them.
func (tr *wholeTrace) anchorGPUAnnotations() {
	type laneEv struct{ ts, anchor int64 }
	lane := func(ev *inflEvent) string { return fmt.Sprint(ev.fields["pid"], "\x00", ev.fields["tid"]) }
	lanes := map[string][]laneEv{}
	var annots []*inflEvent
	for i := range tr.events {
		ev := &tr.events[i]
		if !ev.hasTS || ev.fields["ph"] != "X" {
			continue
		}
		if ev.corr() >= 0 {
			k := lane(ev)
			lanes[k] = append(lanes[k], laneEv{ev.ts, ev.anchor})
		} else if cat, _ := ev.fields["cat"].(string); cat == "gpu_user_annotation" {
			annots = append(annots, ev)
		}
	}
	if len(annots) == 0 {
		return
	}
	for _, l := range lanes {
		sort.Slice(l, func(a, b int) bool { return l[a].ts < l[b].ts })
	}
	for _, ev := range annots {
		l := lanes[lane(ev)]
		j := sort.Search(len(l), func(j int) bool { return l[j].ts >= ev.ts })
		if j < len(l) && l[j].ts < max(ev.end, ev.ts+1) {
			ev.anchor = l[j].anchor
		}
	}
}

// corr returns the correlation id that ties the event to a launch (args.correlation, or the id of a
// launch flow), -1 if none.
// timeText is the text of a ts or dur: a number, or a number written as a string, as the loader takes it.
func timeText(v any) ([]byte, bool) {
	switch t := v.(type) {
	case json.Number:
		return []byte(t), true
	case string:
		return []byte(t), true
	}
	return nil, false
}

func (ev *inflEvent) corr() int64 {
	args, _ := ev.fields["args"].(map[string]any)
	if c := numArg(args, "correlation"); c >= 0 {
		return c
	}
	if isLaunchFlow(ev.fields) {
		if id, err := strconv.ParseInt(fmt.Sprint(ev.fields["id"]), 10, 64); err == nil {
			return id
		}
	}
	return -1
}

// isLaunchFlow reports a flow event (either end) from a kernel launch to its GPU work, whose id is the
// launch's correlation id. Both ends go with the launch and are renumbered as its correlation, so that
// they stay in one copy: the end, on the GPU, often lies after the step window, and anchored at its
// own ts it was written once, after the last copy, leaving every other copy's start without an end.
// Kineto writes category ac2g (async_cpu_to_gpu in some versions); 2021 Kineto wrote async, named
// launch.
func isLaunchFlow(fields map[string]any) bool {
	switch ph, _ := fields["ph"].(string); ph {
	case "s", "t", "f":
	default:
		return false
	}
	switch cat, _ := fields["cat"].(string); cat {
	case "ac2g", "async_cpu_to_gpu":
		return true
	case "async":
		return fields["name"] == "launch" // async is a generic name: other writers' flows are not launches
	}
	return false
}

// isStepEvent reports a ProfilerStep#N window by the loader's rule (stepNumber), from the decoded
// event's cat and name.
func isStepEvent(fields map[string]any, name string) bool {
	cls := classOther
	if cat, ok := fields["cat"].(string); ok { // as the loader, which classifies a string cat only
		cls = classify([]byte(cat))
	}
	return stepNumber(cls, []byte(name)) >= 0
}

func numArg(args map[string]any, key string) int64 {
	if n, ok := args[key].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			return v
		}
	}
	return -1
}

func (tr *wholeTrace) writeRank(ctx context.Context, path string, rank int, opts InflateOptions) error {
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
	// A trace in whole µs stays in whole µs: HTA (and compat mode) read a trace with ns times by other
	// rules (every event rounded inward), so sub-µs offsets made the copies differ from their source (r39 #1).
	grain := int64(1)
	if !tr.subUS {
		grain = 1000
	}
	rankOffset := rng.Int64N(maxRankOffset) / grain * grain // ns
	period := tr.period()
	perCopy := len(tr.steps)
	copies := copiesOf(opts.Steps, perCopy)
	lastCopySteps := opts.Steps - (copies-1)*perCopy
	cutLast := int64(1 << 62) // events of the last copy at or after this source ts are dropped
	if lastCopySteps < perCopy {
		cutLast = tr.steps[lastCopySteps]
	}
	shifts := make([]int64, copies)
	for c := range shifts {
		jitter := int64(0)
		if c > 0 {
			jitter = rng.Int64N(inflateGap/2) / grain * grain
		}
		shifts[c] = rankOffset + int64(c)*period + jitter
	}
	// The events after the window follow the last copy as they followed the window; a last copy cut
	// short (--steps not a multiple of the source's steps) ends where its first dropped step began.
	tailShift := shifts[copies-1]
	if cutLast < tr.winEnd {
		tailShift -= tr.winEnd - cutLast
	}

	bw.WriteString("{\n")
	for _, k := range tr.topKeys {
		v := tr.top[k]
		if k == "distributedInfo" {
			v = rankInfo(v, rank, opts.Ranks)
		}
		key, err := json.Marshal(k) // not %q: Go's escapes (\x7f, \U000e0001) are not JSON's
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "  %s: %s,\n", key, tr.restoreBare(v))
	}
	if _, ok := tr.top["distributedInfo"]; !ok {
		fmt.Fprintf(bw, "  \"distributedInfo\": %s,\n", rankInfo(nil, rank, opts.Ranks))
	}
	bw.WriteString("  \"traceEvents\": [\n")
	first := true
	emit := func(ev *inflEvent, copyIdx int, shift int64) error {
		out := tr.replica(ev, copyIdx, shift)
		if ev.phase == 0 && ev.hasTS && ev.end >= tr.winEnd {
			// An event written once that spans the whole window (the profiler's own span, a thread-long
			// range) spans every copy: its end moves with the events after the window.
			if _, ok := timeText(out["dur"]); ok {
				out["dur"] = json.Number(nsToUs(ev.end - ev.ts + tailShift - shift))
			}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		b = tr.restoreBare(b)
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
	for c, shift := range shifts {
		if err := ctx.Err(); err != nil {
			return err
		}
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
			if err := emit(ev, copies-1, tailShift); err != nil {
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
func (tr *wholeTrace) replica(ev *inflEvent, c int, shift int64) map[string]any {
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
	if name, ok := out["name"].(string); ok && strings.HasPrefix(name, "ProfilerStep") {
		// Any event named as a step (the GPU-side annotation too) keeps naming its copy's step. Step
		// numbers need not be consecutive (#1, #3): a copy adds the whole range, so no two copies
		// share a number.
		if start, end := profilerStepDigits([]byte(name)); start >= 0 {
			if n, err := strconv.ParseInt(name[start:end], 10, 64); err == nil && n < 1<<40 {
				out["name"] = name[:start] + strconv.FormatInt(n+int64(c)*(tr.stepHi-tr.stepLo+1), 10) + name[end:]
			}
		}
	}
	if args, ok := out["args"].(map[string]any); ok {
		na := make(map[string]any, len(args))
		for k, v := range args {
			na[k] = v
		}
		for _, id := range [...]struct {
			key  string
			span int64
		}{{"correlation", tr.corrSpan}, {"wait_on_cuda_event_record_corr_id", tr.corrSpan},
			{externalIDKey, tr.extSpan}, {legacyExternalIDKey, tr.extSpan}} { // every spelling the loader reads
			if v := numArg(args, id.key); v > 0 {
				na[id.key] = json.Number(strconv.FormatInt(v+int64(c)*id.span, 10))
			}
		}
		out["args"] = na
	}
	if ph, _ := out["ph"].(string); ph == "s" || ph == "t" || ph == "f" {
		if id, err := strconv.ParseInt(fmt.Sprint(out["id"]), 10, 64); err == nil {
			span := tr.flowSpan
			if isLaunchFlow(out) {
				span = tr.corrSpan // the id is a correlation id, renumbered as the launch's
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
	// Indented, as Kineto writes it: HTA finds a file's rank with a pattern that needs the space after
	// "rank": (hta-spec.md §1.1), and took every compact copy for rank 0.
	b, _ := json.MarshalIndent(m, "  ", "  ")
	return b
}
