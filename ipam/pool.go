package ipam

import (
	"container/list"
	"encoding/binary"
	"net/netip"
	"slices"
	"time"
)

// pool hands out the addresses of one CIDR of a subnet. It knows which addresses were never
// used (fresh, a sorted list of disjoint ranges) and which were used and released (a queue,
// least recently released first). Taking the lowest fresh address or the front of the queue
// is O(1), so allocation does not slow down with subnet size.
type pool struct {
	prefix   netip.Prefix
	usable   Range   // the prefix minus network/broadcast addresses
	reserved []Range // gateway and excludes, merged
	fresh    []Range
	released *list.List // of netip.Addr, in release order
	queued   map[netip.Addr]*list.Element
}

// usableRange is the part of p that may be handed out: IPv4 loses its network and broadcast
// addresses and IPv6 its subnet-router anycast address (RFC 4291), except on the point-to-point
// prefixes /31, /127 (RFC 3021, RFC 6164) and the single-address /32, /128.
func usableRange(p netip.Prefix) Range {
	first := p.Masked().Addr()
	last := lastAddr(p)
	hostBits := p.Addr().BitLen() - p.Bits()
	if hostBits <= 1 {
		return Range{First: first, Last: last}
	}
	first = first.Next()
	if p.Addr().Is4() {
		last = last.Prev()
	}
	return Range{First: first, Last: last}
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// taken is what a CIDR cannot hand out as fresh: the reserved ranges and every address in use
// or released, merged. Addresses are sorted and coalesced into ranges first, so a dense
// subnet costs one sort, not a sort of one range per address.
func taken(p netip.Prefix, reserved []Range, used map[netip.Addr]Owner, released []Released) []Range {
	addrs := make([]netip.Addr, 0, len(used)+len(released))
	for a := range used {
		if p.Contains(a) {
			addrs = append(addrs, a)
		}
	}
	for _, r := range released {
		if p.Contains(r.IP) {
			addrs = append(addrs, r.IP)
		}
	}
	sortAddrs(addrs)
	out := slices.Clone(reserved)
	for i := 0; i < len(addrs); {
		j := i + 1
		for j < len(addrs) && addrs[j] == addrs[j-1].Next() {
			j++
		}
		out = append(out, Range{First: addrs[i], Last: addrs[j-1]})
		i = j
	}
	return mergeRanges(out)
}

// sortAddrs sorts addresses of one family. IPv4 addresses sort as integers: at start-up this
// sorts every held address of a subnet, and comparing integers is several times faster than
// comparing netip.Addr values.
func sortAddrs(addrs []netip.Addr) {
	if len(addrs) == 0 || !addrs[0].Is4() {
		slices.SortFunc(addrs, netip.Addr.Compare)
		return
	}
	keys := make([]uint32, len(addrs))
	for i, a := range addrs {
		b := a.As4()
		keys[i] = binary.BigEndian.Uint32(b[:])
	}
	slices.Sort(keys)
	for i, k := range keys {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], k)
		addrs[i] = netip.AddrFrom4(b)
	}
}

// poolSpec is what buildPool needs to build the pool of one CIDR.
type poolSpec struct {
	prefix   netip.Prefix
	reserved []Range    // gateway and excludes, merged
	taken    []Range    // see taken
	released []Released // sorted by release time, then address
}

// buildPool computes the pool of one CIDR: its fresh addresses, and its released addresses,
// least recently released first.
func buildPool(ps poolSpec, used map[netip.Addr]Owner) *pool {
	pl := &pool{prefix: ps.prefix, usable: usableRange(ps.prefix), reserved: ps.reserved,
		released: list.New(), queued: map[netip.Addr]*list.Element{}}
	pl.fresh = complement(pl.usable.First, pl.usable.Last, ps.taken)
	for _, r := range ps.released {
		if _, held := used[r.IP]; !held && pl.usable.Contains(r.IP) && !pl.isReserved(r.IP) {
			pl.queued[r.IP] = pl.released.PushBack(r.IP)
		}
	}
	return pl
}

// sortReleased orders released records least recently released first.
func sortReleased(released []Released) {
	slices.SortFunc(released, func(a, b Released) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return a.IP.Compare(b.IP)
	})
}

func (pl *pool) isReserved(a netip.Addr) bool { return findRange(pl.reserved, a) >= 0 }

// next returns the address the pool would hand out next, without taking it.
func (pl *pool) next() (netip.Addr, bool) {
	if len(pl.fresh) > 0 {
		return pl.fresh[0].First, true
	}
	if e := pl.released.Front(); e != nil {
		return e.Value.(netip.Addr), true
	}
	return netip.Addr{}, false
}

// take removes a free address from the pool.
func (pl *pool) take(a netip.Addr) {
	if e, ok := pl.queued[a]; ok {
		pl.released.Remove(e)
		delete(pl.queued, a)
		return
	}
	if len(pl.fresh) > 0 && pl.fresh[0].First == a {
		if pl.fresh[0].Last == a {
			pl.fresh = pl.fresh[1:]
		} else {
			pl.fresh[0].First = a.Next()
		}
		return
	}
	pl.fresh = removeAddr(pl.fresh, a)
}

// giveBack queues a released address at the back, unless it is no longer usable.
func (pl *pool) giveBack(a netip.Addr) {
	if _, ok := pl.queued[a]; ok || !pl.usable.Contains(a) || pl.isReserved(a) {
		return
	}
	pl.queued[a] = pl.released.PushBack(a)
}

// releaseClock is a monotonic clock for release records: two releases never share a time, so
// the order survives a reload even on a coarse clock.
type releaseClock struct{ last time.Time }

func (c *releaseClock) now() time.Time {
	t := time.Now().UTC().Round(0)
	if !t.After(c.last) {
		t = c.last.Add(time.Nanosecond)
	}
	c.last = t
	return t
}
