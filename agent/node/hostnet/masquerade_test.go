package hostnet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestMasqueradeReachesOutside sends UDP from a pod address, routed through the host, to an
// outside namespace that has no route back to the pods: without masquerade the outside sees
// the pod's address and cannot answer; with it, it sees the host's and the answer comes back.
//
//	pod (10.42.0.5, router 100.64.0.1) eth0 ── ovn0 host (100.64.0.2) eth1 ── eth0 outside (192.0.2.2)
//	                                                      192.0.2.1
func TestMasqueradeReachesOutside(t *testing.T) {
	needRoot(t)
	host, pod, outside := newNS(t), newNS(t), newNS(t)
	inNS(t, host, func() error {
		if err := addVeth("ovn0", "eth0", pod); err != nil {
			return err
		}
		if err := addVeth("eth1", "eth0", outside); err != nil {
			return err
		}
		return configure("eth1", "192.0.2.1/24")
	})
	inNS(t, pod, func() error {
		if err := configure("eth0", "100.64.0.1/16", "10.42.0.5/16"); err != nil {
			return err
		}
		eth0, err := netlinksafe.LinkByName("eth0")
		if err != nil {
			return err
		}
		return netlink.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Gw: net.ParseIP("100.64.0.2")})
	})
	inNS(t, outside, func() error { return configure("eth0", "192.0.2.2/24") })

	spec := testSpec()
	spec.Masquerade = nil
	inNS(t, host, func() error { return wireLink(context.Background(), spec, nil) })
	trip := roundTrip{pod: pod, outside: outside, podIP: "10.42.0.5", outsideIP: "192.0.2.2"}
	if src, _ := trip.run(t, false); src != "10.42.0.5" {
		t.Fatalf("without masquerade: outside saw %s, want the pod's address", src)
	}
	spec.Masquerade = testSpec().Masquerade
	inNS(t, host, func() error { return wireLink(context.Background(), spec, nil) })
	if src, answered := trip.run(t, true); src != "192.0.2.1" || !answered {
		t.Fatalf("with masquerade: outside saw %s, answer arrived %v; want the host's address 192.0.2.1 and an answer", src, answered)
	}
}

// roundTrip is a UDP exchange between a pod address and an outside one.
type roundTrip struct {
	pod, outside     ns.NetNS
	podIP, outsideIP string
}

// run sends a datagram from the pod to the outside, which echoes it. It returns the source
// address the outside saw and, when asked to wait for it, whether the echo reached the pod.
func (rt roundTrip) run(t *testing.T, waitAnswer bool) (string, bool) {
	t.Helper()
	var server, client *net.UDPConn
	inNS(t, rt.outside, func() (err error) {
		server, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(rt.outsideIP)})
		return err
	})
	defer server.Close()
	inNS(t, rt.pod, func() (err error) {
		client, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(rt.podIP)})
		return err
	})
	defer client.Close()
	// Bounds the test only: a lost datagram shows up as "no source" or "no answer".
	deadline := time.Now().Add(10 * time.Second)
	_ = server.SetDeadline(deadline)
	_ = client.SetDeadline(deadline)
	seen := make(chan string, 1)
	go func() {
		buf := make([]byte, 64)
		n, from, err := server.ReadFromUDP(buf)
		if err != nil {
			seen <- "none: " + err.Error()
			return
		}
		seen <- from.IP.String()
		_, _ = server.WriteToUDP(buf[:n], from)
	}()
	// The first datagrams may wait for ARP or neighbour discovery (and be dropped from a full
	// queue under load): one is sent every 100 ms until the outside has seen one.
	var src string
	for sent := false; !sent || src == ""; sent = true {
		if _, err := client.WriteToUDP([]byte("ping"), server.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatalf("send from pod: %v", err)
		}
		select {
		case src = <-seen:
		case <-time.After(100 * time.Millisecond):
		}
	}
	if !waitAnswer {
		return src, false
	}
	buf := make([]byte, 64)
	_, err := client.Read(buf)
	return src, err == nil
}

