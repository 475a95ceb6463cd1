package subnets

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// Kube-OVN's underlay-to-overlay interconnection (u2oInterconnection on a Subnet with vlan):
// the underlay switch also gets a router port on the cluster router, at an address of its own
// (the u2o address, not spec.gateway, which stays the site's router), and two router policies:
// traffic to the underlay subnet is allowed ahead of the distributed gateway's reroutes, and
// traffic from it to anything that is not a cluster network (those are allowed at
// NodeRoutePriority) is rerouted to the site's router at spec.gateway. The pods' default
// gateway is the u2o address (the node role reads it from the Subnet's status), so underlay
// pods reach overlay pods through the router, and the hosts route the subnet through ovn0.
const (
	// U2OSubnetPolicyPriority is Kube-OVN's priority of the allow policy (util.U2OSubnetPolicyPriority).
	U2OSubnetPolicyPriority = 29400
	// U2OGatewayPolicyPriority is Kube-OVN's priority of the reroute to the physical gateway
	// (util.GatewayRouterPolicyPriority).
	U2OGatewayPolicyPriority = northbound.NodeGatewayPriority
	// ReasonU2OAddress refuses a Subnet whose spec.u2oInterconnectionIP cannot be the router's
	// address (or for which no address is free).
	ReasonU2OAddress = "U2OInterconnectionIPInvalid"
	// u2oOwnerKind tags the u2o policies, so turning u2oInterconnection off removes exactly them.
	u2oOwnerKind = "U2OInterconnection"
)

// u2oEnabled says whether the Subnet asks for the interconnection: an underlay subnet with
// u2oInterconnection and without logicalGateway (with it, the router port is at spec.gateway
// already, as in Kube-OVN, which adds its u2o policies only without logicalGateway).
func u2oEnabled(spec kubeovn.SubnetSpec) bool {
	return spec.Vlan != "" && spec.U2OInterconnection && !spec.LogicalGateway
}

func u2oOwner(subnet string) northbound.OwnerRef {
	return northbound.OwnerRef{Kind: u2oOwnerKind, Name: subnet}
}

// u2oAddresses picks the router's addresses on the underlay switch, one per family of net:
// spec.u2oInterconnectionIP when set, else the address the status already names (a restart or
// a new leader keeps it), else the first free address of each CIDR (not the gateway, not
// excluded, not held), as Kube-OVN's IPAM hands out the first free one.
func (s *Controller) u2oAddresses(sn *kubeovn.Subnet, net kubeovn.Network) ([]netip.Addr, *refusal) {
	if sn.Spec.U2OInterconnectionIP != "" {
		return s.pinnedU2O(sn, net)
	}
	var prev []netip.Addr
	for _, f := range strings.Split(sn.Status.U2OInterconnectionIP, ",") {
		if a, err := netip.ParseAddr(strings.TrimSpace(f)); err == nil {
			prev = append(prev, a)
		}
	}
	out := make([]netip.Addr, 0, len(net.CIDRs))
	for i, p := range net.CIDRs {
		if j := slices.IndexFunc(prev, p.Contains); j >= 0 && s.u2oUsable(sn.Name, net, i, prev[j]) == nil {
			out = append(out, prev[j])
			continue
		}
		a, ok := s.firstFree(sn.Name, net, i)
		if !ok {
			return nil, &refusal{ReasonU2OAddress, fmt.Errorf("u2oInterconnection: no free address in %s for the router's port: free one or set spec.u2oInterconnectionIP", p)}
		}
		out = append(out, a)
	}
	return out, nil
}

// pinnedU2O parses spec.u2oInterconnectionIP ("v4", "v6" or "v4,v6", one per family of the
// subnet) and checks each address.
func (s *Controller) pinnedU2O(sn *kubeovn.Subnet, net kubeovn.Network) ([]netip.Addr, *refusal) {
	field := "spec.u2oInterconnectionIP " + sn.Spec.U2OInterconnectionIP
	parts := strings.Split(sn.Spec.U2OInterconnectionIP, ",")
	if len(parts) != len(net.CIDRs) {
		return nil, &refusal{ReasonU2OAddress, fmt.Errorf("%s: want one address per family of cidrBlock %v", field, net.CIDRs)}
	}
	out := make([]netip.Addr, len(net.CIDRs))
	for _, f := range parts {
		a, err := netip.ParseAddr(strings.TrimSpace(f))
		if err != nil {
			return nil, &refusal{ReasonU2OAddress, fmt.Errorf("%s: %w", field, err)}
		}
		i := slices.IndexFunc(net.CIDRs, func(p netip.Prefix) bool { return p.Contains(a) })
		if i < 0 {
			return nil, &refusal{ReasonU2OAddress, fmt.Errorf("%s: %s is outside cidrBlock %v", field, a, net.CIDRs)}
		}
		if err := s.u2oUsable(sn.Name, net, i, a); err != nil {
			return nil, &refusal{ReasonU2OAddress, fmt.Errorf("%s: %w", field, err)}
		}
		out[i] = a
	}
	return out, nil
}

