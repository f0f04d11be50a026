package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"testing"
)

// TestTraceStreamGzipMembers reads gzip files whose bytes after the first member are another
// member, padding, junk or a cut-off member: the content read and the exact error.
func TestTraceStreamGzipMembers(t *testing.T) {
	a, b := []byte(`{"traceEvents":[`), []byte(`{"ph":"i","ts":1}]}`)
	ga, gb := gz(a), gz(b)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	cases := []struct {
		name    string
		file    []byte
		want    string // the content read, up to the error
		wantErr string // "" for none
		partial bool   // the read stops inside a member: want is only a prefix of what is read
	}{
		{"one member", ga, string(a), "", false},
		{"two members", cat(ga, gb), string(a) + string(b), "", false},
		{"an empty member between two", cat(ga, gz(nil), gb), string(a) + string(b), "", false},
		{"zero padding", cat(ga, gb, make([]byte, 512)), string(a) + string(b), "", false},
		{"junk", cat(ga, []byte("garbage")), string(a),
			fmt.Sprintf("7 bytes of trailing data after the gzip stream ended at byte %d (not gzip)", len(ga)), false},
		{"junk after two members", cat(ga, gb, []byte("\nmore than a header's ten bytes of junk")), string(a) + string(b),
			fmt.Sprintf("39 bytes of trailing data after the gzip stream ended at byte %d (not gzip)", len(ga)+len(gb)), false},
		{"junk after zeros", cat(ga, []byte{0, 0, 0, 'x'}), string(a),
			fmt.Sprintf("4 bytes of trailing data after the gzip stream ended at byte %d (not gzip)", len(ga)), false},
		{"junk that starts like gzip", cat(ga, []byte{0x1f, 0x8b, 0x07, 0, 0, 0, 0, 0, 0, 0, 0, 0}), string(a),
			fmt.Sprintf("corrupt gzip header at byte %d: gzip: invalid header", len(ga)), false},
		{"second member cut in its header", cat(ga, gb[:5]), string(a),
			fmt.Sprintf("truncated gzip stream after %d bytes", len(ga)+5), false},
		{"second member cut in its data", cat(ga, gb[:len(gb)-3]), string(a),
			fmt.Sprintf("truncated gzip stream after %d bytes", len(ga)+len(gb)-3), true},
		{"cut in its trailer", ga[:len(ga)-4], "",
			fmt.Sprintf("truncated gzip stream after %d bytes", len(ga)-4), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			br := bufio.NewReader(bytes.NewReader(c.file))
			r, _, err := traceStream(br)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != c.wantErr {
				t.Errorf("error %q, want %q", gotErr, c.wantErr)
			}
			// How much of a cut-off member is read depends on flate's block boundaries.
			if c.partial && !bytes.HasPrefix(got, []byte(c.want)) || !c.partial && string(got) != c.want {
				t.Errorf("read %q, want %q", got, c.want)
			}
		})
	}
}
