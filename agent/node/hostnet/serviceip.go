package hostnet

import (
	"fmt"
	"net/netip"
	"strings"
)

// ServiceIP is one Service port served on an external IP (spec.externalIPs) or a
// LoadBalancer IP (status.loadBalancer.ingress) without kube-proxy. The address need not be
// the host's own: traffic reaches the host because a router, MetalLB's ARP or BGP speaker, or
// the user sends it here. Traffic arriving from outside: with LocalOnly false
// (externalTrafficPolicy Cluster) it is sent to ClusterIP through ovn0, masqueraded to the
// host's join address; with LocalOnly it goes straight to one of Local (this host's
// endpoints) and keeps the client's address, and is dropped when Local is empty. The host's
// own connections always go to ClusterIP (kube-proxy's short circuit: locally made traffic
// is never subject to the external policy). With Restricted (a LoadBalancer IP of a Service
// with loadBalancerSourceRanges), only sources in AllowFrom are served, arriving or the
// host's own; every other source is dropped, as kube-proxy's firewall chain does. With Host
// (IP is the Service's own ClusterIP, whose endpoints of the family are all the host's own
// addresses: hostNetwork pods here) the host's connections go straight to Local too: through
// OVN they would come back to the host from its own join address, which the kernel drops.
type ServiceIP struct {
	Protocol  string         // "tcp", "udp" or "sctp"
	IP        netip.AddrPort // the external or LoadBalancer IP and the Service port
	ClusterIP netip.AddrPort
	Local     []netip.AddrPort
	LocalOnly bool // externalTrafficPolicy: Local
	// Restricted: only clients in AllowFrom (IPv4 networks) reach IP; none when it is empty.
	Restricted bool
	AllowFrom  []netip.Prefix
	Host       bool
}

func (s ServiceIP) validate() error {
	what := fmt.Sprintf("service IP %s/%s", s.Protocol, s.IP)
	switch {
	case s.Protocol != "tcp" && s.Protocol != "udp" && s.Protocol != "sctp":
		return invalid("%s: protocol must be tcp, udp or sctp", what)
	case !s.IP.IsValid() || s.IP.Addr().Is4In6() || s.IP.Port() == 0:
		return invalid("%s: not an IPv4 or IPv6 address with a port", what)
	}
	v6 := s.IP.Addr().Is6()
	if !ofFamily(s.ClusterIP, v6) {
		return invalid("%s: cluster IP %s is not an %s address and port", what, s.ClusterIP, familyName(v6))
	}
	for _, ep := range s.Local {
		if !ofFamily(ep, v6) {
			return invalid("%s: endpoint %s is not an %s address and port", what, ep, familyName(v6))
		}
	}
	for _, p := range s.AllowFrom {
		if !p.IsValid() || p.Addr().Is4In6() || p.Addr().Is6() != v6 || p != p.Masked() {
			return invalid("%s: source range %s is not an %s network prefix (host bits clear)", what, p, familyName(v6))
		}
	}
	if len(s.AllowFrom) > 0 && !s.Restricted {
		return invalid("%s: source ranges given but not restricted", what)
	}
	return nil
}

// describe is the rule's identity (see NodePort.describe).
func (s ServiceIP) describe() string {
	return s.describeTarget() + s.describeSources()
}

// describeSources is empty when every source is served.
func (s ServiceIP) describeSources() string {
	if !s.Restricted {
		return ""
	}
	from := make([]string, len(s.AllowFrom))
	for i, p := range s.AllowFrom {
		from[i] = p.String()
	}
	return " from " + strings.Join(from, ",")
}

func (s ServiceIP) describeTarget() string {
	if s.LocalOnly {
		eps := make([]string, len(s.Local))
		for i, ep := range s.Local {
			eps[i] = ep.String()
		}
		kind := "local"
		if s.Host {
			kind = "host"
		}
		return fmt.Sprintf("serviceip %s %s %s %s", s.Protocol, s.IP, kind, strings.Join(eps, ","))
	}
	return fmt.Sprintf("serviceip %s %s cluster %s", s.Protocol, s.IP, s.ClusterIP)
}
