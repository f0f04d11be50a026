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

// TestLineCommentEndsAtCR: a -- comment ends at a carriage return, as in DuckDB's scanner (a file with CR line
// ends ran only its first statement: the others were inside the comment).
func TestLineCommentEndsAtCR(t *testing.T) {
	text := "SELECT 1 AS a; -- c\rSELECT 2 AS b;\rSELECT 3 AS c;\r"
	var semis []int
	for from := 0; ; {
		semi, _ := StatementEnd(text, from)
		if semi < 0 {
			break
		}
		semis = append(semis, semi)
		from = semi + 1
	}
	if len(semis) != 3 || semis[1] != 33 {
		t.Errorf("statement ends %v, want three, the second at 33", semis)
	}
	if end, kind := TokenEnd(text, 15); kind != TokenLineComment || text[end+1] != '\r' {
		t.Errorf("TokenEnd of the comment: %d, %v", end, kind)
	}
}
