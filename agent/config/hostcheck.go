package config

import (
	"fmt"
	"net/netip"

	"github.com/edgeovn/edgeovn/agent/node"
	"github.com/edgeovn/edgeovn/agent/node/hostnet"
	"github.com/edgeovn/edgeovn/agent/subnetcheck"
)

// CheckHostNetworks refuses a configuration whose cluster-cidr or join-cidr overlaps a network
// this host's own interfaces are on (its LAN): routed through ovn0, it would cut the host off
// its neighbours. It only reads; nothing is started or changed before it passes.
func CheckHostNetworks(cfg Config) error {
	networks, err := hostnet.HostNetworks(node.HostInterface)
	if err != nil {
		return fmt.Errorf("check the configuration against this host's networks: %w", err)
	}
	return checkAgainst(cfg, networks)
}

func checkAgainst(cfg Config, networks []netip.Prefix) error {
	reserved := subnetcheck.Prefixes("a network of this host's interfaces", networks...)
	for name, p := range map[string]netip.Prefix{"cluster-cidr": cfg.ClusterCIDR, "join-cidr": cfg.JoinCIDR} {
		if err := subnetcheck.Check([]netip.Prefix{p}, reserved); err != nil {
			return fmt.Errorf("%s: %w: refused, routed to OVN it would cut this host off that network (choose another range)", name, err)
		}
	}
	return nil
}
