package engine

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// TestDerivedCallStack checks step, parent_idx and depth on HTA's backward-thread trace, worked out
// by hand: the autograd thread (24922) nests on its own, inside the step annotated on the main thread.
func TestDerivedCallStack(t *testing.T) {
	db := openTestDB(t)
	mustLoad(t, db, "../testdata/traces/call_stack/backward_thread.json")
	want := []struct {
		idx           int64
		parent, depth sql.NullInt64
		step          int64
	}{
		{0, null(), some(0), 552},
		{1, some(0), some(1), 552},
		{2, null(), some(0), 552},
		{3, some(2), some(1), 552},
		{4, some(3), some(2), 552},
		{5, null(), null(), 552}, // GPU kernel: step of its launch (event 6)
		{6, some(4), some(3), 552},
	}
	for _, w := range want {
		var parent, depth sql.NullInt64
		var step int64
		if err := db.SQL.QueryRow("SELECT parent_idx, depth, step FROM events WHERE ev_idx = ?", w.idx).Scan(&parent, &depth, &step); err != nil {
			t.Fatal(err)
		}
		if parent != w.parent || depth != w.depth || step != w.step {
			t.Errorf("event %d: parent %v depth %v step %d; want %v %v %d", w.idx, parent, depth, step, w.parent, w.depth, w.step)
		}
	}
}

func some(n int64) sql.NullInt64 { return sql.NullInt64{Int64: n, Valid: true} }
func null() sql.NullInt64        { return sql.NullInt64{} }

// TestDerivedTies: HTA's tie rules. Touching events with durations are siblings; a zero-length event
// at the boundary is a child; at an equal start the longer event is the parent.
func TestDerivedTies(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ties.json")
	os.WriteFile(p, []byte(`{"traceEvents":[
	 {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":0,"dur":10},
	 {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":10,"dur":10},
	 {"ph":"X","cat":"cpu_op","name":"Z","pid":1,"tid":1,"ts":10,"dur":0},
	 {"ph":"X","cat":"cpu_op","name":"inner","pid":1,"tid":1,"ts":10,"dur":4},
	 {"ph":"X","cat":"cpu_op","name":"other_thread","pid":1,"tid":2,"ts":1,"dur":1}
	]}`), 0o644)
	db := openTestDB(t)
	mustLoad(t, db, p)
	for _, c := range []struct {
		name   string
		parent sql.NullString
		depth  int64
	}{
		{"A", sql.NullString{}, 0},
		{"B", sql.NullString{}, 0},
		{"inner", sql.NullString{String: "B", Valid: true}, 1},
		{"Z", sql.NullString{String: "inner", Valid: true}, 2},
		{"other_thread", sql.NullString{}, 0},
	} {
		var parent sql.NullString
		var depth int64
		err := db.SQL.QueryRow(`SELECT p.name, e.depth FROM events e LEFT JOIN events p
			ON p.trace_id = e.trace_id AND p.ev_idx = e.parent_idx WHERE e.name = ?`, c.name).Scan(&parent, &depth)
		if err != nil {
			t.Fatal(err)
		}
		if parent != c.parent || depth != c.depth {
			t.Errorf("%s: parent %v depth %d; want %v %d", c.name, parent, depth, c.parent, c.depth)
		}
	}
}

// TestDerivedInvariants checks on real traces that every parent encloses its child on the same
// thread one level up, that CPU steps contain the event, and that GPU steps are their launch's.
func TestDerivedInvariants(t *testing.T) {
	for _, dir := range []string{"ns_resolution", "legacy_resnet50", "alexnet", "dlrm_8ranks"} {
		t.Run(dir, func(t *testing.T) {
			db := openTestDB(t)
			mustLoad(t, db, "../testdata/traces/"+dir)
			checks := map[string]string{
				"parent on another thread or not enclosing": `SELECT count(*) FROM events c JOIN events p
					ON p.trace_id = c.trace_id AND p.ev_idx = c.parent_idx
					WHERE p.pid IS DISTINCT FROM c.pid OR p.tid IS DISTINCT FROM c.tid OR c.ts < p.ts
					   OR c.ts > p.ts + coalesce(p.dur, 0) OR c.depth <> p.depth + 1`,
				"CPU event without depth": `SELECT count(*) FROM events WHERE cat_class IN ('cpu_op','runtime','user_annotation') AND depth IS NULL`,
				"GPU event with parent":   `SELECT count(*) FROM events WHERE cat_class IN ('kernel','memcpy','memset') AND (parent_idx IS NOT NULL OR depth IS NOT NULL)`,
				"CPU step not containing": `SELECT count(*) FROM events e JOIN profiler_steps s ON s.trace_id = e.trace_id AND s.step = e.step
					WHERE e.cat_class IN ('cpu_op','runtime','user_annotation') AND NOT (e.ts >= s.ts AND e.ts < s.end_ts)`,
				"CPU event in a step without step": `SELECT count(*) FROM events e JOIN profiler_steps s ON s.trace_id = e.trace_id
					WHERE e.cat_class IN ('cpu_op','runtime') AND e.ts >= s.ts AND e.ts < s.end_ts AND e.step IS NULL`,
				"GPU step differs from launch": `SELECT count(*) FROM kernel_launches k JOIN events r
					ON r.trace_id = k.trace_id AND r.ev_idx = k.runtime_ev_idx WHERE k.step IS DISTINCT FROM r.step`,
			}
			for what, q := range checks {
				if n := queryInt(t, db, q); n != 0 {
					t.Errorf("%s: %d events", what, n)
				}
			}
			if dir == "ns_resolution" {
				if n := queryInt(t, db, "SELECT count(*) FROM kernels WHERE step IS NOT NULL"); n == 0 {
					t.Error("no kernel got a step")
				}
			}
		})
	}
}

// TestLegacyAndStringLanes: the 2021 schema's categories are classified and its string tids named.
func TestLegacyAndStringLanes(t *testing.T) {
	db := openTestDB(t)
	mustLoad(t, db, "../testdata/traces/legacy_resnet50")
	if n := queryInt(t, db, "SELECT count(*) FROM events WHERE cat = 'Kernel' AND cat_class = 'kernel'"); n != 8772 {
		t.Errorf("%d legacy kernels classified, want 8772", n)
	}
	if n := queryInt(t, db, "SELECT count(*) FROM kernel_launches"); n == 0 {
		t.Error("no legacy launches joined")
	}
	if n := queryInt(t, db, "SELECT count(*) FROM threads WHERE thread_name = 'stream 7' AND tid > 1099511627776"); n != 1 {
		t.Errorf("string tid 'stream 7': %d named lanes, want 1", n)
	}
}
