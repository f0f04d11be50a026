package engine

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
)

// DuckDB reports a bad regular expression in a rule table (kernel_classes, phase_rules: users insert rows) with
// RE2's bare message, "missing ): (", from every analysis and from the next load, without saying where the
// pattern came from. On that error path only (nothing is checked while all is well), RuleError finds the rule.

// re2Errors are fragments of RE2's (and Go's) messages about a pattern that does not compile.
var re2Errors = []string{"missing )", "missing ]", "unexpected )", "invalid escape", "invalid character class",
	"bad repetition", "invalid repeat", "missing argument to repetition", "invalid perl operator", "trailing \\",
	"invalid named capture", "invalid UTF-8", "bad character class", "invalid nested repetition"}

// RuleError returns err with the bad rule named when err is a regular-expression error and a rule table holds a
// pattern that does not compile; else err itself.
func RuleError(ctx context.Context, db *DB, err error) error {
	if err == nil || db == nil {
		return err
	}
	msg := err.Error()
	if strings.Contains(msg, "correct or delete that row") {
		return err // named already (by the load, before the command line saw it)
	}
	matched := false
	for _, frag := range re2Errors {
		if strings.Contains(msg, frag) {
			matched = true
			break
		}
	}
	if !matched {
		return err
	}
	rows, qerr := db.SQL.QueryContext(context.WithoutCancel(ctx), `SELECT 'kernel_classes', priority, pattern FROM kernel_classes
		UNION ALL SELECT 'phase_rules', priority, pattern FROM phase_rules ORDER BY 1, 2 NULLS FIRST`)
	if qerr != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var table string
		var pattern sql.NullString
		var priority sql.NullInt64
		if rows.Scan(&table, &priority, &pattern) != nil {
			return err
		}
		if !pattern.Valid {
			continue
		}
		if _, cerr := regexp.Compile(pattern.String); cerr != nil {
			prio := "NULL"
			if priority.Valid {
				prio = fmt.Sprint(priority.Int64)
			}
			return &hintedError{err: err, hint: fmt.Sprintf(" (%s rule of priority %s: pattern %q is not a regular expression: %v; correct or delete that row)",
				table, prio, pattern.String, cerr)}
		}
	}
	return err
}

// hintedError is err with a hint put at the end of its first line: DuckDB's messages go on after it (a
// blank line and the statement's context, "LINE 1: …", or a paragraph of "Possible solutions"), which the
// one-line error reports leave out. The hint starts with its own space.
type hintedError struct {
	err  error
	hint string
}

func (e *hintedError) Error() string {
	first, rest, more := strings.Cut(e.err.Error(), "\n")
	if !more {
		return first + e.hint
	}
	return first + e.hint + "\n" + rest
}

func (e *hintedError) Unwrap() error { return e.err }
