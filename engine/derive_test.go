package engine

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
	checkNesting(t, `{"traceEvents":[
	 {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":0,"dur":10},
	 {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":10,"dur":10},
	 {"ph":"X","cat":"cpu_op","name":"Z","pid":1,"tid":1,"ts":10,"dur":0},
	 {"ph":"X","cat":"cpu_op","name":"inner","pid":1,"tid":1,"ts":10,"dur":4},
	 {"ph":"X","cat":"cpu_op","name":"other_thread","pid":1,"tid":2,"ts":1,"dur":1}
	]}`, []nesting{
		{"A", "", 0},
		{"B", "", 0},
		{"inner", "B", 1},
		{"Z", "inner", 2},
		{"other_thread", "", 0},
	})
}

// TestDerivedOutlivedParent: a record_function range opens inside a short Python frame and closes in
// a later one, as ProfilerStep#N does under profiler.step(). Its parent is the innermost event open
// at its start, its depth the number of those; an event that has ended is no one's parent, even under
// a child that outlives it (each step sank five levels deeper under steps long over).
func TestDerivedOutlivedParent(t *testing.T) {
	checkNesting(t, `{"traceEvents":[
	 {"ph":"X","cat":"python_function","name":"main","pid":1,"tid":1,"ts":0,"dur":1000},
	 {"ph":"X","cat":"python_function","name":"step1","pid":1,"tid":1,"ts":10,"dur":20},
	 {"ph":"X","cat":"python_function","name":"enter1","pid":1,"tid":1,"ts":20,"dur":5},
	 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":22,"dur":378},
	 {"ph":"X","cat":"cpu_op","name":"op1","pid":1,"tid":1,"ts":100,"dur":10},
	 {"ph":"X","cat":"python_function","name":"step2","pid":1,"tid":1,"ts":390,"dur":30},
	 {"ph":"X","cat":"python_function","name":"enter2","pid":1,"tid":1,"ts":405,"dur":5},
	 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":408,"dur":392},
	 {"ph":"X","cat":"cpu_op","name":"op2","pid":1,"tid":1,"ts":500,"dur":10}
	]}`, []nesting{
		// Each step starts inside its enter frame but outlives it (and step1/step2): the step's
		// parent is main, the innermost event that holds all of it.
		{"enter1", "step1", 2},
		{"ProfilerStep#1", "main", 1},
		{"op1", "ProfilerStep#1", 2},
		{"step2", "main", 1}, // starts in ProfilerStep#1, ends after it
		{"enter2", "step2", 2},
		{"ProfilerStep#2", "main", 1}, // was under ProfilerStep#1, then under enter2
		{"op2", "ProfilerStep#2", 2},
	})
}

// TestDerivedZeroLengthTies: events that start where another ends nest as HTA's call graph does:
// both with a duration or both zero-length, siblings; one zero-length, the start first (a child).
func TestDerivedZeroLengthTies(t *testing.T) {
	checkNesting(t, `{"traceEvents":[
	 {"ph":"X","cat":"cpu_op","name":"outer","pid":1,"tid":1,"ts":100,"dur":10},
	 {"ph":"X","cat":"cuda_runtime","name":"query1","pid":1,"tid":1,"ts":105,"dur":0},
	 {"ph":"X","cat":"cuda_runtime","name":"query2","pid":1,"tid":1,"ts":105,"dur":0},
	 {"ph":"X","cat":"cuda_runtime","name":"query3","pid":1,"tid":1,"ts":105,"dur":0},
	 {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":200,"dur":10},
	 {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":210,"dur":10},
	 {"ph":"X","cat":"cuda_runtime","name":"at_end","pid":1,"tid":1,"ts":220,"dur":0}
	]}`, []nesting{
		{"query1", "outer", 1},
		{"query2", "outer", 1}, // was query1's child
		{"query3", "outer", 1},
		{"b", "", 0},       // starts where a ends: its sibling
		{"at_end", "b", 1}, // zero-length at b's end: b's child
	})
}

// nesting is the parent (by name, "" for none) and depth an event should get.
type nesting struct {
	name, parent string
	depth        int64
}

// checkNesting loads the trace text and compares each named event's parent and depth.
func checkNesting(t *testing.T, trace string, want []nesting) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "nesting.json")
	if err := os.WriteFile(p, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	db := openTestDB(t)
	mustLoad(t, db, p)
	for _, c := range want {
		var parent sql.NullString
		var depth int64
		err := db.SQL.QueryRow(`SELECT p.name, e.depth FROM events e LEFT JOIN events p
			ON p.trace_id = e.trace_id AND p.ev_idx = e.parent_idx WHERE e.name = ?`, c.name).Scan(&parent, &depth)
		if err != nil {
			t.Fatal(err)
		}
		if parent.String != c.parent || depth != c.depth {
			t.Errorf("%s: parent %q depth %d; want %q %d", c.name, parent.String, depth, c.parent, c.depth)
		}
	}
}

