package e2e

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// lostBindingBound is how long edgeovn has to notice and reclaim a released pod port: two
// drift checks 2 s apart and ovn-controller's claim, with room for a loaded machine.
const lostBindingBound = 30 * time.Second

// TestLostBindingReclaimed feeds ovn-controller the release of issue 29 by hand: a second
// interface with a pod's iface-id appears beside the pod's and goes again (as a stale
// sandbox's port did), and ovn-controller releases the logical port for good though the
// pod's interface still carries its iface-id. With edgeovn running, the node role notices
// (the pod's port lost ovn-installed after having it), reclaims the port, logs and counts it,
// and the pod reaches its gateway and its neighbour again. With edgeovn stopped, `edgeovn
// doctor` names the port; the started daemon repairs it and doctor passes.
func TestLostBindingReclaimed(t *testing.T) {
	env, ctx := startNode(t)
	web, peer := runPod(ctx, t, env, "web"), runPod(ctx, t, env, "peer")
	gw := netip.MustParseAddr("10.42.0.1")
	sandboxes := []*podsim.Sandbox{web, peer}
	hostIf := web.ContainerID[:12] + "_h"

	env.releaseByTwin(ctx, t, hostIf, "web.default")
	env.waitInstalled(ctx, t, hostIf)
	if !logHas(env.daemon, "lost its OVN binding") {
		t.Errorf("the reclaim was not logged:\n%s", env.daemonLog())
	}
	if m := httpGet(ctx, t, env, "/metrics"); !strings.Contains(m, `edgeovn_pod_binding_reclaims_total{result="reclaimed"}`) {
		t.Errorf("/metrics does not count the lost binding:\n%s", m)
	}
	if un := unreachable(ctx, sandboxes, gw, lostBindingBound); len(un) > 0 {
		t.Fatalf("pods cut off after the reclaim: %v\n%s", un, env.bindingReport(ctx, t, sandboxes))
	}

	if err := env.daemon.Stop(); err != nil {
		t.Fatal(err)
	}
	env.releaseByTwin(ctx, t, hostIf, "web.default")
	out, err := env.command(ctx, "doctor")
	if err == nil || !strings.Contains(out, "[FAIL] pod bindings") || !strings.Contains(out, "released after ovn-installed: "+hostIf+" (web.default)") {
		t.Fatalf("doctor with a released pod port: %v\n%s", err, out)
	}
	t.Logf("edgeovn doctor with a released pod port:\n%s", out)
	env.startDaemon(ctx, t, "edgeovn-again")
	env.waitInstalled(ctx, t, hostIf)
	env.doctorPasses(ctx, t)
	if un := unreachable(ctx, sandboxes, gw, lostBindingBound); len(un) > 0 {
		t.Fatalf("pods cut off after the restarted daemon's reclaim: %v\n%s", un, env.bindingReport(ctx, t, sandboxes))
	}
}

// releaseByTwin adds a port with no device carrying lsp's iface-id beside hostIf's and
// deletes it again, and waits until ovn-controller has released hostIf.
func (e *env) releaseByTwin(ctx context.Context, t *testing.T, hostIf, lsp string) {
	t.Helper()
	vsctl := func(args ...string) {
		if out, err := e.rig.Run(ctx, "ovs-vsctl", append([]string{"--db=" + e.rig.OVSEndpoint}, args...)...); err != nil {
			t.Fatalf("ovs-vsctl %v: %v\n%s", args, err, out)
		}
	}
	vsctl("add-port", "br-int", "twin", "--", "set", "Interface", "twin", "external_ids:iface-id="+lsp)
	eventually(ctx, t, "ovn-controller releases "+hostIf, func() bool { return !e.installed(ctx, t, hostIf) })
	vsctl("del-port", "br-int", "twin")
}

func (e *env) installed(ctx context.Context, t *testing.T, iface string) bool {
	t.Helper()
	out, err := e.rig.Run(ctx, "ovs-vsctl", "--db="+e.rig.OVSEndpoint, "--if-exists", "get", "Interface", iface, "external_ids:ovn-installed")
	if err != nil {
		t.Fatalf("ovs-vsctl get %s: %v\n%s", iface, err, out)
	}
	return strings.Contains(string(out), "true")
}

// waitInstalled waits up to lostBindingBound for ovn-controller to bind iface again.
func (e *env) waitInstalled(ctx context.Context, t *testing.T, iface string) {
	t.Helper()
	bctx, cancel := context.WithTimeout(ctx, lostBindingBound)
	defer cancel()
	for !e.installed(ctx, t, iface) {
		select {
		case <-bctx.Done():
			t.Fatalf("%s not bound again within %v:\n%s", iface, lostBindingBound, e.daemonLog())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
