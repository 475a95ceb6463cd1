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

// TestLoadBalancerIPsThreeHosts: three hosts without kube-proxy, backends web-1 on edge-1 and
// web-3 on edge-3, none on edge-2; the central's namespace (every host's gateway on the
// underlay) is the site client. With externalTrafficPolicy Local only the hosts with an
// endpoint answer the health check 200 with their count (edge-2: 503), and the LoadBalancer
// IP sent to each of them reaches its own backend with the client's address, while sent to
// edge-2 it is dropped; with Cluster, sent to edge-2 it crosses to a backend through OVN with
// edge-2's join address.
func TestLoadBalancerIPsThreeHosts(t *testing.T) {
	cl, ctx := startCluster(t, 3)
	for i, e := range cl.hosts {
		eventually(ctx, t, "ovn0 bound on "+cl.names[i], func() bool { return daemon.HostInterfaceBound(ctx, e.rig) })
		eventually(ctx, t, "edgeovn serves the services itself on "+cl.names[i], func() bool {
			return strings.Contains(e.daemonLog(), "edgeovn serves host traffic to services and node ports")
		})
	}
	h1, h2, h3 := cl.hosts[0], cl.hosts[1], cl.hosts[2]
	backends := map[*podsim.Sandbox]string{}
	for i, h := range map[int]*env{0: h1, 2: h3} {
		name := fmt.Sprintf("web-%d", i+1)
		web := runPodIn(ctx, t, h, "default", name)
		srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: web.Netns, Port: 8080, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		backends[web] = cl.names[i]
	}
	site, client := cl.c.Central.NetnsPath, cl.c.Central.NodeIP
	const lbLocal3, lbCluster3 = "198.51.100.50", "198.51.100.51"
	mk := func(name, ip string, etp corev1.ServiceExternalTrafficPolicy) *corev1.Service {
		svc := createService(ctx, t, h1, name, func(svc *corev1.Service) {
			svc.Spec.Selector, svc.Spec.Type, svc.Spec.ExternalTrafficPolicy = nil, corev1.ServiceTypeLoadBalancer, etp
		})
		publishEndpointsOn(ctx, t, h1, name, backends)
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
		out, err := h1.kubelet.Kube.CoreV1().Services("default").UpdateStatus(ctx, svc, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	local := mk("lb-local", lbLocal3, corev1.ServiceExternalTrafficPolicyLocal)
	mk("lb-cluster", lbCluster3, corev1.ServiceExternalTrafficPolicyCluster)
	route := func(ip string, via netip.Addr) {
		t.Helper()
		if out, err := exec.CommandContext(ctx, "ip", "-n", cl.c.Central.Netns, "route", "replace", ip+"/32", "via", via.String()).CombinedOutput(); err != nil {
			t.Fatalf("route %s via %s: %v: %s", ip, via, err, out)
		}
	}
	for i, want := range []int{http.StatusOK, http.StatusServiceUnavailable, http.StatusOK} {
		url := fmt.Sprintf("http://%s:%d/healthz", cl.hosts[i].rig.NodeIP, local.Spec.HealthCheckNodePort)
		var a podsim.HTTPAnswer
		eventually(ctx, t, fmt.Sprintf("%s's health check answers %d", cl.names[i], want), func() bool {
			var err error
			a, err = podsim.HTTPGet(ctx, site, url, time.Second)
			return err == nil && a.Status == want
		})
		if count := map[int]string{http.StatusOK: "1", http.StatusServiceUnavailable: "0"}[want]; a.Header.Get("X-Load-Balancing-Endpoint-Weight") != count {
			t.Errorf("%s's health check: %d %v %q, want %s local endpoints", cl.names[i], a.Status, a.Header, a.Body, count)
		}
	}
	send := func(addr string) (podsim.Answer, error) {
		return podsim.Send(ctx, podsim.SendRequest{Netns: site, Protocol: corev1.ProtocolTCP, Addr: netip.MustParseAddrPort(addr), Timeout: time.Second})
	}
	for i, server := range map[int]string{0: "web-1", 2: "web-3"} {
		route(lbLocal3, cl.hosts[i].rig.NodeIP)
		var a podsim.Answer
		eventually(ctx, t, fmt.Sprintf("the Local LoadBalancer IP through %s answers from %s", cl.names[i], server), func() bool {
			a, _ = send(lbLocal3 + ":80")
			return a.Server == server
		})
		if a.Client.Addr() != client {
			t.Errorf("Local through %s: %s saw %s, want the site client's %s", cl.names[i], server, a.Client, client)
		}
	}
	route(lbLocal3, h2.rig.NodeIP)
	if a, err := send(lbLocal3 + ":80"); err == nil || !strings.Contains(err.Error(), podsim.ErrTimeout.Error()) {
		t.Errorf("Local through edge-2 (no endpoint there): %+v, %v, want dropped", a, err)
	}
	route(lbCluster3, h2.rig.NodeIP)
	var a podsim.Answer
	eventually(ctx, t, "the Cluster LoadBalancer IP through edge-2 reaches a backend on another host", func() bool {
		a, _ = send(lbCluster3 + ":80")
		return a.Server == "web-1" || a.Server == "web-3"
	})
	if j := nodeJoin(ctx, t, h2).IPs[0]; a.Client.Addr() != j {
		t.Errorf("Cluster through edge-2: %s saw %s, want edge-2's join address %s", a.Server, a.Client, j)
	}
}