// TestDerivedInvariants checks on real traces that every parent encloses its child on the same
// thread one level up, that CPU steps contain the event, and that GPU steps are their launch's.
func TestDerivedInvariants(t *testing.T) {
	for _, dir := range []string{"ns_resolution", "legacy_resnet50", "alexnet", "dlrm_8ranks", "recorded/control", "triton"} {
		t.Run(dir, func(t *testing.T) {
			db := openTestDB(t)
			mustLoad(t, db, "../testdata/traces/"+dir)
			checks := map[string]string{
				"parent on another thread or not enclosing": `SELECT count(*) FROM events c JOIN events p
					ON p.trace_id = c.trace_id AND p.ev_idx = c.parent_idx
					WHERE p.pid IS DISTINCT FROM c.pid OR p.tid IS DISTINCT FROM c.tid OR c.ts < p.ts
					   OR c.ts + coalesce(c.dur, 0) > p.ts + coalesce(p.dur, 0) OR c.depth <> p.depth + 1`,
				"root with depth":         `SELECT count(*) FROM events WHERE parent_idx IS NULL AND depth <> 0`,
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
	// A name the trace gives a string pid/tid wins over the synthesised one (max() of the two picked the
	// synthesised "main thread" over "T").
	p := filepath.Join(t.TempDir(), "named.json")
	os.WriteFile(p, []byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":"Spans","tid":"main thread","ts":1,"dur":5},
		{"ph":"M","name":"thread_name","pid":"Spans","tid":"main thread","args":{"name":"T"}},
		{"ph":"M","name":"process_name","pid":"Spans","args":{"name":"A process"}}]}`), 0o644)
	db = openTestDB(t)
	mustLoad(t, db, p)
	if got := queryText(t, db, "SELECT process_name || '/' || thread_name FROM threads"); got != "A process/T\t\n" {
		t.Errorf("names of a string pid/tid named by the trace: %q, want A process/T", got)
	}
}

// linksTrace exercises the launch ↔ GPU-event pairing by correlation (events.link_idx), worked out by hand.
const linksTrace = `{"traceEvents":[
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":5,"args":{"correlation":5}},
 {"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":10,"dur":5,"args":{"stream":7,"correlation":5}},
 {"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":20,"dur":5,"args":{"stream":7,"correlation":5}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaMalloc","pid":1,"tid":1,"ts":6,"dur":1,"args":{"correlation":-1}},
 {"ph":"X","cat":"kernel","name":"orphan","pid":0,"tid":7,"ts":30,"dur":5,"args":{"stream":7,"correlation":9}},
 {"ph":"X","cat":"cuda_sync","name":"Event Sync","pid":0,"tid":7,"ts":40,"dur":1,"args":{"correlation":11}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaEventSynchronize","pid":1,"tid":1,"ts":38,"dur":4,"args":{"correlation":11}},
 {"ph":"X","cat":"Trace","name":"session","pid":1,"tid":1,"ts":0,"dur":50,"args":{"correlation":5}},
 {"ph":"X","cat":"cuda_runtime","name":"no_dur","pid":1,"tid":1,"ts":8,"args":{"correlation":5}},
 {"ph":"X","cat":"kernel","name":"no_stream","pid":0,"tid":7,"ts":44,"dur":1,"args":{"stream":4294967295,"correlation":12}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":43,"dur":1,"args":{"correlation":12}}
]}`

// TestDerivedLinks: each side takes the last event of the other side with its correlation; correlation
// -1, a missing duration, the Trace category and a kernel on no stream (uint32 -1) pair nothing. A GPU
// event takes the step of its launch. The ids are looked up in a slice over their range when they are
// dense, as Kineto's are, and in a map when they are spread out: both are run.
func TestDerivedLinks(t *testing.T) {
	dense := strings.Replace(linksTrace, "\n]}", `,
 {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":0,"dur":45}
]}`, 1)
	spread := regexp.MustCompile(`"correlation":([1-9][0-9]*)`).ReplaceAllString(dense, `"correlation":${1}000000000000000`)
	for name, trace := range map[string]string{"dense": dense, "spread": spread} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "links.json")
			if err := os.WriteFile(p, []byte(trace), 0o644); err != nil {
				t.Fatal(err)
			}
			db := openTestDB(t)
			mustLoad(t, db, p)
			type derivedRow struct{ link, step sql.NullInt64 }
			want := map[int64]derivedRow{0: {some(2), some(3)}, 1: {some(0), some(3)}, 2: {some(0), some(3)}, 3: {null(), some(3)},
				4: {null(), null()}, 5: {some(6), some(3)}, 6: {some(5), some(3)}, 7: {null(), some(3)}, 8: {null(), some(3)},
				9: {null(), some(3)}, 10: {null(), some(3)}, 11: {null(), some(3)}}
			rows, err := db.SQL.Query(`SELECT ev_idx, link_idx, step FROM events ORDER BY ev_idx`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				var idx int64
				var got derivedRow
				if err := rows.Scan(&idx, &got.link, &got.step); err != nil {
					t.Fatal(err)
				}
				if got != want[idx] {
					t.Errorf("event %d: link_idx, step %v, want %v", idx, got, want[idx])
				}
				n++
			}
			if n != len(want) {
				t.Errorf("%d events, want %d", n, len(want))
			}
			// The frame's index_correlation: -1 without a correlation, 0 when the partner is absent (HTA).
			for idx, ic := range map[int64]int64{0: 2, 3: -1, 4: 0, 6: 5} {
				if got := queryInt(t, db, `SELECT index_correlation FROM hta_frame WHERE ev_idx = ?`, idx); got != ic {
					t.Errorf("event %d: index_correlation %d, want %d", idx, got, ic)
				}
			}
		})
	}
}

func TestTrimmedDropsUnusedCapacity(t *testing.T) {
	mem := memory.DefaultAllocator
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil))
	defer b.Release()
	b.Field(0).Reserve(1000) // rounds the capacity up to 1024 rows
	b.Field(1).(*array.StringBuilder).ReserveData(1 << 16)
	for i := range 3 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprint("v", i))
	}
	b.Field(0).AppendNull()
	b.Field(1).AppendNull()
	rec := b.NewRecordBatch()
	held := func(r arrow.RecordBatch) (n int) {
		for _, c := range r.Columns() {
			for _, buf := range c.Data().Buffers() {
				if buf != nil {
					n += cap(buf.Buf())
				}
			}
		}
		return n
	}
	before := held(rec)
	out := trimmed(rec, mem)
	defer out.Release()
	if after := held(out); after*10 > before || after > 200 {
		t.Fatalf("trimmed holds %d bytes (before %d)", after, before)
	}
	ints, strs := out.Column(0).(*array.Int64), out.Column(1).(*array.String)
	for i := range 3 {
		if ints.Value(i) != int64(i) || strs.Value(i) != fmt.Sprint("v", i) {
			t.Fatalf("row %d: %d %q", i, ints.Value(i), strs.Value(i))
		}
	}
	if ints.IsValid(3) || strs.IsValid(3) || ints.NullN() != 1 || strs.NullN() != 1 {
		t.Fatal("the null row lost its validity bit")
	}
}

// TestProfilerStepNames: the profiler_steps view and the loader's events.step agree on which names are
// steps (spaces or tabs around '#'; a newline is not one of them, as the loader reads it).
func TestProfilerStepNames(t *testing.T) {
	p := filepath.Join(t.TempDir(), "steps.json")
	os.WriteFile(p, []byte(`{"traceEvents":[
		{"ph":"X","cat":"user_annotation","name":"ProfilerStep #1","pid":1,"tid":1,"ts":0,"dur":10},
		{"ph":"X","cat":"user_annotation","name":"ProfilerStep\t#\t2","pid":1,"tid":1,"ts":20,"dur":10},
		{"ph":"X","cat":"user_annotation","name":"ProfilerStep\n#3","pid":1,"tid":1,"ts":40,"dur":10},
		{"ph":"X","cat":"user_annotation","name":"xProfilerStep#4","pid":1,"tid":1,"ts":60,"dur":10}
	]}`), 0o644)
	db := openTestDB(t)
	mustLoad(t, db, p)
	if n := queryInt(t, db, `SELECT count(*) FROM profiler_steps`); n != 2 {
		t.Errorf("profiler_steps has %d rows, want 2 (steps 1 and 2)", n)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM events e FULL JOIN profiler_steps s USING (trace_id, ev_idx)
		WHERE e.name LIKE '%ProfilerStep%' AND (s.step IS DISTINCT FROM e.step OR s.step IS NULL AND e.step IS NOT NULL)`); n != 0 {
		t.Errorf("%d events where profiler_steps and events.step disagree", n)
	}
}
