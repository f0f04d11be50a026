package arrayrepair

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// An array-form trace that the loader reads although it is not terminated (no ']', or cut inside its last
// event) is read by the exports as the events the loader kept, closed: they wrote nothing for one before
// ("no traceEvents array found", "EOF").
func TestReader(t *testing.T) {
	ev := `{"ph":"X","name":"a]\"}","ts":1}`
	for _, tc := range []struct{ name, in, want string }{
		{"terminated", "[" + ev + "," + ev + "]\n", "[" + ev + "," + ev + "]\n"},
		{"no closing bracket", "[" + ev + ",\n" + ev + "\n", "[" + ev + ",\n" + ev + "\n]"},
		{"trailing comma", "[" + ev + "," + ev + ",\n", "[" + ev + "," + ev + "]"},
		{"cut inside the last event", "[" + ev + ",\n" + ev + ",\n" + ev[:20], "[" + ev + ",\n" + ev + "]"},
		{"cut inside a string", "[" + ev + `,{"name":"x\"],`, "[" + ev + "]"},
		{"cut inside nested args", "[" + ev + `,{"args":{"a":[1,{"b":2}`, "[" + ev + "]"},
		{"a last scalar may be cut too", `[1, "b", true`, `[1, "b"]`},
		{"only the bracket", "  [", "  []"},
		{"text after the array", "[" + ev + "]  \n", "[" + ev + "]  \n"},
	} {
		for _, one := range []bool{false, true} {
			var src io.Reader = strings.NewReader(tc.in)
			if one {
				src = iotest.OneByteReader(src) // every state carried across reads
			}
			got, err := io.ReadAll(NewReader(src))
			if err != nil || string(got) != tc.want {
				t.Errorf("%s (one byte per read %v): got %q, %v; want %q", tc.name, one, got, err, tc.want)
			}
		}
	}
	// A read error is passed on, not taken for the end of the file.
	_, err := io.ReadAll(NewReader(iotest.TimeoutReader(strings.NewReader("[" + ev))))
	if err == nil {
		t.Error("read error swallowed")
	}
}
