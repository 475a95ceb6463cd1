package hostnet

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/google/nftables"
	"github.com/vishvananda/netlink"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		skip.Now(t, "needs root to create network namespaces, links and nftables tables")
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

// inNS runs f inside n.
func inNS(t *testing.T, n ns.NetNS, f func() error) {
	t.Helper()
	if err := n.Do(func(ns.NetNS) error { return f() }); err != nil {
		t.Fatal(err)
	}
}

// addLink adds a veth called name whose peer, name+"p", is up in the same namespace: a link
// with carrier, as an OVS internal port has (this kernel has no dummy links).
func addLink(name string) error {
	peer := name + "p"
	if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: peer}); err != nil {
		return fmt.Errorf("add veth %s: %w", name, err)
	}
	p, err := netlinksafe.LinkByName(peer)
	if err == nil {
		err = netlink.LinkSetUp(p)
	}
	if err != nil {
		return fmt.Errorf("set %s up: %w", peer, err)
	}
	return nil
}

// logBuffer is a logger whose Info lines tests read: Ensure logs every change it makes.
func logBuffer() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})), &buf
}

// netState is everything Ensure may touch in a namespace, and more, as comparable text.
type netState struct {
	Links     []string // name, mac, mtu, up
	Addrs     []string // link: address
	Routes    []string // all IPv4 routes of the main table
	Forward   string
	NATRules  []string // handle and expressions of each rule in ip edgeovn postrouting
	NATTables []string // every IPv4 table
}

func readState(t *testing.T) netState {
	t.Helper()
	var s netState
	links, err := netlinksafe.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		a := l.Attrs()
		s.Links = append(s.Links, fmt.Sprintf("%s %s mtu %d up %v", a.Name, a.HardwareAddr, a.MTU, a.Flags&net.FlagUp != 0))
		addrs, err := netlinksafe.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			t.Fatal(err)
		}
		for _, ad := range addrs {
			if ad.IP.IsLinkLocalUnicast() {
				continue // the kernel adds IPv6 link-local addresses when it gets to it, not edgeovn
			}
			s.Addrs = append(s.Addrs, a.Name+": "+ad.IPNet.String())
		}
	}
	routes, err := netlinksafe.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		s.Routes = append(s.Routes, r.String())
	}
	fwd, err := os.ReadFile(ipForward)
	if err != nil {
		t.Fatal(err)
	}
	s.Forward = strings.TrimSpace(string(fwd))
	s.NATTables, s.NATRules = readNAT(t)
	return s
}

func readNAT(t *testing.T) (tables, rules []string) {
	t.Helper()
	conn, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	ts, err := conn.ListTablesOfFamily(nftables.TableFamilyIPv4)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range ts {
		tables = append(tables, tb.Name)
	}
	if !slices.Contains(tables, natTable) {
		return tables, nil
	}
	tb := table(nftables.TableFamilyIPv4)
	rs, err := conn.GetRules(tb, &nftables.Chain{Name: natChain, Table: tb})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		rules = append(rules, fmt.Sprintf("handle %d: %s", r.Handle, exprString(r)))
	}
	return tables, rules
}

func exprString(r *nftables.Rule) string {
	parts := make([]string, len(r.Exprs))
	for i, e := range r.Exprs {
		parts[i] = fmt.Sprintf("%T%+v", e, e)
	}
	return strings.Join(parts, " ")
}
