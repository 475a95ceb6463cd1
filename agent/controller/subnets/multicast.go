package subnets

import (
	"context"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// multicast makes the Subnet switch's IGMP snooping that of spec.enableMulticastSnoop, as
// Kube-OVN sets it (other_config mcast_snoop and mcast_querier true, the querier's sources in
// mcast_ip4_src and mcast_eth_src), or removes it. Kube-OVN takes an address of the Subnet and
// a port (mcast-querier.<subnet>) for the querier; edgeovn uses the cluster router's port on
// the switch, its gateway address and MAC, as ovn-kubernetes does, so no pod address is taken.
// An underlay switch whose gateway is the site's router has no router port there: it snoops,
// and the site's querier asks.
func (s *Controller) multicast(ctx context.Context, sn *kubeovn.Subnet, net kubeovn.Network) error {
	spec := northbound.SwitchMulticastSpec{Switch: sn.Name, Snoop: sn.Spec.EnableMulticastSnoop}
	if spec.Snoop && (sn.Spec.Vlan == "" || sn.Spec.LogicalGateway) {
		for _, gw := range net.Gateways {
			if gw.Is4() {
				spec.QuerierIP, spec.QuerierMAC = gw, northbound.GatewayMAC(gw).String()
			}
		}
	}
	wrote, err := s.req.NB.EnsureSwitchMulticast(ctx, spec)
	if wrote {
		s.log.Info("subnet multicast snooping applied", "subnet", sn.Name, "enableMulticastSnoop", spec.Snoop)
	}
	return err
}
