package hostnet

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"testing"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/vishvananda/netlink"
)

// addAddr adds the address (CIDR) to the named link, up, without duplicate address detection.
func addAddr(link, cidr string) error {
	l, err := netlinksafe.LinkByName(link)
	if err != nil {
		return err
	}
	a, err := netlink.ParseAddr(cidr)
	if err != nil {
		return err
	}
	a.Flags |= 0x80 // IFA_F_NODAD: the address is usable at once
	if err := netlink.AddrAdd(l, a); err != nil {
		return fmt.Errorf("add %s to %s: %w", cidr, link, err)
	}
	return netlink.LinkSetUp(l)
}

// TestHostNetworks: every interface's networks, each once and sorted, but not those of the
// skipped interface (ovn0), of kube-ipvs0, loopback or link-local addresses.
func TestHostNetworks(t *testing.T) {
	needRoot(t)
	n := newNS(t)
	inNS(t, n, func() error {
		for _, l := range []string{"eth0", "eth1", "ovn0", kubeProxyIPVS} {
			if err := addLink(l); err != nil {
				return err
			}
		}
		lo, err := netlinksafe.LinkByName("lo")
		if err == nil {
			err = netlink.LinkSetUp(lo)
		}
		if err != nil {
			return err
		}
		for _, a := range []struct{ link, cidr string }{
			{"eth0", "192.0.2.5/24"}, {"eth0", "2001:db8:1::5/64"}, {"eth0", "fe80::5/64"},
			{"eth1", "192.0.2.9/24"}, {"eth1", "198.51.100.7/25"},
			{"ovn0", "100.64.0.2/16"}, {kubeProxyIPVS, "10.43.0.10/32"},
		} {
			if err := addAddr(a.link, a.cidr); err != nil {
				return err
			}
		}
		got, err := HostNetworks("ovn0")
		if err != nil {
			return err
		}
		want := []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.51.100.0/25"),
			netip.MustParsePrefix("2001:db8:1::/64")}
		if !slices.Equal(got, want) {
			return fmt.Errorf("HostNetworks = %v, want %v", got, want)
		}
		// Without the skip, ovn0's network is one of them.
		if got, err = HostNetworks(""); err != nil || !slices.Contains(got, netip.MustParsePrefix("100.64.0.0/16")) {
			return fmt.Errorf("HostNetworks(\"\") = %v, %v: want ovn0's 100.64.0.0/16 among them", got, err)
		}
		return nil
	})
}

// BenchmarkHostNetworks is one read of the host's networks with 100 pod veths, each with its
// IPv6 link-local address, as a host has after a burst of pods:
// go test -run '^$' -bench HostNetworks -benchmem ./agent/node/hostnet/ (as root).
func BenchmarkHostNetworks(b *testing.B) {
	if testing.Short() {
		b.Skip("creates 100 veths")
	}
	if os.Geteuid() != 0 {
		b.Skip("needs root for a network namespace")
	}
	n, err := testutils.NewNS()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = n.Close(); _ = testutils.UnmountNS(n) })
	err = n.Do(func(_ ns.NetNS) error {
		if err := addLink("eth0"); err != nil {
			return err
		}
		if err := addAddr("eth0", "192.0.2.5/24"); err != nil {
			return err
		}
		for i := range 100 {
			name := fmt.Sprintf("veth%03d", i)
			if err := addLink(name); err != nil {
				return err
			}
			if err := addAddr(name, fmt.Sprintf("fe80::%x/64", i+1)); err != nil {
				return err
			}
		}
		b.ResetTimer()
		for b.Loop() {
			if _, err := HostNetworks("ovn0"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
