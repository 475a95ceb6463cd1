package e2e

import (
	"context"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestSouthboundLostBindingReclaimed feeds the node role issue 29's gap as a real kubelet and
// containerd produced it: ovn-controller released a pod's logical port (the southbound
// Port_Binding has chassis=[] and up=false) while the pod's interface kept
// ovn-installed="true". Here the release is ovn-controller's own (a twin interface with the
// pod's iface-id appears and goes), and the interface's ovn-installed is set back in the
// twin's removal, as ovn-controller left it there. The local database alone then shows a
// bound port; the node role reads this chassis's bindings from the southbound, reclaims the
// port (logged with why, counted in /metrics), and the pods reach their gateway and each other
// again. With edgeovn stopped, `edgeovn doctor` names the port; the started daemon repairs it
// and doctor passes. The daemon's VmRSS is logged (two pods bound, and after the reclaim).
func TestSouthboundLostBindingReclaimed(t *testing.T) {
	env, ctx := startNode(t)
	web, peer := runPod(ctx, t, env, "web"), runPod(ctx, t, env, "peer")
	gw := netip.MustParseAddr("10.42.0.1")
	sandboxes := []*podsim.Sandbox{web, peer}
	hostIf := web.ContainerID[:12] + "_h"
	if un := unreachable(ctx, sandboxes, gw, lostBindingBound); len(un) > 0 {
		t.Fatalf("pods cut off before the release: %v", un)
	}
	t.Logf("edgeovn VmRSS with two pods bound: %s", daemonRSS(t, env.daemon.PID))

	env.releaseKeepInstalled(ctx, t, hostIf, "web.default")
	released := time.Now()
	if !env.installed(ctx, t, hostIf) || env.upHere(ctx, t, "web.default") {
		t.Fatalf("the gap was not made: ovn-installed %v, Port_Binding up here %v\n%s",
			env.installed(ctx, t, hostIf), env.upHere(ctx, t, "web.default"), env.bindingReport(ctx, t, sandboxes))
	}
	// Two drift checks 2 s apart come before any reclaim: within the first second web is cut
	// off, or the gap made here is not the one a pod suffers from.
	if un := unreachable(ctx, sandboxes[:1], gw, time.Second); len(un) == 0 {
		t.Errorf("web reached its gateway right after the release: the released port still forwards\n%s", env.bindingReport(ctx, t, sandboxes))
	}
	env.waitUpHere(ctx, t, "web.default", sandboxes)
	t.Logf("Port_Binding web.default up on this chassis again %v after the release", time.Since(released).Round(time.Millisecond))
	if !logHas(env.daemon, "southbound Port_Binding not up on this chassis") {
		t.Errorf("the reclaim was not logged with its cause:\n%s", env.daemonLog())
	}
	if m := httpGet(ctx, t, env, "/metrics"); !strings.Contains(m, `edgeovn_pod_binding_reclaims_total{result="reclaimed"}`) {
		t.Errorf("/metrics does not count the lost binding:\n%s", m)
	}
	if un := unreachable(ctx, sandboxes, gw, lostBindingBound); len(un) > 0 {
		t.Fatalf("pods cut off after the reclaim: %v\n%s", un, env.bindingReport(ctx, t, sandboxes))
	}
	t.Logf("edgeovn VmRSS after the reclaim: %s", daemonRSS(t, env.daemon.PID))

	if err := env.daemon.Stop(); err != nil {
		t.Fatal(err)
	}
	env.releaseKeepInstalled(ctx, t, hostIf, "web.default")
	out, err := env.command(ctx, "doctor")
	if err == nil || !strings.Contains(out, "[FAIL] pod bindings") ||
		!strings.Contains(out, "the southbound Port_Binding is not up on this chassis: "+hostIf+" (web.default)") {
		t.Fatalf("doctor with a released pod port that kept ovn-installed: %v\n%s", err, out)
	}
	t.Logf("edgeovn doctor with a released pod port that kept ovn-installed:\n%s", out)
	env.startDaemon(ctx, t, "edgeovn-again")
	env.waitUpHere(ctx, t, "web.default", sandboxes)
	env.doctorPasses(ctx, t)
	if un := unreachable(ctx, sandboxes, gw, lostBindingBound); len(un) > 0 {
		t.Fatalf("pods cut off after the restarted daemon's reclaim: %v\n%s", un, env.bindingReport(ctx, t, sandboxes))
	}
}

// releaseKeepInstalled makes ovn-controller release lsp (a twin interface with its iface-id
// appears and, once hostIf lost ovn-installed, goes) and puts ovn-installed="true" back on
// hostIf in the twin's removal: the state issue 29's real node was left in.
func (e *env) releaseKeepInstalled(ctx context.Context, t *testing.T, hostIf, lsp string) {
	t.Helper()
	vsctl := func(args ...string) {
		if out, err := e.rig.Run(ctx, "ovs-vsctl", append([]string{"--db=" + e.rig.OVSEndpoint}, args...)...); err != nil {
			t.Fatalf("ovs-vsctl %v: %v\n%s", args, err, out)
		}
	}
	vsctl("add-port", "br-int", "twin", "--", "set", "Interface", "twin", "external_ids:iface-id="+lsp)
	eventually(ctx, t, "ovn-controller releases "+hostIf, func() bool { return !e.installed(ctx, t, hostIf) })
	vsctl("del-port", "br-int", "twin", "--", "set", "Interface", hostIf, "external_ids:ovn-installed=true")
	eventually(ctx, t, "Port_Binding "+lsp+" released", func() bool { return !e.upHere(ctx, t, lsp) })
}

// upHere reports whether lsp's Port_Binding is up and on this host's chassis.
func (e *env) upHere(ctx context.Context, t *testing.T, lsp string) bool {
	t.Helper()
	run := func(name string, args ...string) string {
		out, err := e.rig.Run(ctx, name, args...)
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	sysID := strings.Trim(run("ovs-vsctl", "--db="+e.rig.OVSEndpoint, "get", "Open_vSwitch", ".", "external_ids:system-id"), `"`)
	chassis := run("ovn-sbctl", "--db="+e.rig.SBEndpoint, "--bare", "--columns=_uuid", "find", "Chassis", "name="+sysID)
	got := strings.Fields(run("ovn-sbctl", "--db="+e.rig.SBEndpoint, "--bare", "--columns=up,chassis", "find", "Port_Binding", "logical_port="+lsp))
	return len(got) == 2 && got[0] == "true" && got[1] == chassis
}

// waitUpHere waits up to lostBindingBound for lsp's Port_Binding to be up on this chassis.
func (e *env) waitUpHere(ctx context.Context, t *testing.T, lsp string, sandboxes []*podsim.Sandbox) {
	t.Helper()
	bctx, cancel := context.WithTimeout(ctx, lostBindingBound)
	defer cancel()
	for !e.upHere(ctx, t, lsp) {
		select {
		case <-bctx.Done():
			t.Fatalf("Port_Binding %s not up on this chassis again within %v:\n%s\n%s", lsp, lostBindingBound, e.bindingReport(ctx, t, sandboxes), e.daemonLog())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// daemonRSS is the VmRSS line of /proc/PID/status.
func daemonRSS(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatalf("read the daemon's status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
