package node

import (
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/cni/server"
)

// subnetMTU is the MTU the Subnet's pods get, and whether it sets one: its spec.mtu once the
// controller has validated the spec. A refused change (Validated False, still Ready: the spec
// applied before stays in force) keeps the MTU taken before, as the controller keeps the rest
// of the network; so does an mtu the controller will refuse, seen in the moment between the
// spec's change and the status's (the status still says Validated). Called with v.mu not
// held, from refresh.
func (v *subnetView) subnetMTU(sn *kubeovn.Subnet) (int, bool) {
	if !sn.IsValidated() || kubeovn.CheckMTU(sn.Spec, nil) != nil {
		v.mu.Lock()
		defer v.mu.Unlock()
		m, ok := v.mtu[sn.Name]
		return m, ok
	}
	if sn.Spec.Mtu <= 0 {
		return 0, false
	}
	return int(sn.Spec.Mtu), true
}

// mtuOf is the MTU of subnet name's pods, if its Subnet sets one.
func (v *subnetView) mtuOf(name string) (int, bool) {
	if v == nil {
		return 0, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	m, ok := v.mtu[name]
	return m, ok
}

// withSubnetMTU gives the pod's interface its Subnet's mtu in place of the node's --mtu, as
// Kube-OVN's daemon does at ADD (primary network and attachments alike). An interface already
// wired keeps its MTU until its pod is made again, as in Kube-OVN.
func withSubnetMTU(n server.PodNetwork, v *subnetView) server.PodNetwork {
	if m, ok := v.mtuOf(n.Switch); ok {
		n.MTU = m
	}
	return n
}
