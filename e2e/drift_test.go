package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestDriftRepaired breaks the host wiring behind edgeovn's back, as a person or another
// program would, and sees each repaired without any Kubernetes event: `nft flush ruleset`
// (the masquerade gone: pods cut off from the outside), ovn0's route to the pods deleted (the
// host cut off from its pods), the CNI config deleted (the next pod would find no network).
// Each repair is logged as drift; once all is right again, nothing more is written.
func TestDriftRepaired(t *testing.T) {
	env, ctx := startNode(t)
	a := runPod(ctx, t, env, "pod-a")
	nodeJoin(ctx, t, env)
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })
	outside, _ := addOutside(ctx, t, env)
	eventually(ctx, t, "pod-a reaches the outside", func() bool { _, err := podsim.Ping(ctx, a, outside); return err == nil })
	conf := filepath.Join(env.kubelet.ConfDir, "01-edgeovn.conflist")
	want, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range driftCases(env, a, conf, want) {
		env.mustRun(ctx, t, c.breakCmd...)
		eventually(ctx, t, c.name+": repaired", func() bool { return c.repaired(ctx) })
		t.Logf("%s: repaired", c.name)
	}
	eventually(ctx, t, "pod-a reaches the outside again", func() bool { _, err := podsim.Ping(ctx, a, outside); return err == nil })
	eventually(ctx, t, "the host reaches pod-a again", func() bool {
		_, err := env.rig.Run(ctx, "ping", "-c", "1", "-W", "1", a.IP().String())
		return err == nil
	})
	log := env.daemonLog()
	for _, line := range []string{"wrote masquerade rules", "added route through host interface", "repaired: cni files"} {
		if !strings.Contains(log, line) || !containsLine(log, line, "cause=drift") {
			t.Errorf("no drift repair logged as %q", line)
		}
	}
	checkStalePortRemoved(ctx, t, env)
	log = env.daemonLog()
	before := strings.Count(log, "cause=drift")
	time.Sleep(5 * time.Second) // a rewrite of what is right would come at the next checks
	if after := strings.Count(env.daemonLog(), "cause=drift"); after != before {
		t.Errorf("drift checks wrote %d more times with nothing broken:\n%s", after-before, env.daemonLog())
	}
}

// driftCase is one thing broken and how to see it repaired.
type driftCase struct {
	name     string
	breakCmd []string // run in the rig's network namespace
	repaired func(context.Context) bool
}

func driftCases(env *env, pod *podsim.Sandbox, conf string, want []byte) []driftCase {
	return []driftCase{
		{"nft flush ruleset", []string{"nft", "flush", "ruleset"}, func(ctx context.Context) bool {
			_, err := env.rig.Run(ctx, "nft", "list", "table", "ip", "edgeovn")
			return err == nil
		}},
		{"ovn0's route to the pods deleted", []string{"ip", "route", "del", "10.42.0.0/16", "dev", "ovn0"}, func(ctx context.Context) bool {
			out, err := env.rig.Run(ctx, "ip", "route", "show", "10.42.0.0/16")
			return err == nil && strings.Contains(string(out), "dev ovn0")
		}},
		{"the CNI config deleted", []string{"rm", conf}, func(context.Context) bool {
			got, err := os.ReadFile(conf)
			return err == nil && string(got) == string(want)
		}},
	}
}

func (e *env) mustRun(ctx context.Context, t *testing.T, args ...string) {
	t.Helper()
	if out, err := e.rig.Run(ctx, args[0], args[1:]...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// containsLine reports whether some line of log holds both parts.
func containsLine(log, a, b string) bool {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, a) && strings.Contains(l, b) {
			return true
		}
	}
	return false
}

// checkStalePortRemoved: a pod whose network namespace is destroyed without a CNI DEL (a
// runtime that crashed) leaves its OVS port without a device; the drift loop removes the
// port (at its second check that finds the device gone), and only that port.
func checkStalePortRemoved(ctx context.Context, t *testing.T, env *env) {
	t.Helper()
	b := runPod(ctx, t, env, "pod-b")
	keep := runPod(ctx, t, env, "pod-c")
	portOf := func(sb *podsim.Sandbox) string {
		return strings.TrimSpace(env.vsctl(ctx, t, "--bare", "--columns=name", "find", "Interface", "external_ids:iface-id="+sb.Pod.Name+".default"))
	}
	stale, kept := portOf(b), portOf(keep)
	if stale == "" || kept == "" {
		t.Fatalf("pod ports not found on br-int: %q %q", stale, kept)
	}
	if err := podsim.RemoveNetns(b.Netns); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the port of a pod removed without CNI DEL is gone from br-int", func() bool {
		return !strings.Contains(env.vsctl(ctx, t, "list-ports", "br-int"), stale)
	})
	if !strings.Contains(env.vsctl(ctx, t, "list-ports", "br-int"), kept) {
		t.Fatalf("the sweep removed the port %s of a live pod too", kept)
	}
	if !containsLine(env.daemonLog(), "removed pod ports whose device is gone", "cause=drift") {
		t.Errorf("the stale port's removal was not logged as drift")
	}
}
