package ipam

import "slices"

// ownerIndex finds live allocations by owner: pod -> that pod's allocations, one per
// interface. Most pods have one interface, so a lookup is one map access on one string and a
// scan of one element, and ReleasePod needs no index of its own: at start-up, filling one
// map of 100,000 entries instead of two is a measurable part of the load.
type ownerIndex struct {
	pods map[string][]*Allocation
	n    int // allocations in all
}

func newOwnerIndex(size int) ownerIndex {
	return ownerIndex{pods: make(map[string][]*Allocation, size)}
}

// get returns the owner's allocation, or nil.
func (x *ownerIndex) get(o Owner) *Allocation {
	for _, a := range x.pods[o.Pod] {
		if a.Owner.Interface == o.Interface {
			return a
		}
	}
	return nil
}

// put records a as its owner's allocation, replacing the one it had.
func (x *ownerIndex) put(a *Allocation) {
	as := x.pods[a.Owner.Pod]
	for i, cur := range as {
		if cur.Owner.Interface == a.Owner.Interface {
			as[i] = a
			return
		}
	}
	x.pods[a.Owner.Pod] = append(as, a)
	x.n++
}

// remove forgets the owner's allocation, if it has one.
func (x *ownerIndex) remove(o Owner) {
	as := x.pods[o.Pod]
	i := slices.IndexFunc(as, func(a *Allocation) bool { return a.Owner.Interface == o.Interface })
	if i < 0 {
		return
	}
	x.n--
	if len(as) == 1 {
		delete(x.pods, o.Pod)
		return
	}
	x.pods[o.Pod] = slices.Delete(as, i, i+1)
}

// pod returns the allocations of every interface of pod; the caller must not keep the slice.
func (x *ownerIndex) pod(pod string) []*Allocation { return x.pods[pod] }

// len is the number of allocations.
func (x *ownerIndex) len() int { return x.n }

// each calls f for every allocation, in no particular order.
func (x *ownerIndex) each(f func(a *Allocation)) {
	for _, as := range x.pods {
		for _, a := range as {
			f(a)
		}
	}
}

// clear forgets every allocation, keeping the map's capacity.
func (x *ownerIndex) clear() {
	clear(x.pods)
	x.n = 0
}

// putLoaded records loaded allocations, all of them, on the assumption that no owner appears
// twice; it reports whether that held. The pods' lists share one backing array, with
// capacity 1 per pod so a second interface reallocates rather than overwrites a neighbour.
func (x *ownerIndex) putLoaded(as []Allocation) bool {
	backing := make([]*Allocation, len(as))
	ok := true
	for i := range as {
		a := &as[i]
		cur, found := x.pods[a.Owner.Pod]
		if !found {
			backing[i] = a
			x.pods[a.Owner.Pod] = backing[i : i+1 : i+1]
			continue
		}
		for _, c := range cur {
			ok = ok && c.Owner.Interface != a.Owner.Interface
		}
		x.pods[a.Owner.Pod] = append(cur, a)
	}
	x.n = len(as)
	return ok
}
