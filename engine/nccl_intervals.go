package engine

import (
	"strings"
)

// ncclInterval is one row of nccl_events: a b/e pair, or a begin or an end without its partner.
type ncclInterval struct {
	evIdx              int64 // array position of the "b" (of the lone "e" for an unmatched end)
	parentIdx, rootIdx int64 // -1 when none
	opIdx              int64 // enclosing (or own) COLL / P2P event, -1 when none
	depth              int
	cat, name          string
	id                 int64
	hasID              bool
	pid                int64
	ts, end            int64
	hasTS, hasEnd      bool
	status             string // complete, begin_only, end_only
	quirk              string
	args               []ncclKV
}

// ncclAPICats are the host-side API events that older plugins printed with ts 0 (start not recorded).
var ncclAPICats = map[string]bool{"GROUP_API": true, "COLL_API": true, "P2P_API": true, "KERNEL_LAUNCH": true}

// buildNCCLIntervals pairs begins with ends and reconstructs the hierarchy from the print order
// (the plugin prints each event's children between its b and its e). An "e" closes the innermost
// open event with the same (cat, id, name), else the same (cat, id); events left open inside it, and
// ends that close nothing, are kept with their status rather than dropped.
func buildNCCLIntervals(evs []ncclRawEvent, q *ncclQuirks) []ncclInterval {
	out := make([]ncclInterval, 0, len(evs)/2+1)
	var stack []int // indices into out
	top := func() int64 {
		if len(stack) == 0 {
			return -1
		}
		return int64(stack[len(stack)-1])
	}
	for _, ev := range evs {
		switch ev.ph {
		case "b":
			iv := ncclInterval{
				evIdx: int64(ev.elem), cat: ev.cat, name: ev.name, id: ev.id, hasID: ev.hasID, pid: ev.pid,
				ts: ev.ts, hasTS: true, status: "begin_only", args: ev.args,
			}
			var quirks []string
			if ev.tsZero && ncclAPICats[ev.cat] {
				iv.hasTS = false
				q.apiZeroTS++
				quirks = append(quirks, "ts_zero")
			}
			if ev.cat == "GPU" {
				for _, kv := range ev.args {
					if kv.key == "StopGpuClk" && kv.json == "0" {
						q.stopGpuClk0++
						quirks = append(quirks, "stop_gpu_clk_zero")
					}
				}
			}
			for _, kv := range ev.args {
				if kv.bare {
					quirks = append(quirks, "unquoted_value")
					break
				}
			}
			iv.quirk = strings.Join(quirks, ",")
			iv.parentIdx, iv.rootIdx, iv.opIdx = -1, -1, -1
			// print_event.cc prints a channel's proxy operations inside its KernelCh b/e, but both are
			// children of the collective in NCCL's model: skip KernelCh when choosing a PROXY's parent.
			for j := len(stack) - 1; j >= 0; j-- {
				if ev.cat == "PROXY" && out[stack[j]].cat == "GPU" {
					continue
				}
				iv.parentIdx = int64(stack[j])
				break
			}
			out = append(out, iv)
			stack = append(stack, len(out)-1)
		case "e":
			k := -1
			for pass := 0; pass < 2 && k < 0; pass++ {
				for j := len(stack) - 1; j >= 0; j-- {
					o := &out[stack[j]]
					if o.cat == ev.cat && o.id == ev.id && (pass == 1 || o.name == ev.name) {
						k = j
						break
					}
				}
			}
			if k < 0 {
				iv := ncclInterval{
					evIdx: int64(ev.elem), cat: ev.cat, name: ev.name, id: ev.id, hasID: ev.hasID, pid: ev.pid,
					end: ev.ts, hasEnd: true, status: "end_only", parentIdx: top(), rootIdx: -1, opIdx: -1,
				}
				out = append(out, iv)
				continue
			}
			o := &out[stack[k]]
			o.end, o.hasEnd, o.status = ev.ts, true, "complete"
			stack = stack[:k]
		}
	}
	// Parents precede children in out, so one forward pass resolves roots, depths and enclosing operations;
	// parent positions are converted from out indices to ev_idx values at the same time.
	for i := range out {
		iv := &out[i]
		if iv.parentIdx >= 0 {
			p := &out[iv.parentIdx]
			iv.rootIdx, iv.opIdx, iv.depth = p.rootIdx, p.opIdx, p.depth+1
			iv.parentIdx = p.evIdx
		} else {
			iv.rootIdx = iv.evIdx
		}
		if iv.cat == "COLL" || iv.cat == "P2P" {
			iv.opIdx = iv.evIdx
		}
	}
	return out
}

// argsJSON renders the args entries as one JSON object.
func (iv *ncclInterval) argsJSON() any {
	if len(iv.args) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, kv := range iv.args {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(quoteJSON(kv.key))
		b.WriteByte(':')
		b.WriteString(kv.json)
	}
	b.WriteByte('}')
	return b.String()
}

func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
