package graph

// PySort sorts a in place exactly as CPython 3.11's list.sort does (timsort: natural runs extended to
// minrun by binary insertion, merged in powersort order with galloping), comparing with lt alone.
// HTA sorts call-stack events with sorted(key=cmp_to_key(...)) and a comparator that is not a
// consistent order where zero-length and nonzero events meet at one timestamp; the nesting it then
// builds depends on which pairs the sort happened to compare. Replaying the same algorithm gives the
// same order, so compat mode nests events as HTA does. With a consistent lt this is a stable sort.
func PySort[T any](a []T, lt func(x, y T) bool) {
	if len(a) < 2 {
		return
	}
	s := pySorter[T]{a: a, lt: lt, minGallop: pyMinGallop}
	s.sort()
}

const pyMinGallop = 7

type pyRun struct{ base, len, power int }

type pySorter[T any] struct {
	a         []T
	lt        func(x, y T) bool
	minGallop int
	pending   []pyRun
	tmp       []T
}

func (s *pySorter[T]) sort() {
	n := len(s.a)
	minrun := pyMinrun(n)
	lo, remaining := 0, n
	for remaining > 0 {
		runLen, descending := s.countRun(lo, lo+remaining)
		if descending {
			for i, j := lo, lo+runLen-1; i < j; i, j = i+1, j-1 {
				s.a[i], s.a[j] = s.a[j], s.a[i]
			}
		}
		if runLen < minrun {
			force := min(remaining, minrun)
			s.binarySort(lo, lo+force, lo+runLen)
			runLen = force
		}
		if k := len(s.pending); k > 0 {
			last := s.pending[k-1]
			power := pyPowerloop(last.base, last.len, runLen, n)
			for len(s.pending) > 1 && s.pending[len(s.pending)-2].power > power {
				s.mergeAt(len(s.pending) - 2)
			}
			s.pending[len(s.pending)-1].power = power
		}
		s.pending = append(s.pending, pyRun{base: lo, len: runLen})
		lo += runLen
		remaining -= runLen
	}
	for len(s.pending) > 1 {
		k := len(s.pending) - 2
		if k > 0 && s.pending[k-1].len < s.pending[k+1].len {
			k--
		}
		s.mergeAt(k)
	}
}

// pyMinrun: n itself below 64, else n's 6 leading bits plus one if any bit shifted out was set.
func pyMinrun(n int) int {
	r := 0
	for n >= 64 {
		r |= n & 1
		n >>= 1
	}
	return n + r
}

// pyPowerloop is powersort's node power of the boundary between the run [s1, s1+n1) and the next
// n2 elements, in a list of n.
func pyPowerloop(s1, n1, n2, n int) int {
	result := 0
	a := 2*s1 + n1
	b := a + n1 + n2
	for {
		result++
		if a >= n {
			a -= n
			b -= n
		} else if b >= n {
			break
		}
		a <<= 1
		b <<= 1
	}
	return result
}

// countRun returns the length of the run starting at lo (strictly descending, or not descending)
// and whether it descends.
func (s *pySorter[T]) countRun(lo, hi int) (int, bool) {
	a := s.a
	lo++
	if lo == hi {
		return 1, false
	}
	n := 2
	if s.lt(a[lo], a[lo-1]) {
		for lo = lo + 1; lo < hi && s.lt(a[lo], a[lo-1]); lo++ {
			n++
		}
		return n, true
	}
	for lo = lo + 1; lo < hi && !s.lt(a[lo], a[lo-1]); lo++ {
		n++
	}
	return n, false
}

// binarySort sorts a[lo:hi], of which a[lo:start] is already sorted, by binary insertion.
func (s *pySorter[T]) binarySort(lo, hi, start int) {
	a := s.a
	if lo == start {
		start++
	}
	for ; start < hi; start++ {
		l, r := lo, start
		pivot := a[r]
		for l < r {
			p := l + (r-l)>>1
			if s.lt(pivot, a[p]) {
				r = p
			} else {
				l = p + 1
			}
		}
		copy(a[l+1:start+1], a[l:start])
		a[l] = pivot
	}
}

