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

// TestServiceIPSourceRanges: a LoadBalancer IP with source ranges (Restricted) serves only
// the clients in them, with both traffic policies; another client of the same LAN is dropped
// (a timeout, where an unserved port of the host's address would be refused); Restricted with
// no range drops every client.
func TestServiceIPSourceRanges(t *testing.T) {
	needRoot(t)
	host, cluster, outside := serviceWiring(t)
	allowed := []netip.Prefix{netip.MustParsePrefix("192.0.2.2/32")}
	spec := &ServiceSpec{Interface: "ovn0", ServiceIPs: []ServiceIP{
		{Protocol: "tcp", IP: netip.MustParseAddrPort("203.0.113.7:80"), ClusterIP: netip.MustParseAddrPort("10.43.0.5:80"),
			Restricted: true, AllowFrom: allowed},
		{Protocol: "tcp", IP: netip.MustParseAddrPort("203.0.113.7:81"), ClusterIP: netip.MustParseAddrPort("10.43.0.5:81"),
			LocalOnly: true, Local: []netip.AddrPort{netip.MustParseAddrPort("10.42.0.5:8080")}, Restricted: true, AllowFrom: allowed},
		{Protocol: "tcp", IP: netip.MustParseAddrPort("203.0.113.7:82"), ClusterIP: netip.MustParseAddrPort("10.43.0.5:82"), Restricted: true},
	}}
	inNS(t, host, func() error {
		if err := configure("lo", "203.0.113.7/32"); err != nil {
			return err
		}
		return EnsureServices(context.Background(), spec, nil)
	})
	inNS(t, outside, func() error {
		if err := configure("eth0", "192.0.2.3/24"); err != nil { // a second client, secondary
			return err
		}
		eth0, err := netlinksafe.LinkByName("eth0")
		if err != nil {
			return err
		}
		_, dst, _ := net.ParseCIDR("203.0.113.0/24")
		return netlink.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Dst: dst, Gw: net.ParseIP("192.0.2.1")})
	})
	if got := tcpSource(t, outside, cluster, "10.43.0.5:80", "203.0.113.7:80"); got != "100.64.0.2" {
		t.Errorf("Cluster, an allowed client: the ClusterIP saw %q, want the join address 100.64.0.2", got)
	}
	if got := tcpSource(t, outside, cluster, "10.42.0.5:8080", "203.0.113.7:81"); got != "192.0.2.2" {
		t.Errorf("Local, an allowed client: the endpoint saw %q, want 192.0.2.2", got)
	}
	for _, c := range []struct{ from, to string }{{"192.0.2.3", "203.0.113.7:80"}, {"192.0.2.3", "203.0.113.7:81"}, {"192.0.2.2", "203.0.113.7:82"}} {
		var ne net.Error
		if err := dialFromSource(outside, c.from, c.to); !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%s from %s (outside the source ranges): dial = %v, want a drop (timeout)", c.to, c.from, err)
		}
	}
	if err := dialFromSource(outside, "192.0.2.3", "203.0.113.7:83"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a port no Service has, from 192.0.2.3: dial = %v, want the host's refusal", err)
	}
}

// dialFromSource connects from the namespace with a given source address.
func dialFromSource(n ns.NetNS, src, addr string) error {
	var derr error
	_ = n.Do(func(ns.NetNS) error {
		d := net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		c, err := d.Dial("tcp4", addr)
		if err == nil {
			c.Close()
		}
		derr = err
		return nil
	})
	return derr
}

func TestServiceIPSourceRangesRejectBadInput(t *testing.T) {
	base := ServiceIP{Protocol: "tcp", IP: netip.MustParseAddrPort("203.0.113.7:80"), ClusterIP: netip.MustParseAddrPort("10.43.0.5:80"), Restricted: true}
	for name, allow := range map[string]netip.Prefix{
		"IPv6":      netip.MustParsePrefix("2001:db8::/32"),
		"host bits": netip.MustParsePrefix("192.0.2.1/24"),
		"zero":      {},
	} {
		s := base
		s.AllowFrom = []netip.Prefix{allow}
		err := EnsureServices(context.Background(), &ServiceSpec{Interface: "ovn0", ServiceIPs: []ServiceIP{s}}, nil)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "source range") {
			t.Errorf("%s: err = %v, want ErrInvalid naming the source range", name, err)
		}
	}
}
