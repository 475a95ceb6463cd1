package e2e

import (
	"fmt"
	"net/http"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestLoadBalancerIPsTwoHosts: two hosts without kube-proxy, the only backend on edge-1,
// the central's namespace (every host's gateway on the underlay) as the site client. With
// externalTrafficPolicy Local only edge-1's health check answers 200 (edge-2's 503), and the
// LoadBalancer IP sent to edge-1 reaches the backend with the client's address while sent to
// edge-2 it is dropped; with Cluster, sent to edge-2 it crosses to edge-1 through OVN.
func TestLoadBalancerIPsTwoHosts(t *testing.T) {
	cl, ctx := startCluster(t, 2)
	for i, e := range cl.hosts {
		eventually(ctx, t, "ovn0 bound on "+cl.names[i], func() bool { return daemon.HostInterfaceBound(ctx, e.rig) })
		eventually(ctx, t, "edgeovn serves the services itself on "+cl.names[i], func() bool {
			return strings.Contains(e.daemonLog(), "edgeovn serves host traffic to services and node ports")
		})
	}
	h1, h2 := cl.hosts[0], cl.hosts[1]
	web := runPodIn(ctx, t, h1, "default", "web-1")
	srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: web.Netns, Port: 8080, Name: "web-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	site, client := cl.c.Central.NetnsPath, cl.c.Central.NodeIP
	const lbLocal2, lbCluster2 = "198.51.100.50", "198.51.100.51"
	mk := func(name, ip string, etp corev1.ServiceExternalTrafficPolicy) *corev1.Service {
		svc := createService(ctx, t, h1, name, func(svc *corev1.Service) {
			svc.Spec.Selector, svc.Spec.Type, svc.Spec.ExternalTrafficPolicy = nil, corev1.ServiceTypeLoadBalancer, etp
		})
		publishEndpointsOn(ctx, t, h1, name, map[*podsim.Sandbox]string{web: cl.names[0]})
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
		out, err := h1.kubelet.Kube.CoreV1().Services("default").UpdateStatus(ctx, svc, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	local := mk("lb-local", lbLocal2, corev1.ServiceExternalTrafficPolicyLocal)
	mk("lb-cluster", lbCluster2, corev1.ServiceExternalTrafficPolicyCluster)
	route := func(ip string, via netip.Addr) {
		t.Helper()
		if out, err := exec.CommandContext(ctx, "ip", "-n", cl.c.Central.Netns, "route", "replace", ip+"/32", "via", via.String()).CombinedOutput(); err != nil {
			t.Fatalf("route %s via %s: %v: %s", ip, via, err, out)
		}
	}
	for i, want := range []int{http.StatusOK, http.StatusServiceUnavailable} {
		url := fmt.Sprintf("http://%s:%d/healthz", cl.hosts[i].rig.NodeIP, local.Spec.HealthCheckNodePort)
		eventually(ctx, t, fmt.Sprintf("%s's health check answers %d", cl.names[i], want), func() bool {
			a, err := podsim.HTTPGet(ctx, site, url, time.Second)
			return err == nil && a.Status == want
		})
	}
	send := func(addr string) (podsim.Answer, error) {
		return podsim.Send(ctx, podsim.SendRequest{Netns: site, Protocol: corev1.ProtocolTCP, Addr: netip.MustParseAddrPort(addr), Timeout: time.Second})
	}
	route(lbLocal2, h1.rig.NodeIP)
	var a podsim.Answer
	eventually(ctx, t, "the Local LoadBalancer IP through edge-1 answers", func() bool { a, _ = send(lbLocal2 + ":80"); return a.Server == "web-1" })
	if a.Client.Addr() != client {
		t.Errorf("Local through edge-1: web-1 saw %s, want the site client's %s", a.Client, client)
	}
	route(lbLocal2, h2.rig.NodeIP)
	if a, err := send(lbLocal2 + ":80"); err == nil || !strings.Contains(err.Error(), podsim.ErrTimeout.Error()) {
		t.Errorf("Local through edge-2 (no endpoint there): %+v, %v, want dropped", a, err)
	}
	route(lbCluster2, h2.rig.NodeIP)
	eventually(ctx, t, "the Cluster LoadBalancer IP through edge-2 reaches web-1 on edge-1", func() bool {
		a, _ = send(lbCluster2 + ":80")
		return a.Server == "web-1"
	})
	if j := nodeJoin(ctx, t, h2).IPs[0]; a.Client.Addr() != j {
		t.Errorf("Cluster through edge-2: web-1 saw %s, want edge-2's join address %s", a.Client, j)
	}
}
