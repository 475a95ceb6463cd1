package vswitch

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// ovn-controller reports each installed northbound configuration in br-int's external_ids;
// the watcher calls back once per new number (not for the one found at the start, not for
// a rewrite of the same number), and reads a garbled value as an error, not a number.
func TestOnNBCfgInstalled(t *testing.T) {
	f := newFixture(t, []string{"add-br", "br-int", "--", "set", "Bridge", "br-int", "external_ids:ovn-nb-cfg=3"})
	f.waitCache(t, func() bool { cfg, ok, err := f.c.InstalledNBCfg(f.ctx, "br-int"); return ok && err == nil && cfg == 3 })
	if _, ok, err := f.c.InstalledNBCfg(f.ctx, "br-nope"); ok || err != nil {
		t.Fatalf("InstalledNBCfg of a missing bridge = %v, %v; want none", ok, err)
	}
	got := make(chan int64, 10)
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.c.OnNBCfgInstalled(ctx, "br-int", slog.New(slog.DiscardHandler), func(_ context.Context, cfg int64) { got <- cfg })
	}()
	t.Cleanup(func() { cancel(); <-done })
	expect := func(want int64) {
		t.Helper()
		select {
		case cfg := <-got:
			if cfg != want {
				t.Fatalf("called with %d, want %d", cfg, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("not called for %d", want)
		}
	}
	set := func(v string) { f.vsctl(t, "set", "Bridge", "br-int", "external_ids:ovn-nb-cfg="+v) }
	set("4")
	expect(4)
	f.vsctl(t, "set", "Bridge", "br-int", "external_ids:ovn-nb-cfg-ts=12345") // same number
	set("junk")
	f.waitCache(t, func() bool {
		_, _, err := f.c.InstalledNBCfg(f.ctx, "br-int")
		return err != nil && strings.Contains(err.Error(), `"junk"`)
	})
	set("5")
	expect(5)
	set("1") // northbound recreated
	expect(1)
	select {
	case cfg := <-got:
		t.Fatalf("unexpected call with %d", cfg)
	case <-time.After(300 * time.Millisecond):
	}
}
