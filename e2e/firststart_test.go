package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/types"

	agentnode "github.com/edgeovn/edgeovn/agent/node"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestFirstAddAtStatus starts edgeovn on a host's first boot (an empty Open_vSwitch database:
// no br-int, no ovn0, no CNI config) many times in a row and sends the first pod's ADD the
// moment CNI STATUS first succeeds, as containerd does: no ADD may fail (make demo's first pod
// failed with code 11, "try again later", because br-int's device came after the node said
// ready), the pod must reach its gateway, and the daemon's readiness, as it reports it, must
// never go ready -> not ready during the start: it says ready once.
func TestFirstAddAtStatus(t *testing.T) {
	if err := harness.Preflight(); err != nil {
		skip.Now(t, "end-to-end tier: real components unavailable (run `make deps` as root): %v", err)
	}
	starts := 20
	if n, err := strconv.Atoi(os.Getenv("EDGEOVN_FIRST_STARTS")); err == nil && n > 0 {
		starts = n
	}
	bins := buildBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rig, err := harness.Start(ctx, harness.Options{Keep: os.Getenv("EDGEOVN_E2E_KEEP") != ""})
	if err != nil {
		t.Fatalf("start rig: %v", err)
	}
	t.Cleanup(rig.Stop)
	k := daemon.Kubelet(rig, node)
	if err := k.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	gateway := netip.MustParseAddr("10.42.0.1")
	for i := range starts {
		if i > 0 {
			if err := rig.FreshHostOVS(ctx, agentnode.Bridge, agentnode.HostInterface); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(k.ConfDir, agentnode.ConfName)); err != nil {
				t.Fatal(err)
			}
		}
		pod, err := k.CreatePod(ctx, "default", fmt.Sprintf("first-%d", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		name := fmt.Sprintf("edgeovn-%d", i)
		p, err := daemon.Start(ctx, rig, daemon.Spec{Name: name, Node: node, BinDir: bins, Extra: daemonFlags})
		if err != nil {
			t.Fatal(err)
		}
		if err := waitStatus(ctx, k); err != nil {
			t.Fatalf("start %d: %v\n%s", i, err, readLog(p.Log))
		}
		ready := time.Since(t0)
		sb, err := k.RunSandbox(ctx, pod)
		if err != nil {
			var cniErr *types.Error
			if errors.As(err, &cniErr) {
				t.Errorf("start %d: first ADD right after STATUS failed with CNI code %d", i, cniErr.Code)
			}
			t.Fatalf("start %d: %v\n%s", i, err, readLog(p.Log))
		}
		if out, err := podsim.Ping(ctx, sb, gateway); err != nil {
			t.Fatalf("start %d: first pod cannot reach its gateway: %v\n%s\n%s", i, err, out, readLog(p.Log))
		}
		t.Logf("start %d: STATUS ok %v after the start, first ADD took %v, gateway reached at %v", i,
			ready.Round(time.Millisecond), sb.AddTime.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
		if err := k.StopSandbox(ctx, sb, true); err != nil {
			t.Fatal(err)
		}
		if err := k.DeletePod(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if err := p.Stop(); err != nil {
			t.Fatal(err)
		}
		log := readLog(p.Log)
		if err := readinessMonotonic(log); err != nil {
			t.Fatalf("start %d: %v\n%s", i, err, log)
		}
	}
}

// waitStatus polls CNI STATUS every few milliseconds, so the ADD that follows comes the
// moment the plugin first says ready (containerd's 5 s would hide a readiness that flips).
func waitStatus(ctx context.Context, k *podsim.Kubelet) error {
	for {
		if _, err := os.Stat(filepath.Join(k.ConfDir, agentnode.ConfName)); err == nil && k.Status(ctx) == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for cni status: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// readinessMonotonic reads the readiness the daemon reported in its log: any number of "not
// ready" while starting, then "ready" once and nothing after it.
func readinessMonotonic(log string) error {
	var seq []string
	for _, line := range strings.Split(log, "\n") {
		switch {
		// Every line that tells a person the node is ready counts (edgeovn once logged "datapath
		// ready" and "node role ready" before its verdict, which then said not ready).
		case strings.Contains(line, `msg="node datapath ready"`), strings.Contains(line, `msg="node role ready"`),
			strings.Contains(line, `msg="datapath ready"`):
			seq = append(seq, "ready")
		case strings.Contains(line, `msg="node datapath not ready"`):
			seq = append(seq, "not ready")
		}
	}
	ready := 0
	for _, v := range seq {
		if v == "not ready" && ready > 0 {
			return fmt.Errorf("readiness went ready -> not ready during the start: %v", seq)
		}
		if v == "ready" {
			ready++
		}
	}
	if ready != 1 {
		return fmt.Errorf("readiness said ready %d times, want once: %v", ready, seq)
	}
	return nil
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return "--- " + path + " ---\n" + string(b)
}
