package storecontract

import (
	"net/netip"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

const (
	s4   = "s4" // 10.0.0.0/24
	dual = "dual"
)

var (
	subnet4    = subnet(s4, "10.0.0.0/24")
	subnetDual = subnet(dual, "10.1.0.0/24", "fd00:1::/112")
)

func emptyLoadsEmpty(t *testing.T, f *fixture) {
	f.want()
}

func putSubnetVisibleAndReplaced(t *testing.T, f *fixture) {
	sn := subnetDual
	sn.Gateways = []netip.Addr{addr("10.1.0.1"), addr("fd00:1::1")}
	sn.Excludes = []ipam.Range{{First: addr("10.1.0.2"), Last: addr("10.1.0.9")}}
	f.commit(putSubnet(sn), putSubnet(subnet4))
	f.want(subnetLine(sn), subnetLine(subnet4))

	// Put again by name: the whole spec is replaced.
	sn.Excludes = nil
	sn.Gateways = sn.Gateways[:1]
	f.commit(putSubnet(sn))
	f.want(subnetLine(sn), subnetLine(subnet4))
}

func deleteSubnetDropsItsReleased(t *testing.T, f *fixture) {
	f.commit(putSubnet(subnet4), putSubnet(subnetDual),
		putReleased(s4, "10.0.0.5", t0), putReleased(dual, "10.1.0.5", t0))
	f.commit(ipam.Change{DeleteSubnet: s4})
	f.want(subnetLine(subnetDual), releasedLine(ipam.Released{Subnet: dual, IP: addr("10.1.0.5"), At: t0}))
}

func putAllocationLoadsAsWritten(t *testing.T, f *fixture) {
	a := alloc(dual, "a", 1, "10.1.0.10", "fd00:1::10")
	b := alloc(s4, "b", 2, "10.0.0.10")
	c := alloc(dual, "c", 3, "fd00:1::11") // one family only
	c.Owner.Interface = "net1"
	f.commit(putSubnet(subnetDual), putSubnet(subnet4), put(a), put(b), put(c))
	f.want(subnetLine(subnetDual), subnetLine(subnet4), allocLine(a), allocLine(b), allocLine(c))
}

func putAllocationReplacesOwners(t *testing.T, f *fixture) {
	a := alloc(s4, "a", 1, "10.0.0.10")
	f.commit(put(a))
	moved := alloc(s4, "a", 2, "10.0.0.11")
	moved.Allocated = t1
	f.commit(put(moved))
	f.want(allocLine(moved))
	// Putting the same allocation again is no conflict with itself.
	f.commit(put(moved))
	// a's old address and MAC are free for another owner.
	b := alloc(s4, "b", 1, "10.0.0.10")
	f.commit(put(b))
	f.want(allocLine(moved), allocLine(b))
}

func putAllocationUnreleases(t *testing.T, f *fixture) {
	f.commit(putReleased(dual, "10.1.0.10", t0), putReleased(dual, "fd00:1::10", t0), putReleased(dual, "10.1.0.11", t0))
	a := alloc(dual, "a", 1, "10.1.0.10", "fd00:1::10")
	f.commit(put(a))
	f.want(allocLine(a), releasedLine(ipam.Released{Subnet: dual, IP: addr("10.1.0.11"), At: t0}))
}

func releaseRecordsAddresses(t *testing.T, f *fixture) {
	a := alloc(dual, "a", 1, "10.1.0.10", "fd00:1::10")
	b := alloc(dual, "b", 2, "10.1.0.11", "fd00:1::11")
	f.commit(put(a), put(b))
	f.commit(release(a, t1))
	f.want(allocLine(b),
		releasedLine(ipam.Released{Subnet: dual, IP: addr("10.1.0.10"), At: t1}),
		releasedLine(ipam.Released{Subnet: dual, IP: addr("fd00:1::10"), At: t1}))
	// The released address and MAC may go to another owner.
	c := alloc(dual, "c", 1, "10.1.0.10")
	f.commit(put(c))
	f.want(allocLine(b), allocLine(c),
		releasedLine(ipam.Released{Subnet: dual, IP: addr("fd00:1::10"), At: t1}))
}

func putReleasedCreatesOrReplaces(t *testing.T, f *fixture) {
	f.commit(putReleased(s4, "10.0.0.5", t0), putReleased(dual, "10.0.0.5", t0))
	f.commit(putReleased(s4, "10.0.0.5", t2))
	f.want(releasedLine(ipam.Released{Subnet: s4, IP: addr("10.0.0.5"), At: t2}),
		releasedLine(ipam.Released{Subnet: dual, IP: addr("10.0.0.5"), At: t0}))
}

func addressOfAnotherOwnerConflicts(t *testing.T, f *fixture) {
	a := alloc(dual, "a", 1, "10.1.0.10", "fd00:1::10")
	f.commit(put(a))
	f.refused(ipam.ErrConflict, put(alloc(dual, "b", 2, "10.1.0.10", "fd00:1::20")))
	f.refused(ipam.ErrConflict, put(alloc(dual, "b", 2, "10.1.0.20", "fd00:1::10")))
	f.refused(ipam.ErrConflict, put(alloc(dual, "b", 2, "fd00:1::10")))
	// Another interface of the same pod is another owner.
	other := alloc(dual, "a", 2, "10.1.0.10")
	other.Owner.Interface = "net1"
	f.refused(ipam.ErrConflict, put(other))
}

func addressInAnotherSubnetIsFree(t *testing.T, f *fixture) {
	a := alloc(s4, "a", 1, "10.0.0.10")
	b := alloc("other", "b", 2, "10.0.0.10")
	f.commit(put(a), put(b))
	f.want(allocLine(a), allocLine(b))
}

func macOfAnotherOwnerConflicts(t *testing.T, f *fixture) {
	a := alloc(s4, "a", 1, "10.0.0.10")
	f.commit(put(a))
	f.refused(ipam.ErrConflict, put(alloc(s4, "b", 1, "10.0.0.11")))
	f.refused(ipam.ErrConflict, put(alloc("other", "b", 1, "10.0.0.11"))) // a MAC is unique across subnets
}

func batchAppliesInOrder(t *testing.T, f *fixture) {
	a := alloc(s4, "a", 1, "10.0.0.10")
	f.commit(put(a))
	// One group commit: a leaves, b takes a's address and MAC, c comes and goes.
	b := alloc(s4, "b", 1, "10.0.0.10")
	c := alloc(s4, "c", 3, "10.0.0.12")
	f.commit(putSubnet(subnet4), release(a, t1), put(b), put(c), release(c, t2))
	f.want(subnetLine(subnet4), allocLine(b),
		releasedLine(ipam.Released{Subnet: s4, IP: addr("10.0.0.12"), At: t2}))
}

func failedBatchLeavesNothing(t *testing.T, f *fixture) {
	a := alloc(s4, "a", 1, "10.0.0.10")
	f.commit(putSubnet(subnet4), put(a), putReleased(s4, "10.0.0.50", t0))
	// Every kind of change before the one that conflicts is rolled back with it.
	f.refused(ipam.ErrConflict,
		putSubnet(subnetDual), ipam.Change{DeleteSubnet: s4}, putReleased(s4, "10.0.0.51", t1),
		release(a, t1), put(alloc(s4, "c", 3, "10.0.0.50")),
		put(alloc(s4, "b", 2, "10.0.0.20")), put(alloc(s4, "d", 2, "10.0.0.21")))
}

func emptyChangeInvalid(t *testing.T, f *fixture) {
	f.commit(putSubnet(subnet4))
	f.refused(ipam.ErrInvalid, putSubnet(subnetDual), ipam.Change{})
}

func loadedStateIsTheCallers(t *testing.T, f *fixture) {
	sn := subnetDual
	sn.Gateways = []netip.Addr{addr("10.1.0.1")}
	a := alloc(dual, "a", 1, "10.1.0.10", "fd00:1::10")
	f.commit(putSubnet(sn), put(a))
	s := f.load()
	s.Subnets[0].CIDRs[0] = netip.MustParsePrefix("192.168.0.0/16")
	s.Subnets[0].Gateways[0] = addr("192.168.0.1")
	s.Allocations[0].IPs[0] = addr("192.168.0.10")
	s.Allocations[0].MAC[5] = 9
	f.want(subnetLine(sn), allocLine(a))
}
