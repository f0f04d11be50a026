package engine

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// DuckDB reports a bad regular expression in kernel_classes (users insert rows) with RE2's bare message, "missing ):
// (", from every analysis, without saying where the pattern came from. On that error path only (nothing is checked
// while all is well), RuleError finds the rule. (phase_rules' patterns are compiled in Go, whose errors name the row.)

// re2Errors are fragments of RE2's messages about a pattern that does not compile.
var re2Errors = []string{"missing )", "missing ]", "unexpected )", "extra )", "invalid escape", "invalid character class",
	"bad repetition", "invalid repeat", "invalid repetition size", "no argument for repetition", "missing argument to repetition",
	"invalid perl operator", "trailing \\", "invalid named capture", "invalid UTF-8", "bad character class", "invalid nested repetition"}

// RuleError returns err with the bad rule named when err is a regular-expression error and a kernel_classes rule
// that applies (priority not NULL) holds a pattern that DuckDB's RE2 does not compile; else err itself.
func RuleError(ctx context.Context, db *sql.DB, err error) error {
	if err == nil || db == nil {
		return err
	}
	msg := err.Error()
	if strings.Contains(msg, "correct or delete that row") || strings.Contains(msg, "phase_rules: pattern") {
		return err // named already (by the load, before the command line saw it; by the phase rules' reader)
	}
	if !slices.ContainsFunc(re2Errors, func(frag string) bool { return strings.Contains(msg, frag) }) {
		return err
	}
	// try() keeps the check from failing on the first bad pattern; the same engine as the analyses decides.
	var priority int64
	var pattern string
	if db.QueryRowContext(context.WithoutCancel(ctx), `SELECT priority, pattern FROM kernel_classes
		WHERE priority IS NOT NULL AND pattern IS NOT NULL AND try(regexp_matches('', pattern)) IS NULL
		ORDER BY priority, pattern LIMIT 1`).Scan(&priority, &pattern) != nil {
		return err
	}
	return &hintedError{err: err, hint: fmt.Sprintf(" (kernel_classes rule of priority %d: pattern %q is not a regular expression; correct or delete that row)",
		priority, pattern)}
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
