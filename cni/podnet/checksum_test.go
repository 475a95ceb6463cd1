package podnet

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/vishvananda/netlink"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestDisableTxChecksum: every TX checksum feature of an up veth is off afterwards, and a
// name that is not a link is an error naming it.
func TestDisableTxChecksum(t *testing.T) {
	needRoot(t)
	inNewNS(t, func() {
		if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "csum0"}, PeerName: "csum0p"}); err != nil {
			t.Fatal(err)
		}
		if on, err := txChecksumOn("csum0"); err != nil || len(on) == 0 {
			t.Fatalf("a new veth's tx checksum features on: %v, %v (the test needs some on)", on, err)
		}
		if err := disableTxChecksum("csum0"); err != nil {
			t.Fatal(err)
		}
		if on, err := txChecksumOn("csum0"); err != nil || len(on) != 0 {
			t.Fatalf("still on after disableTxChecksum: %v, %v", on, err)
		}
		if err := disableTxChecksum("nosuch0"); err == nil || !strings.Contains(err.Error(), "nosuch0") {
			t.Fatalf("a missing link: %v", err)
		}
	})
}

// BenchmarkDisableTxChecksum prints what turning TX checksum offload off costs each ADD on
// the userspace datapath (go test -bench DisableTxChecksum ./cni/podnet/, as root).
func BenchmarkDisableTxChecksum(b *testing.B) {
	if os.Geteuid() != 0 {
		skip.Now(b, "needs root")
	}
	n, err := testutils.NewNS()
	if err != nil {
		b.Fatal(err)
	}
	defer testutils.UnmountNS(n)
	_ = n.Do(func(ns.NetNS) error {
		for i := range b.N {
			name := fmt.Sprintf("bc%d", i%1000)
			if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: name + "p"}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			err := disableTxChecksum(name)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			link, _ := netlink.LinkByName(name)
			_ = netlink.LinkDel(link)
		}
		return nil
	})
}

func inNewNS(t *testing.T, f func()) {
	t.Helper()
	n := newNS(t)
	if err := n.Do(func(ns.NetNS) error { f(); return nil }); err != nil {
		t.Fatal(err)
	}
}
