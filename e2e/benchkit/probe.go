package benchkit

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// ProbeTimeout bounds one TCP probe of ProbeUntil: a dropped SYN shows as a timeout.
const ProbeTimeout = 100 * time.Millisecond

// ProbeUntil opens TCP connections from the sandbox to `to`, one after the other, until a
// connection's outcome (connected or not within ProbeTimeout) is want, for up to 30 s, and
// returns when that probe started: a policy's change to effect, seen by real traffic.
func ProbeUntil(ctx context.Context, from *podsim.Sandbox, to netip.AddrPort, want bool) (time.Time, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		at := time.Now()
		var ok bool
		err := ns.WithNetNSPath(from.Netns, func(ns.NetNS) error {
			d := net.Dialer{Timeout: ProbeTimeout}
			c, err := d.DialContext(ctx, "tcp", to.String())
			if ok = err == nil; ok {
				c.Close()
			}
			return nil
		})
		if err != nil {
			return at, fmt.Errorf("enter %s: %w", from.Netns, err)
		}
		if ok == want {
			return at, nil
		}
		if at.After(deadline) || ctx.Err() != nil {
			return at, fmt.Errorf("probe %s -> %s never became %v", from.Pod.Name, to, want)
		}
		if ok {
			time.Sleep(5 * time.Millisecond) // a success returns at once: do not spin
		}
	}
}
