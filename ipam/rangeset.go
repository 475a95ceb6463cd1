package ipam

import (
	"net/netip"
	"slices"
)

// mergeRanges sorts ranges and merges overlapping or adjacent ones, so the result is a
// canonical sorted, disjoint list.
func mergeRanges(rs []Range) []Range {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b Range) int { return a.First.Compare(b.First) })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && !out[n-1].Last.Next().IsValid() {
			continue // the previous range reaches the top of the address space
		} else if n > 0 && r.First.Compare(out[n-1].Last.Next()) <= 0 {
			if r.Last.Compare(out[n-1].Last) > 0 {
				out[n-1].Last = r.Last
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// complement returns [first, last] minus taken, which must be sorted and disjoint (see
// mergeRanges).
func complement(first, last netip.Addr, taken []Range) []Range {
	var out []Range
	cur := first
	for _, t := range taken {
		if t.Last.Compare(cur) < 0 {
			continue
		}
		if t.First.Compare(last) > 0 {
			break
		}
		if t.First.Compare(cur) > 0 {
			out = append(out, Range{First: cur, Last: t.First.Prev()})
		}
		cur = t.Last.Next()
		if !cur.IsValid() || cur.Compare(last) > 0 {
			return out
		}
	}
	return append(out, Range{First: cur, Last: last})
}

// findRange returns the index of the range in sorted, disjoint rs that contains a, or -1.
func findRange(rs []Range, a netip.Addr) int {
	i, _ := slices.BinarySearchFunc(rs, a, func(r Range, a netip.Addr) int {
		if r.Last.Compare(a) < 0 {
			return -1
		}
		if r.First.Compare(a) > 0 {
			return 1
		}
		return 0
	})
	if i < len(rs) && rs[i].Contains(a) {
		return i
	}
	return -1
}

// removeAddr removes a from sorted, disjoint rs, splitting the range that holds it.
func removeAddr(rs []Range, a netip.Addr) []Range {
	i := findRange(rs, a)
	if i < 0 {
		return rs
	}
	r := rs[i]
	switch {
	case r.First == a && r.Last == a:
		return slices.Delete(rs, i, i+1)
	case r.First == a:
		rs[i].First = a.Next()
	case r.Last == a:
		rs[i].Last = a.Prev()
	default:
		rs[i].Last = a.Prev()
		rs = slices.Insert(rs, i+1, Range{First: a.Next(), Last: r.Last})
	}
	return rs
}
