package queries

import (
	"reflect"
	"testing"
)

func TestParseDocs(t *testing.T) {
	src := `-- @macro idle(consecutive_kernel_delay := 30, ranks := NULL)  GPU idle time
-- by stream and category.
-- @column rank  Rank
-- @column idle_time_us  Idle time, µs
CREATE MACRO idle() AS TABLE SELECT 1;
-- @view v  One row.
CREATE VIEW v AS SELECT 1;
-- plain comment
`
	got := parseDocs(src, "f.sql")
	want := []Doc{
		{Kind: "macro", Name: "idle", Signature: "idle(consecutive_kernel_delay := 30, ranks := NULL)",
			Summary: "GPU idle time by stream and category.", File: "f.sql",
			Columns: []ColumnDoc{{"rank", "Rank"}, {"idle_time_us", "Idle time, µs"}}},
		{Kind: "view", Name: "v", Signature: "v", Summary: "One row.", File: "f.sql"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// TestEveryObjectDocumented: each CREATE of a public table, view or macro has a doc comment.
func TestEveryObjectDocumented(t *testing.T) {
	docs := map[string]bool{}
	for _, d := range Docs() {
		docs[d.Name] = true
	}
	for _, dir := range []string{"schema", "views"} {
		for _, stmt := range read(dir) {
			DDLTargets(stmt, func(verb, _, name, _ string) {
				if verb == "create" && name[0] != '_' && !docs[name] {
					t.Errorf("%s: %s has no -- @table/@view/@macro doc comment", dir, name)
				}
			})
		}
	}
}
