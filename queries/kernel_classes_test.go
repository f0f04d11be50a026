package queries_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tracesql/engine"
)

// TestKernelRuleMatches checks the split of kernel_classes patterns into alternatives and LIKE patterns
// (_kernel_class_rules, _kernel_rule_matches) against RE2 on the whole pattern, for patterns that can and
// cannot be split or turned into LIKE (optional groups, .*, % and _, anchors, names with a newline).
func TestKernelRuleMatches(t *testing.T) {
	db, err := engine.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	patterns := []string{
		"", "^", "^nccl", "ncclKernel", "dpsk::ep", "^(hip)?Memcpy", "^cuda.*LaunchKernel",
		"^nccl|Memcpy|Sync|^Stream Wait Event|^cuda.*LaunchKernel|^hip",
		"gemm|^sm80_", "(gemm|conv)_x", `a\|b`, "[|]x", "x{2}|^y", "Kernel$", "^a|b$", "elementwise_kernel",
		"(nccl)?Kernel$", "^x_y%z", "100%|a.*b$", "^(hip)?Memset.*Async", "(a)?(b)?c", "^(hip)?",
	}
	names := []string{
		"", "ncclKernel_AllReduce", "ncclDevKernel_Generic", "void at::native::elementwise_kernel<128, 4>",
		"Memcpy HtoD (Pageable -> Device)", "hipMemcpyAsync", "cudaLaunchKernel", "cuLaunchKernelEx",
		"Stream Wait Event", "sm80_xmma_gemm_f16", "conv_x", "a|b", "a\\|b", "|x", "xx", "yz", "MyKernel",
		"ab", "cb", "b", "dpsk::ep::dispatch", "^nccl", "Context Sync",
		"cuda\nLaunchKernel", "a\nb", "x_y%z", "xAyBz", "xAy%z", "100%", "1000", "hipMemsetAsync", "MemsetD32Async", "c", "hip",
	}
	// The seeded rules (HTA's and ours) need no regex at all: every alternative has a LIKE pattern.
	var regexes int
	if err := db.SQL.QueryRow(`SELECT (SELECT count(*) FROM _kernel_class_rules(false) WHERE like_pattern IS NULL) +
		(SELECT count(*) FROM _kernel_class_rules(true) WHERE like_pattern IS NULL)`).Scan(&regexes); err != nil {
		t.Fatal(err)
	}
	if regexes > 0 {
		t.Errorf("%d of the seeded rules' alternatives go to the regex engine, want 0", regexes)
	}
	if _, err := db.SQL.Exec(`DELETE FROM kernel_classes`); err != nil {
		t.Fatal(err)
	}
	for i, p := range patterns {
		if _, err := db.SQL.Exec(`INSERT INTO kernel_classes VALUES (?, ?, 'OTHER', 'all')`, i, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SQL.Exec(`CREATE TEMP TABLE names AS SELECT unnest(?::VARCHAR[]) AS name`, names); err != nil {
		t.Fatal(err)
	}
	rows, err := db.SQL.Query(`
		WITH want AS (
		    SELECT n.name, k.priority, regexp_matches(n.name, k.pattern) AS hit FROM names n, kernel_classes k
		),
		got AS (
		    SELECT n.name, r.priority, bool_or(_kernel_rule_matches(n.name, r.like_pattern, r.pattern)) AS hit
		    FROM names n, _kernel_class_rules(false) r GROUP BY ALL
		)
		SELECT w.name, k.pattern, w.hit, g.hit
		FROM want w JOIN kernel_classes k USING (priority) LEFT JOIN got g USING (name, priority)
		WHERE g.hit IS DISTINCT FROM w.hit`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, pattern string
		var want bool
		var got sql.NullBool
		if err := rows.Scan(&name, &pattern, &want, &got); err != nil {
			t.Fatal(err)
		}
		t.Errorf("name %q, pattern %q: got %v (valid %v), want %v (RE2)", name, pattern, got.Bool, got.Valid, want)
	}
}

// TestKernelClassTies: two rules of one priority that both match a name give the type of the first pattern in
// sort order, whichever was inserted first; a rule of NULL priority never applies.
func TestKernelClassTies(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "k.json")
	var evs []string
	for i, name := range []string{"myKernel", "myOp", "aKernel"} {
		evs = append(evs, fmt.Sprintf(`{"ph":"X","cat":"kernel","name":%q,"pid":0,"tid":7,"ts":%d,"dur":5,"args":{"stream":7,"device":0,"correlation":%d}}`, name, 10*i, i+1))
	}
	if err := os.WriteFile(trace, []byte(`{"traceEvents":[`+strings.Join(evs, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, order := range [][]string{
		{`(5, '^my', 'COMMUNICATION', 'all')`, `(5, 'Kernel', 'MEMORY', 'all')`},
		{`(5, 'Kernel', 'MEMORY', 'all')`, `(5, '^my', 'COMMUNICATION', 'all')`},
	} {
		db, err := engine.Open(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range append(order, `(NULL, 'Kernel', 'OTHER', 'all')`) {
			if _, err := db.SQL.Exec(`INSERT INTO kernel_classes VALUES ` + row); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Load(context.Background(), []string{trace}, engine.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		// 'Kernel' sorts before '^my' (K is 0x4B, ^ is 0x5E)
		want := "aKernel:MEMORY myKernel:MEMORY myOp:COMMUNICATION"
		for _, q := range []string{
			`SELECT string_agg(name || ':' || kernel_type, ' ' ORDER BY name) FROM kernel_types`,
			`SELECT string_agg(name || ':' || kernel_type, ' ' ORDER BY name) FROM kernel_breakdown()`,
		} {
			var got string
			if err := db.SQL.QueryRow(q).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("rules inserted as %v: %s\n got %s\nwant %s", order, q, got, want)
			}
		}
		db.Close()
	}
}

// TestKernelClassRowsChecked: a kernel_classes row that cannot apply as written is an error naming it in every
// analysis that types kernels, the critical path's included (a lower-case kernel_type dropped its kernels from
// kernel_type_breakdown; a misspelt applies_to or a NULL pattern left the rule out unsaid), and a row inserted
// with three columns (applies_to NULL) applies in both modes.
func TestKernelClassRowsChecked(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "k.json")
	evs := []string{`{"ph":"X","cat":"cpu_op","name":"op","pid":0,"tid":1,"ts":0,"dur":100,"args":{}}`}
	for i, name := range []string{"myKernel", "ncclKernel_AllReduce"} {
		evs = append(evs, fmt.Sprintf(`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":0,"tid":1,"ts":%d,"dur":5,"args":{"correlation":%d}}`, 10+20*i, i+1),
			fmt.Sprintf(`{"ph":"X","cat":"kernel","name":%q,"pid":0,"tid":7,"ts":%d,"dur":5,"args":{"stream":7,"device":0,"correlation":%d}}`, name, 20+20*i, i+1))
	}
	if err := os.WriteFile(trace, []byte(`{"traceEvents":[`+strings.Join(evs, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	db := ctOpen(t, trace)
	analyses := []string{`kernel_types`, `kernel_type_breakdown()`, `kernel_breakdown()`, `temporal_breakdown`, `comm_comp_overlap`, `critical_path_summary(annotation := '')`}
	for _, c := range []struct{ row, want string }{
		{`(5, '^my', 'communication', 'all')`, `kernel_classes rule of priority 5 (pattern '^my'): kernel_type 'communication' is not COMMUNICATION, MEMORY, COMPUTATION or OTHER`},
		{`(5, '^my', NULL, 'all')`, `kernel_classes rule of priority 5 (pattern '^my'): kernel_type NULL is not`},
		{`(5, '^my', 'COMMUNICATION', 'Default')`, `kernel_classes rule of priority 5 (pattern '^my'): applies_to 'Default' is not all, default or hta_compat`},
		{`(5, NULL, 'COMMUNICATION', 'all')`, `kernel_classes rule of priority 5 has no pattern (NULL)`},
	} {
		if _, err := db.SQL.Exec(`INSERT INTO kernel_classes VALUES ` + c.row); err != nil {
			t.Fatal(err)
		}
		for _, a := range analyses {
			var n int
			if err := db.SQL.QueryRow(`SELECT count(*) FROM ` + a).Scan(&n); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("rule %s, %s: %v, want an error containing %q", c.row, a, err, c.want)
			}
		}
		if _, err := db.SQL.Exec(`DELETE FROM kernel_classes WHERE priority = 5`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SQL.Exec(`INSERT INTO kernel_classes (priority, pattern, kernel_type) VALUES (5, '^my', 'COMMUNICATION')`); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"false", "true"} {
		var got string
		if err := db.SQL.QueryRow(`SET VARIABLE hta_compat = ` + mode).Err(); err != nil {
			t.Fatal(err)
		}
		if err := db.SQL.QueryRow(`SELECT string_agg(name || ':' || kernel_type, ' ' ORDER BY name) FROM kernel_types`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := "myKernel:COMMUNICATION ncclKernel_AllReduce:COMMUNICATION"; got != want {
			t.Errorf("hta_compat %s, applies_to NULL: %s, want %s", mode, got, want)
		}
	}
}
