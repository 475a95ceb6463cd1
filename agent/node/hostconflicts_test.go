package node

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/agent/config"
)

// TestRefuseOverlaps: the node's own guard leaves out the subnets on this host's networks,
// on the join network and, when edgeovn serves Services, in a Service CIDR, naming what is
// in the way; the others are kept in order.
func TestRefuseOverlaps(t *testing.T) {
	p := netip.MustParsePrefix
	r := &Role{req: Request{Cluster: config.Cluster{Services: true, ServiceCIDRs: []netip.Prefix{p("10.43.0.0/16")}}}}
	host := []netip.Prefix{p("192.0.2.0/24"), p("fd00:1::/64")}
	in := []netip.Prefix{p("10.42.0.0/16"), p("192.0.2.0/25"), p("10.43.1.0/24"), p("100.64.3.0/24"), p("fd00:1::/80"), p("10.66.0.0/16")}
	keep, refused := r.refuseOverlaps(in, []netip.Prefix{p("100.64.0.0/16")}, host)
	if want := []netip.Prefix{p("10.42.0.0/16"), p("10.66.0.0/16")}; !slices.Equal(keep, want) {
		t.Errorf("kept %v, want %v", keep, want)
	}
	var got []string
	for _, c := range refused {
		got = append(got, c.String())
	}
	want := []string{"192.0.2.0/25 (overlaps a network of this host 192.0.2.0/24)", "10.43.1.0/24 (overlaps Service CIDR 10.43.0.0/16)",
		"100.64.3.0/24 (overlaps the join network 100.64.0.0/16)", "fd00:1::/80 (overlaps a network of this host fd00:1::/64)"}
	if !slices.Equal(got, want) {
		t.Errorf("refused:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r.req.Services = false
	if keep, _ := r.refuseOverlaps([]netip.Prefix{p("10.43.1.0/24")}, []netip.Prefix{p("100.64.0.0/16")}, host); len(keep) != 1 {
		t.Errorf("without Services, a subnet in the Service CIDR is not this node's to refuse: kept %v", keep)
	}
}
