package node

import (
	"context"
	"net"
	"slices"
	"sync"

	"github.com/vishvananda/netlink"
)

// hostEvents is the node role's one netlink subscription to the host's links, addresses and
// routes, fanned out to what needs them: readiness (the links of br-int and ovn0), the drift
// check (those links, every address and route) and the host's networks on its Node (every
// address). A watch added before start, or after a start that failed, never fires: its owner
// falls back on its own timer, as it does for anything an event could miss. The zero value is
// ready to use.
type hostEvents struct {
	mu      sync.Mutex
	watches map[*hostWatch]struct{}
}

// hostEventKind says which netlink events a watch wants.
type hostEventKind uint8

const (
	linkEvents  hostEventKind = 1 << iota // of the links named in hostWatch.links only
	addrEvents                            // any address added or removed, but link-scoped ones
	routeEvents                           // any route added or removed, but to link-scoped destinations
)

// hostWatch is one subscriber. poke runs on the event loop: it must not block.
type hostWatch struct {
	kinds hostEventKind
	links []string
	poke  func()
}

// watch adds w until the returned cancel.
func (h *hostEvents) watch(w *hostWatch) (cancel func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.watches == nil {
		h.watches = map[*hostWatch]struct{}{}
	}
	h.watches[w] = struct{}{}
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.watches, w)
	}
}

// deliver pokes every watch that wants an event of kind (about the link named link, for a
// link event).
func (h *hostEvents) deliver(kind hostEventKind, link string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.watches {
		if w.kinds&kind == 0 || (kind == linkEvents && !slices.Contains(w.links, link)) {
			continue
		}
		w.poke()
	}
}

// start subscribes to link, address and route changes and delivers them until ctx ends.
func (h *hostEvents) start(ctx context.Context) error {
	links := make(chan netlink.LinkUpdate, 64)
	addrs := make(chan netlink.AddrUpdate, 64)
	routes := make(chan netlink.RouteUpdate, 64)
	done := make(chan struct{})
	for _, subscribe := range []func() error{
		func() error { return netlink.LinkSubscribe(links, done) },
		func() error { return netlink.AddrSubscribe(addrs, done) },
		func() error { return netlink.RouteSubscribe(routes, done) },
	} {
		if err := subscribe(); err != nil {
			close(done)
			return err
		}
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case u, ok := <-links:
				if !ok {
					return
				}
				h.deliver(linkEvents, u.Link.Attrs().Name)
			case u, ok := <-addrs:
				if !ok {
					return
				}
				if !linkScoped(u.LinkAddress.IP) {
					h.deliver(addrEvents, "")
				}
			case u, ok := <-routes:
				if !ok {
					return
				}
				if u.Dst == nil || !linkScoped(u.Dst.IP) {
					h.deliver(routeEvents, "")
				}
			}
		}
	}()
	return nil
}

// linkScoped says an address (or a route's destination) is IPv6 or IPv4 link-local, or
// multicast: what the kernel adds on every link it brings up (each pod's veth: its fe80::
// address, fe80::/64 and ff00::/8 routes). No watch wants those: the host's networks leave
// link-local addresses out, and edgeovn writes no such address or route; a burst of 100 pods
// made hundreds of these events, each a pass of the host's wiring and drift checks.
func linkScoped(ip net.IP) bool {
	return ip.IsLinkLocalUnicast() || ip.IsMulticast()
}
