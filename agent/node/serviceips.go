package node

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/edgeovn/edgeovn/agent/node/hostnet"
	"github.com/edgeovn/edgeovn/agent/sourceranges"
)

// serviceIPsRequest is what serviceIPs reads: the Services, their EndpointSlices, and the
// check that refuses an address for a Service (nil accepts every address).
type serviceIPsRequest struct {
	Node     string
	Services []*corev1.Service
	Slices   func(*corev1.Service) []*discoveryv1.EndpointSlice
	Refuse   func(ip netip.Addr, ports []corev1.ServicePort) error
}

// refusedIP is an address refused for one Service, and why.
type refusedIP struct {
	Service *corev1.Service
	IP      netip.Addr
	Err     error
}

// serviceIPs are the external IPs (spec.externalIPs) and LoadBalancer IPs
// (status.loadBalancer.ingress[].ip) this host serves when kube-proxy does not, as kube-proxy
// takes them: IPv4 ones, every port on each, ingress entries with ipMode Proxy skipped (the
// load balancer proxies itself and sends to the node ports). A Service without an IPv4
// ClusterIP has nothing to send to. An address Refuse rejects is left out for that Service
// only, and reported. A LoadBalancer IP (not an external IP: kube-proxy's firewall is the
// load balancer's) of a Service with source ranges serves only those (sourceranges; entries
// that do not parse are left out, the controller reports them).
func serviceIPs(req serviceIPsRequest) ([]hostnet.ServiceIP, []refusedIP) {
	var out []hostnet.ServiceIP
	var refused []refusedIP
	for _, svc := range req.Services {
		cip, ok := anyClusterIPv4(svc)
		if !ok {
			continue
		}
		local := svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
		ranges := sourceranges.Of(svc)
		for _, ip := range externalAddrs(svc) {
			if req.Refuse != nil {
				if err := req.Refuse(ip, svc.Spec.Ports); err != nil {
					refused = append(refused, refusedIP{Service: svc, IP: ip, Err: fmt.Errorf("%s %s: %w", ipField(svc, ip), ip, err)})
					continue
				}
			}
			for _, p := range svc.Spec.Ports {
				s := hostnet.ServiceIP{Protocol: portProtocol(p), IP: netip.AddrPortFrom(ip, uint16(p.Port)),
					ClusterIP: netip.AddrPortFrom(cip, uint16(p.Port)), LocalOnly: local}
				if ranges.Restricted && ipField(svc, ip) == "LoadBalancer IP" {
					s.Restricted, s.AllowFrom = true, ranges.IPv4()
				}
				if local {
					s.Local = localEndpoints(req.Node, p, req.Slices(svc), false)
				}
				out = append(out, s)
			}
		}
	}
	slices.SortFunc(out, func(a, b hostnet.ServiceIP) int {
		if c := a.IP.Compare(b.IP); c != 0 {
			return c
		}
		return strings.Compare(a.Protocol, b.Protocol)
	})
	return slices.CompactFunc(out, func(a, b hostnet.ServiceIP) bool { return a.IP == b.IP && a.Protocol == b.Protocol }), refused
}

// externalAddrs are the Service's IPv4 external and LoadBalancer (VIP mode) addresses, each
// once, in the order given.
func externalAddrs(svc *corev1.Service) []netip.Addr {
	raw := slices.Clone(svc.Spec.ExternalIPs)
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if ing.IP != "" && (ing.IPMode == nil || *ing.IPMode == corev1.LoadBalancerIPModeVIP) {
			raw = append(raw, ing.IP)
		}
	}
	var out []netip.Addr
	for _, s := range raw {
		if a, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil && a.Unmap().Is4() && !slices.Contains(out, a.Unmap()) {
			out = append(out, a.Unmap())
		}
	}
	return out
}

// anyClusterIPv4 is the Service's IPv4 ClusterIP, whatever its type (external IPs are
// allowed on ClusterIP Services too); none for headless and ExternalName Services.
func anyClusterIPv4(svc *corev1.Service) (netip.Addr, bool) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
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

func portProtocol(p corev1.ServicePort) string {
	if p.Protocol == "" {
		return "tcp"
	}
	return strings.ToLower(string(p.Protocol))
}

// ipField names where the Service gives the address, for a refusal's message.
func ipField(svc *corev1.Service, ip netip.Addr) string {
	for _, s := range svc.Spec.ExternalIPs {
		if a, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil && a.Unmap() == ip {
			return "external IP"
		}
	}
	return "LoadBalancer IP"
}
