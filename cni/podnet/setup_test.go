package podnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/vishvananda/netlink"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

const testContainerID = "0123456789abcdef0123456789abcdef"

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		skip.Now(t, "needs root to create network namespaces and veths")
	}
}

// newNS creates a throwaway network namespace that is removed when the test ends.
func newNS(t *testing.T) ns.NetNS {
	t.Helper()
	n, err := testutils.NewNS()
	if err != nil {
		t.Fatalf("create netns: %v", err)
	}
	t.Cleanup(func() {
		_ = n.Close()
		_ = testutils.UnmountNS(n)
	})
	return n
}

// inNS runs f inside n: the test's "host" namespace stands in for the node's.
func inNS(t *testing.T, n ns.NetNS, f func() error) {
	t.Helper()
	if err := n.Do(func(ns.NetNS) error { return f() }); err != nil {
		t.Fatal(err)
	}
}

func parseAddrs(t *testing.T, ss ...string) []netip.Addr {
	t.Helper()
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func testRequest(podNS ns.NetNS) SetupRequest {
	mac, _ := net.ParseMAC("0a:58:0a:2a:00:05")
	return SetupRequest{
		Netns:             podNS.Path(),
		IfName:            "eth0",
		HostIfName:        HostIfName(testContainerID),
		MAC:               mac,
		IPs:               []netip.Prefix{netip.MustParsePrefix("10.42.0.5/24"), netip.MustParsePrefix("fd00:42::5/64")},
		Gateways:          []netip.Addr{netip.MustParseAddr("10.42.0.1"), netip.MustParseAddr("fd00:42::1")},
		MTU:               1400,
		DisableTxChecksum: true,
	}
}

func TestSetup(t *testing.T) {
	needRoot(t)
	hostNS, podNS := newNS(t), newNS(t)
	req := testRequest(podNS)
	ctx := context.Background()

	var res Result
	inNS(t, hostNS, func() (err error) {
		res, err = Setup(ctx, req)
		return err
	})
	if res.HostIf != req.HostIfName || res.PodIf != "eth0" || res.PodIfMAC.String() != req.MAC.String() || res.MTU != 1400 {
		t.Errorf("Setup result = %+v", res)
	}
	inNS(t, hostNS, func() error { return assertHostLink(t, req.HostIfName, 1400) })
	inNS(t, podNS, func() error { return assertPodIf(t, req) })
	inNS(t, hostNS, func() error {
		return Check(ctx, CheckRequest{Netns: req.Netns, IfName: "eth0", HostIfName: req.HostIfName, IPs: req.IPs, DisableTxChecksum: true})
	})
}

func assertHostLink(t *testing.T, name string, mtu int) error {
	t.Helper()
	link, err := netlink.LinkByName(name)
	if err != nil {
		t.Errorf("host link %s: %v", name, err)
		return nil
	}
	if link.Type() != "veth" || link.Attrs().MTU != mtu || link.Attrs().Flags&net.FlagUp == 0 {
		t.Errorf("host link %s: type %s mtu %d flags %v", name, link.Type(), link.Attrs().MTU, link.Attrs().Flags)
	}
	return nil
}

func assertPodIf(t *testing.T, req SetupRequest) error {
	t.Helper()
	link, err := netlink.LinkByName(req.IfName)
	if err != nil {
		t.Errorf("pod link %s: %v", req.IfName, err)
		return nil
	}
	a := link.Attrs()
	if a.HardwareAddr.String() != req.MAC.String() || a.MTU != req.MTU || a.Flags&net.FlagUp == 0 {
		t.Errorf("pod link: mac %s mtu %d flags %v", a.HardwareAddr, a.MTU, a.Flags)
	}
	have, err := linkPrefixes(link)
	if err != nil {
		return err
	}
	for _, p := range req.IPs {
		if !have[p] {
			t.Errorf("pod link lacks %s (has %v)", p, have)
		}
	}
	assertDefaultRoutes(t, link, req.Gateways)
	assertNoSLAAC(t, req)
	on, err := txChecksumOn(req.IfName)
	if err != nil {
		return err
	}
	if len(on) > 0 {
		t.Errorf("tx checksum offload still on: %v", on)
	}
	return nil
}

// assertNoSLAAC: a pod with an IPv6 address takes no router advertisement and makes no
// address of its own (Kube-OVN leaves RA off on the pod side): its addresses are allocated.
func assertNoSLAAC(t *testing.T, req SetupRequest) {
	t.Helper()
	if !slices.ContainsFunc(req.IPs, func(p netip.Prefix) bool { return p.Addr().Is6() }) {
		return
	}
	for _, key := range []string{"accept_ra", "autoconf"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/sys/net/ipv6/conf/%s/%s", req.IfName, key))
		if err != nil {
			t.Fatalf("read %s: %v", key, err)
		}
		if v := strings.TrimSpace(string(b)); v != "0" {
			t.Errorf("pod %s %s = %s, want 0", req.IfName, key, v)
		}
	}
}

func assertDefaultRoutes(t *testing.T, link netlink.Link, gws []netip.Addr) {
	t.Helper()
	routes, err := netlink.RouteList(link, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatalf("list routes: %v", err)
	}
	var got []string
	for _, r := range routes {
		if r.Dst == nil || (r.Dst.IP.IsUnspecified() && slices.Equal(r.Dst.Mask, net.CIDRMask(0, len(r.Dst.Mask)*8))) {
			got = append(got, r.Gw.String())
		}
	}
	for _, gw := range gws {
		if !slices.Contains(got, gw.String()) {
			t.Errorf("no default route via %s (default routes via %v)", gw, got)
		}
	}
}

func TestSetupTwiceReplacesPair(t *testing.T) {
	needRoot(t)
	hostNS, podNS := newNS(t), newNS(t)
	req := testRequest(podNS)
	ctx := context.Background()
	inNS(t, hostNS, func() error {
		// A half-made pair from a crashed attempt: host end present, peer elsewhere.
		stale := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: req.HostIfName}, PeerName: "stalepeer"}
		if err := netlink.LinkAdd(stale); err != nil {
			return err
		}
		if _, err := Setup(ctx, req); err != nil {
			return err
		}
		_, err := Setup(ctx, req)
		return err
	})
	inNS(t, hostNS, func() error {
		if _, err := netlink.LinkByName("stalepeer"); err == nil {
			t.Errorf("stale peer survived re-Setup")
		}
		return assertHostLink(t, req.HostIfName, req.MTU)
	})
	inNS(t, podNS, func() error { return assertPodIf(t, req) })
}

