package config

import (
	"fmt"
	"net/netip"

	"github.com/edgeovn/edgeovn/agent/subnetcheck"
)

// Values of Config.KubeProxy.
const (
	KubeProxyAuto    = "auto"
	KubeProxyPresent = "present"
	KubeProxyAbsent  = "absent"
)

// validateServices checks the Service options: ranges of one address each per family,
// clear of the pod and join networks, and a known kube-proxy mode; and the pod and join
// networks clear of the special ranges (subnetcheck).
func (c *Config) validateServices() []error {
	var errs []error
	switch c.KubeProxy {
	case KubeProxyAuto, KubeProxyPresent, KubeProxyAbsent:
	default:
		errs = append(errs, fmt.Errorf("kube-proxy %q: want auto, present or absent", c.KubeProxy))
	}
	if c.Services && len(c.ServiceCIDRs) == 0 {
		errs = append(errs, fmt.Errorf("service-cidr: none given while services are on"))
	}
	for name, p := range map[string]netip.Prefix{"cluster-cidr": c.ClusterCIDR, "join-cidr": c.JoinCIDR} {
		if err := subnetcheck.Check([]netip.Prefix{p}, nil); p.IsValid() && err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	seen := map[bool]bool{}
	for i, p := range c.ServiceCIDRs {
		if !p.IsValid() {
			errs = append(errs, fmt.Errorf("service-cidr %d: invalid", i))
			continue
		}
		p = p.Masked()
		c.ServiceCIDRs[i] = p
		if seen[p.Addr().Is4()] {
			errs = append(errs, fmt.Errorf("service-cidr %s: a second range of the same family", p))
		}
		seen[p.Addr().Is4()] = true
		for name, other := range map[string]netip.Prefix{"cluster-cidr": c.ClusterCIDR, "join-cidr": c.JoinCIDR} {
			if other.IsValid() && p.Overlaps(other) {
				errs = append(errs, fmt.Errorf("service-cidr %s: overlaps %s %s", p, name, other))
			}
		}
	}
	return errs
}
