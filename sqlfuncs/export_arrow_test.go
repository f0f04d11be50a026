//go:build duckdb_arrow

package sqlfuncs

import (
	"context"
	"database/sql"
	"fmt"

	"tracesql/graph"
)

// FrameReadsForTest reads a trace's frame from table twice through Arrow, each sorted by ev_idx: with its
// strings hashed (the critical path's read) and as strings. A hashed read that fell back to the strings is an
// error.
func FrameReadsForTest(ctx context.Context, db *sql.DB, table string, traceID int64) (hashed, strs *graph.Frame, err error) {
	before := cpSymbolFallbacks.Load()
	if hashed, err = cpReadFrameColumns(ctx, db, table, traceID, 0); err != nil {
		return nil, nil, err
	}
	if cpSymbolFallbacks.Load() != before {
		return nil, nil, fmt.Errorf("the hashed read fell back to the strings")
	}
	if strs, err = cpReadArrow(ctx, db, cpFrameQuery(table), traceID, 0, nil); err != nil {
		return nil, nil, err
	}
	if err = cpSortFrame(hashed); err == nil {
		err = cpSortFrame(strs)
	}
	return hashed, strs, err
}
