package node

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// A lost binding that a reclaim did not bring back is reclaimed again after reclaimRetry,
// then after twice as long each time, up to reclaimMaxRetry: ovn-controller may have taken
// the iface-id's removal and return in one iteration (no change), or have been down.
const (
	reclaimRetry    = 3 * time.Second
	reclaimMaxRetry = time.Minute
)

// bindingWatch finds the local pod ports that ovn-controller bound once (ovn-installed) and
// has released since, with their device still there: a pod whose CNI ADD answered success
// and that has no network now. A port is reclaimed only when two checks in a row found it
// lost, so ovn-controller's own moves (a re-claim in progress) are never raced, and again
// with a growing delay while it stays lost.
type bindingWatch struct {
	lost      map[string]bool         // ports the previous check found lost
	reclaimed map[string]reclaimState // ports reclaimed while lost
}

// reclaimState is when a lost port was last reclaimed and how many times.
type reclaimState struct {
	at time.Time
	n  int
}

// next is when the port may be reclaimed again.
func (s reclaimState) next() time.Time {
	wait := reclaimRetry << min(s.n-1, 8)
	return s.at.Add(min(wait, reclaimMaxRetry))
}

// due returns the ports to reclaim now: lost at this check and the previous one, and not
// reclaimed within reclaimRetry; lost says whether a port lost its binding and why
// (lostPredicate), gone whether a device is missing (netlink in production). Ports no longer
// lost are forgotten.
func (w *bindingWatch) due(ports []vswitch.Port, lost func(vswitch.Port) (bool, string), gone func(string) bool, now time.Time) []lostPort {
	cur := map[string]bool{}
	var out []lostPort
	for _, p := range ports {
		isLost, why := lost(p)
		if !isLost || gone(p.Name) {
			continue
		}
		cur[p.Name] = true
		st, done := w.reclaimed[p.Name]
		if w.lost[p.Name] && (!done || !now.Before(st.next())) {
			out = append(out, lostPort{Port: p, why: why})
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
		w.reclaimed = map[string]reclaimState{}
	}
	w.reclaimed[name] = reclaimState{at: now, n: w.reclaimed[name].n + 1}
}

// repairBindings reclaims the pod ports whose binding was lost, and logs and counts each.
func (r *Role) repairBindings(ctx context.Context, log *slog.Logger) error {
	ports, err := r.ovs.Ports(ctx, Bridge)
	if err != nil {
		return fmt.Errorf("list pod ports: %w", err)
	}
	now := time.Now()
	for _, p := range r.host.bindings.due(ports, r.lostPredicate(ctx, ports), deviceGone, now) {
		r.host.bindings.markReclaimed(p.Name, now)
		if err := r.ovs.ReclaimPort(ctx, p.Name); err != nil {
			r.req.Metrics.ObserveLostBinding(metrics.BindingFailed)
			logLost(log, p.Port, p.why, 0, err)
			continue
		}
		r.req.Metrics.ObserveLostBinding(metrics.BindingReclaimed)
		logLost(log, p.Port, p.why, r.host.bindings.reclaimed[p.Name].n, nil)
	}
	return nil
}

// lostPort is a port due for a reclaim and why it was found lost.
type lostPort struct {
	vswitch.Port
	why string
}
