package ipam_test

import (
	"context"
	"net"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

func TestDerivedMAC(t *testing.T) {
	ctx := context.Background()
	m, _ := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24", "fd00::/120"), Gateways: addrs("10.0.0.1")},
		ipam.Subnet{Name: "v6", CIDRs: prefixes("fd01::/120")})
	tests := []struct {
		name string
		req  ipam.Request
		want string // "" means: any locally administered unicast MAC other than taken
	}{
		{"from the IPv4 address", ipam.Request{Subnet: "s", Owner: pod("a")}, "0a:58:0a:00:00:02"},
		{"a static MAC takes the next derived one", ipam.Request{Subnet: "s", Owner: pod("b"), MAC: net.HardwareAddr{0x0a, 0x58, 10, 0, 0, 4}}, "0a:58:0a:00:00:04"},
		{"from the IPv6 address on IPv6 only", ipam.Request{Subnet: "v6", Owner: pod("c")}, "0a:58:00:00:00:01"},
		{"derived one held: random", ipam.Request{Subnet: "s", Owner: pod("d")}, ""},
	}
	for _, tt := range tests {
		a, err := m.Allocate(ctx, tt.req)
		must(t, err)
		switch {
		case tt.want != "" && a.MAC.String() != tt.want:
			t.Errorf("%s: got %s, want %s", tt.name, a.MAC, tt.want)
		case tt.want == "" && (a.MAC[0]&0x03 != 0x02 || a.MAC.String() == "0a:58:0a:00:00:04"):
			t.Errorf("%s: got %s", tt.name, a.MAC)
		}
	}
	checkUnique(t, m.Allocations())
}
