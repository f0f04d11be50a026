//go:build duckdb_arrow

package engine

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// sinkKind names the bulk-insert path compiled in, for benchmarks and the README.
const sinkKind = "arrow"

var viewSeq atomic.Int64

// insertBatches inserts the record batches into table through DuckDB's Arrow scan: DuckDB reads the
// Go-built columns directly and inserts in parallel. consts are extra constant columns (name → SQL
// literal) such as trace_id.
func insertBatches(ctx context.Context, dc driver.Conn, table string, schema *arrow.Schema, recs []arrow.RecordBatch, consts [][2]string) error {
	if len(recs) == 0 {
		return nil
	}
	ar, err := duckdb.NewArrowFromConn(dc)
	if err != nil {
		return err
	}
	rr, err := array.NewRecordReader(schema, recs)
	if err != nil {
		return err
	}
	defer rr.Release()
	view := fmt.Sprintf("_tracesql_load_%d", viewSeq.Add(1))
	release, err := ar.RegisterView(rr, view)
	if err != nil {
		return fmt.Errorf("register arrow view: %w", err)
	}
	defer release()
	var sel strings.Builder
	for _, c := range consts {
		fmt.Fprintf(&sel, "%s AS %s, ", c[1], c[0])
	}
	q := fmt.Sprintf("INSERT INTO %s BY NAME SELECT %s* FROM %s", table, sel.String(), view)
	_, err = dc.(driver.ExecerContext).ExecContext(ctx, q, nil)
	return err
}
