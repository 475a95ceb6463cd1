package node

import (
	"context"
	"net"
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
	linkPokes, addrPokes, routePokes := make(chan struct{}, 64), make(chan struct{}, 64), make(chan struct{}, 64)
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
	h.watch(&hostWatch{kinds: routeEvents, poke: send(routePokes)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := n.Do(func(ns.NetNS) error { return h.start(ctx) }); err != nil {
		t.Fatal(err)
	}
	ip("link", "add", HostInterface, "type", "veth", "peer", "name", "peer0")
	waitPoke(t, linkPokes, "a link event of "+HostInterface)
	ip("addr", "add", "192.0.2.1/24", "dev", "peer0")
	waitPoke(t, addrPokes, "an address added")
	// Link-scoped addresses and routes, as each pod's veth brings, poke no one. Each check ends
	// with a global change as a marker: the events of one subscription come in order, so a
	// poke for a link-scoped event would be in before the marker's.
	ip("link", "set", "peer0", "up")
	ip("link", "set", HostInterface, "up")
	time.Sleep(300 * time.Millisecond)
	drain(addrPokes, routePokes)
	ip("-6", "addr", "add", "fe80::5/64", "dev", "peer0", "nodad")
	ip("-6", "addr", "add", "2001:db8::3/128", "dev", "peer0", "nodad")
	waitPoke(t, addrPokes, "a global address after a link-local one")
	time.Sleep(200 * time.Millisecond)
	if n := len(addrPokes); n != 0 {
		t.Errorf("%d more address pokes: a link-local address poked a watch", n)
	}
	drain(routePokes) // the global address's own routes
	ip("-6", "route", "add", "ff02::fb/128", "dev", "peer0")
	ip("route", "add", "198.51.100.0/24", "via", "192.0.2.2")
	waitPoke(t, routePokes, "a global route after a multicast one")
	time.Sleep(200 * time.Millisecond)
	if n := len(routePokes); n != 0 {
		t.Errorf("%d more route pokes: a multicast route poked a watch", n)
	}
}

func drain(cs ...chan struct{}) {
	for _, c := range cs {
		for len(c) > 0 {
			<-c
		}
	}
}

// TestLinkScoped: what the kernel adds on each link it brings up is link-scoped; the host's
// own networks and routes are not.
func TestLinkScoped(t *testing.T) {
	for ip, want := range map[string]bool{
		"fe80::5": true, "ff02::fb": true, "ff00::": true, "169.254.1.1": true, "224.0.0.251": true,
		"192.0.2.1": false, "2001:db8::1": false, "100.64.0.2": false, "10.42.0.0": false, "::": false, "0.0.0.0": false,
	} {
		if got := linkScoped(net.ParseIP(ip)); got != want {
			t.Errorf("linkScoped(%s) = %v, want %v", ip, got, want)
		}
	}
}
func waitPoke(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("no poke for %s", what)
	}
}
