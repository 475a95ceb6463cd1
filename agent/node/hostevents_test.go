package node

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestHostEventsDeliver: each watch is poked with what it asked for only: a link watch hears
// its own links and not another's, an address watch addresses, a route watch routes, and a
// cancelled watch nothing more.
func TestHostEventsDeliver(t *testing.T) {
	var h hostEvents
	var link, addr, all int
	h.watch(&hostWatch{kinds: linkEvents, links: []string{HostInterface}, poke: func() { link++ }})
	cancelAddr := h.watch(&hostWatch{kinds: addrEvents, poke: func() { addr++ }})
	h.watch(&hostWatch{kinds: linkEvents | addrEvents | routeEvents, links: []string{Bridge}, poke: func() { all++ }})
	h.deliver(linkEvents, "eth0")
	h.deliver(linkEvents, HostInterface)
	h.deliver(addrEvents, "")
	h.deliver(routeEvents, "")
	h.deliver(linkEvents, Bridge)
	if link != 1 || addr != 1 || all != 3 {
		t.Fatalf("pokes link=%d addr=%d all=%d, want 1 1 3", link, addr, all)
	}
	cancelAddr()
	h.deliver(addrEvents, "")
	if addr != 1 || all != 4 {
		t.Fatalf("after cancel: addr=%d all=%d, want 1 4", addr, all)
	}
}

// TestHostEventsFromNetlink: the subscription hears the kernel: a link named ovn0 created and
// an address added reach their watches.
func TestHostEventsFromNetlink(t *testing.T) {
	if os.Geteuid() != 0 {
		skip.Now(t, "needs root for a network namespace")
	}
	n, err := testutils.NewNS()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close(); _ = testutils.UnmountNS(n) })
	ip := func(args ...string) {
		if out, err := exec.Command("nsenter", append([]string{"--net=" + n.Path(), "ip"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	var h hostEvents
	linkPokes, addrPokes := make(chan struct{}, 64), make(chan struct{}, 64)
	send := func(c chan struct{}) func() {
		return func() {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
	h.watch(&hostWatch{kinds: linkEvents, links: []string{HostInterface}, poke: send(linkPokes)})
	h.watch(&hostWatch{kinds: addrEvents, poke: send(addrPokes)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := n.Do(func(ns.NetNS) error { return h.start(ctx) }); err != nil {
		t.Fatal(err)
	}
	ip("link", "add", HostInterface, "type", "veth", "peer", "name", "peer0")
	waitPoke(t, linkPokes, "a link event of "+HostInterface)
	ip("addr", "add", "192.0.2.1/24", "dev", "peer0")
	waitPoke(t, addrPokes, "an address added")
}
func waitPoke(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("no poke for %s", what)
	}
}
