package node

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// reclaimRetry is how long a lost binding that a reclaim did not bring back waits before it
// is reclaimed again (ovn-controller may have been down).
const reclaimRetry = 30 * time.Second

// bindingWatch finds the local pod ports that ovn-controller bound once (ovn-installed) and
// has released since, with their device still there: a pod whose CNI ADD answered success
// and that has no network now. A port is reclaimed only when two checks in a row found it
// lost, so ovn-controller's own moves (a re-claim in progress) are never raced, and then at
// most once per reclaimRetry while it stays lost.
type bindingWatch struct {
	lost      map[string]bool      // ports the previous check found lost
	reclaimed map[string]time.Time // ports reclaimed while lost, and when
}

// due returns the ports to reclaim now: lost at this check and the previous one, and not
// reclaimed within reclaimRetry; gone says whether a device is missing (netlink in
// production). Ports no longer lost are forgotten.
func (w *bindingWatch) due(ports []vswitch.Port, gone func(string) bool, now time.Time) []vswitch.Port {
	cur := map[string]bool{}
	var out []vswitch.Port
	for _, p := range ports {
		if !p.BindingLost() || gone(p.Name) {
			continue
		}
		cur[p.Name] = true
		at, done := w.reclaimed[p.Name]
		if w.lost[p.Name] && (!done || now.Sub(at) >= reclaimRetry) {
			out = append(out, p)
		}
	}
	for name := range w.reclaimed {
		if !cur[name] {
			delete(w.reclaimed, name)
		}
	}
	w.lost = cur
	return out
}

// markReclaimed records a reclaim of the port at now.
func (w *bindingWatch) markReclaimed(name string, now time.Time) {
	if w.reclaimed == nil {
		w.reclaimed = map[string]time.Time{}
	}
	w.reclaimed[name] = now
}

// repairBindings reclaims the pod ports whose binding was lost, and logs and counts each.
func (r *Role) repairBindings(ctx context.Context, log *slog.Logger) error {
	ports, err := r.ovs.Ports(ctx, Bridge)
	if err != nil {
		return fmt.Errorf("list pod ports: %w", err)
	}
	now := time.Now()
	for _, p := range r.host.bindings.due(ports, deviceGone, now) {
		r.host.bindings.markReclaimed(p.Name, now)
		if err := r.ovs.ReclaimPort(ctx, p.Name); err != nil {
			r.req.Metrics.ObserveLostBinding(metrics.BindingFailed)
			log.Warn("pod port lost its OVN binding after ovn-installed; reclaim failed, will retry", "port", p.Name, "lsp", p.IfaceID, "err", err)
			continue
		}
		r.req.Metrics.ObserveLostBinding(metrics.BindingReclaimed)
		log.Warn("repaired: pod port lost its OVN binding after ovn-installed (released by ovn-controller); reclaimed it", "port", p.Name, "lsp", p.IfaceID)
	}
	return nil
}
