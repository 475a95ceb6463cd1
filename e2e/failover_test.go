package e2e

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/failover"
	"github.com/edgeovn/edgeovn/e2e/harness"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestFailoverKill9: two edgeovn processes against one API server and northbound; the
// leader is SIGKILLed while 200 pods are being created (after 50 are allocated) and the other
// host, whose IPAM database is empty, takes over. Every pod ends up allocated exactly once:
// an address annotated before the kill is kept, no address is held twice among the
// annotations or the northbound ports, and each pod's port carries its annotated address.
// The time from the kill to the next allocation is printed by bench/failoverbench, not
// asserted here.
func TestFailoverKill9(t *testing.T) {
	if err := harness.Preflight(); err != nil {
		skip.Now(t, "end-to-end tier: real components unavailable (run `make deps` as root): %v", err)
	}
	bins := buildBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	rig, err := harness.Start(ctx, harness.Options{Log: log, Keep: os.Getenv("EDGEOVN_E2E_KEEP") != ""})
	if err != nil {
		t.Fatalf("start rig: %v", err)
	}
	t.Cleanup(rig.Stop)
	if err := daemon.Kubelet(rig, node).EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := failover.Run(ctx, rig, failover.Request{BinDir: bins, Node: node, Pods: 200, KillAfter: 50,
		LeaseFlags: daemonFlags[1:]})
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range []*harness.Process{res.Leader, res.Standby} {
				if p != nil {
					t.Log(processLog(p))
				}
			}
		}
	})
	if err != nil {
		t.Fatalf("failover: %v", err)
	}
	t.Logf("killed with %d of 200 pods allocated; takeover after %v, next allocation after %v, all after %v (under load)",
		len(res.AtKill), res.ToTakeover, res.ToNextAllocation, res.ToAll)
	if len(res.Annotated) != 200 {
		t.Fatalf("%d of 200 pods allocated", len(res.Annotated))
	}
	for k, ip := range res.AtKill {
		if res.Annotated[k] != ip {
			t.Errorf("%s was annotated %s before the kill and %s after: allocated twice", k, ip, res.Annotated[k])
		}
	}
	if dups := failover.Duplicates(res); len(dups) > 0 {
		t.Errorf("addresses held twice: %v", dups)
	}
	if len(res.Ports) != 200 {
		t.Errorf("%d pod ports in northbound for 200 pods", len(res.Ports))
	}
}
