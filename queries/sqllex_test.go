package queries

import "testing"

func TestOnlyComments(t *testing.T) {
	cases := map[string]bool{
		"":                       true,
		"  \n\t":                 true,
		"-- a":                   true,
		"-- a\n  -- b\n":         true,
		"/* a */":                true,
		"/* a\n b */ -- c\n":     true,
		"/* unclosed":            true,
		"SELECT 1":               false,
		"-- a\nSELECT 1":         false,
		"/* a */ SELECT 1":       false,
		"/* a */ x /* b */":      false,
		"- 1":                    false,
		"/ 1":                    false,
		"-- a\n/* b */\n.tables": false,
		"/* a /* b */ c */":      true,
		"/* a /* b */ c":         true,
	}
	for text, want := range map[string]int{"": 0, "x": 0, " -- a\n x": 7, "/* a */x": 7, "-- a\n": 5} {
		if end, unclosed := LeadingComments(text); end != want || unclosed {
			t.Errorf("LeadingComments(%q) = %d, %v; want %d, false", text, end, unclosed, want)
		}
	}
	for _, text := range []string{"-- a", "/* a", "-- a\n/* b */ /*"} {
		if end, unclosed := LeadingComments(text); end != len(text) || !unclosed {
			t.Errorf("LeadingComments(%q) = %d, %v; want %d, true", text, end, unclosed, len(text))
		}
	}
	for text, want := range cases {
		if got := OnlyComments(text); got != want {
			t.Errorf("OnlyComments(%q) = %v, want %v", text, got, want)
		}
	}
}
