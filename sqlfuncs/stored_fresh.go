package sqlfuncs

import (
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/duckdb/duckdb-go/v2"
)

func init() {
	add("_stored_fresh", registerStoredFresh)
}

// storedFresh is _stored_fresh(): whether the per-trace results stored at load (engine.DB.SyncStored) are known
// to match kernel_classes. Not volatile, so DuckDB folds it when a query is bound, where the analyses' query()
// picks the stored results alone or the plan that computes the stale ones again (7 of temporal_breakdown's
// 9 ms on one trace are binding and planning that recompute, which finds nothing to do).
type storedFresh struct {
	out   duckdb.TypeInfo
	fresh func() bool
}

func (s storedFresh) Config() duckdb.ScalarFuncConfig {
	return duckdb.ScalarFuncConfig{ResultTypeInfo: s.out}
}

func (s storedFresh) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: func([]driver.Value) (any, error) {
		return s.fresh != nil && s.fresh(), nil
	}}
}

func registerStoredFresh(conn *sql.Conn, env *Env) error {
	out, err := duckdb.NewTypeInfo(duckdb.TYPE_BOOLEAN)
	if err != nil {
		return fmt.Errorf("_stored_fresh: %w", err)
	}
	return duckdb.RegisterScalarUDF(conn, "_stored_fresh", storedFresh{out: out, fresh: env.StoredFresh})
}
