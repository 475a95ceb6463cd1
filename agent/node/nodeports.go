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
// NodePort or LoadBalancer Service with a node port, on its IPv4 ClusterIP, or for
// externalTrafficPolicy Local on this node's ready endpoints (found by the port's name).
func nodePorts(node string, svcs []*corev1.Service, slicesOf func(*corev1.Service) []*discoveryv1.EndpointSlice) []hostnet.NodePort {
	var out []hostnet.NodePort
	for _, svc := range svcs {
		ip, ok := clusterIPv4(svc)
		if !ok {
			continue
		}
		local := svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
		for _, p := range svc.Spec.Ports {
			if p.NodePort <= 0 || p.NodePort > 65535 {
				continue
			}
			proto := strings.ToLower(string(p.Protocol))
			if proto == "" {
				proto = "tcp"
			}
			np := hostnet.NodePort{Protocol: proto, Port: uint16(p.NodePort), LocalOnly: local}
			if local {
				np.Local = localEndpoints(node, p, slicesOf(svc))
			} else {
				np.ClusterIP = netip.AddrPortFrom(ip, uint16(p.Port))
			}
			out = append(out, np)
		}
	}
	slices.SortFunc(out, func(a, b hostnet.NodePort) int {
		if c := strings.Compare(a.Protocol, b.Protocol); c != 0 {
			return c
		}
		return int(a.Port) - int(b.Port)
	})
	return out
}

func clusterIPv4(svc *corev1.Service) (netip.Addr, bool) {
	if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return netip.Addr{}, false
	}
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 {
		ips = []string{svc.Spec.ClusterIP}
	}
	for _, s := range ips {
		if a, err := netip.ParseAddr(s); err == nil && a.Unmap().Is4() {
			return a.Unmap(), true
		}
	}
	return netip.Addr{}, false
}

// localEndpoints are the ready IPv4 endpoints on this node for the Service port, sorted.
func localEndpoints(node string, port corev1.ServicePort, eps []*discoveryv1.EndpointSlice) []netip.AddrPort {
	var out []netip.AddrPort
	for _, slice := range eps {
		if slice.AddressType != discoveryv1.AddressTypeIPv4 {
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
			if ep.NodeName == nil || *ep.NodeName != node || len(ep.Addresses) == 0 || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
				continue
			}
			if a, err := netip.ParseAddr(ep.Addresses[0]); err == nil && a.Is4() {
				out = append(out, netip.AddrPortFrom(a, target))
			}
		}
	}
	slices.SortFunc(out, func(a, b netip.AddrPort) int { return a.Compare(b) })
	return slices.Compact(out)
}
