package services

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// localOnly reports internalTrafficPolicy Local: a client reaches only endpoints on its own
// node, and none when its node has none (kube-proxy drops such traffic).
func localOnly(svc *corev1.Service) bool {
	p := svc.Spec.InternalTrafficPolicy
	return p != nil && *p == corev1.ServiceInternalTrafficPolicyLocal
}

// templatePrefix is the prefix of every template variable of one Service.
func templatePrefix(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return "eovn_" + hex.EncodeToString(sum[:6]) + "_"
}

// desiredLocal is an internalTrafficPolicy Local Service as template load balancers (one
// per protocol and family: a template names its family), whose VIPs' backends are a
// template variable that each chassis (node) sets to its own endpoints, "" where it has
// none. Any other Service wants no variables.
func desiredLocal(svc *corev1.Service, slices []*discoveryv1.EndpointSlice, nodes []string) ([]northbound.LoadBalancerSpec, northbound.TemplateVars) {
	owner := serviceOwner(svc)
	vars := northbound.TemplateVars{Prefix: templatePrefix(owner.Name)}
	if !servesLoadBalancers(svc) || !localOnly(svc) {
		return nil, vars
	}
	vars.Values = map[string]map[string]string{}
	for _, n := range nodes {
		vars.Values[n] = map[string]string{}
	}
	specs := map[string]*northbound.LoadBalancerSpec{}
	var order []string
	for _, port := range svc.Spec.Ports {
		proto := port.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		for _, ip := range clusterIPs(svc) {
			family := map[bool]string{true: "ipv4", false: "ipv6"}[ip.Is4()]
			name := loadBalancerName(owner.Name, proto) + ":local-" + family
			spec := specs[name]
			if spec == nil {
				opts := lbOptions(svc)
				opts["template"], opts["address-family"] = "true", family
				spec = &northbound.LoadBalancerSpec{Name: name, Protocol: lbProtocol(proto), Options: opts,
					Templates: map[netip.AddrPort]string{}, Owner: owner}
				specs[name] = spec
				order = append(order, name)
			}
			vip := netip.AddrPortFrom(ip, uint16(port.Port))
			v := templateVar(vars.Prefix, proto, vip)
			spec.Templates[vip] = v
			for _, n := range nodes {
				eps := backends(slices, backendQuery{family4: ip.Is4(), portName: port.Name, proto: proto, node: n})
				vars.Values[n][v] = joinBackends(eps)
			}
		}
	}
	out := make([]northbound.LoadBalancerSpec, 0, len(order))
	for _, name := range order {
		out = append(out, *specs[name])
	}
	return out, vars
}

func templateVar(prefix string, proto corev1.Protocol, vip netip.AddrPort) string {
	h := fnv.New32a()
	h.Write([]byte(string(proto) + "/" + vip.String()))
	return prefix + hex.EncodeToString(h.Sum(nil))
}

func joinBackends(eps []netip.AddrPort) string {
	s := make([]string, len(eps))
	for i, e := range eps {
		s[i] = e.String()
	}
	return strings.Join(s, ",")
}
