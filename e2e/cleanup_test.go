package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// TestCleanup runs `edgeovn cleanup` on a node edgeovn wired (ovn0 bound, a pod): it refuses
// while edgeovn runs, then lists without changing anything, then --all removes edgeovn's
// ports, ovn0, CNI files (the kube-ovn link included) and IPAM database, and nothing else on
// br-int.
func TestCleanup(t *testing.T) {
	env, ctx := startNode(t)
	pod := runPod(ctx, t, env, "web")
	nodeJoin(ctx, t, env)
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })
	vsctl := func(args ...string) string {
		out, err := env.rig.Run(ctx, "ovs-vsctl", append([]string{"--db=" + env.rig.OVSEndpoint}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	vsctl("add-port", "br-int", "keepme", "--", "set", "Interface", "keepme", "type=internal")
	k := env.kubelet
	cleanup := func(extra ...string) (string, error) {
		args := append([]string{"cleanup", "--ovs-db=" + env.rig.OVSEndpoint, "--cni-conf-dir=" + k.ConfDir,
			"--cni-bin-dir=" + k.BinDir, "--cni-socket=" + filepath.Join(env.rig.Dir, "cni.sock"),
			"--ipam-db=" + env.ipamDB, "--state-dir=" + filepath.Join(env.rig.Dir, "state")}, extra...)
		out, err := env.rig.Run(ctx, env.bin, args...) // in the host's namespace: its routes and nftables
		return string(out), err
	}
	if out, err := cleanup("--all"); err == nil || !strings.Contains(out, "edgeovn is running") {
		t.Fatalf("cleanup --all beside the running daemon: %v\n%s", err, out)
	}
	if err := env.daemon.Stop(); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(k.BinDir, "kube-ovn")); err != nil || target != "edgeovn" {
		t.Fatalf("before cleanup: kube-ovn link -> %q (%v), want -> edgeovn", target, err)
	}
	before := vsctl("list-ports", "br-int")
	out, err := cleanup()
	if err != nil || !strings.Contains(out, "would remove ovs port ovn0") || !strings.Contains(out, "would remove ovs port "+pod.Result.Interfaces[0].Name) {
		t.Fatalf("cleanup (report only): %v\n%s", err, out)
	}
	if after := vsctl("list-ports", "br-int"); after != before {
		t.Fatalf("report-only cleanup changed br-int: %q -> %q", before, after)
	}
	if !strings.Contains(out, "would remove route 10.42.0.0/16 via 100.64.0.1 dev ovn0 proto 211") {
		t.Errorf("cleanup (report only) does not list edgeovn's route:\n%s", out)
	}
	if !strings.Contains(out, "would remove "+filepath.Join(k.BinDir, "macvlan")) {
		t.Errorf("cleanup (report only) does not list the macvlan plugin edgeovn installed:\n%s", out)
	}
	if out, err = cleanup("--all"); err != nil {
		t.Fatalf("cleanup --all: %v\n%s", err, out)
	}
	t.Logf("edgeovn cleanup --all:\n%s", out)
	if !strings.Contains(out, "removed route 10.42.0.0/16 via 100.64.0.1 dev ovn0 proto 211") {
		t.Errorf("cleanup --all does not say it removed edgeovn's route:\n%s", out)
	}
	if routes, err := env.rig.Run(ctx, "ip", "route", "show", "proto", "211"); err != nil || strings.TrimSpace(string(routes)) != "" {
		t.Errorf("edgeovn's routes after cleanup --all: %v %s", err, routes)
	}
	if ports := vsctl("list-ports", "br-int"); ports != "keepme" {
		t.Errorf("ports on br-int after cleanup: %q, want keepme only", ports)
	}
	for _, f := range []string{filepath.Join(k.ConfDir, "01-edgeovn.conflist"), filepath.Join(k.BinDir, "edgeovn"),
		filepath.Join(k.BinDir, "loopback"), filepath.Join(k.BinDir, "macvlan"), filepath.Join(k.BinDir, "kube-ovn"), env.ipamDB} {
		if _, err := os.Lstat(f); err == nil { // Lstat: a dangling kube-ovn link is left too
			t.Errorf("%s left after cleanup --all", f)
		}
	}
}
