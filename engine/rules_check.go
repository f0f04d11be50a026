package engine

import (
	"context"
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
		UNION ALL SELECT 'phase_rules', priority, pattern FROM phase_rules ORDER BY 1, 2`)
	if qerr != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var table, pattern string
		var priority int64
		if rows.Scan(&table, &priority, &pattern) != nil {
			return err
		}
		if _, cerr := regexp.Compile(pattern); cerr != nil {
			return fmt.Errorf("%w (%s rule of priority %d: pattern %q is not a regular expression: %v; correct or delete that row)",
				err, table, priority, pattern, cerr)
		}
	}
	return err
}
