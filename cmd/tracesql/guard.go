package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"tracesql/engine"
	"tracesql/queries"
	"tracesql/sqlfuncs"
)

// refuseCommittedOnlyRead returns an error when stmt, run inside the user's open transaction, reads through
// a macro or view that the Go table functions answer (critical_path, longest_path, hotspots, the exports, and
// any user macro or view over them). Those functions read on a connection of their own, which sees what is
// committed and not this transaction's changes: a what-if UPDATE or an edit of kernel_classes or phase_rules
// would be silently left out of their numbers while the SQL analyses beside them include it.
func (s *session) refuseCommittedOnlyRead(ctx context.Context, stmt string) error {
	kw := strings.ToUpper(firstWord(stmt))
	if kw == "BEGIN" || kw == "START" {
		s.sawBegin = true
	}
	if !catalogKept[kw] {
		s.goBacked = nil // it may define or drop a macro or view: read them again
	}
	if !s.sawBegin {
		return nil // no transaction was ever opened: skip the queries the check costs
	}
	backed := s.goBacked
	if backed == nil {
		var err error
		if backed, err = goBackedNames(ctx, s.db.SQL); err != nil {
			return nil
		}
		if catalogKept[kw] {
			s.goBacked = backed // (read before the statement runs: kept only when it cannot change them)
		}
	}
	var found string
	namesIn(stmt, func(name string, called bool) bool {
		// A macro is reached only by a call: a user's table, alias or CTE may have a macro's name (r69 #3:
		// an UPDATE of a table named hotspots was refused). A view is reached by its bare name.
		if kind, ok := backed[strings.ToLower(name)]; ok && (called || kind == backedView) {
			found = name
		}
		return found == ""
	})
	if found == "" {
		return nil
	}
	// (the names first: the check for a transaction is a query, 0.5 ms a statement, most of a piped INSERT's time)
	if err := s.db.CheckNoTransaction(ctx); err == nil || !errors.Is(err, engine.ErrTransactionOpen) {
		return nil // no transaction (or the check itself failed: the statement's own error will say more)
	}
	return fmt.Errorf("%s reads the database as last committed (its Go functions run on a connection of their own), so it would not see this transaction's changes: COMMIT or ROLLBACK first", found)
}

// catalogKept lists the statements (by first word) that define or drop no macro or view; after any other
// statement, or a dot command, goBackedNames is read again.
var catalogKept = map[string]bool{"SELECT": true, "WITH": true, "FROM": true, "VALUES": true, "TABLE": true,
	"INSERT": true, "UPDATE": true, "DELETE": true, "DESCRIBE": true, "SHOW": true, "SUMMARIZE": true,
	"EXPLAIN": true, "SET": true, "RESET": true, "BEGIN": true, "START": true, "COMMIT": true, "ROLLBACK": true,
	"ABORT": true, "END": true}

// namesIn calls visit with each identifier of the SQL text, and whether a '(' follows it (a call), until
// visit returns false. The SQL in a query('…') literal is read too, and the name in a query_table('…')
// literal: through either, a statement reaches the same tables, views and macros as if it named them.
func namesIn(text string, visit func(name string, called bool) bool) bool {
	for i := 0; i < len(text); i++ {
		end, kind := queries.TokenEnd(text, i)
		if end < 0 {
			break
		}
		if name := queries.IdentName(text, i, end, kind); name != "" {
			if !visit(name, queries.ParenFollows(text, end+1)) {
				return false
			}
			switch strings.ToLower(name) {
			case "query":
				if sql, ok := sqlfuncs.LiteralArg(text, end+1); ok && !namesIn(sql, visit) {
					return false
				}
			case "query_table":
				if table, ok := sqlfuncs.LiteralArg(text, end+1); ok && !visit(strings.TrimSpace(table), false) {
					return false
				}
			}
		}
		i = end
	}
	return true
}

// firstWord returns the first identifier of stmt, past white space and comments.
func firstWord(stmt string) string {
	i := queries.SkipBlanks(stmt, 0)
	if i >= len(stmt) {
		return ""
	}
	if end, kind := queries.TokenEnd(stmt, i); kind == queries.TokenIdent {
		return stmt[i : end+1]
	}
	return ""
}

// backedKind says whether a Go-backed name is a macro or a view.
type backedKind int

const (
	backedMacro backedKind = iota
	backedView
)

// goBackedNames returns the macros and views (lower-case names) whose SQL calls a Go table function,
// directly or through other such macros and views.
func goBackedNames(ctx context.Context, db *sql.DB) (map[string]backedKind, error) {
	rows, err := db.QueryContext(ctx, `
		SELECT lower(function_name), macro_definition, false FROM duckdb_functions()
		WHERE function_type IN ('macro', 'table_macro') AND macro_definition IS NOT NULL
		UNION ALL SELECT lower(view_name), sql, true FROM duckdb_views() WHERE NOT internal`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	refs := map[string]map[string]bool{} // name → the identifiers its SQL uses
	kinds := map[string]backedKind{}
	backed := map[string]backedKind{}
	for rows.Next() {
		var name, def string
		var view bool
		if err := rows.Scan(&name, &def, &view); err != nil {
			return nil, err
		}
		if view {
			kinds[name] = backedView // (a view and a macro of one name: the view, reached without a call)
		} else if _, ok := kinds[name]; !ok {
			kinds[name] = backedMacro
		}
		// (the project's own macros hand query() SQL they build: not a call of a Go function in itself)
		if err := sqlfuncs.RefuseInternalCall(def); err != nil && !errors.Is(err, sqlfuncs.ErrQueryBuilt) {
			backed[name] = kinds[name]
			continue
		}
		ids := refs[name]
		if ids == nil {
			ids = map[string]bool{}
			refs[name] = ids
		}
		namesIn(def, func(name string, _ bool) bool {
			ids[strings.ToLower(name)] = true // (any mention: a definition that only names one is rare)
			return true
		})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for grew := true; grew; {
		grew = false
		for name, ids := range refs {
			if _, ok := backed[name]; ok {
				continue
			}
			for id := range ids {
				if _, ok := backed[id]; ok {
					backed[name], grew = kinds[name], true
					break
				}
			}
		}
	}
	return backed, nil
}
