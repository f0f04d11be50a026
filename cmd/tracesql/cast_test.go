package main

import "testing"

// TestLeavesAsText: only the TIME and TIMESTAMPTZ leaves of a nested type become VARCHAR; names, DECIMAL
// widths, array sizes and quoted field names (with the grammar's own characters in them) stay as written.
func TestLeavesAsText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"TIME[]", "VARCHAR[]"},
		{"TIMESTAMP WITH TIME ZONE[3][]", "VARCHAR[3][]"},
		{"STRUCT(a TIME, b DECIMAL(18,3), c TIMESTAMP)", "STRUCT(a VARCHAR, b DECIMAL(18,3), c TIMESTAMP)"},
		{`STRUCT("x, y)" TIMESTAMPTZ, "TIME" INTEGER)[]`, `STRUCT("x, y)" VARCHAR, "TIME" INTEGER)[]`},
		{"MAP(TIMESTAMPTZ, STRUCT(t TIME)[2])", "MAP(VARCHAR, STRUCT(t VARCHAR)[2])"},
		{"UNION(t TIME, s VARCHAR)[]", "UNION(t VARCHAR, s VARCHAR)[]"},
		{"STRUCT(a STRUCT(b MAP(VARCHAR, TIME[])))", "STRUCT(a STRUCT(b MAP(VARCHAR, VARCHAR[])))"},
		{"TIMESTAMP[]", "TIMESTAMP[]"},
	}
	for _, tc := range tests {
		if got := leavesAsText(tc.in); got != tc.want {
			t.Errorf("leavesAsText(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := castReason(parseType(tc.in)); (got == "nested time") != (tc.in != tc.want) {
			t.Errorf("castReason(%q) = %q", tc.in, got)
		}
	}
}
