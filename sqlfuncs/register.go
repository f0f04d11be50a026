// Package sqlfuncs holds the DuckDB functions tracesql implements in Go: critical-path table functions,
// trace writers (counters, overlays) and whatever else SQL cannot say. Every function is internal
// (named with a leading underscore) and receives only non-NULL arguments: the public, NULL-safe
// signatures are SQL macros in package queries (duckdb-go aborts the process on a NULL table-function
// argument, stack.md §1.4).
//
// Each file adds its functions with add() from an init function; Register installs them all.
package sqlfuncs

import (
	"context"
	"database/sql"
	"fmt"
)

// Env is what a function may use at bind time: the database, to read events on a connection other
// than the one running the query (querying through that one deadlocks).
type Env struct {
	DB *sql.DB
	// StoredFresh answers _stored_fresh(); nil: never fresh.
	StoredFresh func() bool
}

type registration struct {
	name     string
	table    bool // a table function: its arguments reach duckdb-go's bind
	register func(conn *sql.Conn, env *Env) error
}

var registry []registration

// add records a function to install; called from init functions.
func add(name string, register func(conn *sql.Conn, env *Env) error) {
	registry = append(registry, registration{name: name, register: register})
}

// addTable records a table function to install; called from init functions.
func addTable(name string, register func(conn *sql.Conn, env *Env) error) {
	registry = append(registry, registration{name: name, table: true, register: register})
}

// TableFunctions returns the names of the Go table functions. Only the public macros should call them:
// duckdb-go aborts the process when one is given a NULL argument, before any Go code of the function
// runs, so a client that runs SQL typed by a user refuses statements that name one.
func TableFunctions() []string {
	var out []string
	for _, r := range registry {
		if r.table {
			out = append(out, r.name)
		}
	}
	return out
}

// Register installs every function on env.DB. DuckDB keeps them in the system catalog, so one
// registration serves every connection of the database.
func Register(ctx context.Context, env Env) error {
	conn, err := env.DB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("register functions: %w", err)
	}
	defer conn.Close()
	for _, r := range registry {
		if err := r.register(conn, &env); err != nil {
			return fmt.Errorf("register %s: %w", r.name, err)
		}
	}
	return nil
}
