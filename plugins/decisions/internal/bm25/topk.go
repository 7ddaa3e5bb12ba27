package bm25

import "math/bits"

// TopK returns the positions of the k largest scores in the order bm25s
// 0.3.9 returns them on its NumPy backend: np.argpartition(scores, -k),
// the last k entries of that permutation, a stable ascending argsort of
// their scores (NumPy's quicksort is an insertion sort for k <= 16), then
// reversed. bm25s never compares document positions, so equal scores come
// out in whatever order the partition left them; this reproduces NumPy's
// scalar introselect step by step so ties match the reference exactly.
// k is clamped to len(scores).
func TopK(scores []float32, k int) []int {
	n := len(scores)
	if k > n {
		k = n
	}
	if k <= 0 {
		return nil
	}
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	sel := selector{s: scores}
	sel.introselect(perm, n-k)
	cand := perm[n-k:]
	// Stable insertion sort, ascending (NumPy's small-array argsort).
	for i := 1; i < len(cand); i++ {
		v := cand[i]
		j := i
		for j > 0 && scores[v] < scores[cand[j-1]] {
			cand[j] = cand[j-1]
			j--
		}
		cand[j] = v
	}
	out := make([]int, k)
	for i := range out {
		out[i] = int(cand[k-1-i])
	}
	return out
}

// selector is NumPy's introselect_ (selection.cpp) for an argpartition
// with one kth, no cached pivots and no NaNs: v[p[i]] compared with <.
type selector struct{ s []float32 }

func (x selector) less(p []int32, i, j int) bool { return x.s[p[i]] < x.s[p[j]] }

func (x selector) introselect(p []int32, kth int) {
	num := len(p)
	low, high := 0, num-1
	if kth-low < 3 {
		x.dumbSelect(p[low:high+1], kth-low)
		return
	}
	if kth == num-1 {
		// The last position holding the maximum goes to the end.
		maxIdx := low
		maxVal := x.s[p[low]]
		for k := low + 1; k < num; k++ {
			if !(x.s[p[k]] < maxVal) {
				maxIdx = k
				maxVal = x.s[p[k]]
			}
		}
		p[kth], p[maxIdx] = p[maxIdx], p[kth]
		return
	}
	depth := 2 * (bits.Len(uint(num)) - 1)
	for low+1 < high {
		ll, hh := low+1, high
		if depth > 0 || hh-ll < 5 {
			mid := low + (high-low)/2
			x.median3Swap(p, low, mid, high)
		} else {
			mid := ll + x.medianOfMedian5(p[ll:hh])
			p[mid], p[low] = p[low], p[mid]
			ll--
			hh++
		}
		depth--
		pivot := x.s[p[low]]
		for {
			ll++
			for x.s[p[ll]] < pivot {
				ll++
			}
			hh--
			for pivot < x.s[p[hh]] {
				hh--
			}
			if hh < ll {
				break
			}
			p[ll], p[hh] = p[hh], p[ll]
		}
		p[low], p[hh] = p[hh], p[low]
		if hh >= kth {
			high = hh - 1
		}
		if hh <= kth {
			low = ll
		}
	}
	if high == low+1 && x.less(p, high, low) {
		p[high], p[low] = p[low], p[high]
	}
}

// dumbSelect moves the smallest kth+1 values to the front, one minimum at
// a time; the first of equal minima wins.
func (x selector) dumbSelect(p []int32, kth int) {
	for i := 0; i <= kth; i++ {
		minIdx := i
		minVal := x.s[p[i]]
		for k := i + 1; k < len(p); k++ {
			if x.s[p[k]] < minVal {
				minIdx = k
				minVal = x.s[p[k]]
			}
		}
		p[i], p[minIdx] = p[minIdx], p[i]
	}
}

// median3Swap puts the median of low, mid, high at low and the smallest at
// low+1.
func (x selector) median3Swap(p []int32, low, mid, high int) {
	if x.less(p, high, mid) {
		p[high], p[mid] = p[mid], p[high]
	}
	if x.less(p, high, low) {
		p[high], p[low] = p[low], p[high]
	}
	if x.less(p, low, mid) {
		p[low], p[mid] = p[mid], p[low]
	}
	p[mid], p[low+1] = p[low+1], p[mid]
}

func (x selector) median5(p []int32) int {
	if x.less(p, 1, 0) {
		p[1], p[0] = p[0], p[1]
	}
	if x.less(p, 4, 3) {
		p[4], p[3] = p[3], p[4]
	}
	if x.less(p, 3, 0) {
		p[3], p[0] = p[0], p[3]
	}
	if x.less(p, 4, 1) {
		p[4], p[1] = p[1], p[4]
	}
	if x.less(p, 2, 1) {
		p[2], p[1] = p[1], p[2]
	}
	if x.less(p, 3, 2) {
		if x.less(p, 3, 1) {
			return 1
		}
		return 3
	}
	return 2
}

// medianOfMedian5 gathers the median of each group of five at the front
// and selects their median (NumPy's linear-time fallback pivot).
func (x selector) medianOfMedian5(p []int32) int {
	nmed := len(p) / 5
	for i, sub := 0, 0; i < nmed; i, sub = i+1, sub+5 {
		m := x.median5(p[sub:])
		p[sub+m], p[i] = p[i], p[sub+m]
	}
	if nmed > 2 {
		x.introselect(p[:nmed], nmed/2)
	}
	return nmed / 2
}
