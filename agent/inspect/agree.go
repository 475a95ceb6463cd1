package inspect

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// nodeOwnerPrefix marks the IPAM owners of nodes' join addresses (agent/controller).
const nodeOwnerPrefix = "node:"

// disagreements compares the IPAM's pod allocations with the northbound database's pod ports
// (both owned by "namespace/name") and lists each pod for which they differ: an allocation
// without a port, a port without an allocation, or other addresses on each side.
func disagreements(allocs []ipam.Allocation, ports []northbound.PodPort) []string {
	held := map[string][]netip.Addr{}
	for _, a := range allocs {
		if strings.HasPrefix(a.Owner.Pod, nodeOwnerPrefix) {
			continue
		}
		held[a.Owner.Pod] = append(held[a.Owner.Pod], a.IPs...)
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range ports {
		seen[p.Owner] = true
		ips, ok := held[p.Owner]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: port %s in NB (%v), no allocation in the IPAM", p.Owner, p.Name, p.IPs))
		case !sameAddrs(ips, p.IPs):
			out = append(out, fmt.Sprintf("%s: IPAM holds %v, port %s in NB has %v", p.Owner, ips, p.Name, p.IPs))
		}
	}
	for owner, ips := range held {
		if !seen[owner] {
			out = append(out, fmt.Sprintf("%s: IPAM holds %v, no port in NB", owner, ips))
		}
	}
	slices.Sort(out)
	return out
}

func sameAddrs(a, b []netip.Addr) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, netip.Addr.Compare)
	slices.SortFunc(b, netip.Addr.Compare)
	return slices.Equal(a, b)
}
