package hostnet

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/google/nftables"
)

// TestNodePortWithoutKubeProxy serves node ports on the host's address from an outside
// namespace. The "cluster" namespace behind ovn0 stands in for OVN: it holds the ClusterIP
// itself (as OVN's load balancer would answer for it) and a pod address.
//
//	outside (192.0.2.2) eth0 ── eth1 host (192.0.2.1) ovn0 (100.64.0.2) ── eth0 cluster (100.64.0.1, 10.43.0.5, 10.42.0.5)
//
// externalTrafficPolicy Cluster: the connection reaches the ClusterIP from the host's join
// address (masqueraded, so the reply comes back through the host). Local: it reaches the
// local endpoint with the client's own address.
func TestNodePortWithoutKubeProxy(t *testing.T) {
	needRoot(t)
	host, cluster, outside := serviceWiring(t)

	spec := &ServiceSpec{Interface: "ovn0", NodePorts: []NodePort{
		{Protocol: "tcp", Port: 30080, ClusterIP: netip.MustParseAddrPort("10.43.0.5:80")},
		{Protocol: "tcp", Port: 30081, LocalOnly: true, Local: []netip.AddrPort{netip.MustParseAddrPort("10.42.0.5:8080")}},
	}}
	inNS(t, host, func() error { return EnsureServices(context.Background(), spec, nil) })

	if got := tcpSource(t, outside, cluster, "10.43.0.5:80", "192.0.2.1:30080"); got != "100.64.0.2" {
		t.Errorf("externalTrafficPolicy Cluster: the ClusterIP saw %q, want the host's join address 100.64.0.2", got)
	}
	if got := tcpSource(t, outside, cluster, "10.42.0.5:8080", "192.0.2.1:30081"); got != "192.0.2.2" {
		t.Errorf("externalTrafficPolicy Local: the endpoint saw %q, want the client's address 192.0.2.2", got)
	}

	handles := func() []uint64 {
		var hs []uint64
		inNS(t, host, func() error {
			conn, err := nftables.New()
			if err != nil {
				return err
			}
			tb := &nftables.Table{Name: svcTable, Family: nftables.TableFamilyIPv4}
			rules, err := conn.GetRules(tb, &nftables.Chain{Name: "nodeports", Table: tb})
			for _, r := range rules {
				hs = append(hs, r.Handle)
			}
			return err
		})
		return hs
	}
	before := handles()
	inNS(t, host, func() error { return EnsureServices(context.Background(), spec, nil) })
	if after := handles(); len(before) != 2 || !equalHandles(before, after) {
		t.Errorf("a second ensure with the same spec rewrote the rules: handles %v then %v", before, after)
	}
	inNS(t, host, func() error { return EnsureServices(context.Background(), nil, nil) })
	if h := handles(); len(h) != 0 {
		t.Errorf("rules left after removal: %v", h)
	}
	if got := tcpSource(t, outside, cluster, "10.43.0.5:80", "192.0.2.1:30080"); got != "" {
		t.Errorf("node port still served after removal: the ClusterIP saw %q", got)
	}
}

func TestServiceSpecRejectsBadInput(t *testing.T) {
	for name, np := range map[string]NodePort{
		"protocol":     {Protocol: "icmp", Port: 1, ClusterIP: netip.MustParseAddrPort("10.43.0.5:80")},
		"port 0":       {Protocol: "tcp", ClusterIP: netip.MustParseAddrPort("10.43.0.5:80")},
		"no ClusterIP": {Protocol: "tcp", Port: 30080},
		"v6 endpoint":  {Protocol: "tcp", Port: 30080, LocalOnly: true, Local: []netip.AddrPort{netip.MustParseAddrPort("[fd00::1]:80")}},
	} {
		err := EnsureServices(context.Background(), &ServiceSpec{Interface: "ovn0", NodePorts: []NodePort{np}}, nil)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "node port") {
			t.Errorf("%s: err = %v, want ErrInvalid naming the node port", name, err)
		}
	}
}

func nodePortHostSpec() Spec {
	s := testSpec()
	s.Routes = append(s.Routes, netip.MustParsePrefix("10.43.0.0/16"))
	s.Masquerade = nil
	return s
}

func equalHandles(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// tcpSource listens on listen in the server namespace, connects from the client namespace to
// dial, and returns the source address the server saw ("" when no connection arrived).
func tcpSource(t *testing.T, client, server ns.NetNS, listen, dial string) string {
	t.Helper()
	var ln net.Listener
	inNS(t, server, func() (err error) {
		ln, err = net.Listen("tcp", listen)
		return err
	})
	defer ln.Close()
	seen := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			seen <- ""
			return
		}
		defer c.Close()
		seen <- c.RemoteAddr().(*net.TCPAddr).IP.String()
		_, _ = c.Write([]byte("ok"))
	}()
	var answer string
	_ = client.Do(func(ns.NetNS) error {
		c, err := net.DialTimeout("tcp", dial, 2*time.Second)
		if err != nil {
			return nil
		}
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 2)
		if n, _ := c.Read(buf); n == 2 {
			answer = string(buf)
		}
		return nil
	})
	if answer != "ok" {
		return ""
	}
	return <-seen
}

func TestOwnedTablesCleanup(t *testing.T) {
	needRoot(t)
	host := newNS(t)
	inNS(t, host, func() error {
		if err := addLink("ovn0"); err != nil {
			return err
		}
		spec := &ServiceSpec{Interface: "ovn0", NodePorts: []NodePort{{Protocol: "udp", Port: 30053, ClusterIP: netip.MustParseAddrPort("10.43.0.10:53")}}}
		if err := EnsureServices(context.Background(), spec, nil); err != nil {
			return err
		}
		if got, err := OwnedTables(); err != nil || len(got) != 1 || got[0] != "ip "+svcTable {
			t.Errorf("owned tables = %v, %v; want [ip %s]", got, err, svcTable)
		}
		if err := DeleteTable("filter"); !errors.Is(err, ErrInvalid) {
			t.Errorf("delete of a foreign table: %v, want ErrInvalid", err)
		}
		if err := DeleteTable("ip " + svcTable); err != nil {
			return err
		}
		if got, _ := OwnedTables(); len(got) != 0 {
			t.Errorf("tables left: %v", got)
		}
		return nil
	})
}
