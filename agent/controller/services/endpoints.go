package services

import (
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// backendQuery selects the endpoints of one Service port in one address family.
type backendQuery struct {
	family4  bool
	portName string
	proto    corev1.Protocol
	node     string // set: only endpoints on this node (internalTrafficPolicy Local)
}

// backends are the endpoints kube-proxy would send the port's traffic to: the ready ones
// or, when none is ready, the serving ones that are terminating (so connections drain
// during a rollout instead of failing). Sorted and without duplicates (several slices may
// list one endpoint).
func backends(eps []*discoveryv1.EndpointSlice, q backendQuery) []netip.AddrPort {
	var ready, terminating []netip.AddrPort
	for _, slice := range eps {
		if (slice.AddressType == discoveryv1.AddressTypeIPv4) != q.family4 || slice.AddressType == discoveryv1.AddressTypeFQDN {
			continue
		}
		port, ok := slicePort(slice, q)
		if !ok {
			continue
		}
		for _, ep := range slice.Endpoints {
			if len(ep.Addresses) == 0 || q.node != "" && (ep.NodeName == nil || *ep.NodeName != q.node) {
				continue
			}
			a, err := netip.ParseAddr(ep.Addresses[0])
			if err != nil || a.Unmap().Is4() != q.family4 {
				continue
			}
			ap := netip.AddrPortFrom(a.Unmap(), port)
			switch {
			case isReady(ep.Conditions):
				ready = append(ready, ap)
			case isServing(ep.Conditions) && isTerminating(ep.Conditions):
				terminating = append(terminating, ap)
			}
		}
	}
	out := ready
	if len(out) == 0 {
		out = terminating
	}
	slices.SortFunc(out, func(a, b netip.AddrPort) int { return a.Compare(b) })
	return slices.Compact(out)
}

// slicePort is the slice's port number for the Service port (matched by name and protocol).
func slicePort(slice *discoveryv1.EndpointSlice, q backendQuery) (uint16, bool) {
	for _, p := range slice.Ports {
		name, proto := "", corev1.ProtocolTCP
		if p.Name != nil {
			name = *p.Name
		}
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		if name == q.portName && proto == q.proto && p.Port != nil && *p.Port > 0 && *p.Port < 65536 {
			return uint16(*p.Port), true
		}
	}
	return 0, false
}

// The endpoint conditions as the EndpointSlice API defines their defaults: ready unless
// said otherwise, serving like ready when unset, terminating only when said.
func isReady(c discoveryv1.EndpointConditions) bool { return c.Ready == nil || *c.Ready }

func isServing(c discoveryv1.EndpointConditions) bool {
	if c.Serving == nil {
		return isReady(c)
	}
	return *c.Serving
}

func isTerminating(c discoveryv1.EndpointConditions) bool {
	return c.Terminating != nil && *c.Terminating
}
