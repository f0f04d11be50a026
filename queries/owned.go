package queries

import (
	"strings"
	"sync"
)

// OwnedKind returns the kind ("macro", "view" or "table") of one of tracesql's own catalog objects, the
// ones its schema and views create, by name (any case).
func OwnedKind(name string) (string, bool) {
	k, ok := ownedObjects()[strings.ToLower(name)]
	return k, ok
}

// InstallTable is the table the engine keeps the installed schema's hash in: tracesql's own, though no
// embedded SQL creates it.
const InstallTable = "_tracesql_install"

var ownedObjects = sync.OnceValue(func() map[string]string {
	m := map[string]string{InstallTable: "table"}
	for _, src := range append(Schema(), Views()...) {
		DDLTargets(src, func(verb, kind, name, _ string) {
			if verb == "create" {
				m[name] = kind
			}
		})
	}
	return m
})

// DDLTargets calls visit with each catalog object that the SQL text creates, replaces, drops or alters:
// verb "create", "drop" or "alter", kind "macro" (a FUNCTION too), "view" or "table", its name,
// lower-cased, and the catalog and schema names written before it, lower-cased and joined by '.' ("" for
// none, "x" for x.name, "x.main" for x.main.name); ALTER … RENAME TO a name creates that name (in the
// altered object's schema). It also visits the tables whose rows a statement writes, verb "write", kind
// "table": INSERT INTO, UPDATE, DELETE FROM, TRUNCATE, MERGE INTO. Comments and quoted text are skipped; a
// "quoted" name counts.
func DDLTargets(text string, visit func(verb, kind, name, qualifier string)) {
	var words []string // the statement's identifiers since its last other token, lower-cased
	var qual []string  // the catalog and schema names before the last of words
	qualified := false // the last token was a '.' after a schema or catalog name
	altered := ""      // the kind of the object the statement alters, which RENAME TO names anew
	alteredQual := ""  // and its qualifier
	head := true       // words start a statement (or follow a WITH clause's parenthesis), not a list
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		end, kind := TokenEnd(text, i)
		if end < 0 {
			return
		}
		switch name := IdentName(text, i, end, kind); {
		case kind == TokenLineComment || kind == TokenBlockComment:
		case name != "":
			if qualified {
				qual = append(qual, words[len(words)-1])
				words = words[:len(words)-1] // main.x: the object is x
			} else {
				qual = nil
			}
			words = append(words, strings.ToLower(name))
			qualified = false
			if j := SkipBlanks(text, end+1); j < len(text) && text[j] == '.' {
				break // a schema or catalog name: the object's name follows
			}
			if verb, kind, ok := ddlTarget(words); ok {
				if verb == "alter" {
					altered, alteredQual = kind, strings.Join(qual, ".")
				}
				visit(verb, kind, words[len(words)-1], strings.Join(qual, "."))
				words, qual = nil, nil
			} else if len(words) == 3 && words[0] == "rename" && words[1] == "to" && altered != "" {
				visit("create", altered, words[2], alteredQual)
				words, qual = nil, nil
			} else if head && writesRows(words) {
				visit("write", "table", words[len(words)-1], strings.Join(qual, "."))
				words, qual = nil, nil
			}
		case c == '.' && len(words) > 0:
			qualified = true
		default:
			if c == ';' {
				altered = ""
			}
			head = c == ';' || c == ')'
			words, qual, qualified = nil, nil, false
		}
		i = end
	}
}

// writesRows reports whether words are a statement's head up to the table whose rows it writes: "insert
// [or replace|or ignore] into NAME", "update NAME", "delete from NAME", "truncate [table] NAME", "merge into NAME".
func writesRows(words []string) bool {
	for len(words) > 0 && (words[0] == "explain" || words[0] == "analyze") { // EXPLAIN ANALYZE runs it
		words = words[1:]
	}
	switch n := len(words); {
	case n == 2:
		return words[0] == "update" || words[0] == "truncate" && words[1] != "table"
	case n == 3:
		return words[0] == "delete" && words[1] == "from" || words[0] == "truncate" && words[1] == "table" ||
			(words[0] == "merge" || words[0] == "insert") && words[1] == "into"
	case n == 5:
		return words[0] == "insert" && words[1] == "or" && (words[2] == "replace" || words[2] == "ignore") && words[3] == "into"
	}
	return false
}

// ddlTarget reports whether words end with the name a DDL statement acts on:
// "create [or replace] [temp|temporary] KIND [if not exists] NAME", "drop KIND [if exists] NAME" or
// "alter KIND NAME".
func ddlTarget(words []string) (verb, kind string, ok bool) {
	n := len(words)
	if n < 3 || words[n-1] == "if" { // "if [not] exists" follows: the name comes after it
		return "", "", false
	}
	head := words[:n-1]
	if len(head) >= 3 && head[len(head)-1] == "exists" && head[len(head)-2] == "not" && head[len(head)-3] == "if" {
		head = head[:len(head)-3]
	} else if len(head) >= 2 && head[len(head)-1] == "exists" && head[len(head)-2] == "if" {
		head = head[:len(head)-2]
	}
	if len(head) < 2 {
		return "", "", false
	}
	switch head[len(head)-1] {
	case "macro", "function":
		kind = "macro"
	case "view", "table":
		kind = head[len(head)-1]
	default:
		return "", "", false
	}
	head = head[:len(head)-1]
	switch last := head[len(head)-1]; last {
	case "drop", "alter":
		return last, kind, true
	case "temp", "temporary":
		head = head[:len(head)-1]
	}
	if len(head) >= 3 && head[len(head)-2] == "or" && head[len(head)-1] == "replace" {
		head = head[:len(head)-2]
	}
	if len(head) > 0 && head[len(head)-1] == "create" {
		return "create", kind, true
	}
	return "", "", false
}
