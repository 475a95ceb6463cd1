package node

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/edgeovn/edgeovn/agent/node/svchealth"
)

// healthChecks are the health checks this host answers without kube-proxy: one per
// LoadBalancer Service with externalTrafficPolicy Local and a healthCheckNodePort (the API
// server allocates it for exactly those), counting the distinct ready IPv4 endpoints on this
// node as kube-proxy does (an address serving two ports counts once).
func healthChecks(node string, svcs []*corev1.Service, slicesOf func(*corev1.Service) []*discoveryv1.EndpointSlice) []svchealth.Service {
	var out []svchealth.Service
	for _, svc := range svcs {
		p := svc.Spec.HealthCheckNodePort
		if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal || p <= 0 || p > 65535 {
			continue
		}
		out = append(out, svchealth.Service{Namespace: svc.Namespace, Name: svc.Name, Port: uint16(p),
			LocalEndpoints: localReadyAddrs(node, slicesOf(svc))})
	}
	return out
}

func localReadyAddrs(node string, slices []*discoveryv1.EndpointSlice) int {
	seen := map[netip.Addr]bool{}
	for _, slice := range slices {
		if slice.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		for _, ep := range slice.Endpoints {
			if ep.NodeName == nil || *ep.NodeName != node || len(ep.Addresses) == 0 || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
				continue
			}
			if a, err := netip.ParseAddr(ep.Addresses[0]); err == nil {
				seen[a] = true
			}
		}
	}
	return len(seen)
}
