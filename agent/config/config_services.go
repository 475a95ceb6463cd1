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
	networks := c.networks()
	for _, n := range networks {
		if err := subnetcheck.Check([]netip.Prefix{n.p}, nil); n.p.IsValid() && err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.flag, err))
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
		for _, n := range networks {
			if n.p.IsValid() && p.Overlaps(n.p) {
				errs = append(errs, fmt.Errorf("service-cidr %s: overlaps %s %s", p, n.flag, n.p))
			}
		}
	}
	return errs
}

// flagPrefix is one prefix of the pod or join network, with the flag that gives it.
type flagPrefix struct {
	flag string
	p    netip.Prefix
}

// networks are the pod and join networks' prefixes, each with its flag.
func (c *Config) networks() []flagPrefix {
	var out []flagPrefix
	for _, p := range c.ClusterCIDRs() {
		out = append(out, flagPrefix{"cluster-cidr", p})
	}
	for _, p := range c.JoinCIDRs() {
		out = append(out, flagPrefix{"join-cidr", p})
	}
	return out
}
