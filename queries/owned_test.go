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
		{`DROP MACRO IF EXISTS main._bool_arg; DROP VIEW "Kernels"`, []string{"drop macro main._bool_arg", "drop view kernels"}},
		{`ALTER TABLE events ADD COLUMN x INT`, []string{"alter table events"}},
		{`CREATE OR REPLACE TEMP VIEW v AS SELECT 1`, []string{"create view v"}},
		{`-- DROP VIEW kernels
		  SELECT 'DROP VIEW kernels', "create" FROM t /* CREATE MACRO x */`, nil},
		{`SELECT * FROM critical_path()`, nil},
		{`CREATE TABLE owners AS SELECT 1`, []string{"create table owners"}},
		{`ALTER TABLE x RENAME TO Kernel_Classes; ALTER VIEW v RENAME TO kernels`,
			[]string{"alter table x", "create table kernel_classes", "alter view v", "create view kernels"}},
		{`ALTER TABLE t RENAME COLUMN a TO b; SELECT 1 AS rename, 2 AS to`, []string{"alter table t"}},
		{`INSERT INTO main._trace_summary SELECT 1; insert or replace into "T" VALUES (1); UPDATE u x SET a = 1;
		  WITH d AS (SELECT 1) DELETE FROM v; TRUNCATE w; truncate table w2; MERGE INTO m USING s ON true`,
			[]string{"write table main._trace_summary", "write table t", "write table u", "write table v", "write table w",
				"write table w2", "write table m"}},
		{`SELECT update, delete FROM t WHERE "update" = 1`, nil},
		{`CREATE TABLE X.Main."Events" AS SELECT 1; ALTER TABLE o.t RENAME TO events; DROP VIEW "a b".v; UPDATE x.y SET a = b.c`,
			[]string{"create table x.main.events", "alter table o.t", "create table o.events", "drop view a b.v", "write table x.y"}},
	} {
		var got []string
		DDLTargets(c.sql, func(verb, kind, name, qualifier string) {
			if qualifier != "" {
				name = qualifier + "." + name
			}
			got = append(got, verb+" "+kind+" "+name)
		})
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
