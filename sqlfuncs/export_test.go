package sqlfuncs

import (
	"context"
	"database/sql"

	"tracesql/graph"
)

// CompatFramesForTest returns a trace's compat frame as the critical path gets it (compatFrame: derived
// from the default frame when it can be) and as read from _hta_frame_compat, and whether it was derived.
func CompatFramesForTest(ctx context.Context, db *sql.DB, traceID, events int64) (got, want *graph.Frame, derived bool, err error) {
	ResetCriticalPathCache()
	env := &Env{DB: db}
	tr := cpTrace{id: traceID, events: events}
	if got, derived, err = compatFrame(ctx, env, tr); err != nil {
		return nil, nil, false, err
	}
	if want, err = readFrame(ctx, db, traceID, true, events); err != nil {
		return nil, nil, false, err
	}
	return got, want, derived, nil
}
