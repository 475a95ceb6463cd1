package hostnet

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
)

// TestNodePortIPv6WithoutKubeProxy serves a dual-stack Service's node ports on the host's IPv6
// address from an outside namespace reachable only over IPv6, as
// TestNodePortWithoutKubeProxy does for IPv4:
//
//	outside (2001:db8:1::2) eth0 ── eth1 host (2001:db8:1::1) ovn0 (fd00:100:64::2) ── eth0 cluster (fd00:100:64::1, 2001:cafe:43::5, 2001:cafe:42::5)
//
// The IPv6 rules live in "ip6 edgeovn-svc", written beside the IPv4 table and removed with it;
// an IPv6 external IP is served there too (the node role does not hand it any yet).
func TestNodePortIPv6WithoutKubeProxy(t *testing.T) {
	needRoot(t)
	host, cluster, outside := serviceWiring6(t)
	spec := &ServiceSpec{Interface: "ovn0", NodePorts: []NodePort{
		{Protocol: "tcp", Port: 30080, ClusterIP: netip.MustParseAddrPort("10.43.0.5:80")},
		{Protocol: "tcp", Port: 30080, ClusterIP: netip.MustParseAddrPort("[2001:cafe:43::5]:80"), IPv6: true},
		{Protocol: "tcp", Port: 30081, LocalOnly: true, IPv6: true, Local: []netip.AddrPort{netip.MustParseAddrPort("[2001:cafe:42::5]:8080")}},
	}}
	inNS(t, host, func() error { return EnsureServices(context.Background(), spec, nil) })

	if got := tcpSource(t, outside, cluster, "[2001:cafe:43::5]:80", "[2001:db8:1::1]:30080"); got != "fd00:100:64::2" {
		t.Errorf("IPv6, externalTrafficPolicy Cluster: the ClusterIP saw %q, want the host's IPv6 join address fd00:100:64::2", got)
	}
	if got := tcpSource(t, outside, cluster, "[2001:cafe:42::5]:8080", "[2001:db8:1::1]:30081"); got != "2001:db8:1::2" {
		t.Errorf("IPv6, externalTrafficPolicy Local: the endpoint saw %q, want the client's address 2001:db8:1::2", got)
	}
	// An IPv6 external IP the outside routes to the host: to the IPv6 ClusterIP, masqueraded.
	spec.ServiceIPs = []ServiceIP{{Protocol: "tcp", IP: netip.MustParseAddrPort("[2001:db8:5::7]:80"),
		ClusterIP: netip.MustParseAddrPort("[2001:cafe:43::5]:80")}}
	inNS(t, host, func() error { return EnsureServices(context.Background(), spec, nil) })
	inNS(t, outside, func() error {
		eth0, err := netlinksafe.LinkByName("eth0")
		if err != nil {
			return err
		}
		return netlink.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Dst: prefixToIPNet(netip.MustParsePrefix("2001:db8:5::/64")),
			Gw: net.ParseIP("2001:db8:1::1")})
	})
	if got := tcpSource(t, outside, cluster, "[2001:cafe:43::5]:80", "[2001:db8:5::7]:80"); got != "fd00:100:64::2" {
		t.Errorf("IPv6 external IP, Cluster: the ClusterIP saw %q, want the host's IPv6 join address fd00:100:64::2", got)
	}
	spec.ServiceIPs = nil
	var tables []string
	inNS(t, host, func() (err error) { tables, err = OwnedTables(); return err })
	if strings.Join(tables, ",") != "ip "+svcTable+",ip6 "+svcTable {
		t.Errorf("owned tables %v, want ip and ip6 %s", tables, svcTable)
	}

	// Without IPv6 ports the IPv6 table goes; with no spec both go.
	spec.NodePorts = spec.NodePorts[:1]
	inNS(t, host, func() error { return EnsureServices(context.Background(), spec, nil) })
	inNS(t, host, func() (err error) { tables, err = OwnedTables(); return err })
	if strings.Join(tables, ",") != "ip "+svcTable {
		t.Errorf("owned tables with IPv4 ports only %v, want ip %s alone", tables, svcTable)
	}
	if got := tcpSource(t, outside, cluster, "[2001:cafe:43::5]:80", "[2001:db8:1::1]:30080"); got != "" {
		t.Errorf("IPv6 node port still served after its removal: the ClusterIP saw %q", got)
	}
	inNS(t, host, func() error { return EnsureServices(context.Background(), nil, nil) })
	inNS(t, host, func() (err error) { tables, err = OwnedTables(); return err })
	if len(tables) != 0 {
		t.Errorf("tables left after removal: %v", tables)
	}
}

// TestNodePortFamilyRejected: a node port whose addresses are not of its family is refused,
// naming it, and the tables keep what they had.
func TestNodePortFamilyRejected(t *testing.T) {
	for name, np := range map[string]NodePort{
		"v4 cluster IP on the IPv6 port": {Protocol: "tcp", Port: 30080, IPv6: true, ClusterIP: netip.MustParseAddrPort("10.43.0.5:80")},
		"v6 cluster IP on the IPv4 port": {Protocol: "tcp", Port: 30080, ClusterIP: netip.MustParseAddrPort("[2001:cafe:43::5]:80")},
		"v4-mapped cluster IP":           {Protocol: "tcp", Port: 30080, IPv6: true, ClusterIP: netip.MustParseAddrPort("[::ffff:10.43.0.5]:80")},
		"v4 endpoint on the IPv6 port":   {Protocol: "tcp", Port: 30080, IPv6: true, LocalOnly: true, Local: []netip.AddrPort{netip.MustParseAddrPort("10.42.0.5:80")}},
	} {
		err := (&ServiceSpec{Interface: "ovn0", NodePorts: []NodePort{np}}).Validate()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "node port tcp/30080") {
			t.Errorf("%s: err = %v, want ErrInvalid naming node port tcp/30080", name, err)
		}
	}
}

// serviceWiring6 is serviceWiring with IPv6 addresses beside the IPv4 ones (the host's IPv6
// join address and routes written by wireLink, as in a dual-stack cluster).
func serviceWiring6(t *testing.T) (host, cluster, outside ns.NetNS) {
	t.Helper()
	host, cluster, outside = serviceWiring(t)
	spec := dualSpec()
	spec.Routes = append(spec.Routes, netip.MustParsePrefix("10.43.0.0/16"), netip.MustParsePrefix("2001:cafe:43::/112"))
	spec.Masquerade = nil
	inNS(t, host, func() error {
		if err := configure6("eth1", "2001:db8:1::1/64"); err != nil {
			return err
		}
		return wireLink(context.Background(), spec, nil)
	})
	inNS(t, cluster, func() error {
		if err := configure6("eth0", "fd00:100:64::1/112", "2001:cafe:43::5/128", "2001:cafe:42::5/128"); err != nil {
			return err
		}
		eth0, err := netlinksafe.LinkByName("eth0")
		if err != nil {
			return err
		}
		return netlink.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Gw: net.ParseIP("fd00:100:64::2")})
	})
	inNS(t, outside, func() error { return configure6("eth0", "2001:db8:1::2/64") })
	return host, cluster, outside
}
