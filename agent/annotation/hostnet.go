package annotation

import (
	"encoding/json"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// Written by each host's node role on its own Node.
const (
	// HostNetworksKey lists the networks the host's own interfaces are on (every address's
	// prefix, but loopback, link-local and edgeovn's ovn0), as a JSON list of CIDRs:
	// ["192.0.2.0/24","fd00:1::/64"]. The controller refuses a Subnet that overlaps one.
	HostNetworksKey = "edgeovn.io/host-networks"
	// RouteConflictsKey says which prefixes the node role did not route through ovn0, and
	// the route or address of the host in the way; absent when there are none.
	RouteConflictsKey = "edgeovn.io/route-conflicts"
)

// EncodeHostNetworks is the HostNetworksKey value for ps.
func EncodeHostNetworks(ps []netip.Prefix) string {
	s := make([]string, 0, len(ps))
	for _, p := range ps {
		s = append(s, p.String())
	}
	b, _ := json.Marshal(s) // strings always encode
	return string(b)
}

// HostNetworks are the networks the node's HostNetworksKey lists; entries that do not parse
// are skipped (the annotation is informational: a bad one refuses nothing).
func HostNetworks(node *corev1.Node) []netip.Prefix {
	var s []string
	if err := json.Unmarshal([]byte(node.Annotations[HostNetworksKey]), &s); err != nil {
		return nil
	}
	var out []netip.Prefix
	for _, v := range s {
		if p, err := netip.ParsePrefix(v); err == nil {
			out = append(out, p.Masked())
		}
	}
	return out
}

// NodeAddrs are the node's InternalIP and ExternalIP addresses.
func NodeAddrs(node *corev1.Node) []netip.Addr {
	var out []netip.Addr
	for _, a := range node.Status.Addresses {
		if a.Type != corev1.NodeInternalIP && a.Type != corev1.NodeExternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil {
			out = append(out, ip.Unmap())
		}
	}
	return out
}
