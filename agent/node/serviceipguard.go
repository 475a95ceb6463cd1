package node

import (
	"errors"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
)

// errServiceIP is what every refused service address wraps; errHostListener also what a
// refusal for a host listener's port wraps (the one refusal only this node can make: the
// controller refuses the others for the whole cluster and records their Events).
var (
	errServiceIP    = errors.New("not served")
	errHostListener = fmt.Errorf("held by a listener on the host: %w", errServiceIP)
)

// namedPrefix is a network an external or LoadBalancer IP may not be in.
type namedPrefix struct {
	name   string
	prefix netip.Prefix
}

// ipGuard refuses external and LoadBalancer IPs that would take traffic from something else:
// an address in the pod, join or service network (its DNAT would capture traffic to pods or
// ClusterIPs), and one of the host's own addresses on a port a host listener holds (sshd on
// 22: the DNAT would cut the host's own service off).
type ipGuard struct {
	reserved  []namedPrefix
	hostAddrs map[netip.Addr]bool
	listening map[string]map[netip.AddrPort]bool // "tcp"/"udp" -> bound addresses; 0.0.0.0 is any
	// readListening fills listening the first time a Service IP is one of the host's own
	// addresses (hostListeners): reading the socket tables at every pass of the loop was half
	// of an idle node's CPU. nil: listening is given.
	readListening func() (map[string]map[netip.AddrPort]bool, error)
}

// refuse is serviceIPsRequest.Refuse.
func (g *ipGuard) refuse(ip netip.Addr, ports []corev1.ServicePort) error {
	switch {
	case ip.IsLoopback() || ip.IsUnspecified() || ip.IsMulticast() || ip.IsLinkLocalUnicast():
		return fmt.Errorf("a loopback, unspecified, multicast or link-local address: %w", errServiceIP)
	}
	for _, r := range g.reserved {
		if r.prefix.Contains(ip) {
			return fmt.Errorf("inside the %s %s: %w", r.name, r.prefix, errServiceIP)
		}
	}
	if !g.hostAddrs[ip] {
		return nil
	}
	if g.readListening != nil {
		l, err := g.readListening()
		if err != nil {
			return err
		}
		g.listening, g.readListening = l, nil
	}
	for _, p := range ports {
		proto := portProtocol(p)
		bound := g.listening[proto]
		for _, a := range []netip.AddrPort{netip.AddrPortFrom(ip, uint16(p.Port)), netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(p.Port))} {
			if bound[a] {
				return fmt.Errorf("this host's own address, and %s port %d is taken (%s): %w", proto, p.Port, a, errHostListener)
			}
		}
	}
	return nil
}
