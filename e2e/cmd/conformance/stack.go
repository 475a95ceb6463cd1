package main

import (
	"fmt"
	"net/netip"
	"strings"
)

// stack is the cluster's address families: k3s's defaults (IPv4 only) or k3s's dual-stack
// ranges, given alike to every part that takes them.
type stack struct {
	name string
	// serviceCIDRs is kube-apiserver's --service-cluster-ip-range, primary family first.
	serviceCIDRs []netip.Prefix
	// clusterCIDRs is the pod network (edgeovn, kube-controller-manager, kube-proxy).
	clusterCIDRs []netip.Prefix
	// dns is the kube-dns Service's ClusterIPs, primary family first.
	dns []netip.Addr
}

// The two stacks. Dual stack is k3s's documented example (docs/addresses.md): IPv4 first,
// the kube-dns Service PreferDualStack with the tenth address of each service range, as
// k3s's CoreDNS manifest has it.
var (
	singleStack = stack{name: "single",
		serviceCIDRs: []netip.Prefix{netip.MustParsePrefix("10.43.0.0/16")},
		clusterCIDRs: []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")},
		dns:          []netip.Addr{netip.MustParseAddr(clusterDNS)},
	}
	dualStack = stack{name: "dual",
		serviceCIDRs: []netip.Prefix{netip.MustParsePrefix("10.43.0.0/16"), netip.MustParsePrefix("2001:cafe:43::/112")},
		clusterCIDRs: []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16"), netip.MustParsePrefix("2001:cafe:42::/56")},
		dns:          []netip.Addr{netip.MustParseAddr(clusterDNS), netip.MustParseAddr("2001:cafe:43::a")},
	}
)

// parseStack reads -stack.
func parseStack(s string) (stack, error) {
	switch s {
	case "", singleStack.name:
		return singleStack, nil
	case dualStack.name:
		return dualStack, nil
	}
	return stack{}, fmt.Errorf("-stack: unknown stack %q (want single, dual)", s)
}

// dual reports whether the cluster has both families.
func (s stack) dual() bool { return len(s.serviceCIDRs) > 1 }

// joined is prefixes comma-joined, k3s's form of a dual-stack flag.
func joined(ps []netip.Prefix) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return strings.Join(out, ",")
}

// edgeovnFlags are edgeovn's flags for the stack: none for k3s's defaults; the join
// network's IPv6 half is edgeovn's default (fd00:100:64::/112).
func (s stack) edgeovnFlags() []string {
	if !s.dual() {
		return nil
	}
	return []string{"--cluster-cidr=" + joined(s.clusterCIDRs), "--service-cidr=" + joined(s.serviceCIDRs)}
}

// kubeletFlags are the kubelet's: in dual stack its node IPs of both families (the Node's
// InternalIPs, and so the pods' hostIPs), the IPv4 one first.
func (s stack) kubeletFlags(v4, v6 netip.Addr) []string {
	if !s.dual() {
		return nil
	}
	return []string{"--node-ip=" + v4.String() + "," + v6.String()}
}

// controllerManagerFlags: in dual stack the node IPAM controller gives the Node a pod CIDR of
// each family, as k3s's controller manager does (k3s's mask sizes: /24 and /64).
func (s stack) controllerManagerFlags() []string {
	if !s.dual() {
		return nil
	}
	return []string{"--allocate-node-cidrs=true", "--cluster-cidr=" + joined(s.clusterCIDRs),
		"--service-cluster-ip-range=" + joined(s.serviceCIDRs),
		"--node-cidr-mask-size-ipv4=24", "--node-cidr-mask-size-ipv6=64"}
}

// kubeProxyFlags: kube-proxy's --cluster-cidr of both families (its ip6tables half tells pod
// traffic from the host's by it).
func (s stack) kubeProxyFlags() []string {
	if !s.dual() {
		return nil
	}
	return []string{"--cluster-cidr=" + joined(s.clusterCIDRs)}
}
