package podsim

import (
	"context"
	"net/netip"
	"sync"
	"time"
)

// Reach is when one pod first answered for all of its targets; At is zero when it never did
// before the context ended.
type Reach struct {
	Sandbox *Sandbox
	At      time.Time
}

// WaitReachable probes, from every sandbox at once, the gateway and the sandbox's neighbour
// (the next one in the list, the last one's being the first) until both answer or ctx ends,
// and returns one Reach per sandbox in the list's order. Each probe sends an ICMP echo request
// every 100 ms from inside the pod's namespace and ends at the first answer (OVS drops the
// first packet to a MAC not yet resolved, so a single request would report a target late).
func WaitReachable(ctx context.Context, sandboxes []*Sandbox, gateway netip.Addr) []Reach {
	out := make([]Reach, len(sandboxes))
	var wg sync.WaitGroup
	for i, sb := range sandboxes {
		targets := []netip.Addr{gateway}
		if len(sandboxes) > 1 {
			targets = append(targets, sandboxes[(i+1)%len(sandboxes)].IP())
		}
		out[i].Sandbox = sb
		wg.Go(func() { out[i].At = ReachAll(ctx, sb, targets...) })
	}
	wg.Wait()
	return out
}

// ReachAll probes each target from sb until it answers, in order, and returns when the last
// one did, or the zero time when ctx ended first.
func ReachAll(ctx context.Context, sb *Sandbox, targets ...netip.Addr) time.Time {
	for _, dst := range targets {
		for !echoUntilAnswered(ctx, sb, dst) {
			select {
			case <-ctx.Done():
				return time.Time{}
			case <-time.After(probeInterval):
			}
		}
	}
	return time.Now()
}
