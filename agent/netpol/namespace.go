package netpol

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// NamespaceOwner is the owner tag of a namespace's default-deny rows.
func NamespaceOwner(namespace string) northbound.OwnerRef {
	return northbound.OwnerRef{Kind: ovn.KindNamespace, Name: namespace}
}

// HostsOwner owns the address set of the nodes' join addresses.
var HostsOwner = northbound.OwnerRef{Kind: ovn.KindCluster, Name: "network-policy"}

// Namespace returns the default-deny rows of a namespace whose policies translated to
// results: the pods selected for ingress (egress) by any of them, in a port group that
// drops what no allow lets through, with the nodes' join addresses always allowed in.
func Namespace(namespace string, results []Result, c Cluster) northbound.ACLGroupSpec {
	inName, egName := DenyGroupNames(namespace)
	var in, eg []string
	for _, r := range results {
		for _, p := range r.Selected {
			if r.Ingress {
				in = append(in, p.portName())
			}
			if r.Egress {
				eg = append(eg, p.portName())
			}
		}
	}
	slices.Sort(in)
	slices.Sort(eg)
	return northbound.ACLGroupSpec{Owner: NamespaceOwner(namespace), PortGroups: []northbound.PortGroupACLs{
		{Name: inName, Ports: slices.Compact(in), ACLs: denyACLs(ingress, inName, namespace, c)},
		{Name: egName, Ports: slices.Compact(eg), ACLs: denyACLs(egress, egName, namespace, c)},
	}}
}

func denyACLs(d direction, pg, namespace string, c Cluster) []northbound.ACLRule {
	base := fmt.Sprintf("%s == @%s", d.port, pg)
	acls := []northbound.ACLRule{{Direction: d.acl, Priority: DenyPriority, Match: base + " && ip",
		Action: nbdb.ACLActionDrop, Name: aclName("%s:default-deny-%s", namespace, d.short), AfterLB: d.afterLB}}
	if d == egress {
		// OVN 23.03 lets replies through its to-lport and before-lb ACL stages by itself, but
		// not through the after-lb stage: a reply a fenced pod sends to a connection it
		// accepted is let out here (and makes the switch stateful, so it has a ct state).
		acls = append(acls, northbound.ACLRule{Direction: d.acl, Priority: AllowPriority,
			Match: base + " && ct.est && ct.rpl", Action: nbdb.ACLActionAllowRelated,
			Name: aclName("%s:replies-%s", namespace, d.short), AfterLB: true})
	}
	if d == ingress {
		hosts := fmt.Sprintf("ip4.src == $%s", HostsAddressSet)
		if c.IPv6 {
			hosts = fmt.Sprintf("(%s || ip6.src == $%s)", hosts, HostsAddressSet6)
		}
		acls = append(acls, northbound.ACLRule{Direction: d.acl, Priority: AllowPriority,
			Match:  base + " && " + hosts,
			Action: nbdb.ACLActionAllowRelated, Name: aclName("%s:from-hosts", namespace)})
	}
	if c.IPv6 {
		acls = append(acls, northbound.ACLRule{Direction: d.acl, Priority: AllowPriority,
			Match:  base + " && (nd || nd_rs || nd_ra)",
			Action: nbdb.ACLActionAllow, Name: aclName("%s:nd-%s", namespace, d.short), AfterLB: d.afterLB})
	}
	return acls
}

// Hosts returns the rows of the nodes' join addresses: one address set per family, both
// always there (the IPv6 one empty in an IPv4 cluster), so a match may name either.
func Hosts(joinIPs []netip.Addr) northbound.ACLGroupSpec {
	var sets []northbound.AddressSetSpec
	for _, f := range []struct {
		name string
		is   func(netip.Addr) bool
	}{{HostsAddressSet, netip.Addr.Is4}, {HostsAddressSet6, netip.Addr.Is6}} {
		var addrs []netip.Prefix
		for _, ip := range joinIPs {
			if ip = ip.Unmap(); f.is(ip) {
				addrs = append(addrs, netip.PrefixFrom(ip, ip.BitLen()))
			}
		}
		slices.SortFunc(addrs, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
		sets = append(sets, northbound.AddressSetSpec{Name: f.name, Addresses: slices.Compact(addrs)})
	}
	return northbound.ACLGroupSpec{Owner: HostsOwner, AddressSets: sets}
}
