package hostnet

import (
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
	links, err := netlinksafe.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list interfaces: %w", err)
	}
	var out []netip.Prefix
	for _, l := range links {
		if n := l.Attrs().Name; n == skip || n == kubeProxyIPVS {
			continue
		}
		addrs, err := netlinksafe.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			return nil, fmt.Errorf("list addresses of %s: %w", l.Attrs().Name, err)
		}
		for _, a := range addrs {
			p, ok := ipNetToPrefix(a.IPNet)
			if !ok || p.Addr().IsLoopback() || p.Addr().IsLinkLocalUnicast() {
				continue
			}
			if p = p.Masked(); !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int { return a.Compare(b) })
	return out, nil
}
