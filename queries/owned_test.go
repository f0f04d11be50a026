package queries

import (
	"slices"
	"testing"
)

func TestDDLTargets(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want []string // "verb kind name"
	}{
		{`CREATE OR REPLACE MACRO _bool_arg(x, d, w) AS NULL`, []string{"create macro _bool_arg"}},
		{`create temporary macro Critical_Path() as table select 1`, []string{"create macro critical_path"}},
		{`CREATE FUNCTION f(x) AS x`, []string{"create macro f"}},
		{`CREATE TABLE IF NOT EXISTS traces (a INT)`, []string{"create table traces"}},
		{`DROP MACRO IF EXISTS main._bool_arg; DROP VIEW "Kernels"`, []string{"drop macro _bool_arg", "drop view kernels"}},
		{`ALTER TABLE events ADD COLUMN x INT`, []string{"alter table events"}},
		{`CREATE OR REPLACE TEMP VIEW v AS SELECT 1`, []string{"create view v"}},
		{`-- DROP VIEW kernels
		  SELECT 'DROP VIEW kernels', "create" FROM t /* CREATE MACRO x */`, nil},
		{`SELECT * FROM critical_path()`, nil},
		{`CREATE TABLE owners AS SELECT 1`, []string{"create table owners"}},
	} {
		var got []string
		DDLTargets(c.sql, func(verb, kind, name string) { got = append(got, verb+" "+kind+" "+name) })
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.sql, got, c.want)
		}
	}
	for name, want := range map[string]string{"_bool_arg": "macro", "critical_path": "macro", "kernels": "view",
		"Events": "table", "kernel_classes": "table", "phase_rules": "table"} {
		if got, ok := OwnedKind(name); !ok || got != want {
			t.Errorf("OwnedKind(%s) = %q, %v; want %q", name, got, ok, want)
		}
	}
	if _, ok := OwnedKind("owners"); ok {
		t.Error("owners is the user's")
	}
}
