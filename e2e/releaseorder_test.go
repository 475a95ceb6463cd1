package e2e

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// TestReleaseOrderSurvivesFailover: the leader allocates five pods, two are deleted (their
// addresses released on the leader's host), the leader is SIGKILLed and a second host, whose
// IPAM database is empty, takes over. Its next pod gets a never-used address, not one of the
// two just released: the release order lives in northbound (the pod switch's external_ids),
// not only in the old leader's database. Without it the new leader sees the released
// addresses as never used and hands out the lowest of them first.
func TestReleaseOrderSurvivesFailover(t *testing.T) {
	env, ctx := startNode(t)
	eventually(ctx, t, "the rig's host leads", func() bool { return leaseHolder(ctx, env.rig) == node })
	for i := range 5 {
		env.apiPod(ctx, t, fmt.Sprintf("r-%d", i), nil)
	}
	eventually(ctx, t, "five pods allocated", func() bool { return len(podIPs(ctx, t, env.rig, "default")) == 5 })
	ips := podIPs(ctx, t, env.rig, "default")
	released := []string{"default/r-1", "default/r-3"}
	for _, k := range released {
		if err := env.kubelet.DeletePod(ctx, env.apiPodObject(ctx, t, k)); err != nil {
			t.Fatal(err)
		}
	}
	eventually(ctx, t, "the deleted pods' ports removed", func() bool {
		ports := portIPs(ctx, t, env.rig)
		_, a := ports["r-1.default"]
		_, b := ports["r-3.default"]
		return !a && !b
	})
	if err := syscall.Kill(env.daemon.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = env.daemon.Wait()

	b := env.startStandby(ctx, t, daemon.Standby{Name: "host-b", MetricsPort: 10666})
	eventually(ctx, t, "host-b leads", func() bool { return leaseHolder(ctx, env.rig) == "host-b" && logHas(b, "controller role running") })
	env.apiPod(ctx, t, "next", nil)
	eventually(ctx, t, "host-b allocates the next pod", func() bool {
		_, ok := podIPs(ctx, t, env.rig, "default")["default/next"]
		return ok
	})
	got := podIPs(ctx, t, env.rig, "default")["default/next"]
	for _, k := range released {
		if got == ips[k] {
			t.Errorf("next pod got %s, released by %s just before the leader changed; want a never-used address", got, k)
		}
	}
	for k, ip := range podIPs(ctx, t, env.rig, "default") {
		if k != "default/next" && ip == got {
			t.Errorf("next pod got %s, held by %s", got, k)
		}
	}
	if !logHas(b, "release order taken from northbound") {
		t.Error("host-b did not report taking the release order from northbound")
	}
}
