package main

import (
	"strings"

	"tracesql/queries"
)

// stmtBuffer accumulates SQL text line by line and hands out complete statements: text up to a ';'
// that is outside quotes, identifiers and comments. It is shared by the REPL, -c, -f and piped
// stdin so that all of them split statements the same way.
type stmtBuffer struct {
	b strings.Builder
	// scanned is how far b has been scanned without finding a statement end; it is always outside
	// quotes and comments, so Add resumes there instead of rescanning a long multi-line statement
	// from its start on every line (which was quadratic on big piped scripts).
	scanned int
	// reopen, when the pending text ends inside a quote or comment that starts at scanned, is
	// queries.Reopen of it: Add lexes reopen + the new line to see whether the line closes the token,
	// and scans from scanned only when it does (rescanning a 200,000-line comment on every line took
	// minutes).
	reopen string
	// hasSQL: the pending text holds more than comments (it stays so while the text only grows, so
	// the leading comments are not scanned again on every line).
	hasSQL bool
	lines  int // lines added so far
	// firstLine is the 1-based line of b's first byte: errors name the line a statement starts on.
	firstLine int
}

// statement is one SQL statement cut from the input, without its ';', and the 1-based line of its
// first character that is not whitespace or a comment.
type statement struct {
	text string
	line int
}

// Add appends a line and returns the statements it completed.
func (s *stmtBuffer) Add(line string) []statement {
	if s.b.Len() == 0 {
		s.firstLine = s.lines + 1
	}
	s.lines++
	s.b.WriteString(line)
	s.b.WriteByte('\n')
	if s.reopen != "" {
		probe := s.reopen + line + "\n"
		if end, _ := queries.TokenEnd(probe, 0); end < 0 {
			s.reopen = queries.Reopen(probe, 0)
			return nil
		}
	}
	text := s.b.String()
	stmts, restAt, resume := splitFrom(text, s.scanned, s.firstLine)
	if restAt > 0 || !s.hasSQL {
		end, unclosed := queries.LeadingComments(text[restAt:])
		if !unclosed && restAt+end == len(text) {
			// Nothing but whitespace, comments and empty statements is pending: drop it, so that the
			// next line may be a dot command (and the REPL shows its main prompt).
			restAt = len(text)
		}
		s.hasSQL = !unclosed && restAt+end < len(text)
	}
	if restAt > 0 {
		s.firstLine += strings.Count(text[:restAt], "\n")
		rest := text[restAt:]
		s.b.Reset()
		s.b.WriteString(rest)
		s.scanned, s.reopen = 0, ""
	} else {
		s.scanned, s.reopen = resume, queries.Reopen(text, resume)
	}
	return stmts
}

// Pending returns the incomplete text not yet ended by ';' (whitespace-trimmed).
func (s *stmtBuffer) Pending() string { return strings.TrimSpace(s.b.String()) }

// PendingLine returns the line the pending text starts on, comments before it not counted; the
// line last added when nothing but comments is pending.
func (s *stmtBuffer) PendingLine() int {
	text := s.b.String()
	end, _ := queries.LeadingComments(text)
	if end == len(text) {
		return s.lines
	}
	return s.firstLine + strings.Count(text[:end], "\n")
}

// UnclosedComment reports pending text that is only white space and comments and ends inside a /*
// comment, and the line that comment opens on (a -- comment ends with the input; an unclosed comment
// after SQL text is the statement's, which DuckDB reports).
func (s *stmtBuffer) UnclosedComment() (line int, ok bool) {
	text := s.b.String()
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case ' ', '\t', '\n', '\r':
			continue
		}
		end, kind := queries.TokenEnd(text, i)
		switch {
		case kind != queries.TokenLineComment && kind != queries.TokenBlockComment:
			return 0, false
		case end < 0:
			return s.firstLine + strings.Count(text[:i], "\n"), kind == queries.TokenBlockComment
		}
		i = end
	}
	return 0, false
}

// SkipLine counts a line that was not SQL (a dot command) while nothing is pending.
func (s *stmtBuffer) SkipLine() { s.lines++ }

// Reset drops the pending text.
func (s *stmtBuffer) Reset() { s.b.Reset(); s.scanned, s.reopen, s.hasSQL = 0, "", false }