// gallopLeft returns k such that a[k-1] < key <= a[k], searching from hint.
func (s *pySorter[T]) gallopLeft(key T, a []T, hint int) int {
	n := len(a)
	lastofs, ofs := 0, 1
	if s.lt(a[hint], key) {
		maxofs := n - hint
		for ofs < maxofs && s.lt(a[hint+ofs], key) {
			lastofs = ofs
			ofs = ofs<<1 + 1
		}
		ofs = min(ofs, maxofs)
		lastofs += hint
		ofs += hint
	} else {
		maxofs := hint + 1
		for ofs < maxofs && !s.lt(a[hint-ofs], key) {
			lastofs = ofs
			ofs = ofs<<1 + 1
		}
		ofs = min(ofs, maxofs)
		lastofs, ofs = hint-ofs, hint-lastofs
	}
	lastofs++
	for lastofs < ofs {
		m := lastofs + (ofs-lastofs)>>1
		if s.lt(a[m], key) {
			lastofs = m + 1
		} else {
			ofs = m
		}
	}
	return ofs
}

// gallopRight returns k such that a[k-1] <= key < a[k], searching from hint.
func (s *pySorter[T]) gallopRight(key T, a []T, hint int) int {
	n := len(a)
	lastofs, ofs := 0, 1
	if s.lt(key, a[hint]) {
		maxofs := hint + 1
		for ofs < maxofs && s.lt(key, a[hint-ofs]) {
			lastofs = ofs
			ofs = ofs<<1 + 1
		}
		ofs = min(ofs, maxofs)
		lastofs, ofs = hint-ofs, hint-lastofs
	} else {
		maxofs := n - hint
		for ofs < maxofs && !s.lt(key, a[hint+ofs]) {
			lastofs = ofs
			ofs = ofs<<1 + 1
		}
		ofs = min(ofs, maxofs)
		lastofs += hint
		ofs += hint
	}
	lastofs++
	for lastofs < ofs {
		m := lastofs + (ofs-lastofs)>>1
		if s.lt(key, a[m]) {
			ofs = m
		} else {
			lastofs = m + 1
		}
	}
	return ofs
}

// mergeAt merges pending runs i and i+1.
func (s *pySorter[T]) mergeAt(i int) {
	ra, rb := s.pending[i], s.pending[i+1]
	s.pending[i].len = ra.len + rb.len
	s.pending = append(s.pending[:i+1], s.pending[i+2:]...)
	a := s.a[ra.base : ra.base+ra.len]
	b := s.a[rb.base : rb.base+rb.len]
	k := s.gallopRight(b[0], a, 0)
	a = a[k:]
	if len(a) == 0 {
		return
	}
	nb := s.gallopLeft(a[len(a)-1], b, len(b)-1)
	if nb <= 0 {
		return
	}
	if len(a) <= nb {
		s.mergeLo(ra.base+k, len(a), nb)
	} else {
		s.mergeHi(ra.base+k, len(a), nb)
	}
}

// mergeLo merges the adjacent runs a[base:base+na] and the next nb elements, na <= nb, from the left.
func (s *pySorter[T]) mergeLo(base, na, nb int) {
	s.tmp = append(s.tmp[:0], s.a[base:base+na]...)
	ta := s.tmp // run a, moved out of the way
	all := s.a
	dest, pa, pb := base, 0, base+na
	all[dest] = all[pb]
	dest++
	pb++
	nb--
	copyB := func() { // na == 1: the rest of b, then a's last element
		copy(all[dest:dest+nb], all[pb:pb+nb])
		all[dest+nb] = ta[pa]
	}
	if nb == 0 {
		copy(all[dest:], ta[pa:pa+na])
		return
	}
	if na == 1 {
		copyB()
		return
	}
	minGallop := s.minGallop
	for {
		acount, bcount := 0, 0
		for {
			if s.lt(all[pb], ta[pa]) {
				all[dest] = all[pb]
				dest++
				pb++
				bcount++
				acount = 0
				nb--
				if nb == 0 {
					copy(all[dest:], ta[pa:pa+na])
					return
				}
				if bcount >= minGallop {
					break
				}
			} else {
				all[dest] = ta[pa]
				dest++
				pa++
				acount++
				bcount = 0
				na--
				if na == 1 {
					copyB()
					return
				}
				if acount >= minGallop {
					break
				}
			}
		}
		minGallop++
		for {
			if minGallop > 1 {
				minGallop--
			}
			s.minGallop = minGallop
			k := s.gallopRight(all[pb], ta[pa:pa+na], 0)
			acount = k
			if k > 0 {
				copy(all[dest:dest+k], ta[pa:pa+k])
				dest += k
				pa += k
				na -= k
				if na == 1 {
					copyB()
					return
				}
				if na == 0 { // only with an inconsistent lt
					return
				}
			}
			all[dest] = all[pb]
			dest++
			pb++
			nb--
			if nb == 0 {
				copy(all[dest:], ta[pa:pa+na])
				return
			}
			k = s.gallopLeft(ta[pa], all[pb:pb+nb], 0)
			bcount = k
			if k > 0 {
				copy(all[dest:dest+k], all[pb:pb+k])
				dest += k
				pb += k
				nb -= k
				if nb == 0 {
					copy(all[dest:], ta[pa:pa+na])
					return
				}
			}
			all[dest] = ta[pa]
			dest++
			pa++
			na--
			if na == 1 {
				copyB()
				return
			}
			if acount < pyMinGallop && bcount < pyMinGallop {
				break
			}
		}
		minGallop++
		s.minGallop = minGallop
	}
}

