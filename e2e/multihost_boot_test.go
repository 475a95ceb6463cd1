package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// bootFromConfigFile starts edgeovn on a host that joins the cluster the way an agent host
// boots: `edgeovn run --config FILE` and nothing else on the command line, the file holding
// what differs from the package defaults (its node name, its kubeconfig, every NB and SB raft
// member as a list; in the rig also the paths that keep it out of this machine's). The host
// is registered as the next node.
func (cl *cluster) bootFromConfigFile(ctx context.Context, t *testing.T, h *harness.Rig) *env {
	t.Helper()
	name := fmt.Sprintf("edge-%d", len(cl.hosts)+1)
	k := daemon.Kubelet(h, name)
	list := func(eps string) string {
		var q []string
		for _, ep := range harness.SplitEndpoints(eps) {
			q = append(q, fmt.Sprintf("%q", ep))
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	lines := []string{
		"node-name: " + name,
		"kubeconfig: " + h.Kubeconfig,
		"ovn-nb: " + list(h.NBEndpoint),
		"ovn-sb: " + list(h.SBEndpoint),
		"ovs-db: " + h.OVSEndpoint,
		"ipam-db: " + daemon.IPAMDatabase(h),
		"cni-socket: " + daemon.Socket(h),
		"cni-conf-dir: " + k.ConfDir,
		"cni-bin-dir: " + k.BinDir,
		"cni-binary: " + filepath.Join(cl.bins, "edgeovn-cni"),
	}
	for _, f := range append(append([]string{}, daemonFlags...), cl.extra...) {
		key, value, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		lines = append(lines, key+": "+value)
	}
	file := filepath.Join(h.Dir, "config.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := h.Start(ctx, harness.ProcessSpec{Name: "edgeovn", Path: filepath.Join(cl.bins, "edgeovn"),
		Args: []string{"run", "--config=" + file}})
	if err != nil {
		t.Fatalf("start edgeovn on %s: %v", name, err)
	}
	if err := k.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	e := &env{rig: h, bin: cl.bins + "/edgeovn", ipamDB: daemon.IPAMDatabase(h), bins: cl.bins, kubelet: k, daemon: p}
	cl.hosts, cl.names = append(cl.hosts, e), append(cl.names, name)
	return e
}
