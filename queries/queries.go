// Package queries holds tracesql's SQL: the schema of the raw tables, the views that name the
// common slices of a trace, and (later) the analysis macros and saved reports. Every file is
// embedded in the binary and installed on each connection by the engine.
package queries

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed schema/*.sql views/*.sql reports/*.sql
var files embed.FS

// Schema returns the CREATE TABLE statements of the raw tables, in install order.
func Schema() []string { return read("schema") }

// Views returns the view and macro definitions, in install order (file name order).
func Views() []string { return read("views") }

func read(dir string) []string {
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		panic(err) // embedded at build time: cannot fail
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, n := range names {
		b, err := files.ReadFile(dir + "/" + n)
		if err != nil {
			panic(err)
		}
		out = append(out, string(b))
	}
	return out
}
