package netpol

import (
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Pod is what the translation needs of a pod that holds an OVN port.
type Pod struct {
	Namespace string
	Name      string
	Labels    map[string]string
	IPs       []netip.Addr
	// Ports are the containers' declared ports: named ports resolve against them.
	Ports []corev1.ContainerPort
	// HostNetwork pods have no OVN port: policies cannot fence them.
	HostNetwork bool
}

// Cluster is the snapshot a translation reads.
type Cluster struct {
	Pods []Pod
	// Namespaces maps every namespace's name to its labels.
	Namespaces map[string]map[string]string
	// IPv6 adds ip6 address sets and matches next to the ip4 ones.
	IPv6 bool
}

// inNamespace returns the pods of ns that match sel.
func (c Cluster) selectPods(ns string, sel labels.Selector) []Pod {
	var out []Pod
	for _, p := range c.Pods {
		if p.Namespace == ns && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

// namespaces returns the names of the namespaces whose labels match sel, sorted.
func (c Cluster) namespaces(sel labels.Selector) []string {
	var out []string
	for name, l := range c.Namespaces {
		if sel.Matches(labels.Set(l)) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// portName is the pod's logical switch port, Kube-OVN's "<pod>.<namespace>".
func (p Pod) portName() string { return p.Name + "." + p.Namespace }

// family is an IP family as OVN matches it.
type family struct {
	field  string // "ip4"
	suffix string // address set name suffix
	is     func(netip.Addr) bool
}

var (
	ip4 = family{"ip4", "_ip4", netip.Addr.Is4}
	ip6 = family{"ip6", "_ip6", netip.Addr.Is6}
)

func (c Cluster) families() []family {
	if c.IPv6 {
		return []family{ip4, ip6}
	}
	return []family{ip4}
}

// prefixes returns the pods' addresses of family f as host prefixes, sorted and unique.
func prefixes(pods []Pod, f family) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range pods {
		for _, ip := range p.IPs {
			if f.is(ip) {
				out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
			}
		}
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
	return slices.Compact(out)
}
