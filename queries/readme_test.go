package queries

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateReadme = flag.Bool("update", false, "rewrite the generated reference section of README.md")

const (
	refBegin = "<!-- reference:begin (generated from the SQL doc comments by `go test ./queries -run TestReadmeReference -update`) -->"
	refEnd   = "<!-- reference:end -->"
)

// referenceMarkdown renders every documented public table, view and macro as a markdown table.
func referenceMarkdown() string {
	var b strings.Builder
	b.WriteString("| name | kind | one row is / what it does |\n|---|---|---|\n")
	for _, d := range Docs() {
		if strings.HasPrefix(d.Name, "_") {
			continue
		}
		sig := "`" + strings.ReplaceAll(d.Signature, "|", "\\|") + "`"
		b.WriteString("| " + sig + " | " + d.Kind + " | " + strings.ReplaceAll(d.Summary, "|", "\\|") + " |\n")
	}
	return b.String()
}

// TestReadmeReference keeps README.md's SQL reference equal to the doc comments in the SQL, so the
// documentation cannot drift from the code.
func TestReadmeReference(t *testing.T) {
	path := "../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, refBegin), strings.Index(s, refEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %q … %q markers", refBegin, refEnd)
	}
	want := s[:i+len(refBegin)] + "\n" + referenceMarkdown() + s[j:]
	if want == s {
		return
	}
	if *updateReadme {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("README.md's SQL reference is stale: run go test ./queries -run TestReadmeReference -update")
}
