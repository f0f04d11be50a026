package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGuessedSplit: Kineto's layout is cut by guessed event ends, with the same events as exact
// cuts; a file whose layout fools the guess (an args line of two spaces and '}') and a malformed
// file in that layout are parsed again exactly: the right events, the exact error.
func TestGuessedSplit(t *testing.T) {
	ctx := context.Background()
	kineto := filepath.Join("..", "testdata", "traces", "ns_resolution", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
	dir := t.TempDir()
	fooled := filepath.Join(dir, "fooled.json")
	// Event 1's args hold a nested object closed on a line "  }": the guess cuts event 1 there.
	os.WriteFile(fooled, []byte("{\n  \"traceEvents\": [\n"+
		"  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 9,\n    \"args\": {\"x\": 1}\n  },\n"+
		"  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"dur\": 3,\n    \"args\": {\"nested\": {\n\"k\": 2\n  }, \"y\": 3}\n  },\n"+
		"  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\", \"pid\": 1, \"tid\": 1, \"ts\": 4, \"dur\": 1\n  }\n  ]\n}\n"), 0o644)
	perLine := filepath.Join(dir, "per_line.json")
	os.WriteFile(perLine, []byte("{\"traceEvents\": [\n"+
		`{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":9,"args":{"x":{"y":[1,2]}}},`+"\r\n"+
		`{"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":2,"dur":3}`+"\n]}\n"), 0o644)
	// Two events on one line: the guess takes them for one.
	twoOnALine := filepath.Join(dir, "two_on_a_line.json")
	os.WriteFile(twoOnALine, []byte("{\"traceEvents\": [\n"+
		`{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":9}, {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":2,"dur":3},`+"\n"+
		`{"ph":"X","cat":"cpu_op","name":"c","pid":1,"tid":1,"ts":4,"dur":1}`+"\n]}\n"), 0o644)
	broken := filepath.Join(dir, "broken.json")
	os.WriteFile(broken, []byte("{\n  \"traceEvents\": [\n"+
		"  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 9\n  },\n"+
		"  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\" \"pid\": 1\n  }\n  ]\n}\n"), 0o644)

	events := func(pf *parsedFile) []string {
		var out []string
		for _, b := range pf.batches {
			n := b.events.Column(5) // name
			for i := 0; i < int(b.events.NumRows()); i++ {
				out = append(out, n.ValueStr(i))
			}
		}
		return out
	}
	for _, c := range []struct {
		path        string
		wantGuessed bool
		wantEvents  int
	}{
		{kineto, true, 0},
		{fooled, true, 3},
		{perLine, true, 2},
		{twoOnALine, true, 3},
	} {
		fast, guessed, err := parseFileSplit(ctx, c.path, 0, LoadOptions{}, true)
		if c.path == fooled || c.path == twoOnALine {
			if err == nil || !guessed {
				t.Fatalf("%s: the guessed parse gave %v (guessed %v), want a failed cut", c.path, err, guessed)
			}
		} else {
			if err != nil || guessed != c.wantGuessed {
				t.Fatalf("%s: guessed %v, %v", c.path, guessed, err)
			}
			defer fast.release()
		}
		exact, guessed, err := parseFileSplit(ctx, c.path, 0, LoadOptions{}, false)
		if err != nil || guessed {
			t.Fatalf("%s exact: %v (guessed %v)", c.path, err, guessed)
		}
		defer exact.release()
		got, err := parseFile(ctx, c.path, 0, LoadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		defer got.release()
		if g, w := strings.Join(events(got), ","), strings.Join(events(exact), ","); g != w || (c.wantEvents > 0 && len(events(got)) != c.wantEvents) {
			t.Errorf("%s: events %q, want %q", c.path, g, w)
		}
		if fast != nil && strings.Join(events(fast), ",") != strings.Join(events(exact), ",") {
			t.Errorf("%s: the guessed cuts gave other events than the exact ones", c.path)
		}
	}
	// A literal that runs into a quote (found by the fuzzer): the exact splitter starts a string
	// there and never finds its end; the guessed cut must not read the event as one either.
	quoteInLiteral := filepath.Join(dir, "quote_in_literal.json")
	os.WriteFile(quoteInLiteral, []byte("{\n  \"traceEvents\": [\n"+
		"  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 9\n  },\n"+
		"  {\n    \"ph\": \"M\", \"name\":jjjjocess_labels\", \"pid\": 1, \"tid\": 0\n  }\n  ]\n}\n"), 0o644)
	for _, p := range []string{broken, quoteInLiteral} {
		_, err := parseFile(ctx, p, 0, LoadOptions{})
		_, _, exactErr := parseFileSplit(ctx, p, 0, LoadOptions{}, false)
		if err == nil || exactErr == nil || err.Error() != exactErr.Error() {
			t.Errorf("%s: %v, want the exact parse's error %v", filepath.Base(p), err, exactErr)
		}
	}
}
