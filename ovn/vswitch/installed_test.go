package vswitch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func addPodPort(t *testing.T, f fixture) {
	t.Helper()
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	f.mustWrite(t, 1, "add port", func() error {
		return f.c.AddPort(f.ctx, PortSpec{Bridge: "br-int", Name: "veth1_h", IfaceID: "web.default"})
	})
}

// waitSubscribed returns once a WaitInstalled call is blocked on iface's events, so the test
// exercises the event path rather than the first cache check.
func waitSubscribed(t *testing.T, f fixture, iface string) {
	t.Helper()
	for {
		f.c.mu.Lock()
		_, ok := f.c.waiters[iface]
		f.c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-f.ctx.Done():
			t.Fatal("WaitInstalled never subscribed")
		case <-time.After(time.Millisecond):
		}
	}
}

func TestWaitInstalledWakesOnEvent(t *testing.T) {
	f := newFixture(t)
	addPodPort(t, f)
	done := make(chan error, 1)
	go func() { done <- f.c.WaitInstalled(f.ctx, "veth1_h") }()
	waitSubscribed(t, f, "veth1_h")

	// An unrelated change to the interface wakes the waiter, which must keep waiting.
	f.vsctl(t, "set", "Interface", "veth1_h", "external_ids:other=1")
	// ovn-controller's write, done here by the command-line tool as another process would.
	f.vsctl(t, "set", "Interface", "veth1_h", "external_ids:ovn-installed=true")
	if err := <-done; err != nil {
		t.Fatalf("WaitInstalled: %v", err)
	}
	f.c.mu.Lock()
	left := len(f.c.waiters)
	f.c.mu.Unlock()
	if left != 0 {
		t.Errorf("%d waiter sets left after return", left)
	}
}

func TestWaitInstalledAlreadySet(t *testing.T) {
	f := newFixture(t)
	addPodPort(t, f)
	f.setInterfaceKey(t, "veth1_h", KeyOVNInstalled, "true")
	if err := f.c.WaitInstalled(f.ctx, "veth1_h"); err != nil {
		t.Fatalf("WaitInstalled: %v", err)
	}
}

func TestWaitInstalledTimesOut(t *testing.T) {
	f := newFixture(t)
	addPodPort(t, f)
	f.setInterfaceKey(t, "veth1_h", KeyOVNInstalled, "false")
	ctx, cancel := context.WithTimeout(f.ctx, 50*time.Millisecond)
	defer cancel()
	err := f.c.WaitInstalled(ctx, "veth1_h")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "veth1_h") {
		t.Fatalf("WaitInstalled = %v, want DeadlineExceeded naming veth1_h", err)
	}
}
