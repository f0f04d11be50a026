package traceio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/gzip"
)

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// bigTrace is a trace of several of the read-ahead's blocks, that compresses poorly enough for a cut
// gzip file to end in the middle of the data.
func bigTrace() []byte {
	var b bytes.Buffer
	b.WriteString(`{"traceEvents":[`)
	for i := 0; b.Len() < 3*BlockSize+12345; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ph":"X","name":"k%d","ts":%d,"dur":%d}`, i*7919%100003, i*31, i%977)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// TestOpen opens files of each kind traceio reads or refuses: the content read, or the exact error (of
// Open, or of the read that ends the content), both through Read and block by block through Next.
func TestOpen(t *testing.T) {
	a, b := []byte(`{"traceEvents":[`), []byte(`{"ph":"i","ts":1}]}`)
	ab := string(a) + string(b)
	ga, gb := gz(t, a), gz(t, b)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	big := bigTrace()
	gbig := gz(t, big)
	bom := []byte("\xef\xbb\xbf")
	cases := []struct {
		name    string
		file    []byte
		gzName  bool   // named .json.gz, else .json
		want    string // the content read, up to the error
		wantErr string // "" for none
		partial bool   // the read stops inside a member: want is only a prefix of what is read
		skipped int64
	}{
		{name: "plain", file: []byte(ab), want: ab},
		{name: "plain named .gz", file: []byte(ab), gzName: true, want: ab},
		{name: "empty", file: nil, want: ""},
		{name: "plain, several blocks", file: big, want: string(big)},
		{name: "gzip", file: ga, gzName: true, want: string(a)},
		{name: "gzip named .json", file: ga, want: string(a)},
		{name: "gzip, several blocks", file: gbig, want: string(big)},
		{name: "two members", file: cat(ga, gb), want: ab},
		{name: "an empty member between two", file: cat(ga, gz(t, nil), gb), want: ab},
		{name: "zero padding", file: cat(ga, gb, make([]byte, 1024)), gzName: true, want: ab},
		{name: "zero padding after several blocks", file: cat(gbig, make([]byte, 1024)), want: string(big)},
		{name: "truncated gzip", file: gbig[:len(gbig)/2], want: string(big[:1000]), partial: true,
			wantErr: fmt.Sprintf("truncated gzip stream after %d bytes", len(gbig)/2)},
		{name: "second member cut in its header", file: cat(ga, gb[:5]), want: string(a),
			wantErr: fmt.Sprintf("truncated gzip stream after %d bytes", len(ga)+5)},
		{name: "cut in its trailer", file: ga[:len(ga)-4], partial: true,
			wantErr: fmt.Sprintf("truncated gzip stream after %d bytes", len(ga)-4)},
		{name: "trailing junk", file: cat(ga, gb, []byte("garbage")), want: ab,
			wantErr: fmt.Sprintf("7 bytes of trailing data after the gzip stream ended at byte %d (not gzip)", len(ga)+len(gb))},
		{name: "junk after zeros", file: cat(ga, []byte{0, 0, 0, 'x'}), want: string(a),
			wantErr: fmt.Sprintf("4 bytes of trailing data after the gzip stream ended at byte %d (not gzip)", len(ga))},
		{name: "junk that starts like gzip", file: cat(ga, []byte{0x1f, 0x8b, 0x07, 0, 0, 0, 0, 0, 0, 0, 0, 0}), want: string(a),
			wantErr: fmt.Sprintf("corrupt gzip header at byte %d: gzip: invalid header", len(ga))},
		{name: "corrupt gzip header", file: []byte{0x1f, 0x8b, 0, 0, 0},
			wantErr: "corrupt gzip header: unexpected EOF"},
		{name: "BOM", file: cat(bom, []byte(ab)), want: ab, skipped: 3},
		{name: "BOM, gzip", file: gz(t, cat(bom, []byte(ab))), gzName: true, want: ab, skipped: 3},
		// One mark is dropped; a second one is content, which the loader's JSON reader refuses.
		{name: "two BOMs", file: cat(bom, bom, []byte(ab)), want: string(bom) + ab, skipped: 3},
		{name: "two BOMs, gzip", file: gz(t, cat(bom, bom, []byte(ab))), want: string(bom) + ab, skipped: 3},
		{name: "not gzip though named .gz", file: []byte("hello, not a trace"), gzName: true,
			wantErr: "not gzip: the name ends in .gz but the file starts with neither gzip's magic bytes (1f 8b) nor JSON"},
		{name: "a zip archive named .gz", file: []byte("PK\x03\x04 a zip file"), gzName: true,
			wantErr: "not gzip: a zip archive: unzip it and load the trace inside"},
		{name: "a DuckDB database", file: []byte("\x00\x00\x00\x00\x00\x00\x00\x00DUCK\x40\x00"),
			wantErr: "a DuckDB database, not a trace: open it with --db {path}"},
	}
	dir := t.TempDir()
	for i, c := range cases {
		name := fmt.Sprintf("t%d.json", i)
		if c.gzName {
			name += ".gz"
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		wantErr := strings.ReplaceAll(c.wantErr, "{path}", path)
		for _, blocks := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/blocks=%v", c.name, blocks), func(t *testing.T) {
				var raw atomic.Int64
				r, err := Open(path, &raw)
				var got []byte
				if err == nil {
					if r.Skipped() != c.skipped {
						t.Errorf("skipped %d, want %d", r.Skipped(), c.skipped)
					}
					if blocks {
						got, err = readBlocks(r)
					} else {
						got, err = io.ReadAll(r)
					}
					if cerr := r.Close(); cerr != nil {
						t.Errorf("close: %v", cerr)
					}
					if err == nil && raw.Load() != int64(len(c.file)) {
						t.Errorf("%d bytes counted as read from disk, want the file's %d", raw.Load(), len(c.file))
					}
				}
				gotErr := ""
				if err != nil {
					gotErr = err.Error()
				}
				if gotErr != wantErr {
					t.Errorf("error %q, want %q", gotErr, wantErr)
				}
				if strings.HasPrefix(wantErr, "truncated") && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("%v is not io.ErrUnexpectedEOF", err)
				}
				// How much of a cut-off member is read depends on flate's block boundaries.
				if c.partial && !bytes.HasPrefix(got, []byte(c.want)) || !c.partial && string(got) != c.want {
					t.Errorf("read %d bytes %.40q, want %d bytes %.40q", len(got), got, len(c.want), c.want)
				}
			})
		}
	}
}

