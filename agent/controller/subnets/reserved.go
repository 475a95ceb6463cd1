package subnets

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/subnetcheck"
)

// ReasonCIDRReserved: a Subnet's CIDR overlaps a Service CIDR, a Node's address, a network a
// host's interface is on, or a special range (loopback, link-local, multicast, unspecified).
const ReasonCIDRReserved = "CIDRReserved"

// reserved are the networks no Subnet may overlap besides the other subnets: the Service
// CIDRs, and of every Node its InternalIP and ExternalIP addresses and the networks its node
// role reported (annotation.HostNetworksKey).
func (s *Controller) reserved() []subnetcheck.Reserved {
	out := subnetcheck.Prefixes("Service CIDR", s.req.ServiceCIDRs...)
	if s.req.Nodes == nil {
		return out
	}
	nodes, err := s.req.Nodes.List(labels.Everything())
	if err != nil {
		return out
	}
	slices.SortFunc(nodes, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	for _, n := range nodes {
		out = append(out, subnetcheck.Addrs(fmt.Sprintf("address of node %s", n.Name), annotation.NodeAddrs(n)...)...)
		out = append(out, subnetcheck.Prefixes(fmt.Sprintf("host network of node %s", n.Name), annotation.HostNetworks(n)...)...)
	}
	return out
}

// HostNetworksChanged: what the Subnets are checked against changed between the two.
func HostNetworksChanged(a, b *corev1.Node) bool {
	return a.Annotations[annotation.HostNetworksKey] != b.Annotations[annotation.HostNetworksKey] ||
		!slices.Equal(annotation.NodeAddrs(a), annotation.NodeAddrs(b))
}

// EnqueueAll queues every Subnet for validation again (a Node's networks changed).
func (s *Controller) EnqueueAll() {
	if s == nil || s.inf == nil {
		return
	}
	names := map[string]bool{}
	for _, obj := range s.inf.GetStore().List() {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			names[u.GetName()] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		s.queue.Add(n)
	}
}
