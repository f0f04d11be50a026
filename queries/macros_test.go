package queries

import (
	"reflect"
	"strings"
	"testing"
)

func TestCreatedMacros(t *testing.T) {
	src := `-- CREATE MACRO commented(a := 1) AS a;
CREATE OR REPLACE MACRO m1(a, b := 'x, (y)', c := [1, 2], -- a comment, with a comma
    d := -1 /* block, comment */, e := coalesce(f(1), 2)) AS TABLE SELECT 1;
create temp macro M2() as 1;
CREATE MACRO m3 (x) AS 'CREATE MACRO m4(z) AS 1';
SELECT 'CREATE MACRO m5(q)';
CREATE OR REPLACE MACRO m6(unclosed := 'it''s'`
	got := createdMacros(src)
	want := map[string][]string{
		"m1": {"a", "b := 'x, (y)'", "c := [1, 2]", "d := -1", "e := coalesce(f(1), 2)"},
		"m2": nil,
		"m3": {"x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("createdMacros:\n got %q\nwant %q", got, want)
	}
}

// TestMacroParamsOfEveryMacro: every macro the views create has its declared parameter list.
func TestMacroParamsOfEveryMacro(t *testing.T) {
	n := 0
	for _, src := range Views() {
		for _, line := range strings.Split(src, "\n") {
			f := strings.Fields(line)
			if len(f) < 5 || f[0] != "CREATE" || f[3] != "MACRO" {
				continue
			}
			name, _, _ := strings.Cut(f[4], "(")
			n++
			if _, ok := MacroParams(name); !ok {
				t.Errorf("MacroParams(%q): not found", name)
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d CREATE OR REPLACE MACRO lines seen", n)
	}
	got, _ := MacroParams("Kernel_Breakdown")
	if want := []string{"num_kernels := 10", "duration_ratio := 0.8", "include_memory_kernels := true", "hta_compat := NULL"}; !reflect.DeepEqual(got, want) {
		t.Errorf("MacroParams(kernel_breakdown) = %q, want %q", got, want)
	}
}