// u2oUsable says why a cannot be the router's address in the subnet's CIDR i, or nil.
func (s *Controller) u2oUsable(subnet string, net kubeovn.Network, i int, a netip.Addr) error {
	p := net.CIDRs[i]
	switch {
	case !p.Contains(a) || a == p.Masked().Addr() || a.Is4() && a == lastAddr(p):
		return fmt.Errorf("%s is not a host address of %s", a, p)
	case i < len(net.Gateways) && a == net.Gateways[i]:
		return fmt.Errorf("%s is spec.gateway (the site's router)", a)
	}
	if o, held := s.req.IPAM.Owner(subnet, a); held {
		return fmt.Errorf("%s is held by %s", a, o.Pod)
	}
	return nil
}

// firstFree is the first host address of CIDR i that is not the gateway, excluded or held.
func (s *Controller) firstFree(subnet string, net kubeovn.Network, i int) (netip.Addr, bool) {
	p := net.CIDRs[i].Masked()
	for a, n := p.Addr().Next(), 0; p.Contains(a) && n < 1<<16; a, n = a.Next(), n+1 {
		excluded := slices.ContainsFunc(net.Excludes, func(r ipam.Range) bool { return r.Contains(a) })
		if !excluded && s.u2oUsable(subnet, net, i, a) == nil {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// withU2OExcluded is net with the u2o addresses excluded from the IPAM subnet: the router
// holds them, as it holds the gateway of an overlay subnet.
func withU2OExcluded(net kubeovn.Network, u2o []netip.Addr) kubeovn.Network {
	out := net
	out.Excludes = slices.Clone(net.Excludes)
	for _, a := range u2o {
		out.Excludes = append(out.Excludes, ipam.Range{First: a, Last: a})
	}
	return out
}

// ensureU2ORows attaches the underlay switch to its VPC's router at the u2o addresses and
// writes, on the cluster router, the two policies per family (u2o.go's comment says which),
// or, on a custom VPC's router, Kube-OVN's source route per family to the site's router
// (addCustomVPCStaticRouteForSubnet): a custom VPC has no distributed gateway to keep off, and
// Kube-OVN writes its u2o policies only on the cluster router.
func (s *Controller) ensureU2ORows(ctx context.Context, sn *kubeovn.Subnet, net kubeovn.Network, u2o []netip.Addr) error {
	nb, router := s.req.NB, s.routerOf(sn.Spec)
	spec := northbound.SubnetSpec{Name: sn.Name, Router: router, CIDR: net.CIDRs[0], Gateway: u2o[0], RouteTable: sn.Spec.RouteTable}
	if len(net.CIDRs) == 2 {
		spec.DualCIDR, spec.DualGateway = net.CIDRs[1], u2o[1]
	}
	if err := nb.EnsureSubnet(ctx, spec); err != nil {
		return fmt.Errorf("ensure u2o router port of subnet %s: %w", sn.Name, err)
	}
	if customVpc(sn.Spec) {
		return s.ensureU2ORoutes(ctx, sn, net, router)
	}
	for i, p := range net.CIDRs {
		ip := "ip4"
		if p.Addr().Is6() {
			ip = "ip6"
		}
		policies := []northbound.RouterPolicySpec{
			{Router: router, Priority: U2OSubnetPolicyPriority, Match: ip + ".dst == " + p.String(),
				Action: nbdb.LogicalRouterPolicyActionAllow, Owner: u2oOwner(sn.Name)},
			{Router: router, Priority: U2OGatewayPolicyPriority, Match: ip + ".src == " + p.String(),
				Action: nbdb.LogicalRouterPolicyActionReroute, NextHops: []netip.Addr{net.Gateways[i]}, Owner: u2oOwner(sn.Name)},
		}
		for _, pol := range policies {
			if err := nb.EnsureRouterPolicy(ctx, pol); err != nil {
				return fmt.Errorf("ensure u2o policy of subnet %s: %w", sn.Name, err)
			}
		}
	}
	return nil
}

// ensureU2ORoutes writes a custom VPC's u2o routes: src-ip <cidr> via spec.gateway, per family.
func (s *Controller) ensureU2ORoutes(ctx context.Context, sn *kubeovn.Subnet, net kubeovn.Network, router string) error {
	for i, p := range net.CIDRs {
		r := northbound.StaticRouteSpec{Router: router, Prefix: p.Masked(), NextHop: net.Gateways[i], SrcIP: true, Owner: u2oOwner(sn.Name)}
		if err := s.req.NB.EnsureStaticRoute(ctx, r); err != nil {
			return fmt.Errorf("ensure u2o route of subnet %s: %w", sn.Name, err)
		}
	}
	return nil
}

// removeU2ORows removes the u2o policies and routes (the router port goes with EnsureLocalnet's
// detach).
func (s *Controller) removeU2ORows(ctx context.Context, subnet string) error {
	n, err := s.req.NB.DeleteOwned(ctx, u2oOwner(subnet))
	if err != nil {
		return fmt.Errorf("remove u2o policies of subnet %s: %w", subnet, err)
	}
	if n > 0 {
		s.log.Info("u2o interconnection removed", "subnet", subnet, "rows", n)
	}
	return nil
}

// setU2OStatus writes Kube-OVN's u2o status fields from what was applied; it reports whether
// they changed.
func (s *Controller) setU2OStatus(name string, st *kubeovn.SubnetStatus) bool {
	before := [3]string{st.U2OInterconnectionIP, st.U2OInterconnectionMAC, st.U2OInterconnectionVPC}
	st.U2OInterconnectionIP, st.U2OInterconnectionMAC, st.U2OInterconnectionVPC = "", "", ""
	if a, ok := s.get(name); ok && len(a.u2o) > 0 {
		ips := make([]string, len(a.u2o))
		for i, ip := range a.u2o {
			ips[i] = ip.String()
		}
		st.U2OInterconnectionIP = strings.Join(ips, ",")
		st.U2OInterconnectionMAC = northbound.GatewayMAC(a.u2o[0]).String()
		st.U2OInterconnectionVPC = s.routerOf(a.spec)
	}
	return before != [3]string{st.U2OInterconnectionIP, st.U2OInterconnectionMAC, st.U2OInterconnectionVPC}
}

// OnPhysicalGateway says whether the subnet's pods leave through the site's router rather than
// their host (an underlay subnet without logicalGateway): they are kept out of the nodes'
// address sets, whose reroutes would otherwise compete with the u2o reroute to the site.
func (s *Controller) OnPhysicalGateway(name string) bool {
	if s == nil {
		return false
	}
	a, ok := s.get(name)
	return ok && a.spec.Vlan != "" && !a.spec.LogicalGateway
}

// routedUnderlay says whether the subnet is an underlay one attached to a router
// (u2oInterconnection, or logicalGateway): traffic routed between it and overlay pods on
// another host has its request and its reply cross the underlay switch's conntrack on
// different hosts.
func (a appliedSubnet) routedUnderlay() bool {
	return len(a.u2o) > 0 || a.spec.Vlan != "" && a.spec.LogicalGateway
}

// syncCtInvMatch turns NB_Global's use_ct_inv_match off while any applied Subnet is a routed
// underlay one (routedUnderlay), and back on (removing only what edgeovn set) when none is:
// the routed replies cross the underlay switch's conntrack on another host than their
// requests (northbound.OptionUseCtInvMatch). Kube-OVN sets it off always.
func (s *Controller) syncCtInvMatch(ctx context.Context) error {
	s.mu.RLock()
	needed := false
	for _, a := range s.applied {
		needed = needed || a.routedUnderlay()
	}
	s.mu.RUnlock()
	value := ""
	if needed {
		value = "false"
	}
	if err := s.req.NB.SetGlobalOption(ctx, northbound.OptionUseCtInvMatch, value); err != nil {
		return fmt.Errorf("u2o interconnection: %w", err)
	}
	return nil
}
