package engine

import "testing"

func TestNaturalLess(t *testing.T) {
	want := []string{"a.json", "r1.json", "r02.json", "r2.json", "r10.json", "r10b.json", "r011.json", "r100.json", "rx.json", "t9_0.json", "t9_10.json", "t10_2.json"}
	for i := range want {
		for j := range want {
			if got := naturalLess(want[i], want[j]); got != (i < j) {
				t.Errorf("naturalLess(%q, %q) = %v, want %v", want[i], want[j], got, i < j)
			}
		}
	}
}
