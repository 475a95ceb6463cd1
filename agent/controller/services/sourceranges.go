package services

import (
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/agent/sourceranges"
)

// ReasonSourceRangeInvalid is the Warning Event on a LoadBalancer Service with a source range
// entry that does not parse; the other entries stay in force.
const ReasonSourceRangeInvalid = "SourceRangeInvalid"

// servedExternal are svc's external VIPs for pods' load balancers; the refused addresses and
// the source range entries that do not parse are reported.
func (s *Controller) servedExternal(svc *corev1.Service) []netip.Addr {
	external, refused := externalVIPs(svc, s.req.Reserved)
	s.report(svc, append(refused, sourceranges.Of(svc).Bad...))
	return podVIPs(svc, external, s.req.PodNetworks)
}

// podVIPs are the external VIPs pods reach through OVN: all of them but the LoadBalancer IPs
// whose source ranges (loadBalancerSourceRanges) leave some pod network out. OVN's load
// balancer cannot filter by source, so such an address is left to the route out of the
// cluster: a pod's packet to it reaches its host, whose serviceips chain serves or drops it
// by the same ranges, as kube-proxy's firewall would. External IPs are never restricted.
func podVIPs(svc *corev1.Service, vips []netip.Addr, podNets []netip.Prefix) []netip.Addr {
	r := sourceranges.Of(svc)
	if !r.Restricted {
		return vips
	}
	return slices.DeleteFunc(slices.Clone(vips), func(ip netip.Addr) bool {
		return !isExternalIP(svc, ip) && !coversFamily(r.Prefixes, podNets, ip.Is4())
	})
}

// coversFamily: every pod network of the family lies inside one of the ranges.
func coversFamily(ranges, podNets []netip.Prefix, v4 bool) bool {
	for _, n := range podNets {
		if n.Addr().Is4() != v4 {
			continue
		}
		if !slices.ContainsFunc(ranges, func(r netip.Prefix) bool { return r.Bits() <= n.Bits() && r.Contains(n.Addr()) }) {
			return false
		}
	}
	return true
}

func isExternalIP(svc *corev1.Service, ip netip.Addr) bool {
	return slices.ContainsFunc(svc.Spec.ExternalIPs, func(s string) bool {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		return err == nil && a.Unmap() == ip
	})
}
