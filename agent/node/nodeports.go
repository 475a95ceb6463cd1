package node

import (
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/edgeovn/edgeovn/agent/node/hostnet"
)

// nodePorts are the NodePorts this host serves when kube-proxy does not: every port of a
// NodePort or LoadBalancer Service with a node port, once per family of its ClusterIPs (a
// dual-stack Service's port answers on the host's IPv4 and IPv6 addresses), on that family's
// ClusterIP, or for externalTrafficPolicy Local on this node's ready endpoints of that family
// (found by the port's name). A Cluster port whose ready endpoints of the family are all the
// host's own addresses (hostNetwork pods here) goes straight to them, as kube-proxy's DNAT
// does: sent to the ClusterIP through ovn0, OVN would hand the connection back to the host
// from the host's own join address, which the kernel drops as a martian, and the reply would
// not pass OVN to be un-NATed.
func nodePorts(node string, svcs []*corev1.Service, slicesOf func(*corev1.Service) []*discoveryv1.EndpointSlice, hostAddrs map[netip.Addr]bool) []hostnet.NodePort {
	var out []hostnet.NodePort
	for _, svc := range svcs {
		if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			continue
		}
		local := svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
		for _, ip := range serviceClusterIPs(svc) {
			for _, p := range svc.Spec.Ports {
				if p.NodePort <= 0 || p.NodePort > 65535 {
					continue
				}
				proto := strings.ToLower(string(p.Protocol))
				if proto == "" {
					proto = "tcp"
				}
				np := hostnet.NodePort{Protocol: proto, Port: uint16(p.NodePort), LocalOnly: local, IPv6: ip.Is6()}
				if local {
					np.Local = localEndpoints(node, p, slicesOf(svc), ip.Is6())
				} else {
					np.ClusterIP = netip.AddrPortFrom(ip, uint16(p.Port))
					if eps := localEndpoints("", p, slicesOf(svc), ip.Is6()); len(eps) > 0 && allHost(eps, hostAddrs) {
						np.Local = eps
					}
				}
				out = append(out, np)
			}
		}
	}
	slices.SortFunc(out, func(a, b hostnet.NodePort) int {
		if a.IPv6 != b.IPv6 {
			return map[bool]int{false: -1, true: 1}[a.IPv6]
		}
		if c := strings.Compare(a.Protocol, b.Protocol); c != 0 {
			return c
		}
		return int(a.Port) - int(b.Port)
	})
	return out
}

// serviceClusterIPs are the Service's ClusterIPs, at most one per family, in its order.
func serviceClusterIPs(svc *corev1.Service) []netip.Addr {
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 {
		ips = []string{svc.Spec.ClusterIP}
	}
	var out []netip.Addr
	for _, s := range ips {
		a, err := netip.ParseAddr(s)
		if err != nil {
			continue
		}
		a = a.Unmap()
		if !slices.ContainsFunc(out, func(b netip.Addr) bool { return b.Is4() == a.Is4() }) {
			out = append(out, a)
		}
	}
	return out
}

// hostClusterIPs are the ClusterIP ports whose ready endpoints of the family are all the
// host's own addresses (hostNetwork pods here): the host reaches them directly (hostnet's
// ServiceIP.Host), not through OVN, which would hand the connection back to the host from
// its own join address.
func hostClusterIPs(svcs []*corev1.Service, slicesOf func(*corev1.Service) []*discoveryv1.EndpointSlice, hostAddrs map[netip.Addr]bool) []hostnet.ServiceIP {
	var out []hostnet.ServiceIP
	for _, svc := range svcs {
		for _, ip := range serviceClusterIPs(svc) {
			for _, p := range svc.Spec.Ports {
				proto := strings.ToLower(string(p.Protocol))
				if proto == "" {
					proto = "tcp"
				}
				eps := localEndpoints("", p, slicesOf(svc), ip.Is6())
				if len(eps) == 0 || !allHost(eps, hostAddrs) || p.Port <= 0 || p.Port > 65535 {
					continue
				}
				vip := netip.AddrPortFrom(ip, uint16(p.Port))
				out = append(out, hostnet.ServiceIP{Protocol: proto, IP: vip, ClusterIP: vip, Local: eps, LocalOnly: true, Host: true})
			}
		}
	}
	return out
}

// allHost reports whether every endpoint is one of the host's own addresses.
func allHost(eps []netip.AddrPort, hostAddrs map[netip.Addr]bool) bool {
	for _, ep := range eps {
		if !hostAddrs[ep.Addr()] {
			return false
		}
	}
	return true
}

// localEndpoints are the ready endpoints of one family on this node (any node when node is
// "") for the Service port, sorted.
func localEndpoints(node string, port corev1.ServicePort, eps []*discoveryv1.EndpointSlice, v6 bool) []netip.AddrPort {
	want := discoveryv1.AddressTypeIPv4
	if v6 {
		want = discoveryv1.AddressTypeIPv6
	}
	var out []netip.AddrPort
	for _, slice := range eps {
		if slice.AddressType != want {
			continue
		}
		target := uint16(0)
		for _, sp := range slice.Ports {
			if (sp.Name == nil && port.Name == "" || sp.Name != nil && *sp.Name == port.Name) && sp.Port != nil {
				target = uint16(*sp.Port)
			}
		}
		if target == 0 {
			continue
		}
		for _, ep := range slice.Endpoints {
			if node != "" && (ep.NodeName == nil || *ep.NodeName != node) || len(ep.Addresses) == 0 || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
				continue
			}
			if a, err := netip.ParseAddr(ep.Addresses[0]); err == nil && !a.Is4In6() && a.Is6() == v6 {
				out = append(out, netip.AddrPortFrom(a, target))
			}
		}
	}
	slices.SortFunc(out, func(a, b netip.AddrPort) int { return a.Compare(b) })
	return slices.Compact(out)
}
