package benchkit

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// ProbeTimeout bounds one TCP probe: a dropped SYN shows as a timeout.
const ProbeTimeout = 100 * time.Millisecond

// ProbeEvery is how often ProbeOpened starts a probe.
const ProbeEvery = 5 * time.Millisecond

// probeFor bounds a whole ProbeUntil or ProbeOpened.
const probeFor = 30 * time.Second

// ProbeUntil opens TCP connections from the sandbox to `to`, one after the other, until a
// connection's outcome (connected or not within ProbeTimeout) is want, for up to 30 s, and
// returns when that probe started: a policy's change to effect, seen by real traffic. While
// the path is closed each probe waits ProbeTimeout, so an opening is seen up to that late:
// ProbeOpened sees it within ProbeEvery.
func ProbeUntil(ctx context.Context, from *podsim.Sandbox, to netip.AddrPort, want bool) (time.Time, error) {
	deadline := time.Now().Add(probeFor)
	for {
		at := time.Now()
		ok, err := probe(ctx, from, to)
		if err != nil {
			return at, err
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

// ProbeOpened starts a TCP probe from the sandbox to `to` every ProbeEvery, each running in
// parallel for up to ProbeTimeout, until one connects (for up to 30 s), and returns when the
// earliest probe that connected started. A probe whose SYN was dropped does not retry within
// its timeout, so that is within ProbeEvery of the moment the path opened.
func ProbeOpened(ctx context.Context, from *podsim.Sandbox, to netip.AddrPort) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, probeFor)
	defer cancel()
	var (
		mu     sync.Mutex
		first  time.Time
		failed error
		wg     sync.WaitGroup
		once   sync.Once
	)
	done := make(chan struct{})
	tick := time.NewTicker(ProbeEvery)
	defer tick.Stop()
	for launching := true; launching; {
		at := time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := probe(ctx, from, to)
			mu.Lock()
			defer mu.Unlock()
			if ok && (first.IsZero() || at.Before(first)) {
				first = at
			}
			if err != nil {
				failed = err
			}
			if ok || err != nil {
				once.Do(func() { close(done) })
			}
		}()
		select {
		case <-done:
			launching = false
		case <-ctx.Done():
			launching = false
		case <-tick.C:
		}
	}
	wg.Wait() // the probes started before the first success may connect too
	switch {
	case failed != nil:
		return first, failed
	case first.IsZero():
		return first, fmt.Errorf("probe %s -> %s never connected: %w", from.Pod.Name, to, ctx.Err())
	}
	return first, nil
}

// probe opens one TCP connection from the sandbox's namespace and says whether it connected
// within ProbeTimeout; the error is for entering the namespace only.
func probe(ctx context.Context, from *podsim.Sandbox, to netip.AddrPort) (bool, error) {
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
		return false, fmt.Errorf("enter %s: %w", from.Netns, err)
	}
	return ok, nil
}
