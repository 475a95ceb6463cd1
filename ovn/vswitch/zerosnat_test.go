package vswitch

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// ovs-vswitchd publishes the capability when it creates a datapath; edgeovn turns it off,
// keeps the other capabilities, writes nothing when it is off already, and turns it off
// again when ovs-vswitchd republishes it (a restart).
func TestKeepZeroSNATOff(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 0, "no datapath row yet", func() error {
		_, err := f.c.DisableZeroSNAT(f.ctx, DatapathNetdev)
		return err
	})
	publish := func() {
		f.vsctl(t, "--", "--id=@dp", "create", "Datapath", `capabilities={ct_zero_snat="true",ct_state="true"}`,
			"--", "set", "Open_vSwitch", ".", "datapaths:netdev=@dp")
	}
	publish()
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.c.KeepZeroSNATOff(ctx, DatapathNetdev, time.Second, slog.New(slog.DiscardHandler))
	}()
	t.Cleanup(func() { cancel(); <-done })
	f.waitCapability(t, "false")
	if got := f.vsctl(t, "get", "Datapath", f.vsctl(t, "get", "Open_vSwitch", ".", "datapaths:netdev"), "capabilities:ct_state"); got != "true" {
		t.Fatalf("ct_state = %q, want it kept", got)
	}
	f.mustWrite(t, 0, "already off", func() error {
		_, err := f.c.DisableZeroSNAT(f.ctx, DatapathNetdev)
		return err
	})
	f.vsctl(t, "set", "Datapath", f.vsctl(t, "get", "Open_vSwitch", ".", "datapaths:netdev"), "capabilities:ct_zero_snat=true")
	f.waitCapability(t, "false")
}

func (f fixture) waitCapability(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		uuid := f.vsctl(t, "get", "Open_vSwitch", ".", "datapaths:netdev")
		got := f.vsctl(t, "get", "Datapath", uuid, "capabilities:"+CapZeroSNAT)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ct_zero_snat = %q, want %q", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
