package engine

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
)

// durationEvent is a B (begin) or E (end) event of the Chrome trace format, set aside by the scan
// because its partner may be in another batch. raw is a copy of its JSON object.
type durationEvent struct {
	idx, off     int64 // ev_idx and byte offset in the file
	begin        bool
	pid, tid     int64
	pidOK, tidOK bool
	ts           int64
	hasTS        bool
	raw          []byte
	// name and cat, unescaped; nil when absent or empty. An E that has them closes only a B with the
	// same (durationCloses).
	name, cat []byte
}

// matchText is a B/E event's name or cat as pairing compares it: the string's text, or nil for none.
func matchText(v []byte, esc bool) []byte {
	if len(v) == 0 {
		return nil
	}
	if esc {
		return []byte(unescape(v))
	}
	return append([]byte(nil), v...)
}

// durationCloses reports whether the E event e may close the open B event b, as Perfetto's slice tracker
// decides: an E with a category closes only a B of that category, an E with a name only a B of that name
// or without one.
func durationCloses(e, b *durationEvent) bool {
	return (e.cat == nil || bytes.Equal(e.cat, b.cat)) && (e.name == nil || b.name == nil || bytes.Equal(e.name, b.name))
}

// pairDurationEvents pairs the file's B and E events as Perfetto does: per thread (pid, tid), in
// timestamp order (file order at equal timestamps), an E closes the latest B still open that it may
// close (durationCloses: the latest of all when the E has neither name nor category, as most do). A
// pair becomes one complete event at the B's ev_idx, whose dur is E.ts − B.ts and whose args are the
// B's with the E's merged in (the E's win on a shared key; both must be objects, else the B's stay as
// they are); it goes to events like an X event, so nesting, steps and every analysis see it. An E with no open B and a B never closed stay as they were, in other_events. The
// result is the batches to append to the file's (none when it has no B or E event), at most
// batchMaxEvents events each like the scan's; their events were already counted in their own batches.
func pairDurationEvents(batches []*parsedBatch, bld *builders) ([]*parsedBatch, error) {
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
		default:
			j := len(stack) - 1
			for j >= 0 && !durationCloses(&all[i], &all[stack[j]]) {
				j--
			}
			if j >= 0 {
				b := stack[j]
				open[key] = slices.Delete(stack, j, j+1)
				endOf[b], endOf[i] = i, -2
			}
		}
	}

	var out []*parsedBatch
	var rb *rawBatch
	var data []byte
	flush := func() error {
		if rb == nil {
			return nil
		}
		rb.data = data
		pb, err := parseBatch(rb, bld)
		if err != nil {
			return err
		}
		pb.count = 0
		pb.pairedDurations = true
		out = append(out, pb)
		rb, data = nil, nil
		return nil
	}
	for i, d := range all {
		text := d.raw
		switch endOf[i] {
		case -2:
			continue // merged into its B
		case -1:
		default:
			var err error
			if text, err = completeEvent(d, all[endOf[i]]); err != nil {
				return nil, &EventError{Index: d.idx, Offset: d.off, Msg: err.Error()}
			}
		}
		if rb == nil {
			rb = &rawBatch{seq: len(batches) + len(out), durationPass: true}
		}
		rb.offsets = append(rb.offsets, int64(len(data)))
		rb.fileOffsets = append(rb.fileOffsets, d.off)
		data = append(data, text...)
		rb.ends = append(rb.ends, int32(len(data)))
		rb.idxs = append(rb.idxs, d.idx)
		if len(rb.ends) >= batchMaxEvents || len(data) >= batchMaxBytes {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// completeEvent is the JSON of the X event that the pair (b, e) stands for: b's object with ph, dur
// and the merged args appended (the scan keeps a key's last value), so that every other field stays
// as written.
func completeEvent(b, e durationEvent) ([]byte, error) {
	dur := e.ts - b.ts // e sorts after b, so only an overflow is negative
	if dur < 0 {
		return nil, fmt.Errorf("B/E pair ending at event %d: the duration does not fit in int64 ns", e.idx)
	}
	var bev, eev rawEvent
	if _, err := scanEvent(b.raw, &bev); err != nil {
		return nil, err
	}
	if _, err := scanEvent(e.raw, &eev); err != nil {
		return nil, err
	}
	body := bytes.TrimRight(b.raw, " \t\r\n")
	body = body[:len(body)-1] // the closing '}'
	out := append([]byte(nil), body...)
	if len(bytes.TrimSpace(body)) > 1 {
		out = append(out, ',')
	}
	out = append(out, `"ph":"X","dur":`...)
	out = append(out, nsToUsText(dur)...)
	if args := mergedArgs(bev.argsCompact, eev.argsCompact); args != nil {
		out = append(out, `,"args":`...)
		out = append(out, args...)
	}
	return append(out, '}'), nil
}

// mergedArgs is the object begin with the members of end added, end's replacing begin's of the same
// key. nil means that begin stands: end has no args, or either is not an object.
func mergedArgs(begin, end []byte) []byte {
	if len(end) == 0 || isNull(end) {
		return nil
	}
	if len(begin) == 0 || isNull(begin) {
		return end
	}
	bm, ok1 := objectMembers(begin)
	em, ok2 := objectMembers(end)
	if !ok1 || !ok2 {
		return nil
	}
	endKeys := map[string]bool{}
	for _, m := range em {
		endKeys[string(m.key)] = true
	}
	var kept []member
	for _, m := range bm {
		if !endKeys[string(m.key)] {
			kept = append(kept, m)
		}
	}
	out := []byte{'{'}
	for i, m := range append(kept, em...) {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(append(out, m.key...), ':'), m.value...)
	}
	return append(out, '}')
}

// member is one key (with its quotes) and value of a JSON object, as written.
type member struct{ key, value []byte }

// objectMembers splits a JSON object into its members; ok is false for anything else.
func objectMembers(obj []byte) (ms []member, ok bool) {
	if len(obj) < 2 || obj[0] != '{' {
		return nil, false
	}
	i := skipWS(obj, 1)
	if i < len(obj) && obj[i] == '}' {
		return nil, true
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return nil, false
		}
		ke, ok := stringEnd(obj, i+1)
		if !ok {
			return nil, false
		}
		j := skipWS(obj, ke)
		if j >= len(obj) || obj[j] != ':' {
			return nil, false
		}
		j = skipWS(obj, j+1)
		ve, err := valueEndIn(obj, j)
		if err != nil {
			return nil, false
		}
		ms = append(ms, member{obj[i:ke], obj[j:ve]})
		if i = skipWS(obj, ve); i >= len(obj) {
			return nil, false
		}
		switch obj[i] {
		case '}':
			return ms, true
		case ',':
			i = skipWS(obj, i+1)
		default:
			return nil, false
		}
	}
}

// nsToUsText writes ns (≥ 0) as the µs decimal that usToNs reads back exactly.
func nsToUsText(ns int64) string {
	return strconv.FormatInt(ns/1000, 10) + fmt.Sprintf(".%03d", ns%1000)
}
