package node

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/cni/server"
)

// u2oGateway is an underlay subnet with u2oInterconnection: its pods' default gateway is the
// cluster router's address on it (status.u2oInterconnectionIP), not spec.gateway (the site's
// router), as Kube-OVN's daemon sets it. No ips: the controller has not written them yet.
type u2oGateway struct {
	ips []netip.Addr
}

// u2oGatewayOf reads the Subnet's interconnection: false when it has none (not asked, or
// logicalGateway, with which the router port is at spec.gateway already).
func u2oGatewayOf(sn *kubeovn.Subnet) (u2oGateway, bool) {
	if !sn.Spec.U2OInterconnection || sn.Spec.LogicalGateway {
		return u2oGateway{}, false
	}
	var g u2oGateway
	for _, f := range strings.Split(sn.Status.U2OInterconnectionIP, ",") {
		if a, err := netip.ParseAddr(strings.TrimSpace(f)); err == nil {
			g.ips = append(g.ips, a)
		}
	}
	return g, true
}

// u2oOf returns the interconnection of subnet name, if it has one.
func (v *subnetView) u2oOf(name string) (u2oGateway, bool) {
	if v == nil {
		return u2oGateway{}, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	g, ok := v.u2o[name]
	return g, ok
}

// subnetView is the Subnets' view once the host wiring has started it (nil before).
func (r *Role) subnetView() *subnetView { return r.subnets.Load() }

// subnetPods serves the pods' networks with what their Subnets add: the u2o address as the
// default gateway of a pod on an underlay subnet with u2oInterconnection, the Subnet's mtu
// (subnetmtu.go).
type subnetPods struct {
	server.Pods
	view func() *subnetView
}

func (p subnetPods) WaitPodNetwork(ctx context.Context, k server.PodKey) (server.PodNetwork, error) {
	n, err := p.Pods.WaitPodNetwork(ctx, k)
	if err != nil {
		return n, err
	}
	v := p.view()
	return withU2OGateway(withSubnetMTU(n, v), v)
}

// withU2OGateway replaces each family's gateway by the subnet's u2o address; a subnet that
// asks for the interconnection but has no address yet fails the ADD (the runtime retries), as
// Kube-OVN's daemon does, rather than wiring the pod to the site's router.
func withU2OGateway(n server.PodNetwork, v *subnetView) (server.PodNetwork, error) {
	g, ok := v.u2oOf(n.Switch)
	if !ok {
		return n, nil
	}
	if len(g.ips) == 0 {
		return n, fmt.Errorf("subnet %s has u2oInterconnection but no status.u2oInterconnectionIP yet: the controller has not attached it to the cluster router", n.Switch)
	}
	gws := make([]netip.Addr, len(n.Gateways))
	for i, gw := range n.Gateways {
		gws[i] = gw
		for _, a := range g.ips {
			if a.Is4() == gw.Is4() {
				gws[i] = a
			}
		}
	}
	n.Gateways = gws
	return n, nil
}
