package hostnet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

func dualSpec() Spec {
	s := testSpec()
	s.Address6, s.Gateway6 = netip.MustParsePrefix("fd00:100:64::2/112"), netip.MustParseAddr("fd00:100:64::1")
	s.Routes = append(s.Routes, netip.MustParsePrefix("2001:cafe:42::/56"))
	s.Masquerade = append(s.Masquerade, netip.MustParsePrefix("2001:cafe:42::/56"))
	return s
}

// TestValidateDualStack: each family's join address comes with its gateway, a route needs a
// join address of its family, and an IPv6-only spec is whole.
func TestValidateDualStack(t *testing.T) {
	if err := dualSpec().Validate(); err != nil {
		t.Fatalf("dual stack: %v", err)
	}
	v6 := dualSpec()
	v6.Address, v6.Gateway = netip.Prefix{}, netip.Addr{}
	v6.Routes, v6.Masquerade = v6.Routes[1:], v6.Masquerade[1:]
	if err := v6.Validate(); err != nil {
		t.Fatalf("ipv6 only: %v", err)
	}
	for want, mut := range map[string]func(*Spec){
		"routes: 2001:cafe:42::/56 has no join address of its family": func(s *Spec) { s.Address6, s.Gateway6 = netip.Prefix{}, netip.Addr{} },
		"gateway6 100.64.0.1 is not an IPv6 address":                  func(s *Spec) { s.Gateway6 = s.Gateway },
		"gateway6 fd00:100:65::1 is not another address in":           func(s *Spec) { s.Gateway6 = netip.MustParseAddr("fd00:100:65::1") },
		"address6 100.64.0.2/16 is not an IPv6 address":               func(s *Spec) { s.Address6 = s.Address },
		"address: neither an IPv4 nor an IPv6 join address": func(s *Spec) {
			s.Address, s.Gateway, s.Address6, s.Gateway6, s.Routes = netip.Prefix{}, netip.Addr{}, netip.Prefix{}, netip.Addr{}, nil
		},
	} {
		s := dualSpec()
		mut(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want %q", err, want)
		}
	}
}

// TestWireLinkDualStack: ovn0 gets both join addresses, each family's pod prefixes are routed
// via that family's gateway with its join address as source, IPv6 forwarding goes on, the
// IPv6 masquerade table is written, and an uplink whose default route came from a router
// advertisement keeps accepting them (accept_ra 2) while one configured otherwise is left as
// it is. A second wire changes nothing.
func TestWireLinkDualStack(t *testing.T) {
	in := setupHost(t)
	spec := dualSpec()
	in(func() error {
		must(t, addLink("eth1"))
		eth0, err := netlinksafe.LinkByName("eth0")
		must(t, err)
		for _, l := range []string{"eth0", "eth1"} {
			must(t, os.WriteFile(filepath.Join(ip6ConfRoot, l, "accept_ra"), []byte("1"), 0o644))
		}
		must(t, netlink.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Dst: prefixToIPNet(netip.MustParsePrefix("::/0")),
			Gw: net.ParseIP("fe80::1"), Protocol: unix.RTPROT_RA, Flags: int(netlink.FLAG_ONLINK)}))
		must(t, os.WriteFile(ip6Forward, []byte("0"), 0o644))

		log, buf := logBuffer()
		if err := wireLink(context.Background(), spec, log); err != nil {
			t.Fatalf("wire: %v", err)
		}
		checkWired6(t, spec)
		for l, want := range map[string]string{"eth0": "2", "eth1": "1", "ovn0": "0"} {
			if got := sysctl6(t, l, "accept_ra"); got != want {
				t.Errorf("%s accept_ra %s, want %s", l, got, want)
			}
		}
		if got := readFile(t, ip6Forward); got != "1" {
			t.Errorf("ipv6 forwarding %s, want 1", got)
		}
		if !has6Table(t) {
			t.Errorf("no ip6 %s table", natTable)
		}
		state := readState6(t)
		buf.Reset()
		if err := wireLink(context.Background(), spec, log); err != nil {
			t.Fatalf("wire again: %v", err)
		}
		if again := readState6(t); again != state {
			t.Errorf("second wire changed the host:\n%s\nwas\n%s", again, state)
		}
		if buf.Len() != 0 {
			t.Errorf("second wire reported changes:\n%s", buf)
		}
		return nil
	})
}

