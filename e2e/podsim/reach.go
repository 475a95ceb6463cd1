package podsim

import (
	"context"
	"net/netip"
	"os/exec"
	"sync"
	"time"
)

// Reach is when one pod first answered for all of its targets; At is zero when it never did
// before the context ended.
type Reach struct {
	Sandbox *Sandbox
	At      time.Time
}

// WaitReachable pings, from every sandbox at once, the gateway and the sandbox's neighbour
// (the next one in the list, the last one's being the first) until both answer or ctx ends,
// and returns one Reach per sandbox in the list's order. Each probe is a ping that sends a
// packet every 100 ms for up to a second and ends at the first answer, repeated: OVS drops
// the first packet to a MAC not yet resolved, and a single packet with a one second wait
// would report a target that came up just after it was sent up to 1.1 s late.
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

// ReachAll pings each target from sb until it answers, in order, and returns when the last
// one did, or the zero time when ctx ended first.
func ReachAll(ctx context.Context, sb *Sandbox, targets ...netip.Addr) time.Time {
	for _, dst := range targets {
		for !pingOnce(ctx, sb, dst) {
			select {
			case <-ctx.Done():
				return time.Time{}
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return time.Now()
}

func pingOnce(ctx context.Context, sb *Sandbox, dst netip.Addr) bool {
	err := exec.CommandContext(ctx, "ip", "netns", "exec", sb.NetnsName(),
		"ping", "-c", "1", "-i", "0.1", "-w", "1", dst.String()).Run()
	return err == nil
}
