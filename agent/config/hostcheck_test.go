package config

import (
	"net/netip"
	"strings"
	"testing"
)

// TestCheckHostNetworks: a cluster-cidr or join-cidr on (or containing) the host's LAN
// stops the start, naming the flag and the network; the defaults pass on a host on 192.0.2.0/24.
func TestCheckHostNetworks(t *testing.T) {
	lan := []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("fd00:1::/64")}
	if err := CheckHostNetworks(Default(), lan); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	for want, mut := range map[string]func(*Config){
		"cluster-cidr: cidr 192.0.2.0/24 overlaps a network of this host's interfaces 192.0.2.0/24": func(c *Config) { c.ClusterCIDR = netip.MustParsePrefix("192.0.2.0/24") },
		"join-cidr: cidr 192.0.0.0/16 overlaps a network of this host's interfaces 192.0.2.0/24":    func(c *Config) { c.JoinCIDR = netip.MustParsePrefix("192.0.0.0/16") },
	} {
		c := Default()
		mut(&c)
		if err := CheckHostNetworks(c, lan); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error saying %q", err, want)
		}
	}
}
