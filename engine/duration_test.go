package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDurationEventPairs: B/E events become complete events as Perfetto pairs them (per thread, in
// timestamp order, an E closes the latest open B), with the E's args merged in; unpaired ones stay in
// other_events. The events of each case's trace are listed in file order (ev_idx = position).
func TestDurationEventPairs(t *testing.T) {
	type slice struct {
		idx      int64
		name     string
		ts, dur  int64
		parent   string // name of the enclosing event, "" for none
		argsJSON string // "" for NULL
	}
	type other struct {
		idx int64
		ph  string
	}
	cases := []struct {
		name   string
		events []string
		slices []slice
		others []other
	}{
		{
			name: "nested, with an X inside and args merged, the E's winning",
			events: []string{
				`{"ph":"B","name":"outer","cat":"user","pid":1,"tid":1,"ts":10}`,
				`{"ph":"B","name":"inner","cat":"user","pid":1,"tid":1,"ts":12,"args":{"a":1,"k":"b"}}`,
				`{"ph":"E","pid":1,"tid":1,"ts":15.5,"args":{"b":2,"k":"e"}}`,
				`{"ph":"E","pid":1,"tid":1,"ts":20}`,
				`{"ph":"X","name":"x","cat":"cpu_op","pid":1,"tid":1,"ts":11,"dur":0.5}`,
			},
			slices: []slice{
				{0, "outer", 10000, 10000, "", ""},
				{1, "inner", 12000, 3500, "outer", `{"a":1,"b":2,"k":"e"}`},
				{4, "x", 11000, 500, "outer", ""},
			},
		},
		{
			name: "threads pair apart; an E with nothing open and a B never closed stay unpaired",
			events: []string{
				`{"ph":"E","pid":1,"tid":1,"ts":1}`,
				`{"ph":"B","name":"a","pid":1,"tid":1,"ts":2}`,
				`{"ph":"B","name":"b","pid":1,"tid":2,"ts":3}`,
				`{"ph":"E","pid":1,"tid":2,"ts":4}`,
				`{"ph":"B","name":"open","pid":1,"tid":2,"ts":5}`,
				`{"ph":"E","pid":1,"tid":1,"ts":6,"args":{"x":1}}`,
			},
			slices: []slice{
				{1, "a", 2000, 4000, "", `{"x":1}`},
				{2, "b", 3000, 1000, "", ""},
			},
			others: []other{{0, "E"}, {4, "B"}},
		},
		{
			name: "timestamp order, not file order; at one timestamp, file order",
			events: []string{
				`{"ph":"E","pid":1,"tid":"main","ts":9}`,
				`{"ph":"B","name":"late","pid":1,"tid":"main","ts":7}`,
				`{"ph":"B","name":"zero","pid":1,"tid":"main","ts":8}`,
				`{"ph":"E","pid":1,"tid":"main","ts":8}`,
			},
			slices: []slice{
				{1, "late", 7000, 2000, "", ""},
				{2, "zero", 8000, 0, "late", ""},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "be.json")
			if err := os.WriteFile(p, []byte(`{"traceEvents":[`+strings.Join(c.events, ",\n")+`]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			db := openTestDB(t)
			mustLoad(t, db, p)
			rows, err := db.SQL.Query(`SELECT e.ev_idx, e.ph, e.name, e.ts, e.dur, coalesce(p.name, ''), coalesce(e.args::VARCHAR, '')
				FROM events e LEFT JOIN events p ON p.ev_idx = e.parent_idx ORDER BY e.ev_idx`)
			if err != nil {
				t.Fatal(err)
			}
			var got []slice
			for rows.Next() {
				var s slice
				var ph string
				if err := rows.Scan(&s.idx, &ph, &s.name, &s.ts, &s.dur, &s.parent, &s.argsJSON); err != nil {
					t.Fatal(err)
				}
				if want := map[bool]string{true: "X", false: "B"}[s.name == "x"]; ph != want {
					t.Errorf("event %d: ph %s, want %s", s.idx, ph, want)
				}
				got = append(got, s)
			}
			rows.Close()
			if fmt.Sprint(got) != fmt.Sprint(c.slices) {
				t.Errorf("events:\n got %v\nwant %v", got, c.slices)
			}
			var gotOthers []other
			rows, err = db.SQL.Query(`SELECT ev_idx, ph FROM other_events ORDER BY ev_idx`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var o other
				if err := rows.Scan(&o.idx, &o.ph); err != nil {
					t.Fatal(err)
				}
				gotOthers = append(gotOthers, o)
			}
			rows.Close()
			if fmt.Sprint(gotOthers) != fmt.Sprint(c.others) {
				t.Errorf("other_events: got %v, want %v", gotOthers, c.others)
			}
			if n := queryInt(t, db, `SELECT events FROM traces`); n != int64(len(c.events)) {
				t.Errorf("traces.events = %d, want %d", n, len(c.events))
			}
		})
	}
}

// TestDurationPairAcrossBatches: a B and its E thousands of events apart, in different scan batches.
func TestDurationPairAcrossBatches(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"traceEvents":[{"ph":"B","name":"whole","pid":1,"tid":1,"ts":0,"args":{"from":"B"}}`)
	n := 3*batchMaxEvents + 5
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `,{"ph":"X","name":"op","cat":"cpu_op","pid":1,"tid":1,"ts":%d,"dur":1}`, i+1)
	}
	fmt.Fprintf(&b, `,{"ph":"E","pid":1,"tid":1,"ts":%d,"args":{"from":"E"}}]}`, n+2)
	p := filepath.Join(t.TempDir(), "long.json")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	db := openTestDB(t)
	mustLoad(t, db, p)
	if got := queryInt(t, db, `SELECT dur FROM events WHERE name = 'whole' AND ev_idx = 0 AND ph = 'B' AND (args->>'from') = 'E'`); got != int64(n+2)*1000 {
		t.Errorf("dur %d, want %d", got, (n+2)*1000)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM events WHERE name = 'op' AND parent_idx = 0 AND depth = 1`); got != int64(n) {
		t.Errorf("%d ops nested in the pair, want %d", got, n)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM other_events`); got != 0 {
		t.Errorf("%d other_events rows, want 0", got)
	}
}

// TestOnlyDurationPairsInAFile: a trace written only as B/E pairs (Rust's tracing-chrome and many hand-written
// tracers), more than two DuckDB row groups of them, loaded into a database file. Its batches of plain events
// are all empty, and inserting them before the pairs hid every paired row until the next session (events read
// as empty) and stored the time span NULL for good.
func TestOnlyDurationPairsInAFile(t *testing.T) {
	const pairs = 2*122880 + 1000
	var b strings.Builder
	b.WriteString(`{"traceEvents":[`)
	for i := 0; i < pairs; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ph":"B","name":"s","pid":1,"tid":1,"ts":%d},{"ph":"E","pid":1,"tid":1,"ts":%d.5}`, 2*i, 2*i)
	}
	b.WriteString(`]}`)
	dir := t.TempDir()
	p := filepath.Join(dir, "be.json")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, "t.duckdb")
	for _, session := range []string{"loading", "reopened"} {
		db, err := Open(context.Background(), dbPath)
		if err != nil {
			t.Fatal(err)
		}
		if session == "loading" {
			mustLoad(t, db, p)
		}
		if got := queryInt(t, db, `SELECT count(*) FROM events WHERE dur = 500`); got != pairs {
			t.Errorf("%s: %d events, want %d", session, got, pairs)
		}
		if got := queryInt(t, db, `SELECT coalesce(max_ts - min_ts, -1) FROM traces`); got != 2*(pairs-1)*1000+500 {
			t.Errorf("%s: time span %d ns, want %d", session, got, 2*(pairs-1)*1000+500)
		}
		db.Close()
	}
}

