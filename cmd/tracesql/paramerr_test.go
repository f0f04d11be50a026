package main

import (
	"reflect"
	"testing"
)

func TestStringNamedArgs(t *testing.T) {
	for _, c := range []struct {
		stmt string
		want []namedArg
	}{
		{"SELECT 1", nil},
		{"SELECT * FROM kernel_breakdown(num_kernels := 'x')",
			[]namedArg{{"kernel_breakdown", "num_kernels", "'x'", "x"}}},
		{`SELECT * FROM "hotspots" /* c */ (annotation := 'it''s', top := (SELECT f(a := 'y'))) -- n := 'z'`,
			[]namedArg{{"hotspots", "annotation", "'it''s'", "it's"}, {"f", "a", "'y'", "y"}}},
		{"SELECT * FROM t(n := 5, m = 'x', k := \"c\")", nil}, // neither a number, '=' nor an identifier is a string argument
		{"SELECT 1 + (n := 'x')", []namedArg{{"", "n", "'x'", "x"}}},
		{"SELECT f(n := 'unclosed", nil},
	} {
		if got := stringNamedArgs(c.stmt); !reflect.DeepEqual(got, c.want) {
			t.Errorf("stringNamedArgs(%q) = %+v, want %+v", c.stmt, got, c.want)
		}
	}
}
