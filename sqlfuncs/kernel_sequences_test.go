package sqlfuncs

import (
	"testing"
)

func TestWithPatterns(t *testing.T) {
	m := []byte(`{"p":2}`)
	for in, want := range map[string]string{
		``:                  `{"Patterns":{"p":2}}`,
		`null`:              `{"Patterns":{"p":2}}`,
		`{}`:                `{"Patterns":{"p":2}}`,
		`{ "a": 1 }`:        `{"a": 1,"Patterns":{"p":2}}`,
		`{"External id":3}`: `{"External id":3,"Patterns":{"p":2}}`,
		// an overlaid trace overlaid again: the key is replaced, not written twice (r41)
		`{"a":1,"Patterns":{"old":5},"b":2}`: `{"a":1,"Patterns":{"p":2},"b":2}`,
		`{"Patterns": null}`:                 `{"Patterns": {"p":2}}`,
	} {
		if got := string(withPatterns([]byte(in), m)); got != want {
			t.Errorf("%q: got %s, want %s", in, got, want)
		}
	}
}
