package vswitch

import (
	"errors"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn"
)

// TestHealthProbesSayNo: each probe fails on the state it looks for and passes once it is back.
func TestHealthProbesSayNo(t *testing.T) {
	f := newFixture(t)
	if err := f.c.BridgePresent(f.ctx, "br-int"); !errors.Is(err, ovn.ErrNotFound) {
		t.Fatalf("BridgePresent before the bridge: %v", err)
	}
	if err := f.c.InterfaceInstalled(f.ctx, "veth1_h"); !errors.Is(err, ovn.ErrNotFound) {
		t.Fatalf("InterfaceInstalled before the port: %v", err)
	}
	addPodPort(t, f)
	if err := f.c.BridgePresent(f.ctx, "br-int"); err != nil {
		t.Fatalf("BridgePresent: %v", err)
	}
	if err := f.c.InterfaceInstalled(f.ctx, "veth1_h"); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("InterfaceInstalled before ovn-controller's mark: %v", err)
	}
	f.vsctl(t, "set", "Interface", "veth1_h", "external_ids:ovn-installed=true")
	eventually(t, f, "installed seen", func() bool { return f.c.InterfaceInstalled(f.ctx, "veth1_h") == nil })
	f.vsctl(t, "remove", "Interface", "veth1_h", "external_ids", "ovn-installed")
	eventually(t, f, "unbinding seen", func() bool { return errors.Is(f.c.InterfaceInstalled(f.ctx, "veth1_h"), ErrNotInstalled) })

	if err := f.c.Ping(f.ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	f.srv.Stop(t)
	if err := f.c.Ping(f.ctx); err == nil {
		t.Fatal("Ping succeeded with the database server stopped")
	}
	f.srv.Restart(t)
	eventually(t, f, "ping after the server is back", func() bool { return f.c.Ping(f.ctx) == nil })
}

// eventually waits for the client's cache or connection to catch up with the server.
func eventually(t *testing.T, f fixture, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-f.ctx.Done():
			t.Fatalf("%s: not reached before the test's deadline", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
