package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestEquivDump loads every shared trace (one in-memory DB each) and writes a hash per table to
// $EQUIV_OUT, plus the error messages of a set of malformed inputs, for before/after comparison.
func TestEquivDump(t *testing.T) {
	out := os.Getenv("EQUIV_OUT")
	if out == "" {
		t.Skip("EQUIV_OUT not set")
	}
	root := sharedTraces(t)
	var files []string
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".gz")) {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	var buf bytes.Buffer
	ctx := context.Background()
	dump := func(label, p string) {
		db, err := Open(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, err = db.Load(ctx, []string{p}, LoadOptions{Workers: 2})
		fmt.Fprintf(&buf, "== %s err=%v\n", label, err)
		if err != nil {
			return
		}
		for _, q := range []string{
			"SELECT count(*), sum(hash(COLUMNS(* EXCLUDE (loaded_at, path, file_mtime)))) FROM traces",
			"SELECT count(*), sum(hash(COLUMNS(*))) FROM events",
			"SELECT count(*), sum(hash(COLUMNS(*))) FROM flows",
			"SELECT count(*), sum(hash(COLUMNS(*))) FROM counters",
			"SELECT count(*), sum(hash(COLUMNS(*))) FROM instants",
			"SELECT count(*), sum(hash(COLUMNS(*))) FROM other_events",
			"SELECT count(*), sum(hash(COLUMNS(*))) FROM metadata_events",
			"SELECT count(*), sum(hash(ev_idx, args::VARCHAR)) FROM events",
			"SELECT count(*), sum(hash(ev_idx, args::VARCHAR)) FROM metadata_events",
		} {
			rows, err := db.SQL.QueryContext(ctx, q)
			if err != nil {
				t.Fatal(q, err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				rows.Scan(ptrs...)
				fmt.Fprintf(&buf, "%s: %v\n", q[:40], vals)
			}
			rows.Close()
		}
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		dump(rel, f)
	}
	// Malformed inputs.
	dir := t.TempDir()
	cases := map[string]string{
		"trunc_json":    `{"traceEvents":[{"ph":"X","ts":1,"dur":2,"name":"a"},{"ph":"X","ts":1`,
		"trunc_str":     `{"traceEvents":[{"ph":"X","ts":1,"dur":2,"name":"abc`,
		"bad_ts":        `{"traceEvents":[{"ph":"X","ts":"abc","dur":2,"name":"a"}]}`,
		"neg_dur":       `{"traceEvents":[{"ph":"X","ts":1,"dur":-2,"name":"a"}]}`,
		"no_ts":         `{"traceEvents":[{"ph":"X","dur":2,"name":"a"}]}`,
		"bad_dur":       `{"traceEvents":[{"ph":"X","ts":1,"dur":"x","name":"a"}]}`,
		"bad_sep":       `{"traceEvents":[{"ph":"X","ts":1 "dur":2}]}`,
		"bad_key":       `{"traceEvents":[{"ph":"X",ts:1}]}`,
		"no_colon":      `{"traceEvents":[{"ph":"X","ts" 1}]}`,
		"nested_bad":    `{"traceEvents":[{"ph":"X","ts":1,"args":{"a":[1,2}}]}`,
		"not_obj":       `{"traceEvents":[1,2]}`,
		"no_events":     `{"foo":1}`,
		"arr_unterm":    `[{"ph":"X","ts":1,"dur":2,"name":"a"},{"ph":"i","ts":3,"s":"g"}`,
		"arr_trailing":  `[{"ph":"X","ts":1,"dur":2,"name":"a"},]`,
		"empty":         ``,
		"string":        `"abc"`,
		"after":         `{"traceEvents":[]} x`,
		"twice":         `{"traceEvents":[],"traceEvents":[]}`,
		"notarr":        `{"traceEvents":{}}`,
		"counter_bad":   `{"traceEvents":[{"ph":"C","ts":1,"name":"c","args":{"a" 1}}]}`,
		"escapes":       `{"traceEvents":[{"ph":"X","ts":1.0005,"dur":2e-3,"name":"a\"b\\\u00e9","cat":"c\nd","pid":"Sp\"ans","tid":"7","args":{ "x" : "y\"}" , "n":[1, {"z":2}] }},{"ph":"M","name":"process_name","pid":1,"args":{"name":"p"}},{"ph":"\u0058","ts":5,"name":"esc ph"}]}`,
		"ws":            " \n{ \"traceEvents\" : [ \n { \"ph\" : \"X\" , \"ts\" : 12 , \"dur\" : 3 , \"args\" : { \"a\" : 1 } } \n , {\"ph\":\"f\",\"id\":\"x\\\"y\",\"bp\":\"e\",\"ts\":4} ] , \"k\" : { \"a\" : [ 1 , 2 ] } } \n",
		"bad_value":     `{"traceEvents":[{"ph":"X","ts":1,"dur":2,"name":}]}`,
		"empty_key_val": `{"traceEvents":[{"ph":"X","ts":1,"dur":2,,"name":"a"}]}`,
		"deep_close":    `{"traceEvents":[{"ph":"X","ts":1]}]}`,
	}
	names := make([]string, 0, len(cases))
	for k := range cases {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := filepath.Join(dir, k+".json")
		os.WriteFile(p, []byte(cases[k]), 0o644)
		dump(k, p)
	}
	// Truncated gzip of a real trace.
	src, _ := os.ReadFile(filepath.Join(root, "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"))
	p := filepath.Join(dir, "trunc.json.gz")
	os.WriteFile(p, src[:len(src)/2], 0o644)
	dump("trunc_gz", p)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(`{"traceEvents":[{"ph":"X","ts":1,"dur":2,"name":"a"},{"ph":"X"`))
	zw.Close()
	p = filepath.Join(dir, "trunc2.json.gz")
	os.WriteFile(p, zb.Bytes(), 0o644)
	dump("trunc_json_in_gz", p)
	os.WriteFile(out, []byte(strings.ReplaceAll(buf.String(), dir, "TMP")), 0o644)
}
