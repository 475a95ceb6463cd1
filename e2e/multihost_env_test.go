package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// cluster is several simulated hosts (harness.Cluster), each running edgeovn with the same
// flags but its node name, and a kubelet stand-in that registered its Node with the host's
// underlay address as InternalIP.
type cluster struct {
	c     *harness.Cluster
	hosts []*env // hosts[i] runs node names[i]
	names []string
	bins  string   // edgeovn's binaries
	extra []string // flags for edgeovn on every host
}

// startEdgeovn starts edgeovn on the next host (node edge-<n>) and registers its Node.
func (cl *cluster) startEdgeovn(ctx context.Context, t *testing.T, h *harness.Rig) *env {
	t.Helper()
	name := fmt.Sprintf("edge-%d", len(cl.hosts)+1)
	e := &env{rig: h, bin: cl.bins + "/edgeovn", ipamDB: daemon.IPAMDatabase(h), bins: cl.bins, kubelet: daemon.Kubelet(h, name)}
	var err error
	e.daemon, err = daemon.Start(ctx, h, daemon.Spec{Node: name, BinDir: cl.bins, Extra: append(append([]string{}, daemonFlags...), cl.extra...)})
	if err != nil {
		t.Fatalf("start edgeovn on %s: %v", name, err)
	}
	if err := e.kubelet.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	cl.hosts, cl.names = append(cl.hosts, e), append(cl.names, name)
	return e
}

// clusterSpec says how startClusterWith sets the hosts up.
type clusterSpec struct {
	hosts int
	extra []string // flags for edgeovn on every host
	// prepare, if set, runs on each host before its edgeovn starts.
	prepare func(ctx context.Context, t *testing.T, i int, h *harness.Rig)
	// unready are hosts whose CNI STATUS is not waited for.
	unready []int
	// databases is where the OVN databases run (default: the central).
	databases harness.DBLayout
	// serviceCIDRs is the API server's service range (default: k3s's 10.43.0.0/16).
	serviceCIDRs []netip.Prefix
}

// startCluster starts n hosts and edgeovn on each (extra flags on all of them) and waits for
// every node's CNI STATUS; the context ends with the test.
func startCluster(t *testing.T, n int, extra ...string) (*cluster, context.Context) {
	t.Helper()
	return startClusterWith(t, clusterSpec{hosts: n, extra: extra})
}

// startClusterWith is startCluster as spec says.
func startClusterWith(t *testing.T, spec clusterSpec) (*cluster, context.Context) {
	t.Helper()
	n, extra := spec.hosts, spec.extra
	if err := harness.PreflightCluster(); err != nil {
		skip.Now(t, "end-to-end tier: real components unavailable (run `make deps` as root): %v", err)
	}
	bins := buildBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	start := time.Now()
	c, err := harness.StartCluster(ctx, harness.ClusterOptions{Hosts: n, Databases: spec.databases,
		Options: harness.Options{Log: log, Keep: os.Getenv("EDGEOVN_E2E_KEEP") != "", ServiceCIDRs: spec.serviceCIDRs}})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(c.Stop)
	cl := &cluster{c: c, bins: bins, extra: extra}
	for i, h := range c.Hosts {
		if spec.prepare != nil {
			spec.prepare(ctx, t, i, h)
		}
		cl.startEdgeovn(ctx, t, h)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, e := range cl.hosts {
				t.Log(e.daemonLog())
			}
		}
	})
	for i, e := range cl.hosts {
		if slices.Contains(spec.unready, i) {
			continue
		}
		if err := e.kubelet.WaitReady(ctx); err != nil {
			t.Fatalf("%s not ready: %v", cl.names[i], err)
		}
	}
	t.Logf("%d hosts up, edgeovn ready on each, in %v (under load)", n, time.Since(start).Round(time.Millisecond))
	return cl, ctx
}

// central runs a command in the central's namespace (ovn-nbctl, ovn-sbctl on its sockets,
// or on the raft members' list). It retries for a few seconds: ovn-nbctl given a member list
// tries one member and gives up if that one is down or not the leader.
func (cl *cluster) central(ctx context.Context, t *testing.T, name string, args ...string) string {
	t.Helper()
	var out []byte
	var err error
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if out, err = cl.c.Central.Run(ctx, name, args...); err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