// mergeHi merges the adjacent runs a[base:base+na] and the next nb elements, na > nb, from the right. It
// mirrors mergeLo and stays a separate function as merge_hi does in CPython: with an inconsistent lt the
// result depends on exactly which pairs are compared in which direction, which a shared generic merge would
// obscure.
func (s *pySorter[T]) mergeHi(base, na, nb int) {
	all := s.a
	s.tmp = append(s.tmp[:0], all[base+na:base+na+nb]...)
	tb := s.tmp // run b, moved out of the way
	dest := base + na + nb - 1
	pa, pb := base+na-1, nb-1 // the last element of each run
	all[dest] = all[pa]
	dest--
	pa--
	na--
	copyA := func() { // nb == 1: the rest of a moves right, b's first element goes before it
		copy(all[dest-na+1:dest+1], all[pa-na+1:pa+1])
		all[dest-na] = tb[pb]
	}
	finish := func() { // the rest of b fills the front
		if nb > 0 {
			copy(all[dest-nb+1:dest+1], tb[:nb])
		}
	}
	if na == 0 {
		finish()
		return
	}
	if nb == 1 {
		copyA()
		return
	}
	minGallop := s.minGallop
	for {
		acount, bcount := 0, 0
		for {
			if s.lt(tb[pb], all[pa]) {
				all[dest] = all[pa]
				dest--
				pa--
				acount++
				bcount = 0
				na--
				if na == 0 {
					finish()
					return
				}
				if acount >= minGallop {
					break
				}
			} else {
				all[dest] = tb[pb]
				dest--
				pb--
				bcount++
				acount = 0
				nb--
				if nb == 1 {
					copyA()
					return
				}
				if bcount >= minGallop {
					break
				}
			}
		}
		minGallop++
		for {
			if minGallop > 1 {
				minGallop--
			}
			s.minGallop = minGallop
			k := na - s.gallopRight(tb[pb], all[base:base+na], na-1)
			acount = k
			if k > 0 {
				dest -= k
				pa -= k
				copy(all[dest+1:dest+1+k], all[pa+1:pa+1+k])
				na -= k
				if na == 0 {
					finish()
					return
				}
			}
			all[dest] = tb[pb]
			dest--
			pb--
			nb--
			if nb == 1 {
				copyA()
				return
			}
			k = nb - s.gallopLeft(all[pa], tb[:nb], nb-1)
			bcount = k
			if k > 0 {
				dest -= k
				pb -= k
				copy(all[dest+1:dest+1+k], tb[pb+1:pb+1+k])
				nb -= k
				if nb == 1 {
					copyA()
					return
				}
				if nb == 0 { // only with an inconsistent lt
					return
				}
			}
			all[dest] = all[pa]
			dest--
			pa--
			na--
			if na == 0 {
				finish()
				return
			}
			if acount < pyMinGallop && bcount < pyMinGallop {
				break
			}
		}
		minGallop++
		s.minGallop = minGallop
	}
}
