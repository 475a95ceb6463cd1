package node

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/southbound"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// sbReadTimeout bounds one read of this chassis's bindings: a southbound that does not answer
// costs the drift check this much, and the check falls back to the local database alone.
const sbReadTimeout = 2 * time.Second

// sbBindings reads this chassis's Port_Bindings from the southbound for the binding watch:
// ovn-controller can release a logical port (Port_Binding chassis=[], up=false) and leave
// ovn-installed="true" on the pod's interface (issue 29, seen with a real kubelet), which the
// local database alone cannot tell from a bound port. The client is dialed lazily, in the
// background, the first time a local pod port is bound, and monitors nothing (BindingsOn's
// selects return this chassis's rows, two columns each): a node with no pods never connects,
// and no node holds the cluster's bindings.
type sbBindings struct {
	mu      sync.Mutex
	client  *southbound.Client // nil until dialed
	dialing bool
}

// read returns this chassis's bindings; ok is false while the client is not dialed yet, when
// the read fails, or when the chassis is not registered (ovn-controller starting or gone:
// then no reclaim can help, and the local database decides alone).
func (s *sbBindings) read(ctx context.Context, r *Role) (southbound.Bindings, bool) {
	s.mu.Lock()
	c := s.client
	if c == nil && !s.dialing {
		s.dialing = true
		go s.dial(ctx, r)
	}
	s.mu.Unlock()
	if c == nil {
		return southbound.Bindings{}, false
	}
	rctx, cancel := context.WithTimeout(ctx, sbReadTimeout)
	defer cancel()
	b, err := c.BindingsOn(rctx, r.req.NodeName)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Debug("read this chassis's port bindings from the southbound; checking the local database only", "err", err)
		}
		return southbound.Bindings{}, false
	}
	return b, b.Registered
}

// dial connects until ctx ends (libovsdb reconnects on its own afterwards) and closes the
// client when ctx ends.
func (s *sbBindings) dial(ctx context.Context, r *Role) {
	c, err := southbound.Dial(ctx, ovn.ConnectRequest{Endpoints: r.req.SBEndpoints, TLS: r.req.TLS, Log: r.log})
	if err != nil {
		return // ctx ended
	}
	s.mu.Lock()
	s.client = c
	s.mu.Unlock()
	<-ctx.Done()
	c.Close()
}

// lostPredicate says which local pod ports lost their binding: those ovn-controller released
// in the local database (ovn-installed-ts without ovn-installed, BindingLost), and, when the
// southbound could be read, those with ovn-installed whose Port_Binding is not on this
// chassis or not up. The southbound is read only when some port has ovn-installed.
func (r *Role) lostPredicate(ctx context.Context, ports []vswitch.Port) func(vswitch.Port) (bool, string) {
	local := func(p vswitch.Port) (bool, string) { return p.BindingLost(), reasonReleased }
	if !anyInstalled(ports) {
		return local
	}
	b, ok := r.sb.read(ctx, r)
	if !ok {
		return local
	}
	return func(p vswitch.Port) (bool, string) { return lostAgainst(p, b) }
}

// Why a port was found lost, for the log.
const (
	reasonReleased = "ovn-installed removed by ovn-controller"
	reasonNotUp    = "southbound Port_Binding not up on this chassis"
)

// lostAgainst is lostPredicate's rule for a port, given this chassis's bindings.
func lostAgainst(p vswitch.Port, b southbound.Bindings) (bool, string) {
	if p.BindingLost() {
		return true, reasonReleased
	}
	return isInstalled(p) && !b.UpHere(p.IfaceID), reasonNotUp
}

func isInstalled(p vswitch.Port) bool { return p.ExternalIDs[vswitch.KeyOVNInstalled] == "true" }

func anyInstalled(ports []vswitch.Port) bool {
	for _, p := range ports {
		if isInstalled(p) {
			return true
		}
	}
	return false
}

// logLost is the reclaim's log line, with why the port was found lost.
func logLost(log *slog.Logger, p vswitch.Port, why string, attempt int, err error) {
	if err != nil {
		log.Warn("pod port lost its OVN binding after ovn-installed; reclaim failed, will retry", "port", p.Name, "lsp", p.IfaceID, "why", why, "err", err)
		return
	}
	log.Warn("repaired: pod port lost its OVN binding after ovn-installed (released by ovn-controller); reclaimed it",
		"port", p.Name, "lsp", p.IfaceID, "why", why, "attempt", attempt)
}
