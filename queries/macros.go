package queries

import (
	"strings"
	"sync"
)

// MacroParams returns the parameter list of one of tracesql's macros as its CREATE MACRO statement
// writes it, defaults included ("rank := 0"), one string per parameter. DuckDB's catalog keeps a
// macro's parameter names but not their defaults, so .schema reads them here; the statement is
// the one source (a documented signature may say "same parameters as critical_path").
func MacroParams(name string) ([]string, bool) {
	macroParamsOnce.Do(func() {
		macroParamLists = map[string][]string{}
		for _, src := range Views() {
			for name, params := range createdMacros(src) {
				macroParamLists[name] = params
			}
		}
	})
	params, ok := macroParamLists[strings.ToLower(name)]
	return params, ok
}

var (
	macroParamsOnce sync.Once
	macroParamLists map[string][]string
)

// createdMacros finds each CREATE [OR REPLACE] MACRO name(...) of src, outside comments and
// quotes, and returns its parameters by lower-cased name.
func createdMacros(src string) map[string][]string {
	out := map[string][]string{}
	var words []string // the last identifiers before the current token, lower-cased
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		end, kind := TokenEnd(src, i)
		if end < 0 {
			break
		}
		switch {
		case kind == TokenLineComment || kind == TokenBlockComment:
		case kind == TokenIdent:
			words = append(words, strings.ToLower(src[i:end+1]))
		case c == '(' && isCreateMacro(words):
			params, close := paramList(src, i)
			if close < 0 {
				return out
			}
			out[words[len(words)-1]] = params
			words = nil
			end = close
		default:
			words = nil
		}
		i = end
	}
	return out
}

// isCreateMacro reports words that end "create [or replace] [temp] macro NAME".
func isCreateMacro(words []string) bool {
	n := len(words)
	if n < 3 || words[n-2] != "macro" {
		return false
	}
	head := words[:n-2]
	if len(head) > 0 && (head[len(head)-1] == "temp" || head[len(head)-1] == "temporary") {
		head = head[:len(head)-1]
	}
	if len(head) >= 3 && head[len(head)-2] == "or" && head[len(head)-1] == "replace" {
		head = head[:len(head)-2]
	}
	return len(head) > 0 && head[len(head)-1] == "create"
}

// paramList splits the parenthesised list that opens at src[open] at its top-level commas and
// returns the index of its closing parenthesis (-1 when it is not closed). Each part keeps its
// tokens; a run of whitespace and comments between them becomes one space.
func paramList(src string, open int) ([]string, int) {
	var params []string
	var cur strings.Builder
	depth, gap := 0, false
	for i := open; i < len(src); i++ {
		c := src[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			gap = true
			continue
		}
		end, kind := TokenEnd(src, i)
		if end < 0 {
			return nil, -1
		}
		if kind == TokenLineComment || kind == TokenBlockComment {
			gap, i = true, end
			continue
		}
		switch {
		case c == ')' || c == ']' || c == '}':
			depth--
			if depth == 0 {
				if cur.Len() > 0 || len(params) > 0 {
					params = append(params, cur.String())
				}
				return params, i
			}
		case c == ',' && depth == 1:
			params = append(params, cur.String())
			cur.Reset()
			gap, i = false, end
			continue
		}
		if c == '(' || c == '[' || c == '{' {
			depth++
			if depth == 1 {
				gap, i = false, end
				continue
			}
		}
		if gap && cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(src[i : end+1])
		gap, i = false, end
	}
	return nil, -1
}
