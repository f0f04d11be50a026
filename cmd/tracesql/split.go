package main

import "strings"

// stmtBuffer accumulates SQL text line by line and hands out complete statements: text up to a ';'
// that is outside quotes, identifiers and comments. It is shared by the REPL, -c, -f and piped
// stdin so that all of them split statements the same way.
type stmtBuffer struct {
	b strings.Builder
}

// Add appends a line and returns the statements it completed (without their ';').
func (s *stmtBuffer) Add(line string) []string {
	s.b.WriteString(line)
	s.b.WriteByte('\n')
	stmts, rest := splitStatements(s.b.String())
	if len(stmts) > 0 {
		s.b.Reset()
		s.b.WriteString(rest)
	}
	return stmts
}

// Pending returns the incomplete text not yet ended by ';' (whitespace-trimmed).
func (s *stmtBuffer) Pending() string { return strings.TrimSpace(s.b.String()) }

// Reset drops the pending text.
func (s *stmtBuffer) Reset() { s.b.Reset() }

// splitStatements cuts text at top-level semicolons; rest is the unterminated tail. Empty
// statements are dropped.
func splitStatements(text string) (stmts []string, rest string) {
	start := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '\'', '"':
			end := quoteEnd(text, i)
			if end < 0 {
				return stmts, text[start:]
			}
			i = end
		case '-':
			if i+1 < len(text) && text[i+1] == '-' {
				j := strings.IndexByte(text[i:], '\n')
				if j < 0 {
					return stmts, text[start:]
				}
				i += j
			}
		case '/':
			if i+1 < len(text) && text[i+1] == '*' {
				j := strings.Index(text[i+2:], "*/")
				if j < 0 {
					return stmts, text[start:]
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
	return stmts, text[start:]
}

// onlyComments reports text that is nothing but SQL comments.
func onlyComments(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		l := strings.TrimSpace(line)
		if l != "" && !strings.HasPrefix(l, "--") {
			return false
		}
	}
	return true
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
