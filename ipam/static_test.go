package ipam_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

// TestCheckStatic: an address that can never be pinned in a subnet is refused with the
// reason, naming the subnet it does belong to; one merely held by another owner is not.
func TestCheckStatic(t *testing.T) {
	m, _ := newIPAM(t,
		ipam.Subnet{Name: "ovn-default", CIDRs: prefixes("10.42.0.0/16"), Gateways: addrs("10.42.0.1"),
			Excludes: []ipam.Range{rng(t, "10.42.0.100..10.42.0.110")}},
		ipam.Subnet{Name: "join", CIDRs: prefixes("100.64.0.0/16"), Gateways: addrs("100.64.0.1")},
		ipam.Subnet{Name: "dual", CIDRs: prefixes("10.66.0.0/24", "fd00:66::/120"), Gateways: addrs("10.66.0.1", "fd00:66::1")})
	if _, err := m.Allocate(context.Background(), ipam.Request{Subnet: "ovn-default", Owner: pod("holder"), IPs: addrs("10.42.0.9")}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		subnet, ip string
		want       error
		says       string
	}{
		{"ovn-default", "10.42.0.9", nil, ""}, // held, but could be pinned once released
		{"ovn-default", "10.42.5.5", nil, ""},
		{"ovn-default", "10.42.0.1", ipam.ErrGateway, "10.42.0.1: is the gateway of subnet ovn-default"},
		{"ovn-default", "10.42.0.105", ipam.ErrExcluded, "10.42.0.105 is in an excluded range of subnet ovn-default"},
		{"ovn-default", "10.42.255.255", ipam.ErrOutOfRange, "broadcast"},
		{"ovn-default", "100.64.0.7", ipam.ErrOutOfRange, "100.64.0.7 belongs to subnet join (100.64.0.0/16), not to subnet ovn-default"},
		{"ovn-default", "10.66.0.7", ipam.ErrOutOfRange, "belongs to subnet dual (10.66.0.0/24)"},
		{"ovn-default", "192.168.1.1", ipam.ErrOutOfRange, "192.168.1.1 is outside subnet ovn-default ([10.42.0.0/16])"},
		{"ovn-default", "fd00:66::5", ipam.ErrOutOfRange, "belongs to subnet dual (fd00:66::/120)"},
		{"dual", "fd00:66::1", ipam.ErrGateway, "gateway of subnet dual"},
		{"dual", "fd00:66::7", nil, ""},
		{"nope", "10.42.0.5", ipam.ErrUnknownSubnet, "nope"},
	}
	for _, c := range cases {
		err := m.CheckStatic(c.subnet, addrs(c.ip))
		if !errors.Is(err, c.want) || c.want != nil && !strings.Contains(err.Error(), c.says) {
			t.Errorf("CheckStatic(%s, %s) = %v, want %v saying %q", c.subnet, c.ip, err, c.want, c.says)
		}
	}
	// Allocate refuses the same pins with the same words.
	_, err := m.Allocate(context.Background(), ipam.Request{Subnet: "ovn-default", Owner: pod("p"), IPs: addrs("100.64.0.7")})
	if !errors.Is(err, ipam.ErrOutOfRange) || !strings.Contains(err.Error(), "belongs to subnet join") {
		t.Fatalf("Allocate of another subnet's address: %v", err)
	}
}
