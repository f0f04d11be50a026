package queries

import (
	"io/fs"
	"sort"
	"strings"
)

// Doc is the documentation of one table, view or macro, parsed from the comments that precede its
// definition (Perfetto stdlib style):
//
//	-- @view name  What one row is.
//	-- @macro name(param := default, ...)  What it computes.
//	-- @column col  Meaning, with its unit
type Doc struct {
	Kind      string // table, view or macro
	Name      string
	Signature string // for macros: name(params); else the name
	Summary   string
	Columns   []ColumnDoc
	File      string // embedded file it comes from, e.g. views/10_hta_frame.sql
}

// ColumnDoc is one documented output column.
type ColumnDoc struct {
	Name, Doc string
}

// Docs returns the documentation of every documented table, view and macro, in install order.
func Docs() []Doc {
	var out []Doc
	for _, dir := range []string{"schema", "views"} {
		entries, err := fs.ReadDir(files, dir)
		if err != nil {
			panic(err) // embedded at build time
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, n := range names {
			b, err := files.ReadFile(dir + "/" + n)
			if err != nil {
				panic(err)
			}
			out = append(out, parseDocs(string(b), dir+"/"+n)...)
		}
	}
	return out
}

// Lookup returns the documentation of name (case-insensitive), if any.
func Lookup(name string) (Doc, bool) {
	for _, d := range Docs() {
		if strings.EqualFold(d.Name, name) {
			return d, true
		}
	}
	return Doc{}, false
}

func parseDocs(src, file string) []Doc {
	var out []Doc
	var cur *Doc
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		rest, isComment := strings.CutPrefix(t, "--")
		if !isComment {
			cur = nil
			continue
		}
		rest = strings.TrimSpace(rest)
		if col, ok := strings.CutPrefix(rest, "@column "); ok && cur != nil {
			name, doc := splitDoc(col)
			cur.Columns = append(cur.Columns, ColumnDoc{Name: name, Doc: doc})
			continue
		}
		for _, kind := range []string{"table", "view", "macro"} {
			if head, ok := strings.CutPrefix(rest, "@"+kind+" "); ok {
				sig, summary := splitDoc(head)
				name := sig
				if i := strings.IndexByte(sig, '('); i >= 0 {
					name = sig[:i]
				}
				out = append(out, Doc{Kind: kind, Name: name, Signature: sig, Summary: summary, File: file})
				cur = &out[len(out)-1]
			}
		}
		if cur != nil && !strings.HasPrefix(rest, "@") && len(cur.Columns) == 0 && rest != "" {
			// A continuation line of the summary.
			cur.Summary = strings.TrimSpace(cur.Summary + " " + rest)
		}
	}
	return out
}

// splitDoc splits "name  description" at the first run of two or more spaces; a signature with
// parentheses may contain single spaces.
func splitDoc(s string) (head, doc string) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ' ':
			if depth == 0 && i+1 < len(s) && s[i+1] == ' ' {
				return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i:])
			}
		}
	}
	return strings.TrimSpace(s), ""
}