// splitStatements cuts text at top-level semicolons; rest is the unterminated tail. Empty
// statements are dropped.
func splitStatements(text string) (stmts []statement, rest string) {
	stmts, restAt, _ := splitFrom(text, 0, 1)
	return stmts, text[restAt:]
}

// splitFrom is splitStatements starting the scan at from, a position outside quotes and comments
// with no statement end before it; text's first line is line firstLine. restAt is where the
// unterminated tail starts; resume is where a later scan of text plus more input may start
// (queries.StatementEnd). A dot command after a ';' (`SELECT 1; .mode csv`) ends the scan: it is
// the rest of its line, which the caller runs, and must not swallow the lines after it as SQL.
func splitFrom(text string, from, firstLine int) (stmts []statement, restAt, resume int) {
	for {
		semi, resume := queries.StatementEnd(text, from)
		if semi < 0 {
			return stmts, restAt, resume
		}
		raw := text[restAt:semi]
		if lead, unclosed := queries.LeadingComments(raw); !unclosed && lead < len(raw) {
			line := firstLine + strings.Count(text[:restAt+lead], "\n")
			stmts = append(stmts, statement{strings.TrimSpace(raw), line})
		}
		restAt, from = semi+1, semi+1
		if dotCommandAt(text, restAt) {
			return stmts, restAt, len(text)
		}
	}
}

// dotCommandAt reports whether text from i is, after spaces, a dot command: a '.' followed by a
// letter (".5 AS x" is SQL).
func dotCommandAt(text string, i int) bool {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return i+1 < len(text) && text[i] == '.' && ('a' <= text[i+1] && text[i+1] <= 'z' || 'A' <= text[i+1] && text[i+1] <= 'Z')
}

// statementKeyword returns the keyword that says what stmt does, upper-cased: its first word after
// comments and opening parentheses, except that a WITH clause is skipped for the statement it
// qualifies (WITH … SELECT is a query, WITH … INSERT a command).
func statementKeyword(stmt string) string {
	end, _ := queries.LeadingComments(stmt)
	stmt = strings.TrimLeft(stmt[end:], "( \t\r\n")
	first := leadingWord(stmt)
	if first != "WITH" {
		return first
	}
	// A word right after WITH, RECURSIVE or a comma names a CTE: DuckDB takes VALUES as one (WITH values
	// AS (…) DELETE … read as a query kept the stored results stale).
	prev := "WITH"
	i := topLevelWord(stmt, len("WITH"), func(_ int, w string) bool {
		cteName := prev == "WITH" || prev == "RECURSIVE" || prev == ","
		prev = w
		if cteName {
			return false
		}
		switch w {
		case "SELECT", "INSERT", "UPDATE", "DELETE", "MERGE", "FROM", "VALUES", "TABLE", "PIVOT", "UNPIVOT":
			return true
		}
		return false
	}, func(c byte) {
		if c == ',' {
			prev = ","
		} else if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			prev = string(c)
		}
	})
	if i < 0 {
		return first
	}
	return leadingWord(stmt[i:])
}

// topLevelWord returns the index of the first word (identifier or keyword, upper-cased for match) outside
// parentheses in text[from:] that match accepts, or -1 (also when a quote or comment is not closed).
// other, if not nil, sees every other single byte outside parentheses (a comma, a space; not a quote's
// or a comment's).
func topLevelWord(text string, from int, match func(i int, word string) bool, other func(c byte)) int {
	depth := 0
	for i := from; i < len(text); i++ {
		end, kind := queries.TokenEnd(text, i)
		switch {
		case end < 0:
			return -1
		case kind == queries.TokenIdent && depth == 0:
			if match(i, leadingWord(text[i:])) {
				return i
			}
		case text[i] == '(':
			depth++
		case text[i] == ')':
			depth--
		case kind == queries.TokenOther && depth == 0 && other != nil:
			other(text[i])
		}
		i = end
	}
	return -1
}

// leadingWord returns the identifier at the start of s, upper-cased.
func leadingWord(s string) string {
	if s == "" || !queries.IsIdentStart(s[0]) {
		return ""
	}
	end, _ := queries.TokenEnd(s, 0)
	return strings.ToUpper(s[:end+1])
}
