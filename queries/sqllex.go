package queries

import "strings"

// SQL text as DuckDB's lexer (PostgreSQL's scanner.l) cuts it, as far as statement ends, comments
// and quoting go. The CLI's statement splitting, its history lines and the report files all read SQL
// through these functions, so that a ';' inside a string or a comment means the same everywhere.

// TokenKind says what TokenEnd found.
type TokenKind int

const (
	TokenOther        TokenKind = iota // any other single byte: an operator, a space, ';'
	TokenQuoted                        // '…', "…", E'…', $$…$$ or $tag$…$tag$
	TokenIdent                         // an identifier or keyword
	TokenLineComment                   // -- up to (not including) its newline
	TokenBlockComment                  // /* */, nested as in DuckDB
)

// TokenEnd returns the index of the last byte of the token that starts at text[i], and its kind.
// end is -1 when the token is a quote or comment not closed within text (a -- comment is closed by
// its newline). Identifiers are taken whole, since `$` and `e` inside one (a$b$, name'…') start
// no quote.
func TokenEnd(text string, i int) (end int, kind TokenKind) {
	c := text[i]
	switch {
	case c == '\'' || c == '"':
		return quoteEnd(text, i), TokenQuoted
	case (c == 'e' || c == 'E') && i+1 < len(text) && text[i+1] == '\'':
		return escapeStringEnd(text, i+1), TokenQuoted
	case IsIdentStart(c):
		for i+1 < len(text) && isIdentCont(text[i+1]) {
			i++
		}
		return i, TokenIdent
	case c == '$':
		if n := dollarDelim(text, i); n > 0 {
			j := strings.Index(text[i+n:], text[i:i+n])
			if j < 0 {
				return -1, TokenQuoted
			}
			return i + n + j + n - 1, TokenQuoted
		}
	case c == '-' && i+1 < len(text) && text[i+1] == '-':
		// DuckDB's scanner ends it at a carriage return too: a file with CR line ends ran only its first
		// statement, the rest taken for the comment.
		j := strings.IndexAny(text[i:], "\n\r")
		if j < 0 {
			return -1, TokenLineComment
		}
		return i + j - 1, TokenLineComment
	case c == '/' && i+1 < len(text) && text[i+1] == '*':
		return blockCommentEnd(text, i), TokenBlockComment
	}
	return i, TokenOther
}

// StatementEnd returns the index of the first ';' at or after from that ends a statement: one
// outside quotes, identifiers and comments; from must itself be outside them. When there is none,
// semi is -1 and resume is where a later scan of text plus more input may start: the unclosed
// quote or comment, or the end of text.
func StatementEnd(text string, from int) (semi, resume int) {
	for i := from; i < len(text); i++ {
		end, kind := TokenEnd(text, i)
		switch {
		case end < 0:
			return -1, i
		case kind == TokenOther && text[i] == ';':
			return i, i
		}
		i = end
	}
	return -1, len(text)
}

// Reopen returns the text that puts the lexer where it is at the end of text, inside the quote or
// comment that starts at text[i] and is not closed within text (StatementEnd's resume): the opening
// quote ("'", "E'", "$tag$"), or "/*" once per comment level still open. Lexing Reopen(text, i) +
// more gives that token's end as lexing text[i:] + more would, provided text ends with a newline (no
// doubled quote, escape or delimiter is then cut in two). It is "" when text[i] starts no such token.
func Reopen(text string, i int) string {
	if i >= len(text) {
		return ""
	}
	switch c := text[i]; {
	case c == '\'' || c == '"':
		return text[i : i+1]
	case (c == 'e' || c == 'E') && i+1 < len(text) && text[i+1] == '\'':
		return text[i : i+2]
	case c == '$':
		if n := dollarDelim(text, i); n > 0 {
			return text[i : i+n]
		}
	case c == '/' && i+1 < len(text) && text[i+1] == '*':
		_, depth := blockComment(text, i)
		return strings.Repeat("/*", depth)
	}
	return ""
}

// LeadingComments returns the length of the whitespace and comments at the start of s, and
// whether s ends inside a comment (a -- without its newline, a /* without its */).
func LeadingComments(s string) (end int, unclosed bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			continue
		}
		j, kind := TokenEnd(s, i)
		if kind != TokenLineComment && kind != TokenBlockComment {
			return i, false
		}
		if j < 0 {
			return len(s), true
		}
		i = j
	}
	return len(s), false
}

// OnlyComments reports text that is nothing but whitespace and SQL comments (closed or not).
func OnlyComments(s string) bool {
	end, unclosed := LeadingComments(s)
	return unclosed || end == len(s)
}

// IsIdentStart reports a byte that starts an identifier (bytes from 0x80 up are parts of UTF-8
// letters).
func IsIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

func isIdentCont(c byte) bool { return IsIdentStart(c) || '0' <= c && c <= '9' || c == '$' }

// dollarDelim returns the length of the dollar-quote delimiter ($$ or $tag$) at text[i], or 0
// when the $ starts none ($1 is a parameter).
func dollarDelim(text string, i int) int {
	j := i + 1
	if j < len(text) && IsIdentStart(text[j]) {
		for j++; j < len(text) && isIdentCont(text[j]) && text[j] != '$'; j++ {
		}
	}
	if j < len(text) && text[j] == '$' {
		return j - i + 1
	}
	return 0
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
	end, _ := blockComment(text, i)
	return end
}

// blockComment scans the comment opened at text[i]: the index of its closing '/', or -1 and the
// number of levels still open at the end of text.
func blockComment(text string, i int) (end, depth int) {
	for k := i; k+1 < len(text); k++ {
		switch {
		case text[k] == '/' && text[k+1] == '*':
			depth++
			k++
		case text[k] == '*' && text[k+1] == '/':
			depth--
			k++
			if depth == 0 {
				return k, 0
			}
		}
	}
	return -1, depth
}

// SkipBlanks returns the index of the first byte at or after i that is neither white space nor
// inside a comment (len(text) when there is none).
func SkipBlanks(text string, i int) int {
	for ; i < len(text); i++ {
		switch end, kind := TokenEnd(text, i); {
		case kind == TokenLineComment || kind == TokenBlockComment:
			if end < 0 {
				return len(text)
			}
			i = end
		case text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r':
		default:
			return i
		}
	}
	return i
}

// ParenFollows reports whether the first byte at or after i, past white space and comments, is '(':
// whether the name that ends just before i is called.
func ParenFollows(text string, i int) bool {
	j := SkipBlanks(text, i)
	return j < len(text) && text[j] == '('
}

// IdentName returns the name a token stands for, when it is an identifier or a "quoted" one (the
// token of kind kind at text[i:end+1], as TokenEnd found it); else "".
func IdentName(text string, i, end int, kind TokenKind) string {
	switch {
	case kind == TokenIdent:
		return text[i : end+1]
	case kind == TokenQuoted && text[i] == '"':
		return strings.ReplaceAll(text[i+1:end], `""`, `"`)
	}
	return ""
}