// TestWireLinkIPv6Only: without an IPv4 join address ovn0 holds only the IPv6 one and IPv6
// routes; IPv4 forwarding is not touched.
func TestWireLinkIPv6Only(t *testing.T) {
	in := setupHost(t)
	spec := dualSpec()
	spec.Address, spec.Gateway = netip.Prefix{}, netip.Addr{}
	spec.Routes, spec.Masquerade = spec.Routes[1:], spec.Masquerade[1:]
	in(func() error {
		must(t, os.WriteFile(ipForward, []byte("0"), 0o644))
		if err := wireLink(context.Background(), spec, nil); err != nil {
			t.Fatalf("wire: %v", err)
		}
		checkWired6(t, spec)
		if got := readFile(t, ipForward); got != "0" {
			t.Errorf("ipv4 forwarding turned %s on an IPv6-only host", got)
		}
		return nil
	})
}

func checkWired6(t *testing.T, spec Spec) {
	t.Helper()
	link, err := netlinksafe.LinkByName(spec.Interface)
	must(t, err)
	addrs, err := netlinksafe.AddrList(link, netlink.FAMILY_ALL)
	must(t, err)
	var got []string
	for _, a := range addrs {
		if !a.IP.IsLinkLocalUnicast() {
			got = append(got, fmt.Sprintf("%s tentative=%v", a.IPNet, a.Flags&unix.IFA_F_TENTATIVE != 0))
		}
	}
	var want []string
	for _, p := range []netip.Prefix{spec.Address, spec.Address6} {
		if p.IsValid() {
			want = append(want, p.String()+" tentative=false")
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s addresses %v, want %v", spec.Interface, got, want)
	}
	routes, err := netlinksafe.RouteList(link, netlink.FAMILY_ALL)
	must(t, err)
	var via []string
	for _, r := range routes {
		if r.Gw != nil && r.Protocol == RouteProtocol {
			via = append(via, r.Dst.String()+" via "+r.Gw.String()+" src "+r.Src.String())
		}
	}
	var wantVia []string
	for _, p := range spec.Routes {
		gw, src := spec.gatewayFor(p)
		wantVia = append(wantVia, p.String()+" via "+gw.String()+" src "+src.Addr().String())
	}
	if !slices.Equal(via, wantVia) {
		t.Errorf("routes through %s %v, want %v", spec.Interface, via, wantVia)
	}
}

func sysctl6(t *testing.T, link, key string) string {
	t.Helper()
	return readFile(t, filepath.Join(ip6ConfRoot, link, key))
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	return strings.TrimSpace(string(b))
}

func has6Table(t *testing.T) bool {
	t.Helper()
	conn, err := nftables.New()
	must(t, err)
	ts, err := conn.ListTablesOfFamily(nftables.TableFamilyIPv6)
	must(t, err)
	return slices.ContainsFunc(ts, func(tb *nftables.Table) bool { return tb.Name == natTable })
}

// readState6 is what a second wire must not change: every address and route of both
// families, the forwarding and accept_ra sysctls.
func readState6(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	addrs, err := netlinksafe.AddrList(nil, netlink.FAMILY_ALL)
	must(t, err)
	for _, a := range addrs {
		fmt.Fprintln(&b, a.IPNet, a.Flags)
	}
	routes, err := netlinksafe.RouteList(nil, netlink.FAMILY_ALL)
	must(t, err)
	for _, r := range routes {
		fmt.Fprintln(&b, r.String())
	}
	fmt.Fprintln(&b, readFile(t, ipForward), readFile(t, ip6Forward), sysctl6(t, "eth0", "accept_ra"), sysctl6(t, "ovn0", "accept_ra"))
	return b.String()
}
