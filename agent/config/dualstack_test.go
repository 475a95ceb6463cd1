package config

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/agent/config/configfile"
)

// TestDualStackFlags: k3s's dual-stack and IPv6-only forms reach the fields, IPv4 first, with
// the derived gateways and the IPv6 join network taken only when the cluster has IPv6.
func TestDualStackFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // cluster gateways join services
	}{
		{"ipv4 only: no ipv6 join", nil,
			"[10.42.0.0/16] [10.42.0.1] [100.64.0.0/16] [10.43.0.0/16]"},
		{"k3s dual stack", []string{"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/56", "--service-cidr=10.43.0.0/16,2001:cafe:43::/112"},
			"[10.42.0.0/16 2001:cafe:42::/56] [10.42.0.1 2001:cafe:42::1] [100.64.0.0/16 fd00:100:64::/112] [10.43.0.0/16 2001:cafe:43::/112]"},
		{"ipv6 first, spaces, host bits", []string{"--cluster-cidr=2001:cafe:42::5/56, 10.42.0.0/16", "--join-cidr=fd00:64::/112,100.65.0.0/16"},
			"[10.42.0.0/16 2001:cafe:42::/56] [10.42.0.1 2001:cafe:42::1] [100.65.0.0/16 fd00:64::/112] [10.43.0.0/16]"},
		{"ipv6 only", []string{"--cluster-cidr=2001:cafe:42::/56", "--service-cidr=2001:cafe:43::/112"},
			"[2001:cafe:42::/56] [2001:cafe:42::1] [fd00:100:64::/112] [2001:cafe:43::/112]"},
		{"gateways given", []string{"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/56", "--cluster-gateway=2001:cafe:42::fe,10.42.0.254"},
			"[10.42.0.0/16 2001:cafe:42::/56] [10.42.0.254 2001:cafe:42::fe] [100.64.0.0/16 fd00:100:64::/112] [10.43.0.0/16]"},
		{"only the ipv6 gateway given", []string{"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/56", "--cluster-gateway=2001:cafe:42::fe"},
			"[10.42.0.0/16 2001:cafe:42::/56] [10.42.0.1 2001:cafe:42::fe] [100.64.0.0/16 fd00:100:64::/112] [10.43.0.0/16]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			c.NodeName = "n1"
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			c.AddFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprint(c.ClusterCIDRs(), c.ClusterGateways(), c.JoinCIDRs(), c.ServiceCIDRs)
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestDualStackConfigFile: the file takes the same values as the flags, k3s's comma form.
func TestDualStackConfigFile(t *testing.T) {
	c := Default()
	c.NodeName = "n1"
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.AddFlags(fs)
	doc := "cluster-cidr: 10.42.0.0/16,2001:cafe:42::/56\nservice-cidr: [10.43.0.0/16, \"2001:cafe:43::/112\"]\njoin-cidr: 100.64.0.0/16,fd00:100:65::/112\n"
	if err := configfile.Apply(fs, "edgeovn.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(c.ClusterCIDRs(), c.JoinCIDRs(), c.ServiceCIDRs); got != "[10.42.0.0/16 2001:cafe:42::/56] [100.64.0.0/16 fd00:100:65::/112] [10.43.0.0/16 2001:cafe:43::/112]" {
		t.Errorf("got %s", got)
	}
	fs2 := flag.NewFlagSet("t", flag.ContinueOnError)
	c2 := Default()
	c2.AddFlags(fs2)
	err := configfile.Apply(fs2, "x.yaml", []byte("cluster-cidr: 10.42.0.0/16,10.44.0.0/16\n"))
	if err == nil || !strings.Contains(err.Error(), "cluster-cidr") || !strings.Contains(err.Error(), "of one family") {
		t.Errorf("two IPv4 cluster prefixes in the file: %v", err)
	}
	if c2.ClusterCIDR.String() != "10.42.0.0/16" || c2.ClusterCIDRDual.IsValid() {
		t.Errorf("refused value changed the field: %s %s", c2.ClusterCIDR, c2.ClusterCIDRDual)
	}
}

// TestDualStackRefused: bad values are refused naming the flag, and a refused flag value
// leaves the field as it was.
func TestDualStackRefused(t *testing.T) {
	flagErrs := []struct{ arg, want string }{
		{"--cluster-cidr=10.42.0.0/16,10.44.0.0/16", "of one family"},
		{"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/56,fd00::/64", "at most one CIDR per family"},
		{"--join-cidr=fd00::/112,fd01::/112", "of one family"},
		{"--service-cidr=10.43.0.0/16,10.45.0.0/16", "of one family"},
		{"--cluster-gateway=10.42.0.1,10.42.0.2", "of one family"},
		{"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/129", "2001:cafe:42::/129"},
	}
	for _, tt := range flagErrs {
		c := Default()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(new(strings.Builder))
		c.AddFlags(fs)
		flagName := strings.TrimPrefix(strings.Split(tt.arg, "=")[0], "--")
		err := fs.Parse([]string{tt.arg})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), flagName) {
			t.Errorf("%s: %v, want an error naming %s and saying %q", tt.arg, err, flagName, tt.want)
		}
		d := Default()
		if fmt.Sprint(c.ClusterCIDRs(), c.JoinCIDRs(), c.ServiceCIDRs, c.ClusterGateways()) != fmt.Sprint(d.ClusterCIDRs(), d.JoinCIDRs(), d.ServiceCIDRs, d.ClusterGateways()) {
			t.Errorf("%s: refused value changed the configuration", tt.arg)
		}
	}
	validateErrs := []struct {
		args []string
		want string
	}{
		{[]string{"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/121"}, "cluster-cidr 2001:cafe:42::/121: IPv6 prefix too small"},
		{[]string{"--cluster-cidr=2001:cafe:42::/56", "--service-cidr=2001:cafe:43::/112", "--join-cidr=fd00:64::/124"}, "join-cidr fd00:64::/124: IPv6 prefix too small"},
		{[]string{"--join-cidr=100.64.0.0/16,fd00:64::/112"}, "join-cidr 100.64.0.0/16,fd00:64::/112: families IPv4,IPv6 disagree with cluster-cidr's IPv4"},
		{[]string{"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/56", "--join-cidr=fd00:64::/112"}, "join-cidr fd00:64::/112: families IPv6 disagree with cluster-cidr's IPv4,IPv6"},
		{[]string{"--cluster-cidr=2001:cafe:42::/56", "--join-cidr=100.65.0.0/16"}, "families IPv4 disagree with cluster-cidr's IPv6"},
		{[]string{"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/56", "--join-cidr=100.64.0.0/16,2001:cafe:42:ff::/112"}, "join-cidr 2001:cafe:42:ff::/112: overlaps cluster-cidr 2001:cafe:42::/56"},
		{[]string{"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/56", "--cluster-gateway=10.42.0.1,2001:cafe:43::1"}, "cluster-gateway 2001:cafe:43::1 is outside cluster-cidr 2001:cafe:42::/56"},
		{[]string{"--cluster-gateway=10.42.0.1,2001:cafe:43::1"}, "cluster-gateway 2001:cafe:43::1: cluster-cidr 10.42.0.0/16 has no prefix of its family"},
		{[]string{"--cluster-cidr=2001:cafe:42::/56", "--service-cidr=2001:cafe:42:1::/112"}, "service-cidr 2001:cafe:42:1::/112: overlaps cluster-cidr"},
	}
	for _, tt := range validateErrs {
		c := Default()
		c.NodeName = "n1"
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		c.AddFlags(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: Validate = %v, want %q", tt.args, err, tt.want)
		}
	}
}
