package config

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/edgeovn/edgeovn/ipam/netfamily"
)

// Kube-OVN's IPv6 join network, taken when the cluster has IPv6 and --join-cidr gives none.
var defaultJoinV6 = netip.MustParsePrefix("fd00:100:64::/112")

// defaultJoinV4 is Default's join network, replaced by defaultJoinV6 in an IPv6-only cluster.
var defaultJoinV4 = netip.MustParsePrefix("100.64.0.0/16")

// minIPv6Bits is the longest IPv6 prefix taken for the pod and join networks: /120, 256
// addresses (Kube-OVN's join default is /112).
const minIPv6Bits = 120

// ParseFamilies reads k3s's dual-stack form, "10.42.0.0/16,2001:cafe:42::/56": one prefix,
// or two of different families, returned IPv4 first, host bits cleared (ipam/netfamily, the
// validator Subnets share).
func ParseFamilies(s string) ([]netip.Prefix, error) {
	written, err := netfamily.Prefixes("value", s)
	if err != nil {
		return nil, err
	}
	ps, _ := netfamily.Sort(written, nil)
	return ps, nil
}

// familiesOf names the families of ps, "IPv4", "IPv6" or "IPv4,IPv6".
func familiesOf(ps []netip.Prefix) string { return netfamily.Families(ps) }

// validateNetworks checks the pod and join networks and fills what derives from them: masked
// prefixes, the gateways, and the IPv6 join network of a cluster with IPv6.
func (c *Config) validateNetworks() []error {
	if !c.ClusterCIDR.IsValid() {
		errs := []error{errors.New("cluster-cidr: not set")}
		if !c.JoinCIDR.IsValid() {
			errs = append(errs, errors.New("join-cidr: not set"))
		}
		return errs
	}
	errs := checkPair("cluster-cidr", &c.ClusterCIDR, &c.ClusterCIDRDual)
	errs = append(errs, c.fillGateways()...)
	if !c.JoinCIDR.IsValid() {
		return append(errs, errors.New("join-cidr: not set"))
	}
	c.defaultJoin()
	errs = append(errs, checkPair("join-cidr", &c.JoinCIDR, &c.JoinCIDRDual)...)
	cluster, join := c.ClusterCIDRs(), c.JoinCIDRs()
	if familiesOf(cluster) != familiesOf(join) {
		errs = append(errs, fmt.Errorf("join-cidr %s: families %s disagree with cluster-cidr's %s",
			prefixList(join), familiesOf(join), familiesOf(cluster)))
	}
	for _, j := range join {
		for _, p := range cluster {
			if j.Overlaps(p) {
				errs = append(errs, fmt.Errorf("join-cidr %s: overlaps cluster-cidr %s", j, p))
			}
		}
	}
	return errs
}

// checkPair masks a flag's prefixes and checks them: IPv4 first, families different, an
// IPv6 prefix not too small.
func checkPair(flag string, first, dual *netip.Prefix) []error {
	*first = first.Masked()
	var errs []error
	if dual.IsValid() {
		*dual = dual.Masked()
		if first.Addr().Is4() == dual.Addr().Is4() || !first.Addr().Is4() {
			errs = append(errs, fmt.Errorf("%s %s,%s: want one IPv4 and one IPv6 prefix", flag, *first, *dual))
		}
	}
	for _, p := range both(*first, *dual) {
		if p.Addr().Is6() && p.Bits() > minIPv6Bits {
			errs = append(errs, fmt.Errorf("%s %s: IPv6 prefix too small, want /%d or shorter (at least 256 addresses)", flag, p, minIPv6Bits))
		}
	}
	return errs
}

