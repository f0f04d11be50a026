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
	} {
		err := RefuseInternalCall(tc.sql)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.sql, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s: got %v, want an error with %q", tc.sql, err, tc.refused)
		}
	}
}