// TestDurationPairEdgeCases: what a review of the pairing found.
func TestDurationPairEdgeCases(t *testing.T) {
	write := func(t *testing.T, events ...string) string {
		p := filepath.Join(t.TempDir(), "be.json")
		if err := os.WriteFile(p, []byte(`{"traceEvents":[`+strings.Join(events, ",\n")+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("more distinct names than a batch's int16 dictionary holds", func(t *testing.T) {
		var ev []string
		n := 40000
		for i := 0; i < n; i++ {
			ev = append(ev, fmt.Sprintf(`{"ph":"B","name":"task%d","pid":1,"tid":1,"ts":%d}`, i, 2*i),
				fmt.Sprintf(`{"ph":"E","pid":1,"tid":1,"ts":%d}`, 2*i+1))
		}
		ev = append(ev, `{"ph":"B","name":"open","pid":1,"tid":2,"ts":0}`)
		db := openTestDB(t)
		mustLoad(t, db, write(t, ev...))
		if got := queryInt(t, db, `SELECT count(DISTINCT name) FROM events WHERE ph = 'B' AND dur = 1000`); got != int64(n) {
			t.Errorf("%d distinct paired names, want %d", got, n)
		}
		if got := queryInt(t, db, `SELECT count(*) FROM other_events WHERE name = 'open'`); got != 1 {
			t.Errorf("%d unpaired B rows, want 1", got)
		}
	})
	t.Run("ties follow ev_idx, not the batch a pair lands in", func(t *testing.T) {
		db := openTestDB(t)
		mustLoad(t, db, write(t,
			`{"ph":"B","name":"pair","pid":1,"tid":1,"ts":10}`,
			`{"ph":"X","name":"x","cat":"cpu_op","pid":1,"tid":1,"ts":10,"dur":5}`,
			`{"ph":"E","pid":1,"tid":1,"ts":15}`))
		// Same start and end: the lower ev_idx (the pair, 0) is the parent.
		if got := queryInt(t, db, `SELECT coalesce(parent_idx, -1) * 10 + depth FROM events WHERE name = 'x'`); got != 1 {
			t.Errorf("x: parent_idx*10+depth = %d, want 1 (child of event 0)", got)
		}
	})
	t.Run("an E with a name or category closes the latest open B that has them", func(t *testing.T) {
		// Perfetto's slice tracker: E "A" closes A under the open B, which the unnamed E at 40 then closes;
		// an E of another category, or of a name nothing open has, closes nothing; "B" without a name is
		// closed by any name.
		db := openTestDB(t)
		mustLoad(t, db, write(t,
			`{"ph":"B","name":"A","cat":"c","pid":1,"tid":1,"ts":10,"args":{"x":1,"y":1}}`,
			`{"ph":"B","name":"B","cat":"c","pid":1,"tid":1,"ts":20}`,
			`{"ph":"E","name":"A","cat":"c","pid":1,"tid":1,"ts":30,"args":{"y":2,"z":3}}`,
			`{"ph":"E","pid":1,"tid":1,"ts":40}`,
			`{"ph":"B","name":"\u0041","cat":"c","pid":1,"tid":2,"ts":10}`,
			`{"ph":"E","name":"A","cat":"other","pid":1,"tid":2,"ts":11}`,
			`{"ph":"E","name":"Zzz","pid":1,"tid":2,"ts":12}`,
			`{"ph":"E","name":"A","cat":"c","pid":1,"tid":2,"ts":13}`,
			`{"ph":"B","cat":"c","pid":1,"tid":3,"ts":10}`,
			`{"ph":"E","name":"any","pid":1,"tid":3,"ts":14}`))
		var got string
		if err := db.SQL.QueryRow(`SELECT string_agg(ev_idx || ':' || coalesce(name, '-') || ':' || dur || ':' || coalesce(args::VARCHAR, '-'), ' ' ORDER BY ev_idx) FROM events`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := `0:A:20000:{"x":1,"y":2,"z":3} 1:B:20000:- 4:A:3000:- 8:-:4000:-`; got != want {
			t.Errorf("pairs %s\nwant  %s", got, want)
		}
		if got := queryInt(t, db, `SELECT count(*) FROM other_events WHERE ph = 'E'`); got != 2 {
			t.Errorf("%d unpaired E rows, want 2 (the other category's and Zzz)", got)
		}
	})
	t.Run("args the strict encoders refuse, and non-object args", func(t *testing.T) {
		db := openTestDB(t)
		mustLoad(t, db, write(t,
			`{"ph":"B","name":"nan","pid":1,"tid":1,"ts":1,"args":{"a":NaN,"s":"<a&b>"}}`,
			`{"ph":"E","pid":1,"tid":1,"ts":2,"args":{"b":1}}`,
			`{"ph":"B","name":"list","pid":1,"tid":2,"ts":1,"args":[1,2]}`,
			`{"ph":"E","pid":1,"tid":2,"ts":3,"args":{"b":1}}`))
		got := map[string]string{}
		rows, err := db.SQL.Query(`SELECT name, args::VARCHAR FROM events ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n, a string
			rows.Scan(&n, &a)
			got[n] = a
		}
		rows.Close()
		if !strings.Contains(got["nan"], `"s":"<a&b>"`) || !strings.Contains(got["nan"], `"b":1`) || got["list"] != "[1,2]" {
			t.Errorf("args: %v (want <a&b> unescaped and b merged; the list kept)", got)
		}
	})
	t.Run("an error in an unpaired event names its byte in the file", func(t *testing.T) {
		p := write(t,
			`{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}`,
			`{"ph":"B","name":"bad","pid":1,"tid":1,"ts":5,"dur":"zz"}`)
		db := openTestDB(t)
		_, err := db.Load(context.Background(), []string{p}, LoadOptions{})
		want := fmt.Sprintf("event 1 (byte %d): dur", strings.Index(mustRead(t, p), `{"ph":"B"`))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %q", err, want)
		}
	})
}

func mustRead(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
