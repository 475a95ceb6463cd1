package northbound

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
)

// TestSubnetRouteTable: against a real ovsdb-server, a Subnet's RouteTable becomes its router
// port's options:route_table, an option someone else set on the port stays, the same spec
// again writes nothing, an empty RouteTable removes the option, and a bad name is refused
// before anything is written.
func TestSubnetRouteTable(t *testing.T) {
	f := newFixture(t)
	sub := ensureClusterAndSubnet(t, f)
	f.srv.Run(t, "ovn-nbctl", "set", "Logical_Router_Port", "ovn-cluster-ovn-default", "options:gateway_mtu=1400")
	f.waitCache(t, "the foreign option", func() bool {
		lrp, _ := f.c.routerPortByName(f.ctx, "ovn-cluster-ovn-default")
		return lrp != nil && lrp.Options["gateway_mtu"] == "1400"
	})
	options := func() string {
		return strings.TrimSpace(f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=options", "find", "Logical_Router_Port", "name=ovn-cluster-ovn-default"))
	}
	sub.RouteTable = "rtb1"
	f.mustWrite(t, 1, "bind to rtb1", func() error { return f.c.EnsureSubnet(f.ctx, sub) })
	if got := options(); got != "gateway_mtu=1400 route_table=rtb1" {
		t.Errorf("options %q, want the foreign option and route_table=rtb1", got)
	}
	f.mustWrite(t, 0, "the same again", func() error { return f.c.EnsureSubnet(f.ctx, sub) })
	sub.RouteTable = ""
	f.mustWrite(t, 1, "back to the main table", func() error { return f.c.EnsureSubnet(f.ctx, sub) })
	if got := options(); got != "gateway_mtu=1400" {
		t.Errorf("options %q, want only the foreign option", got)
	}
	sub.RouteTable = "rtb 1"
	f.mustWrite(t, 0, "a bad name", func() error {
		if err := f.c.EnsureSubnet(f.ctx, sub); !errors.Is(err, ovn.ErrInvalid) {
			t.Errorf("bad route table: err = %v, want ErrInvalid", err)
		}
		return nil
	})
}

// TestVpcEcmpRoutes: a Vpc's routes of one prefix with different next hops are one row each
// (an ECMP group), in their route table, with ecmp_symmetric_reply when asked; the same spec
// again writes nothing; a next hop twice is refused before anything is written.
func TestVpcEcmpRoutes(t *testing.T) {
	f := newFixture(t)
	route := func(hop, table string, symmetric bool) StaticRouteSpec {
		return StaticRouteSpec{Prefix: netip.MustParsePrefix("0.0.0.0/0"), NextHop: netip.MustParseAddr(hop), RouteTable: table, SymmetricReply: symmetric}
	}
	spec := func(r ...StaticRouteSpec) VpcSpec { return VpcSpec{Name: "vpc-a", Routes: r} }
	f.mustWrite(t, 2, "router and group", func() error {
		return f.c.EnsureVpc(f.ctx, spec(route("10.0.0.2", "", true), route("10.0.0.3", "", true), route("10.0.0.2", "rtb1", false)))
	})
	list := func() string {
		return f.srv.Run(t, "ovn-nbctl", "--format=csv", "--no-headings", "--data=bare", "--columns=ip_prefix,nexthop,route_table,options", "list", "Logical_Router_Static_Route")
	}
	for _, want := range []string{"0.0.0.0/0,10.0.0.2,,ecmp_symmetric_reply=true", "0.0.0.0/0,10.0.0.3,,ecmp_symmetric_reply=true", "0.0.0.0/0,10.0.0.2,rtb1,"} {
		if !strings.Contains(list(), want+"\n") {
			t.Errorf("routes lack %q:\n%s", want, list())
		}
	}
	f.mustWrite(t, 0, "the same again", func() error {
		return f.c.EnsureVpc(f.ctx, spec(route("10.0.0.2", "", true), route("10.0.0.3", "", true), route("10.0.0.2", "rtb1", false)))
	})
	f.mustWrite(t, 1, "one next hop left, plain", func() error { return f.c.EnsureVpc(f.ctx, spec(route("10.0.0.3", "", false))) })
	if got := strings.TrimSpace(list()); got != "0.0.0.0/0,10.0.0.3,," {
		t.Errorf("routes %q, want the one left without the option", got)
	}
	f.mustWrite(t, 0, "a next hop twice", func() error {
		if err := f.c.EnsureVpc(f.ctx, spec(route("10.0.0.3", "", false), route("10.0.0.3", "", false))); !errors.Is(err, ovn.ErrInvalid) {
			t.Errorf("next hop twice: err = %v, want ErrInvalid", err)
		}
		return nil
	})
}
