package sqlfuncs

import (
	"slices"
	"strings"
	"testing"

	"tracesql/graph"
)

// TestCPSortFrame: the frame's rows come out in ev_idx order with every column moved alike, whether the
// stored rows come in one run, a few (the merge) or many (the counting placement); a duplicate or negative
// ev_idx is an error in each case.
func TestCPSortFrame(t *testing.T) {
	// frameOf makes a frame whose every column is derived from ev_idx, so that a row moved in one
	// column and not another shows.
	frameOf := func(evs []int64) *graph.Frame {
		f := cpNewFrame(len(evs) + 3) // spare capacity, as the reader's size hint leaves
		for _, e := range evs {
			f.EvIdx = append(f.EvIdx, e)
			f.Cat = append(f.Cat, int32(e%7))
			f.Name = append(f.Name, int32(e*3))
			f.Pid, f.Tid = append(f.Pid, e+1), append(f.Tid, e+2)
			f.TS, f.Dur = append(f.TS, 10*e), append(f.Dur, e%5)
			f.Stream, f.Corr, f.IndexCorr = append(f.Stream, e-1), append(f.Corr, e+100), append(f.IndexCorr, -e)
		}
		return f
	}
	runs := func(k, per int) []int64 { // k interleaved ascending runs
		var evs []int64
		for r := range k {
			for i := range per {
				evs = append(evs, int64(i*k+r))
			}
		}
		return evs
	}
	for _, c := range []struct {
		name string
		evs  []int64
		err  string
	}{
		{"sorted", []int64{0, 2, 5, 9}, ""},
		{"empty", nil, ""},
		{"three runs with holes", []int64{4, 8, 40, 41, 0, 1, 9, 3, 5, 6}, ""},
		{"one row per run", []int64{5, 4, 3, 2, 1, 0}, ""},
		{"two runs", runs(2, 50), ""},
		{"many runs", runs(40, 7), ""},
		{"duplicate across runs", []int64{1, 4, 7, 2, 4}, "duplicate ev_idx 4"},
		{"duplicate in one run", []int64{1, 4, 4, 2}, "duplicate ev_idx 4"},
		{"duplicate, many runs", append(runs(20, 3), 5), "duplicate ev_idx 5"},
		{"negative", []int64{3, -1, 2}, "negative ev_idx -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := frameOf(c.evs)
			err := cpSortFrame(f)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(c.evs)
			slices.Sort(want)
			if w := frameOf(want); !slices.Equal(f.EvIdx, w.EvIdx) || !slices.Equal(f.Cat, w.Cat) ||
				!slices.Equal(f.Name, w.Name) || !slices.Equal(f.Pid, w.Pid) || !slices.Equal(f.Tid, w.Tid) ||
				!slices.Equal(f.TS, w.TS) || !slices.Equal(f.Dur, w.Dur) || !slices.Equal(f.Stream, w.Stream) ||
				!slices.Equal(f.Corr, w.Corr) || !slices.Equal(f.IndexCorr, w.IndexCorr) {
				t.Fatalf("sorted frame differs: ev_idx %v, ts %v", f.EvIdx, f.TS)
			}
		})
	}
}
