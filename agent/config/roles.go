package config

import (
	"net/netip"
	"time"
)

// Cluster are the options both roles are handed (node.Request and controller.Request embed
// it): the cluster's networks and the southbound.
type Cluster struct {
	// ClusterCIDR is the default subnet ovn-default (k3s: 10.42.0.0/16): on a host, routed to
	// OVN through ovn0 and masqueraded when leaving it. In a dual-stack cluster it is the IPv4
	// prefix; in an IPv6-only cluster, the IPv6 one.
	ClusterCIDR netip.Prefix
	// ClusterCIDRDual is the IPv6 prefix of a dual-stack cluster (--cluster-cidr
	// 10.42.0.0/16,2001:cafe:42::/56, as k3s takes it); invalid: single stack.
	ClusterCIDRDual netip.Prefix
	// ServiceCIDRs are the Service ClusterIP ranges (k3s: 10.43.0.0/16; one per family): no
	// Subnet may overlap them, and a host routes them to OVN through ovn0 (the load balancers
	// on the join switch serve the host's own traffic to ClusterIPs).
	ServiceCIDRs []netip.Prefix
	// Services turns Services into OVN load balancers on every pod switch (off: another
	// implementation serves them, and nothing of it is on a host).
	Services bool
	// SBEndpoints are the OVN southbound database endpoints: one, or every member of a raft
	// cluster. ovn-controller on this host is told all of them (ovn-remote, comma-separated)
	// and the controller role removes a deleted node's chassis there.
	SBEndpoints []string
}

// Node are the node role's options (node.Request embeds them).
type Node struct {
	// NodeName is this host's Kubernetes Node name (default: the hostname).
	NodeName string
	// OVSEndpoint is the host's Open_vSwitch database.
	OVSEndpoint string
	// KubeProxy says who serves host-originated ClusterIP traffic and NodePorts: "auto"
	// (detect kube-proxy's rules on this host), "present" (kube-proxy does) or "absent"
	// (edgeovn does, as with k3s --disable-kube-proxy).
	KubeProxy string
	// EncapIP is this host's tunnel endpoint; invalid means found as EncapIPFrom says.
	EncapIP netip.Addr
	// EncapIPFrom says where the tunnel endpoint is found when EncapIP is not set:
	// EncapFromDefaultRoute (the IPv4 default route's source address) or EncapFromNodeIP
	// (the Node's InternalIP, which must be an address of this host). Never a loopback.
	EncapIPFrom string
	// DatapathType is "system" or "netdev"; empty means detect the openvswitch kernel module.
	DatapathType string
	// MTU of pod interfaces: 1400 leaves room for Geneve on a 1500 underlay.
	MTU int

	CNISocket       string
	CNIConfDir      string
	CNIBinDir       string
	CNIBinarySource string
	// CNITimeout bounds one CNI ADD, waiting for allocation and OVN binding included.
	CNITimeout time.Duration
	// BGP is the speaker's configuration (bgp.go); without a neighbour, none runs.
	BGP

	Mirror // traffic mirroring (config_observe.go)
	Pinger // the in-process pinger (config_observe.go)
}

// Controller are the controller role's options (controller.Request embeds them).
type Controller struct {
	// NBEndpoints are the OVN northbound database endpoints: one, or every member of a raft
	// cluster (the client stays on the raft leader and follows it when it moves).
	NBEndpoints []string
	// IPAMDatabase is the SQLite file the controller role keeps its allocations in.
	IPAMDatabase string
	// ClusterGateway is the router port address on ovn-default (default: first address);
	// ClusterGatewayDual is the one of ClusterCIDRDual.
	ClusterGateway     netip.Addr
	ClusterGatewayDual netip.Addr
	// JoinCIDR is the join switch connecting hosts to the cluster router; JoinCIDRDual its
	// IPv6 prefix in a dual-stack cluster (default fd00:100:64::/112, Kube-OVN's). The join
	// network has the cluster's families.
	JoinCIDR     netip.Prefix
	JoinCIDRDual netip.Prefix
	// NetworkPolicy turns NetworkPolicies into OVN port groups, address sets and ACLs (off:
	// another policy engine).
	NetworkPolicy bool
	// Workers is how many pods the controller role syncs at once (--controller-workers). A
	// pod's sync waits on SQLite, northbound and the API server in turn, above all on the API
	// server's answer to its annotation patch, so workers overlap the waits; the IPAM commits
	// their allocations together (group commit). 64: a 500-pod burst went 1.5-1.9 times as
	// fast as with 16 (ctrlbench, docs/benchmarks.md).
	Workers int
}

// ClusterCIDRs are the cluster's pod prefixes, IPv4 first: one, or two in a dual-stack cluster.
func (c Cluster) ClusterCIDRs() []netip.Prefix { return both(c.ClusterCIDR, c.ClusterCIDRDual) }

// JoinCIDRs are the join network's prefixes, in the order of ClusterCIDRs.
func (c Controller) JoinCIDRs() []netip.Prefix { return both(c.JoinCIDR, c.JoinCIDRDual) }

// JoinGateways are the cluster router's addresses on the join switch, one per JoinCIDRs: each
// prefix's first address.
func (c Controller) JoinGateways() []netip.Addr {
	var out []netip.Addr
	for _, p := range c.JoinCIDRs() {
		out = append(out, p.Masked().Addr().Next())
	}
	return out
}

// ClusterGateways are the router's addresses on ovn-default, one per ClusterCIDRs.
func (c Controller) ClusterGateways() []netip.Addr {
	if !c.ClusterGatewayDual.IsValid() {
		return []netip.Addr{c.ClusterGateway}
	}
	return []netip.Addr{c.ClusterGateway, c.ClusterGatewayDual}
}

func both(first, dual netip.Prefix) []netip.Prefix {
	if !dual.IsValid() {
		return []netip.Prefix{first}
	}
	return []netip.Prefix{first, dual}
}
