package sqlfuncs

import (
	"strings"
	"testing"
)

func TestRefuseInternalCall(t *testing.T) {
	for _, tc := range []struct {
		sql, refused string // refused: a word of the error, "" = allowed
	}{
		{"SELECT * FROM critical_path(rank := 0)", ""},
		{"SELECT * FROM _longest_path(NULL)", "_longest_path is the internal function"},
		{`SELECT * FROM main."_LONGEST_PATH" /* c */ (NULL)`, "_LONGEST_PATH is the internal function"},
		{"SELECT '_longest_path(NULL)' AS text", ""},
		{"SELECT 1 AS _longest_path", ""},
		{"-- _longest_path(NULL)\nSELECT 1", ""},
		{"SELECT * FROM query('SELECT 42')", ""},
		{"SELECT * FROM query($$SELECT 'a'$$ /* c */ )", ""},
		{"SELECT * FROM query('SELECT * FROM _longest_path(NULL)')", "_longest_path is the internal function"},
		{"SELECT * FROM query('SELECT * FROM query(''SELECT * FROM _longest_path(NULL)'')')", "_longest_path is the internal function"},
		{"SELECT * FROM QUERY($t$SELECT * FROM _longest_path(NULL)$t$)", "_longest_path is the internal function"},
		{`SELECT * FROM query(E'SELECT * FROM _longest\_path(NULL)')`, "_longest_path is the internal function"},
		{"SELECT * FROM query('SELECT * FROM _longest' || '_path(NULL)')", "query() is given SQL built when the statement runs"},
		{"SELECT * FROM query(getvariable('q'))", "query() is given SQL built when the statement runs"},
		{"CREATE MACRO m(s) AS TABLE SELECT * FROM query(s)", "query() is given SQL built when the statement runs"},
		{"SELECT * FROM query_table('events')", ""},
		{"SELECT * FROM query('unclosed", ""}, // DuckDB's own error
		// tracesql's own objects: a redefined _bool_arg returning NULL aborted every later critical_path
		{"CREATE OR REPLACE MACRO _bool_arg(x, dflt, what) AS NULL::BOOLEAN", "_bool_arg is one of tracesql's own macros"},
		{"CREATE TEMP MACRO critical_path() AS TABLE SELECT 1", "redefining it would break them"},
		{"DROP MACRO main._str_arg", "dropping it would break them"},
		{"DROP VIEW IF EXISTS kernels", "kernels is one of tracesql's own views"},
		{"CREATE OR REPLACE TABLE kernel_classes AS SELECT 1", "kernel_classes is one of tracesql's own tables"},
		{"ALTER TABLE events DROP COLUMN args", "altering it would break them"},
		// (overwritten, --readonly took the file for another version's)
		{"CREATE OR REPLACE TABLE _tracesql_install AS SELECT 'x' AS hash", "_tracesql_install is one of tracesql's own tables"},
		{"CREATE TABLE owners(pid INT); DROP TABLE owners", ""},
		{"CREATE MACRO kernels(x) AS x", ""}, // a macro and a view of one name do not collide
		{"INSERT INTO kernel_classes VALUES (0, 'x', 'COMMUNICATION')", ""},
		{"DELETE FROM events WHERE cat = 'python_function'", ""},
		// (an edited derived table stayed in every later session's results)
		{"UPDATE _trace_summary SET comp_ns = 0", "_trace_summary is one of tracesql's own tables, derived"},
		{"DELETE FROM main._idle_summary", "_idle_summary is one of tracesql's own tables"},
		{"WITH x AS (SELECT 1) INSERT INTO _hta_frame_default SELECT * FROM _hta_frame_default", "_hta_frame_default is one of"},
		{"TRUNCATE _gpu_frame_default", "_gpu_frame_default is one of"},
		{"EXPLAIN ANALYZE DELETE FROM _queue_summary", "_queue_summary is one of"},
		{"CREATE TEMP TABLE x (a INT); ALTER TABLE x RENAME TO kernel_classes", "kernel_classes is one of tracesql's own tables"},
		{"UPDATE my_table SET _trace_summary = 1", ""},
	} {
		err := RefuseUserStatement(tc.sql)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.sql, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s: got %v, want an error with %q", tc.sql, err, tc.refused)
		}
	}
}

// TestRefuseUserStatementQualified: an object qualified with a database or schema that the analyses'
// unqualified names do not reach is the user's (r69 #4: copying events into an ATTACHed file was refused as
// a redefinition of tracesql's events); one in the temporary schema, in main, or in a catalog given as
// reached (tracesql's own, the one a USE made current) is refused.
func TestRefuseUserStatementQualified(t *testing.T) {
	for _, tc := range []struct {
		sql     string
		refused bool
	}{
		{"CREATE TABLE x.events AS SELECT * FROM events", false},
		{"CREATE OR REPLACE TABLE x.main.events AS SELECT 1", false},
		{"CREATE TABLE s3.traces (a INT)", false},
		{"DROP TABLE o.events", false},
		{"CREATE MACRO x.critical_path() AS TABLE SELECT 1", false},
		{"ALTER TABLE x.t RENAME TO kernels", false},
		{"UPDATE x._trace_summary SET comp_ns = 0", false},
		{"CREATE TABLE events (a INT)", true},
		{"CREATE TABLE main.events (a INT)", true},
		{"CREATE TABLE Home.events (a INT)", true},
		{"CREATE TABLE home.main.events (a INT)", true},
		{"CREATE TABLE used.events (a INT)", true},
		{"CREATE TABLE temp.events (a INT)", true},
		{"CREATE TABLE temp.main.events (a INT)", true},
		{"CREATE TABLE home.s3.events (a INT)", false},
		{"ALTER TABLE home.t RENAME TO kernels", true},
		{"UPDATE main._trace_summary SET comp_ns = 0", true},
	} {
		err := RefuseUserStatement(tc.sql, "home", "used")
		if (err != nil) != tc.refused {
			t.Errorf("%s: refused %v (%v), want %v", tc.sql, err != nil, err, tc.refused)
		}
	}
}
