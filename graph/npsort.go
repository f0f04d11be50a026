package graph

// ArgsortQuick returns the permutation that sorts keys ascending exactly as numpy 1.24's
// argsort(kind="quicksort") does (introsort: median-of-3 quicksort, insertion sort for 16 or fewer
// elements, heapsort past the depth limit). The order of equal keys is not stable but is fully
// determined by the input order; pandas' single-column sort_values uses this, and HTA's results at
// equal timestamps (queue lengths, launch matching, kernel order) depend on it. Reproducing it keeps
// compat mode bit-exact.
func ArgsortQuick(keys []int64) []int32 {
	n := len(keys)
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	if n < 2 {
		return idx
	}
	v := keys
	less := func(a, b int32) bool { return v[a] < v[b] }
	const small = 15
	type span struct{ l, r, depth int }
	var stack []span
	cdepth := 0
	for u := n; u > 1; u >>= 1 {
		cdepth++
	}
	cdepth *= 2
	pl, pr := 0, n-1
	for {
		if cdepth < 0 {
			aheapsort(v, idx[pl:pr+1])
		} else {
			for pr-pl > small {
				pm := pl + ((pr - pl) >> 1)
				if less(idx[pm], idx[pl]) {
					idx[pm], idx[pl] = idx[pl], idx[pm]
				}
				if less(idx[pr], idx[pm]) {
					idx[pr], idx[pm] = idx[pm], idx[pr]
				}
				if less(idx[pm], idx[pl]) {
					idx[pm], idx[pl] = idx[pl], idx[pm]
				}
				vp := v[idx[pm]]
				pi, pj := pl, pr-1
				idx[pm], idx[pj] = idx[pj], idx[pm]
				for {
					pi++
					for v[idx[pi]] < vp {
						pi++
					}
					pj--
					for vp < v[idx[pj]] {
						pj--
					}
					if pi >= pj {
						break
					}
					idx[pi], idx[pj] = idx[pj], idx[pi]
				}
				pk := pr - 1
				idx[pi], idx[pk] = idx[pk], idx[pi]
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
				vi := idx[pi]
				vp := v[vi]
				pj := pi
				for pj > pl && vp < v[idx[pj-1]] {
					idx[pj] = idx[pj-1]
					pj--
				}
				idx[pj] = vi
			}
		}
		if len(stack) == 0 {
			break
		}
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		pl, pr, cdepth = s.l, s.r, s.depth
	}
	return idx
}

// aheapsort is numpy's index heapsort (1-based heap over a).
func aheapsort(v []int64, tosort []int32) {
	n := len(tosort)
	a := func(i int) *int32 { return &tosort[i-1] }
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