func TestSetupRejectsBadInput(t *testing.T) {
	needRoot(t)
	hostNS, podNS := newNS(t), newNS(t)
	missing := filepath.Join(t.TempDir(), "gone")
	notNS := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notNS, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*SetupRequest)
		want error
	}{
		{"empty netns", func(r *SetupRequest) { r.Netns = "" }, ErrInvalidRequest},
		{"missing netns", func(r *SetupRequest) { r.Netns = missing }, ErrInvalidNetns},
		{"file that is not a netns", func(r *SetupRequest) { r.Netns = notNS }, ErrInvalidNetns},
		{"no addresses", func(r *SetupRequest) { r.IPs = nil }, ErrInvalidRequest},
		{"host name too long", func(r *SetupRequest) { r.HostIfName = "0123456789abcdef" }, ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := testRequest(podNS)
			tt.edit(&req)
			inNS(t, hostNS, func() error {
				_, err := Setup(context.Background(), req)
				if !errors.Is(err, tt.want) {
					t.Errorf("Setup error = %v, want %v", err, tt.want)
				}
				return nil
			})
		})
	}
}

func TestSetupKeepsForeignPodLink(t *testing.T) {
	needRoot(t)
	hostNS, podNS := newNS(t), newNS(t)
	req := testRequest(podNS)
	inNS(t, podNS, func() error {
		return netlink.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "eth0"}})
	})
	inNS(t, hostNS, func() error {
		if _, err := Setup(context.Background(), req); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("Setup over a foreign eth0: error = %v, want ErrInvalidRequest", err)
		}
		if _, err := netlink.LinkByName(req.HostIfName); err == nil {
			t.Errorf("failed Setup left host link %s behind", req.HostIfName)
		}
		return nil
	})
	inNS(t, podNS, func() error {
		link, err := netlink.LinkByName("eth0")
		if err != nil || link.Type() != "bridge" {
			t.Errorf("foreign eth0 was touched: %v %v", link, err)
		}
		return nil
	})
}
