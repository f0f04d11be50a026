package sqlfuncs

// _hta_call_stack(rank, label, enabled, with_cat): HTA 0.6.1's per-thread call stacks of the compat frame
// (graph.HTACallStacks), one row per nested CPU event: trace_id, ev_idx, parent_idx (NULL at the top level),
// depth (0 at the top level). Compat mode's frequent kernel sequences and CUPTI counters read their call
// graph from it instead of the loader's nesting (events.parent_idx), which is right but is not HTA's.
//
// rank < 0 is every rank, label '' every label; with_cat, when not '', keeps the traces that have an event of
// that cat. enabled false returns no rows and reads nothing: the analyses' views name this function in their
// compat branch, and DuckDB binds a table function before it knows the branch is not taken.

import (
	"context"
	"fmt"

	"tracesql/graph"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

func init() {
	cpRegister("_hta_call_stack", typeInfos(duckdb.TYPE_BIGINT, duckdb.TYPE_VARCHAR, duckdb.TYPE_BOOLEAN, duckdb.TYPE_VARCHAR),
		htaCallStackTable)
}

func htaCallStackTable(ctx context.Context, env *Env, args []any) (*cpTable, error) {
	r := &argReader{args: args}
	rank, label, enabled, withCat := readArg[int64](r, 0, "rank"), readArg[string](r, 1, "label"), readArg[bool](r, 2, "enabled"), readArg[string](r, 3, "with_cat")
	if r.err != nil {
		return nil, fmt.Errorf("_hta_call_stack: %w", r.err)
	}
	t := &cpTable{}
	traceID, evIdx, parentIdx, depth := t.col("trace_id", cpInt), t.col("ev_idx", cpInt), t.col("parent_idx", cpInt), t.col("depth", cpInt)
	if !enabled {
		return t, nil
	}
	traces, err := tracesOf(ctx, env.DB, label, rank)
	if err != nil {
		return nil, err
	}
	if withCat != "" {
		has := map[int64]bool{}
		rows, err := env.DB.QueryContext(ctx, `SELECT DISTINCT trace_id FROM events WHERE cat = ?`, withCat)
		if err != nil {
			return nil, fmt.Errorf("hta call stack: %w", err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("hta call stack: %w", err)
			}
			has[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("hta call stack: %w", err)
		}
		kept := traces[:0]
		for _, tr := range traces {
			if has[tr.id] {
				kept = append(kept, tr)
			}
		}
		traces = kept
	}
	for _, tr := range traces {
		f, err := cachedFrame(ctx, env, tr, true)
		if err != nil {
			return nil, fmt.Errorf("hta call stack of %s (rank %d): %w", tr.file.path, tr.rank, err)
		}
		parent, dep := graph.HTACallStacks(f)
		for r, d := range dep {
			if d < 0 {
				continue
			}
			traceID.addInt(tr.id, true)
			evIdx.addInt(f.EvIdx[r], true)
			parentIdx.addInt(f.EvIdx[max(parent[r], 0)], parent[r] >= 0)
			depth.addInt(int64(d), true)
			t.n++
		}
	}
	return t, nil
}