// TestMasqueradeIPv6 is the same for IPv6 pod traffic, which "ip6 edgeovn" masquerades (the
// IPv4 table cannot): without an IPv6 prefix in the spec the outside sees the pod's address,
// with one it sees the host's and answers.
//
//	pod (fd00:42::5, router fd00:64::1) eth0 ── ovn0 host (fd00:64::2) eth1 ── eth0 outside (2001:db8::2)
//	                                                    2001:db8::1
func TestMasqueradeIPv6(t *testing.T) {
	needRoot(t)
	host, pod, outside := newNS(t), newNS(t), newNS(t)
	inNS(t, host, func() error {
		if err := addVeth("ovn0", "eth0", pod); err != nil {
			return err
		}
		if err := addVeth("eth1", "eth0", outside); err != nil {
			return err
		}
		if err := configure6("eth1", "2001:db8::1/64"); err != nil {
			return err
		}
		if err := configure6("ovn0", "fd00:64::2/64"); err != nil {
			return err
		}
		// What OVN's router would be to the host: the way back to the pods.
		if _, err := exec.Command("ip", "-6", "route", "add", "fd00:42::/64", "via", "fd00:64::1", "dev", "ovn0").CombinedOutput(); err != nil {
			return err
		}
		return os.WriteFile("/proc/sys/net/ipv6/conf/all/forwarding", []byte("1"), 0o644)
	})
	inNS(t, pod, func() error {
		if err := configure6("eth0", "fd00:64::1/64", "fd00:42::5/64"); err != nil {
			return err
		}
		out, err := exec.Command("ip", "-6", "route", "add", "default", "via", "fd00:64::2", "dev", "eth0").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	})
	inNS(t, outside, func() error { return configure6("eth0", "2001:db8::2/64") })

	spec := testSpec()
	inNS(t, host, func() error { return wireLink(context.Background(), spec, nil) })
	trip := roundTrip{pod: pod, outside: outside, podIP: "fd00:42::5", outsideIP: "2001:db8::2"}
	if src, _ := trip.run(t, false); src != "fd00:42::5" {
		t.Fatalf("without an IPv6 prefix to masquerade: outside saw %s, want the pod's address", src)
	}
	spec.Masquerade = append(spec.Masquerade, netip.MustParsePrefix("fd00:42::/64"))
	inNS(t, host, func() error { return wireLink(context.Background(), spec, nil) })
	if src, answered := trip.run(t, true); src != "2001:db8::1" || !answered {
		t.Fatalf("with fd00:42::/64 masqueraded: outside saw %s, answer arrived %v; want the host's 2001:db8::1 and an answer", src, answered)
	}
	var tables []string
	inNS(t, host, func() (err error) { tables, err = OwnedTables(); return err })
	if strings.Join(tables, ",") != "ip edgeovn,ip6 edgeovn" {
		t.Errorf("owned tables %v, want ip edgeovn and ip6 edgeovn", tables)
	}
}

// configure6 gives the link IPv6 addresses without duplicate address detection (usable at
// once) and brings it up.
func configure6(name string, prefixes ...string) error {
	link, err := netlinksafe.LinkByName(name)
	if err != nil {
		return err
	}
	for _, p := range prefixes {
		a := &netlink.Addr{IPNet: prefixToIPNet(netip.MustParsePrefix(p)), Flags: unix.IFA_F_NODAD}
		if err := netlink.AddrAdd(link, a); err != nil {
			return fmt.Errorf("add %s to %s: %w", p, name, err)
		}
	}
	return netlink.LinkSetUp(link)
}

// addVeth adds a veth in the current namespace whose peer, peerName, lives in peerNS.
func addVeth(name, peerName string, peerNS ns.NetNS) error {
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: peerName,
		PeerNamespace: netlink.NsFd(int(peerNS.Fd()))}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("add veth %s: %w", name, err)
	}
	return nil
}

// configure gives the link its addresses and brings it up.
func configure(name string, prefixes ...string) error {
	link, err := netlinksafe.LinkByName(name)
	if err != nil {
		return err
	}
	for _, p := range prefixes {
		if err := netlink.AddrAdd(link, &netlink.Addr{IPNet: prefixToIPNet(netip.MustParsePrefix(p))}); err != nil {
			return fmt.Errorf("add %s to %s: %w", p, name, err)
		}
	}
	return netlink.LinkSetUp(link)
}
