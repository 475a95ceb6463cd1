package node

import (
	"maps"
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/vishvananda/netlink"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestHostListeners: in a namespace of its own, the listening TCP sockets (IPv4, the IPv6
// wildcard as 0.0.0.0) and the bound, unconnected UDP sockets are read;
// an established connection, a connected UDP socket and an IPv6-only address are not.
func TestHostListeners(t *testing.T) {
	if os.Geteuid() != 0 {
		skip.Now(t, "needs root for a network namespace")
	}
	n, err := testutils.NewNS()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close(); _ = testutils.UnmountNS(n) })
	var got map[string]map[netip.AddrPort]bool
	var closers []interface{ Close() error }
	defer func() {
		for _, c := range closers {
			_ = c.Close()
		}
	}()
	err = n.Do(func(ns.NetNS) error {
		lo, err := netlinksafe.LinkByName("lo")
		if err != nil {
			return err
		}
		if err := netlink.LinkSetUp(lo); err != nil {
			return err
		}
		for _, l := range []struct{ netw, addr string }{{"tcp4", "127.0.0.1:2201"}, {"tcp", "[::]:2202"}, {"tcp6", "[::1]:2204"}} {
			ln, err := net.Listen(l.netw, l.addr)
			if err != nil {
				return err
			}
			closers = append(closers, ln)
		}
		c, err := net.Dial("tcp4", "127.0.0.1:2201") // an established pair, not listening
		if err != nil {
			return err
		}
		closers = append(closers, c)
		u, err := net.ListenPacket("udp4", "0.0.0.0:5301")
		if err != nil {
			return err
		}
		closers = append(closers, u)
		uc, err := net.Dial("udp4", "127.0.0.1:5301") // connected: not a listener
		if err != nil {
			return err
		}
		closers = append(closers, uc)
		got, err = hostListeners()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	wantTCP := []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:2202"), netip.MustParseAddrPort("127.0.0.1:2201")}
	wantUDP := []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:5301")}
	sorted := func(m map[netip.AddrPort]bool) []netip.AddrPort {
		return slices.SortedFunc(maps.Keys(m), func(a, b netip.AddrPort) int { return a.Compare(b) })
	}
	if !slices.Equal(sorted(got["tcp"]), wantTCP) || !slices.Equal(sorted(got["udp"]), wantUDP) {
		t.Errorf("hostListeners: tcp %v udp %v, want tcp %v udp %v", sorted(got["tcp"]), sorted(got["udp"]), wantTCP, wantUDP)
	}
}
