package hostnet

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
)

// TestServiceIPsWithoutKubeProxy serves an external IP that is not the host's own
// (203.0.113.7, routed to the host by the outside namespace as a LAN router or MetalLB would
// have it) with both traffic policies, on the wiring of TestNodePortWithoutKubeProxy.
// Cluster: the ClusterIP sees the host's join address. Local: the endpoint sees the client;
// with no local endpoint the connection is dropped. The host's own connection to a Local
// Service IP goes to the ClusterIP (never subject to the external policy).
func TestServiceIPsWithoutKubeProxy(t *testing.T) {
	needRoot(t)
	host, cluster, outside := serviceWiring(t)
	inNS(t, outside, func() error {
		eth0, err := netlinksafe.LinkByName("eth0")
		if err != nil {
			return err
		}
		_, dst, _ := net.ParseCIDR("203.0.113.0/24")
		return netlink.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Dst: dst, Gw: net.ParseIP("192.0.2.1")})
	})
	spec := &ServiceSpec{Interface: "ovn0", ServiceIPs: []ServiceIP{
		{Protocol: "tcp", IP: netip.MustParseAddrPort("203.0.113.7:80"), ClusterIP: netip.MustParseAddrPort("10.43.0.5:80")},
		{Protocol: "tcp", IP: netip.MustParseAddrPort("203.0.113.7:81"), ClusterIP: netip.MustParseAddrPort("10.43.0.5:81"),
			LocalOnly: true, Local: []netip.AddrPort{netip.MustParseAddrPort("10.42.0.5:8080")}},
		{Protocol: "tcp", IP: netip.MustParseAddrPort("203.0.113.7:82"), ClusterIP: netip.MustParseAddrPort("10.43.0.5:82"), LocalOnly: true},
	}}
	inNS(t, host, func() error {
		// a real host has a default route: the host's own connection needs a route before
		// the output hook's DNAT sends it elsewhere
		eth1, err := netlinksafe.LinkByName("eth1")
		if err != nil {
			return err
		}
		if err := netlink.RouteAdd(&netlink.Route{LinkIndex: eth1.Attrs().Index, Gw: net.ParseIP("192.0.2.2")}); err != nil {
			return err
		}
		return EnsureServices(context.Background(), spec, nil)
	})

	if got := tcpSource(t, outside, cluster, "10.43.0.5:80", "203.0.113.7:80"); got != "100.64.0.2" {
		t.Errorf("externalTrafficPolicy Cluster: the ClusterIP saw %q, want the host's join address 100.64.0.2", got)
	}
	if got := tcpSource(t, outside, cluster, "10.42.0.5:8080", "203.0.113.7:81"); got != "192.0.2.2" {
		t.Errorf("externalTrafficPolicy Local: the endpoint saw %q, want the client's address 192.0.2.2", got)
	}
	// With the IP on the host, a port not dropped would be refused by the host's stack.
	inNS(t, host, func() error { return configure("lo", "203.0.113.7/32") })
	var ne net.Error
	if err := dialFrom(outside, "203.0.113.7:82"); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("externalTrafficPolicy Local without a local endpoint: dial = %v, want a drop (timeout)", err)
	}
	if err := dialFrom(outside, "203.0.113.7:83"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a port of the host's own address that no Service has: dial = %v, want the host's refusal", err)
	}
	if got := tcpSource(t, host, cluster, "10.43.0.5:81", "203.0.113.7:81"); got != "100.64.0.2" {
		t.Errorf("the host's own connection to a Local service IP: the ClusterIP saw %q, want the join address 100.64.0.2", got)
	}
}

// dialFrom connects from the namespace and returns the error (nil when it connected).
func dialFrom(n ns.NetNS, addr string) error {
	var derr error
	_ = n.Do(func(ns.NetNS) error {
		c, err := net.DialTimeout("tcp4", addr, time.Second)
		if err == nil {
			c.Close()
		}
		derr = err
		return nil
	})
	return derr
}

// serviceWiring is the three namespaces of the node port tests, wired:
//
//	outside (192.0.2.2) eth0 ── eth1 host (192.0.2.1) ovn0 (100.64.0.2) ── eth0 cluster (100.64.0.1, 10.43.0.5, 10.42.0.5)
func serviceWiring(t *testing.T) (host, cluster, outside ns.NetNS) {
	t.Helper()
	host, cluster, outside = newNS(t), newNS(t), newNS(t)
	inNS(t, host, func() error {
		if err := addVeth("ovn0", "eth0", cluster); err != nil {
			return err
		}
		if err := addVeth("eth1", "eth0", outside); err != nil {
			return err
		}
		if err := configure("eth1", "192.0.2.1/24"); err != nil {
			return err
		}
		return wireLink(context.Background(), nodePortHostSpec(), nil)
	})
	inNS(t, cluster, func() error {
		if err := configure("eth0", "100.64.0.1/16", "10.43.0.5/32", "10.42.0.5/32"); err != nil {
			return err
		}
		eth0, err := netlinksafe.LinkByName("eth0")
		if err != nil {
			return err
		}
		return netlink.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Gw: net.ParseIP("100.64.0.2")})
	})
	inNS(t, outside, func() error { return configure("eth0", "192.0.2.2/24") })
	return host, cluster, outside
}

func TestServiceIPSpecRejectsBadInput(t *testing.T) {
	cip := netip.MustParseAddrPort("10.43.0.5:80")
	for name, s := range map[string]ServiceIP{
		"protocol":     {Protocol: "icmp", IP: netip.MustParseAddrPort("203.0.113.7:80"), ClusterIP: cip},
		"port 0":       {Protocol: "tcp", IP: netip.MustParseAddrPort("203.0.113.7:0"), ClusterIP: cip},
		"v6":           {Protocol: "tcp", IP: netip.MustParseAddrPort("[2001:db8::1]:80"), ClusterIP: cip},
		"no ClusterIP": {Protocol: "tcp", IP: netip.MustParseAddrPort("203.0.113.7:80")},
	} {
		err := EnsureServices(context.Background(), &ServiceSpec{Interface: "ovn0", ServiceIPs: []ServiceIP{s}}, nil)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "service IP") {
			t.Errorf("%s: err = %v, want ErrInvalid naming the service IP", name, err)
		}
	}
}
