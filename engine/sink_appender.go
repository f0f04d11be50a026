//go:build !duckdb_arrow

package engine

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// sinkKind names the bulk-insert path compiled in, for benchmarks and the README.
const sinkKind = "appender"

// insertBatches is the portable fallback when built without -tags duckdb_arrow: the same batches go
// through the row Appender (about 4× slower, stack.md §2.3).
func insertBatches(ctx context.Context, dc driver.Conn, table string, schema *arrow.Schema, recs []arrow.RecordBatch, consts [][2]string) error {
	if recs = nonEmpty(recs); len(recs) == 0 {
		return nil
	}
	names := make([]string, 0, len(consts)+len(schema.Fields()))
	row := make([]driver.Value, 0, cap(names))
	for _, c := range consts {
		names = append(names, c[0])
	}
	for _, f := range schema.Fields() {
		names = append(names, f.Name)
	}
	// The rows go through a staging table of plain types: the Appender stores a Go string bound for
	// a JSON column as a JSON string value, not as the document it holds, while INSERT … SELECT
	// casts VARCHAR to JSON by parsing it (as the Arrow path does).
	stage := fmt.Sprintf("_tracesql_stage_%d", stageSeq.Add(1))
	var cols strings.Builder
	for i, n := range names {
		typ := "VARCHAR"
		if i < len(consts) {
			if !strings.HasPrefix(consts[i][1], "'") {
				typ = "BIGINT"
			}
		} else {
			switch schema.Field(i - len(consts)).Type.ID() {
			case arrow.INT64:
				typ = "BIGINT"
			case arrow.FLOAT64:
				typ = "DOUBLE"
			}
		}
		if i > 0 {
			cols.WriteString(", ")
		}
		fmt.Fprintf(&cols, "%q %s", n, typ)
	}
	exec := dc.(driver.ExecerContext)
	if _, err := exec.ExecContext(ctx, fmt.Sprintf("CREATE TEMP TABLE %s (%s)", stage, cols.String()), nil); err != nil {
		return fmt.Errorf("staging table: %w", err)
	}
	defer exec.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+stage, nil)
	app, err := duckdb.NewAppenderWithColumns(dc, "", "", stage, names)
	if err != nil {
		return err
	}
	constVals := make([]driver.Value, len(consts))
	for i, c := range consts {
		constVals[i] = literalValue(c[1])
	}
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			row = append(row[:0], constVals...)
			for _, col := range r.Columns() {
				if col.IsNull(i) {
					row = append(row, nil)
					continue
				}
				switch a := col.(type) {
				case *array.Int64:
					row = append(row, a.Value(i))
				case *array.Float64:
					row = append(row, a.Value(i))
				case *array.String:
					row = append(row, a.Value(i))
				case *array.Dictionary: // tok columns
					row = append(row, a.Dictionary().(*array.String).Value(a.GetValueIndex(i)))
				}
			}
			if err := app.AppendRow(row...); err != nil {
				app.Close()
				return err
			}
		}
	}
	if err := app.Close(); err != nil {
		return err
	}
	_, err = exec.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s BY NAME SELECT * FROM %s", table, stage), nil)
	return err
}

// insertFrame stores the default frame of trace traceID from the events just inserted (_hta_frame_source).
func insertFrame(ctx context.Context, dc driver.Conn, _ []arrow.RecordBatch, traceID int) error {
	_, err := dc.(driver.ExecerContext).ExecContext(ctx, baseFrameInsert(int64(traceID), int64(traceID)), nil)
	return err
}

var stageSeq atomic.Int64

func literalValue(s string) driver.Value {
	if strings.HasPrefix(s, "'") {
		return strings.ReplaceAll(strings.Trim(s, "'"), "''", "'")
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