// readBlocks reads r to its end through Next, checking that each block has its headroom.
func readBlocks(r *Reader) ([]byte, error) {
	var got []byte
	for {
		b, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return got, err
		}
		if len(b) <= Headroom || cap(b) != Headroom+BlockSize {
			return got, fmt.Errorf("a block of %d bytes (capacity %d)", len(b), cap(b))
		}
		got = append(got, b[Headroom:]...)
		r.Recycle(b)
	}
}

// errSource returns its data, then err with the last bytes.
type errSource struct {
	data []byte
	err  error
}

func (s *errSource) Read(p []byte) (int, error) {
	n := copy(p, s.data)
	s.data = s.data[n:]
	if len(s.data) == 0 {
		return n, s.err
	}
	return n, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// The read-ahead passes its source's error on as it is: io.ErrUnexpectedEOF (a gzip reader's word for
// a cut stream) is not taken for a short final block, and an error that comes with a block's last bytes
// is not lost.
func TestReadAheadKeepsErrors(t *testing.T) {
	for _, n := range []int{10, BlockSize, BlockSize + 10} {
		for _, srcErr := range []error{io.ErrUnexpectedEOF, errors.New("boom"), io.EOF} {
			data := bytes.Repeat([]byte{'x'}, n)
			r := newReader(&errSource{data: data, err: srcErr}, nopCloser{})
			got, err := io.ReadAll(r)
			want := srcErr
			if srcErr == io.EOF {
				want = nil // ReadAll's word for the clean end
			}
			if err != want || len(got) != n {
				t.Errorf("%d bytes then %v: read %d bytes, error %v", n, srcErr, len(got), err)
			}
			r.Close()
		}
	}
}
