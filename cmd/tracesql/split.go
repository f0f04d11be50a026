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
//
// It follows DuckDB's lexer (PostgreSQL's scanner.l) as far as statement ends go: '…' and "…"
// with doubled quotes, E'…' escape strings with backslashes, $$…$$ and $tag$…$tag$ dollar
// quotes, -- comments and nested /* */ comments. Identifiers are skipped whole, since `$` and
// `e` inside one (a$b$, name'…') start no quote.
func splitFrom(text string, from int) (stmts []string, rest string, resume int) {
	start := 0
	for i := from; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\'' || c == '"':
			end := quoteEnd(text, i)
			if end < 0 {
				return stmts, text[start:], i
			}
			i = end
		case (c == 'e' || c == 'E') && i+1 < len(text) && text[i+1] == '\'':
			end := escapeStringEnd(text, i+1)
			if end < 0 {
				return stmts, text[start:], i
			}
			i = end
		case isIdentStart(c):
			for i+1 < len(text) && isIdentCont(text[i+1]) {
				i++
			}
		case c == '$':
			if n := dollarDelim(text, i); n > 0 {
				j := strings.Index(text[i+n:], text[i:i+n])
				if j < 0 {
					return stmts, text[start:], i
				}
				i += n + j + n - 1
			}
		case c == '-':
			if i+1 < len(text) && text[i+1] == '-' {
				j := strings.IndexByte(text[i:], '\n')
				if j < 0 {
					return stmts, text[start:], i
				}
				i += j
			}
		case c == '/':
			if i+1 < len(text) && text[i+1] == '*' {
				end := blockCommentEnd(text, i)
				if end < 0 {
					return stmts, text[start:], i
				}
				i = end
			}
		case c == ';':
			if s := strings.TrimSpace(text[start:i]); s != "" && !onlyComments(s) {
				stmts = append(stmts, s)
			}
			start = i + 1
			if dotCommandAt(text, start) {
				// `SELECT 1; .mode csv`: the rest of the line is a dot command, which the
				// caller runs; it must not swallow the lines after it as SQL text.
				return stmts, text[start:], len(text)
			}
		}
	}
	return stmts, text[start:], len(text)
}

// dotCommandAt reports whether text from i is, after spaces, a dot command: a '.' followed by a
// letter (".5 AS x" is SQL).
func dotCommandAt(text string, i int) bool {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return i+1 < len(text) && text[i] == '.' && ('a' <= text[i+1] && text[i+1] <= 'z' || 'A' <= text[i+1] && text[i+1] <= 'Z')
}

// isIdentStart and isIdentCont are the lexer's identifier characters (bytes from 0x80 up are
// parts of UTF-8 letters).
func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

func isIdentCont(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' || c == '$' }

// dollarDelim returns the length of the dollar-quote delimiter ($$ or $tag$) at text[i], or 0
// when the $ starts none ($1 is a parameter).
func dollarDelim(text string, i int) int {
	j := i + 1
	if j < len(text) && isIdentStart(text[j]) {
		for j++; j < len(text) && isIdentCont(text[j]) && text[j] != '$'; j++ {
		}
	}
	if j < len(text) && text[j] == '$' {
		return j - i + 1
	}
	return 0
}

// escapeStringEnd returns the index of the quote closing the E'…' string whose opening quote is
// text[q] (a backslash escapes the next character; a doubled quote is a quote), or -1 if not closed yet.
func escapeStringEnd(text string, q int) int {
	for k := q + 1; k < len(text); k++ {
		switch text[k] {
		case '\\':
			k++
		case '\'':
			if k+1 < len(text) && text[k+1] == '\'' {
				k++
				continue
			}
			return k
		}
	}
	return -1
}

// blockCommentEnd returns the index of the '/' closing the comment opened at text[i] ("/*"),
// or -1 if it is not closed yet. Comments nest, as in DuckDB: /* a /* b */ c */ is one comment.
func blockCommentEnd(text string, i int) int {
	depth := 0
	for k := i; k+1 < len(text); k++ {
		switch {
		case text[k] == '/' && text[k+1] == '*':
			depth++
			k++
		case text[k] == '*' && text[k+1] == '/':
			depth--
			k++
			if depth == 0 {
				return k
			}
		}
	}
	return -1
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
			j := blockCommentEnd(s, i)
			if j < 0 {
				return len(s), true
			}
			i = j
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

// statementKeyword returns the keyword that says what stmt does, upper-cased: its first word after
// comments and opening parentheses, except that a WITH clause is skipped for the statement it
// qualifies (WITH … SELECT is a query, WITH … INSERT a command).
func statementKeyword(stmt string) string {
	end, _ := leadingComments(stmt)
	stmt = strings.TrimLeft(stmt[end:], "( \t\r\n")
	first := leadingWord(stmt)
	if first != "WITH" {
		return first
	}
	depth := 0
	for i := len("WITH"); i < len(stmt); i++ {
		c := stmt[i]
		switch {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '\'' || c == '"':
			if i = quoteEnd(stmt, i); i < 0 {
				return first
			}
		case c == '-' && strings.HasPrefix(stmt[i:], "--"):
			j := strings.IndexByte(stmt[i:], '\n')
			if j < 0 {
				return first
			}
			i += j
		case c == '/' && strings.HasPrefix(stmt[i:], "/*"):
			if i = blockCommentEnd(stmt, i); i < 0 {
				return first
			}
		case c == '$':
			if n := dollarDelim(stmt, i); n > 0 {
				j := strings.Index(stmt[i+n:], stmt[i:i+n])
				if j < 0 {
					return first
				}
				i += n + j + n - 1
			}
		case isIdentStart(c):
			w := leadingWord(stmt[i:])
			if depth == 0 {
				switch w {
				case "SELECT", "INSERT", "UPDATE", "DELETE", "MERGE", "FROM", "VALUES", "TABLE", "PIVOT", "UNPIVOT":
					return w
				}
			}
			i += len(w) - 1
		}
	}
	return first
}

// leadingWord returns the identifier at the start of s, upper-cased.
func leadingWord(s string) string {
	n := 0
	for n < len(s) && (n == 0 && isIdentStart(s[n]) || n > 0 && isIdentCont(s[n])) {
		n++
	}
	return strings.ToUpper(s[:n])
}
