package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/agent/node/health"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// fakeHost is the state readiness observes, each part switchable by the test.
type fakeHost struct {
	mu        sync.Mutex
	dbDown    bool
	bridges   map[string]bool
	ifaces    map[string]bool // name -> ovn-installed
	links     map[string]bool
	deadProcs map[string]bool
}

func newFakeHost() *fakeHost {
	return &fakeHost{bridges: map[string]bool{Bridge: true}, ifaces: map[string]bool{},
		links: map[string]bool{Bridge: true}, deadProcs: map[string]bool{}}
}

func (f *fakeHost) set(change func(*fakeHost)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f)
}

func (f *fakeHost) Ping(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dbDown {
		return errors.New("connection refused")
	}
	return nil
}

func (f *fakeHost) BridgePresent(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.bridges[name] {
		return fmt.Errorf("bridge %s: %w", name, ovn.ErrNotFound)
	}
	return nil
}

func (f *fakeHost) InterfaceInstalled(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	installed, ok := f.ifaces[name]
	switch {
	case !ok:
		return fmt.Errorf("interface %s: %w", name, ovn.ErrNotFound)
	case !installed:
		return fmt.Errorf("interface %s: %w", name, vswitch.ErrNotInstalled)
	}
	return nil
}

func (f *fakeHost) probes() readinessProbes {
	return readinessProbes{ovs: f,
		link: func(name string) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			if !f.links[name] {
				return errors.New("link not found")
			}
			return nil
		},
		daemons: []health.Daemon{{Name: "ovs-vswitchd"}, {Name: "ovn-controller"}},
		answers: func(_ context.Context, d health.Daemon) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.deadProcs[d.Name] {
				return errors.New("connection refused")
			}
			return nil
		},
	}
}

// TestReadinessSaysNo feeds each failure in turn: the verdict names it, and turns ready
// again once it is repaired.
func TestReadinessSaysNo(t *testing.T) {
	host := newFakeHost()
	rd := newReadiness(host.probes())
	mon := health.NewMonitor(health.MonitorRequest{CheckTimeout: time.Second, SlowGrace: -1})
	if err := mon.Attach(rd.checks()); err != nil {
		t.Fatal(err)
	}
	eval := func() error { return mon.Recheck(context.Background()) }
	if err := eval(); !errors.Is(err, errStarting) {
		t.Fatalf("before the CNI files: %v", err)
	}
	rd.markInstalled()
	if err := eval(); err != nil {
		t.Fatalf("healthy host, ovn0 not made yet (no API server needed): %v", err)
	}
	host.set(func(h *fakeHost) { h.ifaces[HostInterface] = false })
	if err := eval(); err != nil {
		t.Fatalf("ovn0 made, not bound yet (ovn-controller's first binding): %v", err)
	}
	host.set(func(h *fakeHost) { h.ifaces[HostInterface] = true })
	if err := eval(); err != nil {
		t.Fatalf("ovn0 bound: %v", err)
	}
	cases := []struct {
		name   string
		break_ func(*fakeHost)
		repair func(*fakeHost)
		want   string
	}{
		{"database connection lost", func(h *fakeHost) { h.dbDown = true }, func(h *fakeHost) { h.dbDown = false }, "open_vswitch database: connection refused"},
		{"br-int deleted", func(h *fakeHost) { h.bridges[Bridge] = false }, func(h *fakeHost) { h.bridges[Bridge] = true }, "br-int: bridge br-int: not found"},
		{"br-int device gone", func(h *fakeHost) { h.links[Bridge] = false }, func(h *fakeHost) { h.links[Bridge] = true }, "br-int: link not found"},
		{"ovs-vswitchd dead", func(h *fakeHost) { h.deadProcs["ovs-vswitchd"] = true }, func(h *fakeHost) { h.deadProcs["ovs-vswitchd"] = false }, "ovs-vswitchd: connection refused"},
		{"ovn-controller dead", func(h *fakeHost) { h.deadProcs["ovn-controller"] = true }, func(h *fakeHost) { h.deadProcs["ovn-controller"] = false }, "ovn-controller: connection refused"},
		{"ovn0 unbound", func(h *fakeHost) { h.ifaces[HostInterface] = false }, func(h *fakeHost) { h.ifaces[HostInterface] = true }, "ovn0: host no longer bound"},
		{"ovn0 deleted after wiring", func(h *fakeHost) { delete(h.ifaces, HostInterface) }, func(h *fakeHost) { h.ifaces[HostInterface] = true }, "ovn0: host no longer bound"},
	}
	for _, c := range cases {
		host.set(c.break_)
		err := eval()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: verdict %v, want it to say %q", c.name, err, c.want)
		}
		host.set(c.repair)
		if err := eval(); err != nil {
			t.Errorf("%s repaired: still %v", c.name, err)
		}
	}
}

// TestWaitInstalled: a CNI call that arrives while the role starts (queued on the socket
// during a restart) waits for the start instead of failing; without a start it gives up with
// errStarting when its wait ends.
func TestWaitInstalled(t *testing.T) {
	rd := newReadiness(readinessProbes{})
	if err := rd.waitInstalled(context.Background(), 20*time.Millisecond); !errors.Is(err, errStarting) {
		t.Fatalf("before the start: %v, want errStarting", err)
	}
	done := make(chan error, 1)
	go func() { done <- rd.waitInstalled(context.Background(), time.Minute) }()
	time.Sleep(20 * time.Millisecond)
	rd.markInstalled()
	if err := <-done; err != nil {
		t.Fatalf("waiting through the start: %v", err)
	}
	rd.markInstalled() // a second install pass (drift repair) is harmless
}
