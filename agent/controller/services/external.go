package services

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/agent/subnetcheck"
)

// ReasonServiceIPRefused is the Warning Event on a Service with an external or LoadBalancer
// IP edgeovn will not serve (the node role uses the same reason for its own refusals).
const ReasonServiceIPRefused = "ServiceIPRefused"

// ErrServiceIPRefused is what every refused address wraps.
var ErrServiceIPRefused = errors.New("not served")

// externalVIPs are the Service's external IPs (spec.externalIPs) and LoadBalancer IPs
// (status.loadBalancer.ingress[].ip, ipMode VIP or unset; Proxy is the load balancer's own
// proxy, as kube-proxy 1.30+ takes it), each once, in the order given: pods reach them
// through OVN as they reach the ClusterIP. An address in a special range or one of reserved
// (the pod, join and service networks: a VIP there would capture traffic to pods or
// ClusterIPs) is refused, with the reason.
func externalVIPs(svc *corev1.Service, reserved []subnetcheck.Reserved) ([]netip.Addr, []error) {
	type addr struct {
		ip    netip.Addr
		field string
	}
	var raw []addr
	for _, s := range svc.Spec.ExternalIPs {
		if a, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil {
			raw = append(raw, addr{a.Unmap(), "external IP"})
		}
	}
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(ing.IP); err == nil && (ing.IPMode == nil || *ing.IPMode == corev1.LoadBalancerIPModeVIP) {
			raw = append(raw, addr{a.Unmap(), "LoadBalancer IP"})
		}
	}
	var out []netip.Addr
	var refused []error
	for _, a := range raw {
		if slices.Contains(out, a.ip) {
			continue
		}
		err := subnetcheck.Check([]netip.Prefix{netip.PrefixFrom(a.ip, a.ip.BitLen())}, reserved)
		var c *subnetcheck.Conflict
		if errors.As(err, &c) {
			refused = append(refused, fmt.Errorf("%s %s: inside %s %s: %w", a.field, a.ip, c.With.What, c.With.Prefix, ErrServiceIPRefused))
			continue
		}
		out = append(out, a.ip)
	}
	return out, refused
}
