package agent

import (
	"flag"
	"net/netip"
	"strings"
	"testing"
)

func TestDefaultConfigValid(t *testing.T) {
	c := DefaultConfig()
	c.NodeName = "n1"
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	if c.ClusterGateway != netip.MustParseAddr("10.42.0.1") {
		t.Fatalf("derived gateway %s, want 10.42.0.1", c.ClusterGateway)
	}
}

func TestFlags(t *testing.T) {
	c := DefaultConfig()
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
		c.EncapIP.String() != "192.0.2.7" || c.ControllerWorkers != 4 || strings.Join(c.NBEndpoints, " ") != "tcp:10.0.0.1:6641 tcp:10.0.0.2:6641" {
		t.Fatalf("flags not applied: %+v", c)
	}
	if err := fs.Parse([]string{"--cluster-cidr=10.42.0.300/16"}); err == nil {
		t.Fatal("bad --cluster-cidr accepted")
	}
}

func TestValidateNamesEveryBadField(t *testing.T) {
	c := DefaultConfig()
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
	c.ControllerWorkers = 0
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
	} {
		c := DefaultConfig()
		c.NodeName = "n1"
		mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want an error saying %q", err, want)
		}
	}
	c := DefaultConfig()
	c.NodeName = "n1"
	c.ServiceCIDRs = append(c.ServiceCIDRs, netip.MustParsePrefix("fd00:43::/112"))
	if err := c.Validate(); err != nil {
		t.Errorf("dual-stack service CIDRs: %v", err)
	}
}
