package sqlfuncs

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestSplitObject(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"ph":"X","name":"a\"}b","args":{"x":[1,{"y":"]"}]},"ts":1.5}`, `ph=|"X"| name=|"a\"}b"| args=|{"x":[1,{"y":"]"}]}| ts=|1.5| `},
		{` { "a" : true , "b":null }`, `a=|true| b=|null| `},
		{`{"name":"C:\Users::empty","x":1}`, `name=|"C:\Users::empty"| x=|1| `},
		{`{}`, ``},
	} {
		obj := []byte(c.in)
		f, ok := splitObject(obj, nil)
		got := ""
		for _, x := range f {
			got += fmt.Sprintf("%s=|%s| ", obj[x.ks:x.ke], obj[x.vs:x.ve])
		}
		if !ok || got != c.want {
			t.Errorf("%s: got %q %v, want %q", c.in, got, ok, c.want)
		}
	}
	if _, ok := splitObject([]byte(`[1]`), nil); ok {
		t.Error("array accepted as object")
	}
}

// readAllRaw walks a trace the way the rewriters do and lists the keys and values it met.
func readAllRaw(r io.Reader) (string, error) {
	dec := newRawDecoder(r)
	var out strings.Builder
	if err := dec.expect('{'); err != nil {
		return "", err
	}
	for {
		more, err := dec.more()
		if err != nil {
			return out.String(), err
		} else if !more {
			break
		}
		key, raw, err := dec.key()
		if err != nil {
			return out.String(), err
		}
		fmt.Fprintf(&out, "%s(%s)=", key, raw)
		if key != "traceEvents" {
			v, err := dec.value()
			if err != nil {
				return out.String(), err
			}
			fmt.Fprintf(&out, "%s;", v)
			continue
		}
		if err := dec.expect('['); err != nil {
			return out.String(), err
		}
		for {
			more, err := dec.more()
			if err != nil {
				return out.String(), err
			} else if !more {
				break
			}
			v, err := dec.value()
			if err != nil {
				return out.String(), err
			}
			fmt.Fprintf(&out, "<%s>", v)
		}
		if err := dec.expect(']'); err != nil {
			return out.String(), err
		}
		out.WriteString(";")
	}
	return out.String(), dec.expect('}')
}

func TestRawDecoder(t *testing.T) {
	for _, c := range []struct{ name, in, want, err string }{
		{"events and keys",
			`{"schemaVersion": 1, "traceEvents": [ {"name":"a"} , 7,-1.5e3,true, null,"s\\\"t" ,[1,[2]]],"x":{"y":[]}}`,
			`schemaVersion("schemaVersion")=1;traceEvents("traceEvents")=<{"name":"a"}><7><-1.5e3><true><null><"s\\\"t"><[1,[2]]>;x("x")={"y":[]};`, ""},
		// What the loader accepts with a warning comes through as written.
		{"invalid escapes", `{"C:\Dir":"x\q","traceEvents":[{"name":"C:\Users::empty"}]}`,
			`C:\Dir("C:\Dir")="x\q";traceEvents("traceEvents")=<{"name":"C:\Users::empty"}>;`, ""},
		{"control characters and invalid UTF-8", "{\"traceEvents\":[{\"name\":\"a\tb\xff\"}]}",
			"traceEvents(\"traceEvents\")=<{\"name\":\"a\tb\xff\"}>;", ""},
		{"truncated in a string", `{"traceEvents":[{"name":"ab`, `traceEvents("traceEvents")=`, "unexpected end of JSON at byte 27"},
		{"truncated in an object", `{"traceEvents":[{"name":"ab"`, `traceEvents("traceEvents")=`, "unexpected end of JSON at byte 28"},
		{"stray bracket", `{"traceEvents":[}`, `traceEvents("traceEvents")=`, `expected ']' at byte 16, found '}'`},
		{"key not a string", `{1:2}`, ``, "expected an object key at byte 1"},
		{"empty", ``, ``, "unexpected end of JSON at byte 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// One byte per read as well: every value then crosses the decoder's refills.
			for _, r := range []io.Reader{strings.NewReader(c.in), iotest.OneByteReader(strings.NewReader(c.in))} {
				got, err := readAllRaw(r)
				if got != c.want {
					t.Errorf("got  %s\nwant %s", got, c.want)
				}
				if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
					t.Errorf("error %v, want %q", err, c.err)
				}
			}
		})
	}
}

func TestRawDecoderLargeValues(t *testing.T) {
	// Values larger than the decoder's buffer, many of them: the buffer grows and is compacted between values.
	name := strings.Repeat(`x\"`, 700_000)
	var in bytes.Buffer
	want := `traceEvents("traceEvents")=`
	in.WriteString(`{"traceEvents":[`)
	for i := 0; i < 5; i++ {
		if i > 0 {
			in.WriteByte(',')
		}
		ev := fmt.Sprintf(`{"name":"%s","i":%d}`, name, i)
		in.WriteString(ev)
		want += "<" + ev + ">"
	}
	in.WriteString(`]}`)
	got, err := readAllRaw(&in)
	if err != nil {
		t.Fatal(err)
	}
	if got != want+";" {
		t.Errorf("read %d bytes, want %d", len(got), len(want)+1)
	}
}
