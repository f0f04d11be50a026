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
	var sel strings.Builder
	for _, c := range consts {
		fmt.Fprintf(&sel, "%s AS %s, ", c[1], c[0])
	}
	return scanArrow(ctx, dc, schema, recs, func(view string) string {
		return fmt.Sprintf("INSERT INTO %s BY NAME SELECT %s* FROM %s", table, sel.String(), view)
	})
}

// insertFrame stores the default frame of one trace's events (10_hta_frame.sql) from the Arrow batches
// just inserted into events (frameInput), which DuckDB scans in parallel; scanning the freshly inserted,
// uncommitted events instead runs on one thread.
func insertFrame(ctx context.Context, dc driver.Conn, recs []arrow.RecordBatch, traceID int) error {
	if len(recs) == 0 {
		return nil
	}
	// DuckDB drops a filter that it pushes into the scan of a registered Arrow stream without the stream
	// applying it (the frame kept Kineto's "Trace" rows): the statement runs with filter pushdown off.
	ex := dc.(driver.ExecerContext)
	if _, err := ex.ExecContext(ctx, "SET disabled_optimizers = 'filter_pushdown'", nil); err != nil {
		return err
	}
	defer ex.ExecContext(context.WithoutCancel(ctx), "RESET disabled_optimizers", nil)
	return scanArrow(ctx, dc, recs[0].Schema(), recs, func(view string) string {
		return fmt.Sprintf("INSERT INTO _hta_frame_default SELECT * FROM _hta_frame_of('%s')", view)
	})
}

// scanArrow registers recs as a temporary view and runs the statement stmt(view name), which must read
// every column of the view: DuckDB's scan of a registered Arrow stream crashes when a query reads only
// some of its columns (duckdb/duckdb-go#28).
func scanArrow(ctx context.Context, dc driver.Conn, schema *arrow.Schema, recs []arrow.RecordBatch, stmt func(string) string) error {
	recs = nonEmpty(recs)
	if len(recs) == 0 {
		return nil
	}
	view := fmt.Sprintf("_tracesql_load_%d", viewSeq.Add(1))
	ar, err := duckdb.NewArrowFromConn(dc)
	if err != nil {
		return err
	}
	rr, err := array.NewRecordReader(schema, recs)
	if err != nil {
		return err
	}
	defer rr.Release()
	release, err := ar.RegisterView(rr, view)
	if err != nil {
		return fmt.Errorf("register arrow view: %w", err)
	}
	defer release()
	// DuckDB creates the view in the database itself, not in temp: unless dropped, it would be stored
	// with the data and crash whoever reads it once the stream is gone.
	ex := dc.(driver.ExecerContext)
	defer ex.ExecContext(context.WithoutCancel(ctx), "DROP VIEW IF EXISTS "+view, nil)
	_, err = ex.ExecContext(ctx, stmt(view), nil)
	return err
}
