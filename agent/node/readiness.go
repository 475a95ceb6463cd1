package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/edgeovn/edgeovn/agent/node/health"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// ovsState is what readiness reads through the Open_vSwitch database client.
type ovsState interface {
	Ping(ctx context.Context) error
	BridgePresent(ctx context.Context, name string) error
	InterfaceInstalled(ctx context.Context, name string) error
}

var _ ovsState = (*vswitch.Client)(nil)

// readinessProbes are what the checks look at beyond the database; tests give fakes.
type readinessProbes struct {
	ovs ovsState
	// link reports whether the kernel has a network device of that name.
	link func(name string) error
	// daemons must answer on their control sockets (ovs-vswitchd, ovn-controller): their
	// rows stay in the database, and their tap devices in the kernel, after they die.
	daemons []health.Daemon
	answers func(context.Context, health.Daemon) error
	// encap fails while there is no tunnel endpoint (encapkeep.go); nil: not checked.
	encap func(context.Context) error
}

// defaultProbes reads the live host.
func defaultProbes(ovs ovsState) readinessProbes {
	ovsRun, ovnRun := health.DefaultRunDirs()
	return readinessProbes{
		ovs:  ovs,
		link: kernelLink,
		daemons: []health.Daemon{{Name: "ovs-vswitchd", RunDir: ovsRun},
			{Name: "ovn-controller", RunDir: ovnRun}},
		answers: func(ctx context.Context, d health.Daemon) error { return d.Answers(ctx) },
	}
}

func kernelLink(name string) error {
	if _, err := netlink.LinkByName(name); err != nil {
		return fmt.Errorf("no network device %s: %w", name, err)
	}
	return nil
}

// readiness is the node's datapath verdict: the CNI files installed, the database
// answering, br-int present, the OVS and OVN daemons answering and, once the host has its
// ovn0, ovn0 bound by ovn-controller.
type readiness struct {
	probes    readinessProbes
	installed atomic.Bool // the CNI binary, plugins and config are in place
	wired     atomic.Bool // ovn0 has been seen bound: from then on it must stay bound
	nodeGone  atomic.Bool // this host's Node was deleted: ovn0 was removed (unwireHost)
	// started is closed once installed is first set.
	started     chan struct{}
	startedOnce sync.Once
}

func newReadiness(p readinessProbes) *readiness {
	return &readiness{probes: p, started: make(chan struct{})}
}

var errStarting = errors.New("node role is starting: cni config not written yet")

// startWait bounds how long a CNI call waits for the node role's start (normally
// milliseconds: the CNI files are checked once the socket serves).
const startWait = 10 * time.Second

func (rd *readiness) markInstalled() {
	rd.installed.Store(true)
	rd.startedOnce.Do(func() { close(rd.started) })
}

// waitInstalled returns once the CNI files are in place, or errStarting when ctx or wait
// ends first.
func (rd *readiness) waitInstalled(ctx context.Context, wait time.Duration) error {
	if rd.installed.Load() {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-rd.started:
		return nil
	case <-ctx.Done():
	case <-t.C:
	}
	return errStarting
}

func (rd *readiness) checks() []health.Check {
	checks := []health.Check{
		{Name: "cni", Run: func(context.Context) error {
			if !rd.installed.Load() {
				return errStarting
			}
			return nil
		}},
		{Name: "open_vswitch database", Run: rd.probes.ovs.Ping, Liveness: true},
		{Name: Bridge, Run: rd.bridge},
	}
	if rd.probes.encap != nil {
		checks = append(checks, health.Check{Name: "encapsulation", Run: rd.probes.encap})
	}
	for _, d := range rd.probes.daemons {
		checks = append(checks, health.Check{Name: d.Name, Run: func(ctx context.Context) error { return rd.probes.answers(ctx, d) }})
	}
	return append(checks, health.Check{Name: HostInterface, Run: rd.hostInterface})
}

func (rd *readiness) bridge(ctx context.Context) error {
	if err := rd.probes.ovs.BridgePresent(ctx, Bridge); err != nil {
		return err
	}
	return rd.probes.link(Bridge)
}

// hostInterface passes until ovn-controller has first bound ovn0 (the host wiring needs the
// API server and the controller, which readiness must not wait for, and the first binding
// takes ovn-controller a moment in which pods are wired all the same); from then on ovn0 must
// stay bound (ovn-installed), and a removed ovn0 is not ready until it is back and bound.
// While this host's own Node is deleted (unwireHost removed ovn0), it says so instead.
func (rd *readiness) hostInterface(ctx context.Context) error {
	if rd.nodeGone.Load() {
		return errNodeDeleted
	}
	err := rd.probes.ovs.InterfaceInstalled(ctx, HostInterface)
	if err == nil {
		rd.wired.Store(true)
		return nil
	}
	if !rd.wired.Load() {
		return nil
	}
	return fmt.Errorf("host no longer bound to OVN (is ovn-controller running and connected to the southbound database?): %w", err)
}
