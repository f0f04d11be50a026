//go:build !duckdb_arrow

package sqlfuncs

import (
	"context"
	"database/sql"

	"tracesql/graph"
)

// cpReadFrameColumns reads cpFrameQuery's rows of a trace through database/sql (the build without Arrow).
func cpReadFrameColumns(ctx context.Context, db *sql.DB, table string, traceID int64, sizeHint int) (*graph.Frame, error) {
	rows, err := db.QueryContext(ctx, cpFrameQuery(table), traceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	f := cpNewFrame(sizeHint)
	var in cpInterner
	var ev, pid, tid, ts, dur, stream, corr, ic int64
	var cat, name string
	for rows.Next() {
		if err := rows.Scan(&ev, &cat, &name, &pid, &tid, &ts, &dur, &stream, &corr, &ic); err != nil {
			return nil, err
		}
		f.EvIdx = append(f.EvIdx, ev)
		f.Cat = append(f.Cat, in.intern(cat))
		f.Name = append(f.Name, in.intern(name))
		f.Pid = append(f.Pid, pid)
		f.Tid = append(f.Tid, tid)
		f.TS = append(f.TS, ts)
		f.Dur = append(f.Dur, dur)
		f.Stream = append(f.Stream, stream)
		f.Corr = append(f.Corr, corr)
		f.IndexCorr = append(f.IndexCorr, ic)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	f.Syms = in.syms
	return f, nil
}
