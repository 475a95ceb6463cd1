package services

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// defaultAffinityTimeout is Kubernetes' default sessionAffinityConfig.clientIP.timeoutSeconds.
const defaultAffinityTimeout = 10800

// serviceOwner is the owner of a Service's load balancers ("namespace/name").
func serviceOwner(svc *corev1.Service) northbound.OwnerRef {
	return northbound.OwnerRef{Kind: ovn.KindService, Name: svc.Namespace + "/" + svc.Name}
}

// servesLoadBalancers reports whether edgeovn programs the Service: headless and ExternalName
// Services have no virtual IP to balance.
func servesLoadBalancers(svc *corev1.Service) bool {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return false
	}
	return svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone
}

// desiredLoadBalancers is the Service as OVN load balancers, one per protocol: each
// ClusterIP and port a VIP whose backends are the endpoints kube-proxy would use. A VIP
// without endpoints stays, with no backends, and rejects (options:reject), so a client is
// told at once instead of waiting for a black hole. An unserved Service wants nothing.
// The external and LoadBalancer IPs (externalVIPs, accepted ones) are VIPs of the same load
// balancers with the same backends: a pod's traffic to them is internal, so every endpoint
// serves it whatever the externalTrafficPolicy (kube-proxy's short circuit). The ClusterIPs
// of an internalTrafficPolicy Local Service are desiredLocal's; its external VIPs stay here.
func desiredLoadBalancers(svc *corev1.Service, slices []*discoveryv1.EndpointSlice, external []netip.Addr) []northbound.LoadBalancerSpec {
	if !servesLoadBalancers(svc) {
		return nil
	}
	vips := external
	if !localOnly(svc) {
		vips = append(clusterIPs(svc), external...)
	}
	owner := serviceOwner(svc)
	byProto := map[corev1.Protocol]*northbound.LoadBalancerSpec{}
	var out []northbound.LoadBalancerSpec
	for _, port := range svc.Spec.Ports {
		proto := port.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		spec := byProto[proto]
		if spec == nil {
			spec = &northbound.LoadBalancerSpec{Name: loadBalancerName(owner.Name, proto), Protocol: lbProtocol(proto),
				VIPs: map[netip.AddrPort][]netip.AddrPort{}, Options: lbOptions(svc), Owner: owner}
			byProto[proto] = spec
		}
		for _, ip := range vips {
			vip := netip.AddrPortFrom(ip, uint16(port.Port))
			spec.VIPs[vip] = backends(slices, backendQuery{family4: ip.Is4(), portName: port.Name, proto: proto})
		}
	}
	for _, proto := range []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP} {
		if s := byProto[proto]; s != nil && len(s.VIPs) > 0 {
			out = append(out, *s)
		}
	}
	return out
}

// loadBalancerName is "svc:<namespace>/<name>:<protocol>".
func loadBalancerName(owner string, proto corev1.Protocol) string {
	return "svc:" + owner + ":" + strings.ToLower(string(proto))
}

func lbProtocol(p corev1.Protocol) nbdb.LoadBalancerProtocol {
	switch p {
	case corev1.ProtocolUDP:
		return nbdb.LoadBalancerProtocolUDP
	case corev1.ProtocolSCTP:
		return nbdb.LoadBalancerProtocolSCTP
	}
	return nbdb.LoadBalancerProtocolTCP
}

// lbOptions: reject when a VIP has no backends; ClientIP affinity with its timeout.
func lbOptions(svc *corev1.Service) map[string]string {
	opts := map[string]string{"reject": "true", "event": "false"}
	if svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		timeout := int32(defaultAffinityTimeout)
		if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
			timeout = *c.ClientIP.TimeoutSeconds
		}
		opts["affinity_timeout"] = strconv.Itoa(int(timeout))
	}
	return opts
}

// clusterIPs are the Service's virtual IPs (one per family when dual stack).
func clusterIPs(svc *corev1.Service) []netip.Addr {
	raw := svc.Spec.ClusterIPs
	if len(raw) == 0 {
		raw = []string{svc.Spec.ClusterIP}
	}
	var out []netip.Addr
	for _, s := range raw {
		if a, err := netip.ParseAddr(s); err == nil && !slices.Contains(out, a.Unmap()) {
			out = append(out, a.Unmap())
		}
	}
	return out
}
