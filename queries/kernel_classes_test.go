package queries_test

import (
	"context"
	"testing"

	"tracesql/engine"
)

// TestKernelRuleMatches checks the split of kernel_classes patterns into alternatives and literals
// (_kernel_class_rules, _kernel_rule_matches) against RE2 on the whole pattern, for patterns that can and
// cannot be split, literal or not, anchored or not.
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
	}
	names := []string{
		"", "ncclKernel_AllReduce", "ncclDevKernel_Generic", "void at::native::elementwise_kernel<128, 4>",
		"Memcpy HtoD (Pageable -> Device)", "hipMemcpyAsync", "cudaLaunchKernel", "cuLaunchKernelEx",
		"Stream Wait Event", "sm80_xmma_gemm_f16", "conv_x", "a|b", "a\\|b", "|x", "xx", "yz", "MyKernel",
		"ab", "cb", "b", "dpsk::ep::dispatch", "^nccl", "Context Sync",
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
		    SELECT n.name, r.priority, bool_or(_kernel_rule_matches(n.name, r.literal, r.anchored, r.pattern)) AS hit
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
		var got *bool
		if err := rows.Scan(&name, &pattern, &want, &got); err != nil {
			t.Fatal(err)
		}
		t.Errorf("name %q, pattern %q: got %v, want %v (RE2)", name, pattern, got, want)
	}
	var literals int
	if err := db.SQL.QueryRow(`SELECT count(*) FROM _kernel_class_rules(false) WHERE literal IS NOT NULL`).Scan(&literals); err != nil {
		t.Fatal(err)
	}
	if literals < 10 {
		t.Errorf("%d literal alternatives: the fast path is not taken", literals)
	}
}
