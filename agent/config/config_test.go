package config

import (
	"flag"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestDefaultValid(t *testing.T) {
	c := Default()
	c.NodeName = "n1"
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	if c.ClusterGateway != netip.MustParseAddr("10.42.0.1") {
		t.Fatalf("derived gateway %s, want 10.42.0.1", c.ClusterGateway)
	}
}

func TestFlags(t *testing.T) {
	c := Default()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.AddFlags(fs)
	err := fs.Parse([]string{"--node-name=n2", "--cluster-cidr=10.244.0.0/16", "--ovn-nb=tcp:10.0.0.1:6641",
		"--ovn-nb=tcp:10.0.0.2:6641", "--encap-ip=192.0.2.7", "--mtu=1450", "--controller-workers=4"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.ClusterCIDR.String() != "10.244.0.0/16" || c.ClusterGateway.String() != "10.244.0.1" || c.MTU != 1450 ||
		c.EncapIP.String() != "192.0.2.7" || c.Workers != 4 || strings.Join(c.NBEndpoints, " ") != "tcp:10.0.0.1:6641 tcp:10.0.0.2:6641" {
		t.Fatalf("flags not applied: %+v", c)
	}
	if err := fs.Parse([]string{"--cluster-cidr=10.42.0.300/16"}); err == nil {
		t.Fatal("bad --cluster-cidr accepted")
	}
}

func TestValidateNamesEveryBadField(t *testing.T) {
	c := Default()
	c.NodeName = ""
	c.ClusterGateway = netip.MustParseAddr("10.99.0.1")
	c.JoinCIDR = netip.MustParsePrefix("10.42.128.0/17")
	c.MTU = 100
	c.NBEndpoints = []string{"10.0.0.1:6641"}
	c.DatapathType = "kernel"
	c.CNISocket = ""
	c.RenewDeadline = c.LeaseDuration
	c.EncapIP = netip.MustParseAddr("127.0.0.1")
	c.EncapIPFrom = "eth0"
	c.Workers = 0
	c.MemoryLimitMiB = -1
	err := c.Validate()
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{"node-name", "cluster-gateway 10.99.0.1", "join-cidr 10.42.128.0/17: overlaps",
		"mtu 100", `"10.0.0.1:6641"`, `datapath-type "kernel"`, "cni-socket", "lease timings",
		"encap-ip 127.0.0.1: not an address other hosts can reach", `encap-ip-from "eth0": want default-route or node-ip`,
		"controller-workers 0: at least 1", "memory-limit-mib -1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %q:\n%v", want, err)
		}
	}
}

func TestValidateServiceOptions(t *testing.T) {
	for want, mut := range map[string]func(*Config){
		`kube-proxy "maybe"`:    func(c *Config) { c.KubeProxy = "maybe" },
		"overlaps cluster-cidr": func(c *Config) { c.ServiceCIDRs = []netip.Prefix{netip.MustParsePrefix("10.42.128.0/17")} },
		"a second range":        func(c *Config) { c.ServiceCIDRs = append(c.ServiceCIDRs, netip.MustParsePrefix("10.44.0.0/16")) },
		"none given while":      func(c *Config) { c.ServiceCIDRs = nil },
		"cluster-cidr: cidr 127.42.0.0/16 overlaps the loopback range 127.0.0.0/8": func(c *Config) {
			c.ClusterCIDR, c.ClusterGateway = netip.MustParsePrefix("127.42.0.0/16"), netip.Addr{}
		},
		"join-cidr: cidr 169.254.0.0/16 overlaps the link-local range": func(c *Config) { c.JoinCIDR = netip.MustParsePrefix("169.254.0.0/16") },
	} {
		c := Default()
		c.NodeName = "n1"
		mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want an error saying %q", err, want)
		}
	}
	c := Default()
	c.NodeName = "n1"
	c.ServiceCIDRs = append(c.ServiceCIDRs, netip.MustParsePrefix("fd00:43::/112"))
	if err := c.Validate(); err != nil {
		t.Errorf("dual-stack service CIDRs: %v", err)
	}
}

// TestDatabaseEndpointLists: --ovn-sb repeats like --ovn-nb (a raft cluster's members), and
// a list that cannot work is refused with the flag and the entry named: a comma-joined
// entry, the same member twice, a unix socket among several, no endpoint at all.
func TestDatabaseEndpointLists(t *testing.T) {
	c := Default()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.AddFlags(fs)
	members := []string{"tcp:10.0.0.1:6642", "tcp:10.0.0.2:6642", "tcp:10.0.0.3:6642"}
	args := []string{"--node-name=n1"}
	for _, m := range members {
		args = append(args, "--ovn-sb="+m)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("three southbound members refused: %v", err)
	}
	if !slices.Equal(c.SBEndpoints, members) {
		t.Fatalf("ovn-sb = %v, want %v (the default replaced, then each flag appended)", c.SBEndpoints, members)
	}
	cases := []struct {
		name string
		nb   []string
		sb   []string
		want string
	}{
		{"comma-joined", nil, []string{"tcp:10.0.0.1:6642,tcp:10.0.0.2:6642"}, `ovn-sb "tcp:10.0.0.1:6642,tcp:10.0.0.2:6642": one endpoint per entry`},
		{"twice", []string{"tcp:10.0.0.1:6641", "tcp:10.0.0.1:6641"}, nil, `ovn-nb "tcp:10.0.0.1:6641": given twice`},
		{"unix among members", nil, []string{"unix:/run/ovn/ovnsb_db.sock", "tcp:10.0.0.2:6642"}, "ovn-sb [unix:/run/ovn/ovnsb_db.sock tcp:10.0.0.2:6642]: a unix socket reaches one local server"},
		{"none", nil, []string{}, "ovn-sb: no endpoint"},
		{"bad scheme", nil, []string{"10.0.0.1:6642"}, `ovn-sb: ovsdb endpoint "10.0.0.1:6642": want unix:PATH`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.NodeName = "n1"
			if tc.nb != nil {
				c.NBEndpoints = tc.nb
			}
			if tc.sb != nil {
				c.SBEndpoints = tc.sb
			}
			before := slices.Clone(c.SBEndpoints)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, tc.want)
			}
			if !slices.Equal(c.SBEndpoints, before) {
				t.Errorf("Validate changed ovn-sb: %v -> %v", before, c.SBEndpoints)
			}
		})
	}
}
