package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestRebootLeaseHolderHost is issue 29 on two hosts, with a controller failover in the
// middle: the host that holds the controller Lease reboots (its pods' namespaces gone without
// a CNI DEL, its Open vSwitch, ovn-controller and edgeovn SIGKILLed at once and started again
// in boot order, the central staying up), the other host takes the Lease before the rebooted
// host's edgeovn is back, and the rebooted host's sandboxes are re-created at once. Every
// re-created pod reaches its gateway and its neighbour, and the other host's pod reaches
// every one of them across the tunnel.
func TestRebootLeaseHolderHost(t *testing.T) {
	cl, ctx := startCluster(t, 2)
	a := leaderHost(ctx, t, cl)
	b := cl.hosts[0]
	if b == a {
		b = cl.hosts[1]
	}
	before := make([]*podsim.Sandbox, 6)
	for i := range before {
		before[i] = runPod(ctx, t, a, fmt.Sprintf("ra%02d", i))
	}
	remote := runPod(ctx, t, b, "rb")
	gw := netip.MustParseAddr("10.42.0.1")
	if un := unreachable(ctx, append([]*podsim.Sandbox{remote}, before...), gw, rebootReachBound); len(un) > 0 {
		t.Fatalf("pods unreachable before the reboot: %v", un)
	}
	for _, sb := range before {
		if err := podsim.RemoveNetns(sb.Netns); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.rig.Reboot(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, b.kubelet.Node+" takes the Lease", func() bool { return leaseHolder(ctx, b.rig) == b.kubelet.Node })
	p, err := daemon.Start(ctx, a.rig, daemon.Spec{Name: "edgeovn-boot", Node: a.kubelet.Node, BinDir: cl.bins,
		Extra: append(append([]string{}, daemonFlags...), cl.extra...)})
	if err != nil {
		t.Fatal(err)
	}
	a.daemon = p
	if err := a.kubelet.WaitReady(ctx); err != nil {
		t.Fatalf("%v\n%s", err, a.daemonLog())
	}
	after := recreateSandboxes(ctx, t, a, before)
	eventually(ctx, t, "one interface per pod's logical port on br-int", func() bool {
		return a.interfacesPerPort(ctx, t, after) == 1
	})
	time.Sleep(2 * time.Second) // as in TestRebootRecreatesSandboxes
	if un := unreachable(ctx, after, gw, rebootReachBound); len(un) > 0 {
		t.Fatalf("after the reboot, pods cut off %v:\n%s", un, a.bindingReport(ctx, t, after))
	}
	rctx, cancel := context.WithTimeout(ctx, rebootReachBound)
	defer cancel()
	var ips []netip.Addr
	for _, sb := range after {
		ips = append(ips, sb.IP())
	}
	if podsim.ReachAll(rctx, remote, ips...).IsZero() {
		t.Fatalf("pod rb on %s does not reach every rebooted pod %v", b.kubelet.Node, ips)
	}
}
