package annotation

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// NodeInternalIP is the node's first IPv4 InternalIP address, invalid when it has none: the
// controller routes to the node by it, and the node role may take its tunnel endpoint from it.
func NodeInternalIP(node *corev1.Node) netip.Addr {
	for _, a := range node.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() {
			return ip
		}
	}
	return netip.Addr{}
}
