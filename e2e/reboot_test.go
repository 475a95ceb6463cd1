package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// rebootPods is how many pods TestRebootRecreatesSandboxes re-creates: the issue saw the
// first four of ten cut off.
const rebootPods = 10

// rebootReachBound is how long every re-created pod has to reach its gateway and its
// neighbour once the stale ports are gone; the pods cut off in issue 29 stayed so for minutes.
const rebootReachBound = 30 * time.Second

// TestRebootRecreatesSandboxes is issue 29: a host reboot as kubelet lives it. Pods networked
// through libcni lose their network namespaces without a CNI DEL, every daemon of the host
// (OVN central, Open vSwitch, ovn-controller, etcd, kube-apiserver, edgeovn) is SIGKILLed at
// once and started again in boot order, and every sandbox is re-created at once (a new
// namespace, a new container ID, CNI ADD). Every ADD must succeed and every pod must reach
// its gateway and its neighbour, also after the stale ports of the lost sandboxes are gone:
// before the fix, the port sweep's removal of a stale port made ovn-controller release the
// logical port the new sandbox's interface had just been bound to.
func TestRebootRecreatesSandboxes(t *testing.T) {
	env, ctx := startNode(t)
	before := make([]*podsim.Sandbox, rebootPods)
	for i := range before {
		before[i] = runPod(ctx, t, env, fmt.Sprintf("p%02d", i))
	}
	gw := netip.MustParseAddr("10.42.0.1")
	if un := unreachable(ctx, before, gw, rebootReachBound); len(un) > 0 {
		t.Fatalf("pods unreachable before the reboot: %v", un)
	}
	for _, sb := range before {
		if err := podsim.RemoveNetns(sb.Netns); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.rig.Reboot(ctx); err != nil {
		t.Fatal(err)
	}
	env.startDaemon(ctx, t, "edgeovn-boot")
	after := recreateSandboxes(ctx, t, env, before)
	for i, sb := range after {
		if sb.IP() != before[i].IP() {
			t.Errorf("pod %s came back with %s, had %s", sb.Pod.Name, sb.IP(), before[i].IP())
		}
	}
	eventually(ctx, t, "one interface per pod's logical port on br-int", func() bool {
		return env.interfacesPerPort(ctx, t, after) == 1
	})
	// The stale ports are gone (by the ADDs, or by the port sweep's two checks 2 s apart):
	// give ovn-controller time to act on their deletion before judging.
	time.Sleep(2 * time.Second)
	if un := unreachable(ctx, after, gw, rebootReachBound); len(un) > 0 {
		t.Fatalf("after the reboot, pods cut off %v after their ADD succeeded:\n%s", un, env.bindingReport(ctx, t, after))
	}
}

// recreateSandboxes runs a new sandbox for every pod at once, as kubelet does after a boot.
func recreateSandboxes(ctx context.Context, t *testing.T, env *env, old []*podsim.Sandbox) []*podsim.Sandbox {
	t.Helper()
	out := make([]*podsim.Sandbox, len(old))
	errs := make([]error, len(old))
	var wg sync.WaitGroup
	for i, sb := range old {
		wg.Go(func() { out[i], errs[i] = env.kubelet.RunSandbox(ctx, sb.Pod) })
	}
	wg.Wait()
	for i, sb := range out {
		if sb != nil {
			t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
		}
		if errs[i] != nil {
			t.Fatalf("re-create sandbox of %s: %v\n%s", old[i].Pod.Name, errs[i], env.daemonLog())
		}
	}
	return out
}

// unreachable returns the pods that did not reach the gateway and their neighbour within bound.
func unreachable(ctx context.Context, sandboxes []*podsim.Sandbox, gw netip.Addr, bound time.Duration) []string {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var out []string
	for _, r := range podsim.WaitReachable(ctx, sandboxes, gw) {
		if r.At.IsZero() {
			out = append(out, r.Sandbox.Pod.Name)
		}
	}
	return out
}

// interfacesPerPort returns the most OVS interfaces any of the pods' logical ports has.
func (e *env) interfacesPerPort(ctx context.Context, t *testing.T, sandboxes []*podsim.Sandbox) int {
	t.Helper()
	return e.interfacesPerLSP(ctx, t, sandboxLSPs(sandboxes))
}

// interfacesPerLSP returns the most OVS interfaces carrying any of the logical ports' iface-id.
func (e *env) interfacesPerLSP(ctx context.Context, t *testing.T, lsps []string) int {
	t.Helper()
	most := 0
	for _, lsp := range lsps {
		out, err := e.rig.Run(ctx, "ovs-vsctl", "--db="+e.rig.OVSEndpoint, "--bare", "--columns=name",
			"find", "Interface", "external_ids:iface-id="+lsp)
		if err != nil {
			t.Fatalf("ovs-vsctl find: %v\n%s", err, out)
		}
		most = max(most, len(strings.Fields(string(out))))
	}
	return most
}

func sandboxLSPs(sandboxes []*podsim.Sandbox) []string {
	var out []string
	for _, sb := range sandboxes {
		out = append(out, sb.Pod.Name+"."+sb.Pod.Namespace)
	}
	return out
}

// bindingReport shows, for a failure, each pod's Port_Binding and interfaces.
func (e *env) bindingReport(ctx context.Context, t *testing.T, sandboxes []*podsim.Sandbox) string {
	t.Helper()
	return e.lspBindingReport(ctx, t, sandboxLSPs(sandboxes))
}

// lspBindingReport shows, for a failure, each logical port's Port_Binding and interfaces.
func (e *env) lspBindingReport(ctx context.Context, t *testing.T, lsps []string) string {
	t.Helper()
	var b strings.Builder
	for _, lsp := range lsps {
		pb, _ := e.rig.Run(ctx, "ovn-sbctl", "--db="+e.rig.SBEndpoint, "--columns=logical_port,chassis,up",
			"find", "Port_Binding", "logical_port="+lsp)
		ifs, _ := e.rig.Run(ctx, "ovs-vsctl", "--db="+e.rig.OVSEndpoint, "--columns=name,external_ids",
			"find", "Interface", "external_ids:iface-id="+lsp)
		fmt.Fprintf(&b, "--- %s\n%s%s", lsp, pb, ifs)
	}
	return b.String()
}
