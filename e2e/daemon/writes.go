package daemon

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/edgeovn/edgeovn/e2e/harness"
)

// Writes are the write transactions the databases logged across one restart.
type Writes struct {
	NB, OVS []harness.Transaction
	Restart Restart
}

// RestartWrites restarts edgeovn with sig on a node where nothing else changes and returns
// what the northbound and Open_vSwitch databases logged from before the signal until the new
// controller role runs and both databases have been quiet for two seconds.
func (s *Systemd) RestartWrites(ctx context.Context, sig syscall.Signal, name string) (Writes, error) {
	var w Writes
	if err := s.settle(ctx); err != nil {
		return w, err
	}
	nb0, ovs0, err := s.counts()
	if err != nil {
		return w, err
	}
	if w.Restart, err = s.Restart(ctx, sig, name); err != nil {
		return w, err
	}
	if err := waitFor(ctx, "the restarted controller role running", func() bool {
		b, _ := os.ReadFile(s.Proc.Log)
		return strings.Contains(string(b), "controller role running")
	}); err != nil {
		return w, err
	}
	if err := s.settle(ctx); err != nil {
		return w, err
	}
	nb, _ := s.rig.Transactions(harness.NBDatabase)
	ovs, err := s.rig.Transactions(harness.OVSDatabase)
	if err != nil {
		return w, err
	}
	if len(nb) < nb0 || len(ovs) < ovs0 {
		return w, fmt.Errorf("a database was compacted during the count (northbound %d -> %d, Open_vSwitch %d -> %d records)", nb0, len(nb), ovs0, len(ovs))
	}
	w.NB, w.OVS = nb[nb0:], ovs[ovs0:]
	return w, nil
}

func (s *Systemd) counts() (nb, ovs int, err error) {
	n, err := s.rig.Transactions(harness.NBDatabase)
	if err != nil {
		return 0, 0, err
	}
	o, err := s.rig.Transactions(harness.OVSDatabase)
	return len(n), len(o), err
}

// settle waits until neither database has logged a write for two seconds.
func (s *Systemd) settle(ctx context.Context) error {
	last, since := -1, time.Now()
	var err error
	werr := waitFor(ctx, "the databases quiet for 2 s", func() bool {
		var nb, ovs int
		if nb, ovs, err = s.counts(); err != nil {
			return true
		}
		if nb+ovs != last {
			last, since = nb+ovs, time.Now()
		}
		return time.Since(since) >= 2*time.Second
	})
	if err != nil {
		return err
	}
	return werr
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(ctx context.Context, what string, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
