package hostnet

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netlink"
)

// setupHost makes a namespace with a veth ovn0 (standing in for the OVS internal port) and
// an eth0 with its own address and route, which Ensure must never touch.
func setupHost(t *testing.T) func(func() error) {
	t.Helper()
	needRoot(t)
	host := newNS(t)
	in := func(f func() error) { t.Helper(); inNS(t, host, f) }
	in(func() error {
		if err := addLink("ovn0"); err != nil {
			return err
		}
		if err := addLink("eth0"); err != nil {
			return err
		}
		eth0, err := netlinksafe.LinkByName("eth0")
		if err != nil {
			return err
		}
		if err := netlink.AddrAdd(eth0, &netlink.Addr{IPNet: prefixToIPNet(netip.MustParsePrefix("192.0.2.1/24"))}); err != nil {
			return err
		}
		if err := netlink.LinkSetUp(eth0); err != nil {
			return err
		}
		return netlink.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index,
			Dst: prefixToIPNet(netip.MustParsePrefix("198.51.100.0/24")), Gw: net.ParseIP("192.0.2.254")})
	})
	return in
}

func TestWireLink(t *testing.T) {
	in := setupHost(t)
	spec := testSpec()
	ctx := context.Background()
	in(func() error {
		before := readState(t)
		log, buf := logBuffer()
		if err := wireLink(ctx, spec, log); err != nil {
			t.Fatalf("wire: %v", err)
		}
		checkWired(t, spec)
		after := readState(t)
		if got, want := linesOf(after.Addrs, "eth0"), linesOf(before.Addrs, "eth0"); !slices.Equal(got, want) {
			t.Errorf("eth0 addresses changed: %v, were %v", got, want)
		}
		if got, want := linesOf(after.Routes, "198.51.100.0/24"), linesOf(before.Routes, "198.51.100.0/24"); len(got) != 1 || !slices.Equal(got, want) {
			t.Errorf("eth0's route changed: %v, was %v", got, want)
		}

		buf.Reset()
		if err := wireLink(ctx, spec, log); err != nil {
			t.Fatalf("wire again: %v", err)
		}
		if again := readState(t); !reflect.DeepEqual(again, after) {
			t.Errorf("second wire changed the host:\n%+v\nwas\n%+v", again, after)
		}
		if buf.Len() != 0 {
			t.Errorf("second wire reported changes:\n%s", buf)
		}
		return nil
	})
}

