package e2e

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestCoreDNS: CoreDNS runs in a pod's network namespace as k3s runs it in its pod and reads
// the API server at the "kubernetes" Service's endpoint (the node's address, reached through
// edgeovn's host wiring); another pod that asks it at its pod address for
// kubernetes.default.svc.cluster.local gets that Service's ClusterIP, and an unknown name is
// answered as such rather than timing out.
func TestCoreDNS(t *testing.T) {
	if err := harness.Preflight(harness.CoreDNS); err != nil {
		skip.Now(t, "CoreDNS test (run `make deps` as root): %v", err)
	}
	env, ctx := startNode(t)
	nodeJoin(ctx, t, env)
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })
	dns := runPod(ctx, t, env, "coredns")
	client := runPod(ctx, t, env, "client")

	p, err := env.rig.StartCoreDNS(ctx, harness.CoreDNSRequest{Netns: dns.Netns})
	if err != nil {
		t.Fatalf("start coredns in pod %s (%s): %v", dns.Pod.Name, dns.IP(), err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(p.Log)
			t.Logf("--- %s ---\n%s", p.Log, b)
		}
	})
	svc, err := env.kubelet.Kube.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	server := netip.AddrPortFrom(dns.IP(), 53)
	addrs, err := podsim.Lookup(ctx, client.Netns, server, "kubernetes.default.svc.cluster.local")
	if err != nil {
		t.Fatal(err)
	}
	if want := netip.MustParseAddr(svc.Spec.ClusterIP); !slices.Equal(addrs, []netip.Addr{want}) {
		t.Fatalf("kubernetes.default.svc.cluster.local = %v, want the Service's ClusterIP %s", addrs, want)
	}
	t.Logf("pod %s asked CoreDNS at %s: kubernetes.default.svc.cluster.local = %v", client.Pod.Name, server, addrs)

	_, err = podsim.Lookup(ctx, client.Netns, server, "nothing.default.svc.cluster.local")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("unknown name: err = %v, want a not-found answer", err)
	}
}
