package hostnet

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
)

// kubeProxyIPVS is kube-proxy's dummy interface in IPVS mode, holding every ClusterIP: those
// are Service addresses (checked as the Service CIDR), not a network the host is on.
const kubeProxyIPVS = "kube-ipvs0"

// HostNetworks are the networks the host's own interfaces are on: the prefix of every
// address (IPv4 and IPv6) of every interface but loopback, link-local addresses,
// kube-ipvs0 and the interface named skip (edgeovn's ovn0), sorted, each once. Nothing is
// written.
func HostNetworks(skip string) ([]netip.Prefix, error) {
	skipped, err := linkIndexes(skip, kubeProxyIPVS)
	if err != nil {
		return nil, err
	}
	// One dump of every address: a dump per link (netlink filters a link's addresses from a
	// dump of all of them) made this O(links x addresses), seconds of CPU when a burst of pods
	// added a veth, and with it an address event, each.
	addrs, err := netlinksafe.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("list addresses: %w", err)
	}
	var out []netip.Prefix
	for _, a := range addrs {
		if slices.Contains(skipped, a.LinkIndex) {
			continue
		}
		p, ok := ipNetToPrefix(a.IPNet)
		if !ok || p.Addr().IsLoopback() || p.Addr().IsLinkLocalUnicast() {
			continue
		}
		if p = p.Masked(); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int { return a.Compare(b) })
	return out, nil
}

// linkIndexes are the indexes of the named links that exist.
func linkIndexes(names ...string) ([]int, error) {
	var out []int
	for _, n := range names {
		l, err := netlinksafe.LinkByName(n)
		var missing netlink.LinkNotFoundError
		switch {
		case errors.As(err, &missing):
			continue
		case err != nil:
			return nil, fmt.Errorf("look up interface %s: %w", n, err)
		}
		out = append(out, l.Attrs().Index)
	}
	return out, nil
}