func TestWireLinkFollowsSpecChanges(t *testing.T) {
	in := setupHost(t)
	spec := testSpec()
	ctx := context.Background()
	in(func() error {
		if err := wireLink(ctx, spec, nil); err != nil {
			t.Fatalf("wire: %v", err)
		}
		// A new join address: the old one and routes from it go, the routes use the new source.
		spec.Address = netip.MustParsePrefix("100.64.0.3/16")
		spec.MAC = mustMAC("0a:58:64:40:00:03")
		spec.MTU = 1300
		// Another cluster CIDR and a second masqueraded prefix.
		spec.Routes = []netip.Prefix{netip.MustParsePrefix("10.52.0.0/16"), netip.MustParsePrefix("10.53.0.0/24")}
		spec.Masquerade = []netip.Prefix{netip.MustParsePrefix("10.52.0.0/16"), netip.MustParsePrefix("10.53.0.0/24")}
		if err := wireLink(ctx, spec, nil); err != nil {
			t.Fatalf("rewire: %v", err)
		}
		checkWired(t, spec)
		if old := linesOf(readState(t).Routes, "10.42.0.0/16"); len(old) != 0 {
			t.Errorf("route to the old cluster CIDR kept: %v", old)
		}

		// Drift made by someone else is repaired: a stale address and a stale route via
		// ovn0, the link down, and an extra chain in our table.
		ovn0, err := netlinksafe.LinkByName("ovn0")
		if err != nil {
			return err
		}
		must(t, netlink.AddrAdd(ovn0, &netlink.Addr{IPNet: prefixToIPNet(netip.MustParsePrefix("100.65.0.9/16"))}))
		must(t, netlink.RouteAdd(&netlink.Route{LinkIndex: ovn0.Attrs().Index,
			Dst: prefixToIPNet(netip.MustParsePrefix("10.99.0.0/16")), Gw: net.ParseIP("100.64.0.1")}))
		addForeignChain(t)
		if err := wireLink(ctx, spec, nil); err != nil {
			t.Fatalf("repair: %v", err)
		}
		checkWired(t, spec)
		if stale := linesOf(readState(t).Routes, "10.99.0.0/16"); len(stale) != 0 {
			t.Errorf("stale route via ovn0 kept: %v", stale)
		}
		must(t, netlink.LinkSetDown(ovn0))
		if err := wireLink(ctx, spec, nil); err != nil {
			t.Fatalf("repair after link down: %v", err)
		}
		checkWired(t, spec)

		// No masquerade: the table goes, and only it.
		spec.Masquerade = nil
		log, buf := logBuffer()
		if err := wireLink(ctx, spec, log); err != nil {
			t.Fatalf("wire without masquerade: %v", err)
		}
		if tables, _ := readNAT(t); slices.Contains(tables, natTable) {
			t.Errorf("table %s kept with no masquerade prefixes: %v", natTable, tables)
		}
		if tables, _ := readNAT(t); !slices.Contains(tables, "other") {
			t.Errorf("someone else's table was deleted: %v", tables)
		}
		buf.Reset()
		if err := wireLink(ctx, spec, log); err != nil || buf.Len() != 0 {
			t.Errorf("second wire without masquerade: %v, changes:\n%s", err, buf)
		}
		return nil
	})
}

func TestWireLinkBadSpecChangesNothing(t *testing.T) {
	in := setupHost(t)
	ctx := context.Background()
	in(func() error {
		if err := wireLink(ctx, testSpec(), nil); err != nil {
			t.Fatalf("wire: %v", err)
		}
		before := readState(t)
		bad := map[string]func(*Spec){
			"address":    func(s *Spec) { s.Address = netip.MustParsePrefix("fd00::2/64") },
			"gateway":    func(s *Spec) { s.Gateway = netip.MustParseAddr("10.0.0.1") },
			"routes":     func(s *Spec) { s.Routes = []netip.Prefix{{}} },
			"masquerade": func(s *Spec) { s.Masquerade = []netip.Prefix{netip.MustParsePrefix("10.42.0.1/16")} },
			"mac":        func(s *Spec) { s.MAC = mustMAC("ff:ff:ff:ff:ff:ff") },
			"interface":  func(s *Spec) { s.Interface = "" },
		}
		for field, edit := range bad {
			s := testSpec()
			edit(&s)
			err := wireLink(ctx, s, nil)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), field) {
				t.Errorf("bad %s: error %v, want ErrInvalid naming %s", field, err, field)
			}
		}
		if after := readState(t); !reflect.DeepEqual(after, before) {
			t.Errorf("bad specs changed the host:\n%+v\nwas\n%+v", after, before)
		}
		return nil
	})
}

