package engine

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
)

// unescape must decode a valid JSON string's contents exactly as encoding/json does, but for a run of
// invalid UTF-8, which becomes one U+FFFD; contents that are not valid JSON are decoded where they are and
// kept as written where they are not, and said to be invalid.
func TestUnescapeMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		``, `plain`, `a\"b`, `a\\b`, `a\/b`, `\b\f\n\r\t`, `\u00e9t\u00E9`, `\u20ac`,
		`\ud83d\ude00`, `x\ud83dy`, `\ude00`, `\ud83d\u0041`, `\ud83d\ud83d`,
		"caf\xc3\xa9", "bad\xffutf8", "half\xe2\x82", `aten::add_\"inplace\"`, "two\xff\xferuns\xc3\\u00e9\xff",
	}
	check := func(t *testing.T, c string) {
		t.Helper()
		var want string
		// encoding/json makes one U+FFFD per invalid byte; unescape one per run, as the loader does where
		// the text has no escape
		if err := json.Unmarshal(bytes.ToValidUTF8([]byte(`"`+c+`"`), []byte("\uFFFD")), &want); err != nil {
			t.Fatalf("%q: not a valid JSON string: %v", c, err)
		}
		if got, valid := unescapeValid([]byte(c)); got != want || !valid {
			t.Errorf("unescape(%q) = %q, %t; encoding/json gives %q", c, got, valid, want)
		}
	}
	for _, c := range cases {
		check(t, c)
	}
	for _, c := range []struct{ in, want string }{
		{`\u12`, `\u12`},
		{`\u12g4`, `\u12g4`},
		{`\x`, `\x`},
		{`trailing\`, `trailing\`},
		{"raw\x01control", "raw\x01control"},
		{`caf\u00e9\q\u12`, "caf\u00e9\\q\\u12"},
		{`C:\Users\n\u00e9`, "C:\\Users\n\u00e9"},
		{`\é\u00e9`, "\\é\u00e9"},
	} {
		if got, valid := unescapeValid([]byte(c.in)); got != c.want || valid {
			t.Errorf("unescape(%q) = %q, %t; want %q, false", c.in, got, valid, c.want)
		}
	}
	// random contents over an alphabet rich in escapes, surrogates and broken UTF-8: the valid ones as
	// encoding/json decodes them, the others said to be invalid
	alphabet := []string{`\`, `"`, `u`, `d8`, `3d`, `de`, `00`, `n`, `/`, `a`, `\u`, `\ud83d`, `\ude00`, "\xff", "\xc3", "\xa9", "é", "\x1f", `F`}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		var b []byte
		for n := rng.Intn(8); n > 0; n-- {
			b = append(b, alphabet[rng.Intn(len(alphabet))]...)
		}
		if len(b) > 0 && b[len(b)-1] == '\\' && rng.Intn(2) == 0 {
			b = b[:len(b)-1]
		}
		if rawQuote(b) {
			continue // the scanner never hands over contents with an unescaped quote
		}
		var want string
		if err := json.Unmarshal([]byte(`"`+string(b)+`"`), &want); err != nil {
			if _, valid := unescapeValid(b); valid {
				t.Errorf("unescape(%q) says valid; encoding/json: %v", b, err)
			}
			continue
		}
		check(t, string(b))
	}
}

// rawQuote reports a '"' that no backslash escapes.
func rawQuote(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return true
		}
	}
	return false
}

// TestLoneSurrogatesFixed: a JSON string with a lone surrogate escape, which encoding/json and Perfetto
// read as U+FFFD and DuckDB's JSON type rejects, is rewritten to one DuckDB takes and that decodes to
// the same text; valid pairs and every other escape stay as written.
func TestLoneSurrogatesFixed(t *testing.T) {
	db := openTestDB(t)
	for _, c := range []struct{ in, want string }{
		{`"plain"`, `"plain"`},
		{`"\ud83d\ude00"`, `"\ud83d\ude00"`},
		{`"\ud800"`, `"\ufffd"`},
		{`"\udc00x"`, `"\ufffdx"`},
		{`"\ud83d\u0041"`, `"\ufffd\u0041"`},
		{`"\ud83d\ud83d\ude00"`, `"\ufffd\ud83d\ude00"`},
		{`"\\ud800"`, `"\\ud800"`},
		{`"\\\ud800"`, `"\\\ufffd"`},
		{`{"a":"\uDBFF","b":[1,"\uDFFF\n"]}`, `{"a":"\ufffd","b":[1,"\ufffd\n"]}`},
	} {
		if got := string(appendLoneSurrogatesFixed(nil, []byte(c.in))); got != c.want {
			t.Errorf("%s → %s, want %s", c.in, got, c.want)
		}
	}
	alphabet := []string{`\\`, `\u`, `\ud83d`, `\ude00`, `\uD800`, `\udfff`, `\u0041`, `d83d`, `a`, `\n`, "é"}
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 3000; i++ {
		var b []byte
		for n := rng.Intn(6); n > 0; n-- {
			b = append(b, alphabet[rng.Intn(len(alphabet))]...)
		}
		in := `"` + string(b) + `"`
		var want string
		if json.Unmarshal([]byte(in), &want) != nil {
			continue // not a JSON string (a \u without four hex digits)
		}
		out := string(appendLoneSurrogatesFixed(nil, []byte(in)))
		var got string
		if err := json.Unmarshal([]byte(out), &got); err != nil || got != want {
			t.Fatalf("%s → %s decodes to %q (%v), want %q", in, out, got, err, want)
		}
		var back string
		if err := db.SQL.QueryRow(`SELECT ?::JSON::VARCHAR`, out).Scan(&back); err != nil {
			t.Fatalf("%s → %s: DuckDB: %v", in, out, err)
		}
	}
}
