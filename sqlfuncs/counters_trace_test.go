package sqlfuncs

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"testing"
	"testing/iotest"
)

func BenchmarkCountersSplice(b *testing.B) {
	src := "../../shared/traces/hta/df_index_resolver/df_index_resolver.json.gz"
	if _, err := os.Stat(src); err != nil {
		b.Skip("df_index_resolver absent")
	}
	out := b.TempDir() + "/x.json.gz"
	for i := 0; i < b.N; i++ {
		if err := writeWithCounters(context.Background(), loadedFile{path: src}, out, true, []byte(`,{"ph":"C"}`)); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSpliceEvents(t *testing.T) {
	ev := []byte(`,{"ph":"C","name":"x","pid":0,"ts":1,"args":{"v":1}}`)
	for _, tc := range []struct{ in, want string }{
		{`{"traceEvents":[]}`, `{"traceEvents":[{"ph":"C","name":"x","pid":0,"ts":1,"args":{"v":1}}]}`},
		{`{"a":"traceEvents","b":["]"],"traceEvents": [ {"name":"a]\"[","args":{"k":[1,2]}} ] ,"c":[1]}`,
			`{"a":"traceEvents","b":["]"],"traceEvents": [ {"name":"a]\"[","args":{"k":[1,2]}} ,{"ph":"C","name":"x","pid":0,"ts":1,"args":{"v":1}}] ,"c":[1]}`},
		{`{"traceEvents":[{"a\\\\":"\\\"]"}],"x":"\\\\"}`, `{"traceEvents":[{"a\\\\":"\\\"]"},{"ph":"C","name":"x","pid":0,"ts":1,"args":{"v":1}}],"x":"\\\\"}`},
		{` [ {"x":"\\"} ]`, ` [ {"x":"\\"} ,{"ph":"C","name":"x","pid":0,"ts":1,"args":{"v":1}}]`},
		{`{"m":{"traceEvents":[1]},"traceEvents":[2]}`, `{"m":{"traceEvents":[1]},"traceEvents":[2,{"ph":"C","name":"x","pid":0,"ts":1,"args":{"v":1}}]}`},
	} {
		var buf bytes.Buffer
		if err := spliceEvents(context.Background(), bytes.NewReader([]byte(tc.in)), &buf, ev); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if buf.String() != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, buf.String(), tc.want)
		}
		var one bytes.Buffer // chunk boundaries everywhere
		if err := spliceEvents(context.Background(), iotest.OneByteReader(bytes.NewReader([]byte(tc.in))), &one, ev); err != nil || one.String() != tc.want {
			t.Errorf("%s one byte at a time: %s %v", tc.in, one.String(), err)
		}
		if !json.Valid(buf.Bytes()) {
			t.Errorf("%s: output not JSON", tc.in)
		}
	}
	var buf bytes.Buffer
	if err := spliceEvents(context.Background(), bytes.NewReader([]byte(`{"a":[1]}`)), &buf, ev); err == nil {
		t.Errorf("no traceEvents: want an error")
	}
	_ = io.Discard
}

func TestAppendPyFloat(t *testing.T) {
	for v, want := range map[float64]string{0: "0.0", 7.744: "7.744", 1.1102230246251565e-16: "1.1102230246251565e-16",
		1e16: "1e+16", 123456789012345.0: "123456789012345.0", 0.0001: "0.0001", 0.00001: "1e-05", -2.5: "-2.5", 1e22: "1e+22"} {
		if got := string(appendPyFloat(nil, v)); got != want {
			t.Errorf("%v: %s, want %s", v, got, want)
		}
	}
}

func TestCountersName(t *testing.T) {
	for _, c := range []struct {
		base   string
		compat bool
		want   string
	}{
		{"rank0.json.gz", false, "rank0_with_counters.json.gz"},
		{"rank0.json.gz", true, "rank0_with_counters.json.gz"},
		{"a.json.b.json.gz", false, "a.json.b_with_counters.json.gz"},
		{"a.json.b.json.gz", true, "a_with_counters.json.b_with_counters.json.gz"},
		{"trace.gz", false, "trace.gz_with_counters.json"},
		{"trace.gz", true, "trace.gz"},
		{"rank0.JSON.GZ", false, "rank0_with_counters.JSON.GZ"}, // (r78 #6: rank0.JSON.GZ_with_counters.json)
	} {
		if got := countersName(c.base, c.compat); got != c.want {
			t.Errorf("countersName(%q, %v) = %q, want %q", c.base, c.compat, got, c.want)
		}
	}
}

// TestAppendJSONString: the memory-bandwidth series' names are written as JSON strings (Go's quoting wrote a control
// character as \x01, and the file no JSON reader could open).
func TestAppendJSONString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Memcpy HtoD", `"Memcpy HtoD"`},
		{"Memcpy\x01toD", `"Memcpy\u0001toD"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"D -> H <&>", `"D -> H <&>"`},
		{"caf\xe9", `"caf\ufffd"`},
	} {
		if got := string(appendJSONString([]byte("x"), c.in)); got != "x"+c.want {
			t.Errorf("%q: got %s, want x%s", c.in, got, c.want)
		}
	}
}