// checkWired checks the namespace against spec through netlink and nftables.
func checkWired(t *testing.T, spec Spec) {
	t.Helper()
	link, err := netlinksafe.LinkByName(spec.Interface)
	if err != nil {
		t.Fatal(err)
	}
	a := link.Attrs()
	if a.HardwareAddr.String() != spec.MAC.String() || a.MTU != spec.MTU || a.Flags&net.FlagUp == 0 {
		t.Errorf("%s: mac %s mtu %d flags %v, want mac %s mtu %d up", a.Name, a.HardwareAddr, a.MTU, a.Flags, spec.MAC, spec.MTU)
	}
	addrs, err := netlinksafe.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	if len(addrs) != 1 || addrs[0].IPNet.String() != spec.Address.String() {
		t.Errorf("%s addresses %v, want only %s", a.Name, addrs, spec.Address)
	}
	routes, err := netlinksafe.RouteList(link, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	var via []string
	for _, r := range routes {
		if r.Gw != nil {
			via = append(via, r.Dst.String()+" via "+r.Gw.String()+" src "+r.Src.String())
		}
	}
	var want []string
	for _, p := range spec.Routes {
		want = append(want, p.String()+" via "+spec.Gateway.String()+" src "+spec.Address.Addr().String())
	}
	slices.Sort(via)
	slices.Sort(want)
	if !slices.Equal(via, want) {
		t.Errorf("routes via %s: %v, want %v", a.Name, via, want)
	}
	if fwd := readState(t).Forward; fwd != "1" {
		t.Errorf("ip_forward = %s, want 1", fwd)
	}
	checkNAT(t, spec)
}

// checkNAT checks the table holds one base chain, nat postrouting at srcnat priority, with one
// masquerade rule per prefix, in order.
func checkNAT(t *testing.T, spec Spec) {
	t.Helper()
	conn, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	chains, err := conn.ListChainsOfTableFamily(nftables.TableFamilyIPv4)
	if err != nil {
		t.Fatal(err)
	}
	var ours []*nftables.Chain
	for _, c := range chains {
		if c.Table.Name == natTable {
			ours = append(ours, c)
		}
	}
	if len(ours) != 1 {
		t.Fatalf("table %s has %d chains, want 1", natTable, len(ours))
	}
	c := ours[0]
	if c.Name != natChain || c.Type != nftables.ChainTypeNAT || *c.Hooknum != *nftables.ChainHookPostrouting ||
		*c.Priority != 100 {
		t.Errorf("chain %s type %s hook %d priority %d, want postrouting nat hook postrouting priority 100",
			c.Name, c.Type, *c.Hooknum, *c.Priority)
	}
	rules, err := conn.GetRules(c.Table, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != len(spec.Masquerade) {
		t.Fatalf("%d rules, want %d", len(rules), len(spec.Masquerade))
	}
	for i, r := range rules {
		checkRule(t, r.Exprs, spec.Masquerade[i], spec.Interface)
	}
}

// checkRule reads the rule as nft would print it, without trusting masqueradeExprs.
func checkRule(t *testing.T, exprs []expr.Any, p netip.Prefix, ifname string) {
	t.Helper()
	var got []string
	for _, e := range exprs {
		switch e := e.(type) {
		case *expr.Payload:
			got = append(got, map[uint32]string{12: "ip saddr", 16: "ip daddr"}[e.Offset])
		case *expr.Bitwise:
			got = append(got, "/"+net.IP(e.Mask).String())
		case *expr.Cmp:
			op := map[expr.CmpOp]string{expr.CmpOpEq: "==", expr.CmpOpNeq: "!="}[e.Op]
			if len(e.Data) == 4 {
				got = append(got, op+" "+net.IP(e.Data).String())
			} else {
				got = append(got, op+" "+strings.TrimRight(string(e.Data), "\x00"))
			}
		case *expr.Meta:
			got = append(got, map[expr.MetaKey]string{expr.MetaKeyOIFNAME: "oifname"}[e.Key])
		case *expr.Masq:
			got = append(got, "masquerade")
		default:
			got = append(got, "?")
		}
	}
	mask := "/" + net.IP(net.CIDRMask(p.Bits(), 32)).String()
	want := []string{"ip saddr", mask, "== " + p.Addr().String(), "ip daddr", mask, "!= " + p.Addr().String(),
		"oifname", "!= " + ifname, "masquerade"}
	if !slices.Equal(got, want) {
		t.Errorf("rule for %s:\n got %q\nwant %q", p, got, want)
	}
}

// addForeignChain adds a chain to edgeovn's table, and a table of someone else's.
func addForeignChain(t *testing.T) {
	t.Helper()
	conn, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	conn.AddChain(&nftables.Chain{Name: "intruder", Table: table(nftables.TableFamilyIPv4)})
	conn.AddTable(&nftables.Table{Name: "other", Family: nftables.TableFamilyIPv4})
	must(t, conn.Flush())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// linesOf keeps the lines that mention s.
func linesOf(lines []string, s string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}
