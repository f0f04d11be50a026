package sqlfuncs

// Counter time series support for queries/views/30_counters.sql:
//
//   - _np_argsort(BIGINT[]) → BIGINT[]: the permutation numpy 1.24's argsort(kind="quicksort") produces for the
//     keys (0-based input positions in output order). pandas' sort_values(by=one column) uses it, and it is not
//     stable, so HTA's queue-length and memory-bandwidth series order equal timestamps this way. Compat mode
//     reproduces that order with this function; SQL cannot.
//   - _cumsum(DOUBLE[]) → DOUBLE[]: a left-to-right float64 running sum (numpy's cumsum), bit for bit. DuckDB's
//     windowed sum may add in another order.
//   - _export_counters_trace(...): writes a trace with Chrome counter events appended (see exportCounters).

import (
	"database/sql"
	"database/sql/driver"
	"fmt"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

func init() {
	add("_np_argsort", func(conn *sql.Conn, env *Env) error {
		return registerListScalar(conn, "_np_argsort", duckdb.TYPE_BIGINT, duckdb.TYPE_BIGINT, npArgsortUDF)
	})
	add("_cumsum", func(conn *sql.Conn, env *Env) error {
		return registerListScalar(conn, "_cumsum", duckdb.TYPE_DOUBLE, duckdb.TYPE_DOUBLE, cumsumUDF)
	})
}

type listScalar struct {
	in, out duckdb.TypeInfo
	fn      func(values []driver.Value) (any, error)
}

func (s listScalar) Config() duckdb.ScalarFuncConfig {
	return duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{s.in}, ResultTypeInfo: s.out}
}

func (s listScalar) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{RowExecutor: s.fn}
}

func registerListScalar(conn *sql.Conn, name string, in, out duckdb.Type, fn func([]driver.Value) (any, error)) error {
	mk := func(t duckdb.Type) (duckdb.TypeInfo, error) {
		child, err := duckdb.NewTypeInfo(t)
		if err != nil {
			return nil, err
		}
		return duckdb.NewListInfo(child)
	}
	inInfo, err := mk(in)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	outInfo, err := mk(out)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return duckdb.RegisterScalarUDF(conn, name, listScalar{in: inInfo, out: outInfo, fn: fn})
}

func npArgsortUDF(values []driver.Value) (any, error) {
	list, ok := values[0].([]any)
	if !ok {
		return nil, fmt.Errorf("_np_argsort: expected a BIGINT list, got %T", values[0])
	}
	keys := make([]int64, len(list))
	for i, v := range list {
		k, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("_np_argsort: element %d is %T, not BIGINT", i, v)
		}
		keys[i] = k
	}
	return NPArgsort(keys), nil
}

func cumsumUDF(values []driver.Value) (any, error) {
	list, ok := values[0].([]any)
	if !ok {
		return nil, fmt.Errorf("_cumsum: expected a DOUBLE list, got %T", values[0])
	}
	out := make([]float64, len(list))
	s := 0.0
	for i, v := range list {
		f, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("_cumsum: element %d is %T, not DOUBLE", i, v)
		}
		s += f
		out[i] = s
	}
	return out, nil
}

// NPArgsort returns the indices that sort keys in the order numpy 1.24's argsort(kind="quicksort") gives:
// an introsort (median-of-3 quicksort, insertion sort below 17 elements, heapsort past depth 2·log2 n).
// Equal keys come out in an order that depends on the whole input, which is what pandas' sort_values does.
func NPArgsort(keys []int64) []int64 {
	n := len(keys)
	tosort := make([]int64, n)
	for i := range tosort {
		tosort[i] = int64(i)
	}
	if n < 2 {
		return tosort
	}
	v := keys
	const smallQuicksort = 15
	type span struct{ l, r, depth int }
	var stack []span
	pl, pr := 0, n-1
	cdepth := 0
	for m := n; m > 1; m >>= 1 {
		cdepth++
	}
	cdepth *= 2
	for {
		if cdepth < 0 {
			npHeapsort(v, tosort[pl:pr+1])
			goto pop
		}
		for pr-pl > smallQuicksort {
			pm := pl + (pr-pl)>>1
			if v[tosort[pm]] < v[tosort[pl]] {
				tosort[pm], tosort[pl] = tosort[pl], tosort[pm]
			}
			if v[tosort[pr]] < v[tosort[pm]] {
				tosort[pr], tosort[pm] = tosort[pm], tosort[pr]
			}
			if v[tosort[pm]] < v[tosort[pl]] {
				tosort[pm], tosort[pl] = tosort[pl], tosort[pm]
			}
			vp := v[tosort[pm]]
			pi, pj := pl, pr-1
			tosort[pm], tosort[pj] = tosort[pj], tosort[pm]
			for {
				pi++
				for v[tosort[pi]] < vp {
					pi++
				}
				pj--
				for vp < v[tosort[pj]] {
					pj--
				}
				if pi >= pj {
					break
				}
				tosort[pi], tosort[pj] = tosort[pj], tosort[pi]
			}
			pk := pr - 1
			tosort[pi], tosort[pk] = tosort[pk], tosort[pi]
			cdepth--
			if pi-pl < pr-pi {
				stack = append(stack, span{pi + 1, pr, cdepth})
				pr = pi - 1
			} else {
				stack = append(stack, span{pl, pi - 1, cdepth})
				pl = pi + 1
			}
		}
		for pi := pl + 1; pi <= pr; pi++ {
			vi := tosort[pi]
			vp := v[vi]
			pj := pi
			for pj > pl && vp < v[tosort[pj-1]] {
				tosort[pj] = tosort[pj-1]
				pj--
			}
			tosort[pj] = vi
		}
	pop:
		if len(stack) == 0 {
			break
		}
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		pl, pr, cdepth = top.l, top.r, top.depth
	}
	return tosort
}

// npHeapsort is numpy's aheapsort on a sub-range (1-based heap indexing over a).
func npHeapsort(v []int64, tosort []int64) {
	n := len(tosort)
	a := func(i int) *int64 { return &tosort[i-1] }
	for l := n >> 1; l > 0; l-- {
		tmp := *a(l)
		i, j := l, l<<1
		for j <= n {
			if j < n && v[*a(j)] < v[*a(j + 1)] {
				j++
			}
			if v[tmp] < v[*a(j)] {
				*a(i) = *a(j)
				i = j
				j += j
			} else {
				break
			}
		}
		*a(i) = tmp
	}
	for n > 1 {
		tmp := *a(n)
		*a(n) = *a(1)
		n--
		i, j := 1, 2
		for j <= n {
			if j < n && v[*a(j)] < v[*a(j + 1)] {
				j++
			}
			if v[tmp] < v[*a(j)] {
				*a(i) = *a(j)
				i = j
				j += j
			} else {
				break
			}
		}
		*a(i) = tmp
	}
}
