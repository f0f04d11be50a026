package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// durationEvent is a B (begin) or E (end) event of the Chrome trace format, set aside by the scan
// because its partner may be in another batch. raw is a copy of its JSON object.
type durationEvent struct {
	idx          int64
	begin        bool
	pid, tid     int64
	pidOK, tidOK bool
	ts           int64
	hasTS        bool
	raw          []byte
}

// pairDurationEvents pairs the file's B and E events as Perfetto and the Chrome trace viewer do:
// per thread (pid, tid), in timestamp order (file order at equal timestamps), an E closes the latest
// B still open. A pair becomes one complete event at the B's ev_idx, whose dur is E.ts − B.ts and
// whose args are the B's with the E's merged in (the E's win on a shared key); it goes to events like
// an X event, so nesting, steps and every analysis see it. An E with no open B and a B never closed
// stay as they were, in other_events. The result is one batch more (nil when the file has no B or E
// event), whose events were already counted in their own batches.
func pairDurationEvents(batches []*parsedBatch, bld *builders) (*parsedBatch, error) {
	var all []durationEvent
	for _, b := range batches {
		all = append(all, b.durationEvents...)
		b.durationEvents = nil
	}
	if len(all) == 0 {
		return nil, nil
	}
	// Batches arrive in file order and keep it, so all is in ev_idx order already.
	order := make([]int, 0, len(all))
	for i, d := range all {
		if d.hasTS {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmpInt64(all[x].ts, all[y].ts) })
	endOf := make([]int, len(all)) // for a paired B: its E; for a paired E: -2
	for i := range endOf {
		endOf[i] = -1
	}
	open := map[[2]int64][]int{}
	for _, i := range order {
		d := all[i]
		key := [2]int64{d.pid, d.tid}
		if !d.pidOK {
			key[0] = -1 << 62
		}
		if !d.tidOK {
			key[1] = -1 << 62
		}
		stack := open[key]
		switch {
		case d.begin:
			open[key] = append(stack, i)
		case len(stack) > 0:
			b := stack[len(stack)-1]
			open[key] = stack[:len(stack)-1]
			endOf[b], endOf[i] = i, -2
		}
	}

	rb := &rawBatch{seq: len(batches), durationPass: true}
	var data []byte
	for i, d := range all {
		text := d.raw
		switch endOf[i] {
		case -2:
			continue // merged into its B
		case -1:
		default:
			var err error
			if text, err = completeEvent(d, all[endOf[i]]); err != nil {
				return nil, &EventError{Index: d.idx, Offset: -1, Msg: err.Error()}
			}
		}
		rb.offsets = append(rb.offsets, int64(len(data)))
		data = append(data, text...)
		rb.ends = append(rb.ends, int32(len(data)))
		rb.idxs = append(rb.idxs, d.idx)
	}
	rb.data = data
	pb, err := parseBatch(rb, bld)
	if err != nil {
		return nil, err
	}
	pb.count = 0
	pb.pairedDurations = true
	return pb, nil
}

// completeEvent is the JSON of the X event that the pair (b, e) stands for.
func completeEvent(b, e durationEvent) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b.raw, &fields); err != nil {
		return nil, fmt.Errorf("B event: %v", err)
	}
	args, err := mergedArgs(fields["args"], e.raw)
	if err != nil {
		return nil, err
	}
	if args != nil {
		fields["args"] = args
	}
	dur := e.ts - b.ts // e sorts after b, so only an overflow is negative
	if dur < 0 {
		return nil, fmt.Errorf("B/E pair ending at event %d: the duration does not fit in int64 ns", e.idx)
	}
	fields["ph"] = json.RawMessage(`"X"`)
	fields["dur"] = json.RawMessage(nsToUsText(dur))
	return json.Marshal(fields)
}

// mergedArgs is the B's args object with the E event's args merged in; nil when neither has any.
func mergedArgs(begin json.RawMessage, endRaw []byte) (json.RawMessage, error) {
	var end struct {
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(endRaw, &end); err != nil {
		return nil, fmt.Errorf("E event: %v", err)
	}
	if isEmptyArgs(end.Args) {
		return nil, nil
	}
	if isEmptyArgs(begin) {
		return end.Args, nil
	}
	merged := map[string]json.RawMessage{}
	for _, part := range []json.RawMessage{begin, end.Args} {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(part, &m); err != nil {
			return nil, fmt.Errorf("args of a B/E pair: %v", err)
		}
		for k, v := range m {
			merged[k] = v
		}
	}
	return json.Marshal(merged)
}

func isEmptyArgs(a json.RawMessage) bool {
	a = bytes.TrimSpace(a)
	return len(a) == 0 || string(a) == "null" || string(a) == "{}"
}

// nsToUsText writes ns (≥ 0) as the µs decimal that usToNs reads back exactly.
func nsToUsText(ns int64) string {
	return strconv.FormatInt(ns/1000, 10) + fmt.Sprintf(".%03d", ns%1000)
}
