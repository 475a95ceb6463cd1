package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/edgeovn/edgeovn/agent/controller"
	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// TestCrashBetweenPortAndAnnotation kills (SIGKILL) the leader after it created a pod's port
// in northbound and before it annotated the pod (a test hook holds it there). Five more pods
// are created while no controller runs, then a second host with an empty IPAM database takes
// the Lease: the held pod keeps the address its port has, no other pod gets it, and no
// address is held twice among annotations or ports. Without reading the ports at reconcile,
// the new leader's empty IPAM sees that address as never used and hands it to whichever pod
// it syncs first.
func TestCrashBetweenPortAndAnnotation(t *testing.T) {
	env, ctx := startNode(t)
	if err := env.daemon.Stop(); err != nil {
		t.Logf("stop %s: %v", env.daemon.Name, err)
	}
	a, err := daemon.Start(ctx, env.rig, daemon.Spec{Name: "edgeovn-hold", Node: node, BinDir: env.bins, Extra: daemonFlags,
		Env: []string{controller.HoldAfterPortEnv + "=default/victim"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(processLog(a))
		}
	})
	eventually(ctx, t, "edgeovn-hold leads", func() bool { return leaseHolder(ctx, env.rig) == node && logHas(a, "controller role running") })
	env.apiPod(ctx, t, "victim", nil)
	eventually(ctx, t, "port created and the controller held before annotating", func() bool {
		return logHas(a, "test hook: holding after port creation")
	})
	held, ok := portIPs(ctx, t, env.rig)["victim.default"]
	if !ok {
		t.Fatal("victim's port not in northbound")
	}
	if _, annotated := podIPs(ctx, t, env.rig, "default")["default/victim"]; annotated {
		t.Fatal("victim annotated: the hook did not hold before annotation")
	}
	if err := syscall.Kill(a.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()

	for i := range 5 {
		env.apiPod(ctx, t, fmt.Sprintf("later-%d", i), nil)
	}
	b := env.startStandby(ctx, t, daemon.Standby{Name: "host-b", MetricsPort: 10666})
	eventually(ctx, t, "host-b leads", func() bool { return leaseHolder(ctx, env.rig) == "host-b" })
	eventually(ctx, t, "all six pods allocated", func() bool { return len(podIPs(ctx, t, env.rig, "default")) == 6 })
	eventually(ctx, t, "every pod's port matches its annotation", func() bool { return portsFollowAnnotations(ctx, t, env) })

	pods, ports := podIPs(ctx, t, env.rig, "default"), portIPs(ctx, t, env.rig)
	if got := pods["default/victim"]; got != held {
		t.Errorf("victim annotated %s; its port held %s before the crash", got, held)
	}
	for k, ip := range pods {
		if k != "default/victim" && ip == held {
			t.Errorf("%s was given %s, the address of victim's port created before the crash", k, ip)
		}
	}
	if dups := duplicates(pods, ports); len(dups) > 0 {
		t.Errorf("addresses held twice: %v", dups)
	}
	if !logHas(b, "pod port in northbound without an annotated allocation") {
		t.Error("host-b did not report adopting victim's port address")
	}
}

// portsFollowAnnotations says whether every annotated pod has a port with its annotated address.
func portsFollowAnnotations(ctx context.Context, t *testing.T, env *env) bool {
	ports := portIPs(ctx, t, env.rig)
	for k, ip := range podIPs(ctx, t, env.rig, "default") {
		ns, name, _ := strings.Cut(k, "/")
		if ports[name+"."+ns] != ip {
			return false
		}
	}
	return true
}