// fillGateways gives each cluster prefix its gateway (default: its first address) and checks
// that each is inside its prefix.
func (c *Config) fillGateways() []error {
	var errs []error
	if c.ClusterCIDRDual.IsValid() && c.ClusterGateway.Is6() && !c.ClusterGatewayDual.IsValid() {
		c.ClusterGateway, c.ClusterGatewayDual = netip.Addr{}, c.ClusterGateway // only the IPv6 one given
	}
	if !c.ClusterGateway.IsValid() {
		c.ClusterGateway = c.ClusterCIDR.Addr().Next()
	}
	if err := netfamily.CheckGateway("cluster-gateway", "cluster-cidr", c.ClusterCIDR, c.ClusterGateway); err != nil {
		errs = append(errs, err)
	}
	switch {
	case !c.ClusterCIDRDual.IsValid() && c.ClusterGatewayDual.IsValid():
		errs = append(errs, fmt.Errorf("cluster-gateway %s: cluster-cidr %s has no prefix of its family", c.ClusterGatewayDual, c.ClusterCIDR))
	case !c.ClusterCIDRDual.IsValid():
	case !c.ClusterGatewayDual.IsValid():
		c.ClusterGatewayDual = c.ClusterCIDRDual.Masked().Addr().Next()
	default:
		if err := netfamily.CheckGateway("cluster-gateway", "cluster-cidr", c.ClusterCIDRDual, c.ClusterGatewayDual); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// defaultJoin gives the join network the cluster's IPv6: Kube-OVN's fd00:100:64::/112 beside
// the IPv4 join of a dual-stack cluster, and in place of the default IPv4 one in an IPv6-only
// cluster. A join network the user gave with other families is left for the check to refuse.
func (c *Config) defaultJoin() {
	switch {
	case c.ClusterCIDRDual.IsValid() && !c.JoinCIDRDual.IsValid() && c.JoinCIDR.Addr().Is4():
		c.JoinCIDRDual = defaultJoinV6
	case c.ClusterCIDR.Addr().Is6() && !c.ClusterCIDRDual.IsValid() && c.JoinCIDR == defaultJoinV4 && !c.JoinCIDRDual.IsValid():
		c.JoinCIDR = defaultJoinV6
	}
}

func prefixList(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// dualPrefixFlag binds a flag in k3s's form ("v4", "v6" or "v4,v6") to a pair of fields:
// the first (IPv4 when there are two) and the dual (IPv6, or invalid).
type dualPrefixFlag struct{ first, dual *netip.Prefix }

func (f dualPrefixFlag) String() string {
	if f.first == nil || !f.first.IsValid() {
		return ""
	}
	return prefixList(both(*f.first, *f.dual))
}

func (f dualPrefixFlag) Set(s string) error {
	ps, err := ParseFamilies(s)
	if err != nil {
		return err
	}
	*f.first, *f.dual = ps[0], netip.Prefix{}
	if len(ps) == 2 {
		*f.dual = ps[1]
	}
	return nil
}

// dualAddrFlag is dualPrefixFlag for addresses: "10.42.0.1,2001:cafe:42::1".
type dualAddrFlag struct{ first, dual *netip.Addr }

func (f dualAddrFlag) String() string {
	if f.first == nil || !f.first.IsValid() {
		return ""
	}
	if !f.dual.IsValid() {
		return f.first.String()
	}
	return f.first.String() + "," + f.dual.String()
}

func (f dualAddrFlag) Set(s string) error {
	var as []netip.Addr
	for _, x := range strings.Split(s, ",") {
		a, err := netip.ParseAddr(strings.TrimSpace(x))
		if err != nil {
			return err
		}
		as = append(as, a)
	}
	switch {
	case len(as) > 2:
		return fmt.Errorf("%d addresses: at most one per family", len(as))
	case len(as) == 2 && as[0].Is4() == as[1].Is4():
		return fmt.Errorf("%s and %s are of one family: at most one per family", as[0], as[1])
	case len(as) == 2 && as[0].Is6():
		as[0], as[1] = as[1], as[0]
	}
	*f.first, *f.dual = as[0], netip.Addr{}
	if len(as) == 2 {
		*f.dual = as[1]
	}
	return nil
}
