package sqlfuncs

import (
	"fmt"
	"testing"
)

func TestScanObject(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"ph":"X","name":"a\"}b","args":{"x":[1,{"y":"]"}]},"ts":1.5}`, `"ph"=|"X"| "name"=|"a\"}b"| "args"=|{"x":[1,{"y":"]"}]}| "ts"=|1.5| `},
		{` { "a" : true , "b":null }`, `"a"=|true| "b"=|null| `},
		{`{}`, ``},
	} {
		f, ok := scanObject([]byte(c.in), nil)
		got := ""
		for _, x := range f {
			got += fmt.Sprintf("%s=|%s| ", x.key, x.val)
		}
		if !ok || got != c.want {
			t.Errorf("%s: got %q %v, want %q", c.in, got, ok, c.want)
		}
	}
	if _, ok := scanObject([]byte(`[1]`), nil); ok {
		t.Error("array accepted as object")
	}
}

func TestWithPatterns(t *testing.T) {
	m := []byte(`{"p":2}`)
	for in, want := range map[string]string{
		``:                  `{"Patterns":{"p":2}}`,
		`null`:              `{"Patterns":{"p":2}}`,
		`{}`:                `{"Patterns":{"p":2}}`,
		`{ "a": 1 }`:        `{"a": 1,"Patterns":{"p":2}}`,
		`{"External id":3}`: `{"External id":3,"Patterns":{"p":2}}`,
	} {
		if got := string(withPatterns([]byte(in), m)); got != want {
			t.Errorf("%q: got %s, want %s", in, got, want)
		}
	}
}
