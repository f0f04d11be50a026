package main

import "strings"

// stmtBuffer accumulates SQL text line by line and hands out complete statements: text up to a ';'
// that is outside quotes, identifiers and comments. It is shared by the REPL, -c, -f and piped
// stdin so that all of them split statements the same way.
type stmtBuffer struct {
	b strings.Builder
	// scanned is how far b has been scanned without finding a statement end; it is always outside
	// quotes and comments, so Add resumes there instead of rescanning a long multi-line statement
	// from its start on every line (which was quadratic on big piped scripts).
	scanned int
}

// Add appends a line and returns the statements it completed (without their ';').
func (s *stmtBuffer) Add(line string) []string {
	s.b.WriteString(line)
	s.b.WriteByte('\n')
	text := s.b.String()
	stmts, rest, resume := splitFrom(text, s.scanned)
	if end, unclosed := leadingComments(rest); !unclosed && end == len(rest) {
		// Nothing but whitespace, comments and empty statements is pending: drop it, so that the
		// next line may be a dot command (and the REPL shows its main prompt).
		rest = ""
	}
	if len(rest) != len(text) {
		s.b.Reset()
		s.b.WriteString(rest)
		s.scanned = 0
	} else {
		s.scanned = resume
	}
	return stmts
}

// Pending returns the incomplete text not yet ended by ';' (whitespace-trimmed).
func (s *stmtBuffer) Pending() string { return strings.TrimSpace(s.b.String()) }

// Reset drops the pending text.
func (s *stmtBuffer) Reset() { s.b.Reset(); s.scanned = 0 }

// splitStatements cuts text at top-level semicolons; rest is the unterminated tail. Empty
// statements are dropped.
func splitStatements(text string) (stmts []string, rest string) {
	stmts, rest, _ = splitFrom(text, 0)
	return stmts, rest
}

// splitFrom is splitStatements starting the scan at from, a position outside quotes and comments
// with no statement end before it. resume is where a later scan of text plus more input may start
// when no statement was found: the unclosed quote or comment, or the end of text.
func splitFrom(text string, from int) (stmts []string, rest string, resume int) {
	start := 0
	for i := from; i < len(text); i++ {
		switch c := text[i]; c {
		case '\'', '"':
			end := quoteEnd(text, i)
			if end < 0 {
				return stmts, text[start:], i
			}
			i = end
		case '-':
			if i+1 < len(text) && text[i+1] == '-' {
				j := strings.IndexByte(text[i:], '\n')
				if j < 0 {
					return stmts, text[start:], i
				}
				i += j
			}
		case '/':
			if i+1 < len(text) && text[i+1] == '*' {
				j := strings.Index(text[i+2:], "*/")
				if j < 0 {
					return stmts, text[start:], i
				}
				i += j + 3
			}
		case ';':
			if s := strings.TrimSpace(text[start:i]); s != "" && !onlyComments(s) {
				stmts = append(stmts, s)
			}
			start = i + 1
		}
	}
	return stmts, text[start:], len(text)
}

// onlyComments reports text that is nothing but whitespace and SQL comments (-- and /* */,
// closed or not).
func onlyComments(s string) bool {
	end, unclosed := leadingComments(s)
	return unclosed || end == len(s)
}

// leadingComments returns the length of the whitespace and comments at the start of s, and
// whether s ends inside a comment (a -- without its newline, a /* without its */).
func leadingComments(s string) (end int, unclosed bool) {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r':
		case strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return len(s), true
			}
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return len(s), true
			}
			i += j + 3
		default:
			return i, false
		}
	}
	return len(s), false
}

// quoteEnd returns the index of the quote closing the one at text[i] (a doubled quote is an
// escaped one), or -1 if it is not closed yet.
func quoteEnd(text string, i int) int {
	q := text[i]
	for k := i + 1; k < len(text); k++ {
		if text[k] != q {
			continue
		}
		if k+1 < len(text) && text[k+1] == q {
			k++
			continue
		}
		return k
	}
	return -1
}
