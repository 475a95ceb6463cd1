package config

import (
	"fmt"
	"net/netip"

	"github.com/edgeovn/edgeovn/agent/subnetcheck"
)

// CheckHostNetworks refuses a configuration whose cluster-cidr or join-cidr overlaps one of
// networks, those this host's own interfaces are on (its LAN; the daemon reads them with
// hostnet.HostNetworks before anything starts): routed through ovn0, such a range would cut
// the host off its neighbours.
func CheckHostNetworks(cfg Config, networks []netip.Prefix) error {
	reserved := subnetcheck.Prefixes("a network of this host's interfaces", networks...)
	for _, n := range cfg.networks() {
		if err := subnetcheck.Check([]netip.Prefix{n.p}, reserved); err != nil {
			return fmt.Errorf("%s: %w: refused, routed to OVN it would cut this host off that network (choose another range)", n.flag, err)
		}
	}
	return nil
}
