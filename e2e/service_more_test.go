package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// outsideAt is a network outside the host (addOutside): its address and namespace.
type outsideAt struct {
	addr  netip.Addr
	netns string
}

// checkNodePorts: NodePort Services answer on the node's address from an outside network,
// over TCP and UDP: externalTrafficPolicy Cluster with the client masqueraded to the host's
// join address, Local with the client's own address kept.
func (s *svcEnv) checkNodePorts(t *testing.T, out outsideAt) {
	t.Helper()
	cluster := createService(s.ctx, t, s.env, "np-cluster", func(svc *corev1.Service) {
		svc.Spec.Type, svc.Spec.Selector = corev1.ServiceTypeNodePort, map[string]string{"app": "web"}
	})
	local := createService(s.ctx, t, s.env, "np-local", func(svc *corev1.Service) {
		svc.Spec.Type, svc.Spec.Selector = corev1.ServiceTypeNodePort, map[string]string{"app": "web"}
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	})
	join := nodeJoin(s.ctx, t, s.env).IPs[0]
	for _, c := range []struct {
		svc    *corev1.Service
		source netip.Addr // what the backend sees
	}{{cluster, join}, {local, out.addr}} {
		addr := fmt.Sprintf("198.51.100.1:%d", c.svc.Spec.Ports[0].NodePort)
		var a podsim.Answer
		eventually(s.ctx, t, "node port "+addr+" of "+c.svc.Name+" answers from outside", func() bool {
			a, _ = s.send(out.netns, corev1.ProtocolTCP, addr, time.Second)
			return strings.HasPrefix(a.Server, "web-")
		})
		if a.Client.Addr() != c.source {
			t.Errorf("node port %s of %s: the backend saw %s, want %s", addr, c.svc.Name, a.Client, c.source)
		}
		udp := fmt.Sprintf("198.51.100.1:%d", c.svc.Spec.Ports[1].NodePort)
		if a, err := s.send(out.netns, corev1.ProtocolUDP, udp, 2*time.Second); !strings.HasPrefix(a.Server, "web-") {
			t.Errorf("udp node port %s of %s: %+v, %v", udp, c.svc.Name, a, err)
		}
	}
}

// checkInternalLocal: with internalTrafficPolicy Local a client reaches only its own node's
// endpoints, and nothing when its node has none. The Service has no selector: its
// EndpointSlice, written here, puts web-2 on another node.
func (s *svcEnv) checkInternalLocal(t *testing.T) {
	t.Helper()
	svc := createService(s.ctx, t, s.env, "itp-local", func(svc *corev1.Service) {
		svc.Spec.Selector = nil
		svc.Spec.InternalTrafficPolicy = new(corev1.ServiceInternalTrafficPolicyLocal)
	})
	vip := svc.Spec.ClusterIP + ":80"
	publishEndpointsOn(s.ctx, t, s.env, "itp-local", map[*podsim.Sandbox]string{s.web1: node, s.web2: "edge-2"})
	eventually(s.ctx, t, "internalTrafficPolicy Local answers from this node's endpoint", func() bool {
		a, _ := s.send(s.client.Netns, corev1.ProtocolTCP, vip, time.Second)
		return a.Server == "web-1"
	})
	for i := range 10 {
		if a, err := s.send(s.client.Netns, corev1.ProtocolTCP, vip, time.Second); a.Server != "web-1" {
			t.Fatalf("internalTrafficPolicy Local: request %d answered by %q (%v), want only web-1", i, a.Server, err)
		}
	}
	publishEndpointsOn(s.ctx, t, s.env, "itp-local", map[*podsim.Sandbox]string{s.web2: "edge-2"})
	eventually(s.ctx, t, "internalTrafficPolicy Local without a local endpoint answers nothing", func() bool {
		a, err := s.send(s.client.Netns, corev1.ProtocolTCP, vip, 500*time.Millisecond)
		return a.Server == "" && err != nil
	})
}

// publishEndpointsOn writes a selector-less Service's EndpointSlice with each sandbox as a
// ready endpoint on the node it names, ports http and dns on 8080.
func publishEndpointsOn(ctx context.Context, t *testing.T, env *env, svc string, on map[*podsim.Sandbox]string) {
	t.Helper()
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: svc + "-test",
		Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8080)), Protocol: new(corev1.ProtocolTCP)},
			{Name: new("dns"), Port: new(int32(8080)), Protocol: new(corev1.ProtocolUDP)}}}
	for sb, n := range on {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{sb.IP().String()}, NodeName: new(n)})
	}
	api := env.kubelet.Kube.DiscoveryV1().EndpointSlices("default")
	cur, err := api.Get(ctx, slice.Name, metav1.GetOptions{})
	if err == nil {
		cur.Endpoints = slice.Endpoints
		_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
	} else {
		_, err = api.Create(ctx, slice, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatalf("publish endpoints of %s: %v", svc, err)
	}
}

// checkServiceLB is k3s's ServiceLB (klipper-lb) in front of a LoadBalancer Service: its
// svclb pod takes the port on the node through a hostPort (the shipped portmap) and, with the
// rules klipper-lb's entry script writes in the pod, DNATs to the ClusterIP and masquerades;
// the pod's packet to the ClusterIP is balanced by OVN like any pod's.
func (s *svcEnv) checkServiceLB(t *testing.T, outsideNetns string) {
	t.Helper()
	svc := createService(s.ctx, t, s.env, "lb", func(svc *corev1.Service) {
		svc.Spec.Type, svc.Spec.Selector = corev1.ServiceTypeLoadBalancer, map[string]string{"app": "web"}
	})
	sb := runPodIn(s.ctx, t, s.env, "kube-system", "svclb-lb", func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 18090, Protocol: corev1.ProtocolTCP}}
	})
	rules := fmt.Sprintf(`table ip klipper {
	chain prerouting { type nat hook prerouting priority dstnat; ip saddr != %[1]s tcp dport 80 dnat to %[1]s:80; }
	chain postrouting { type nat hook postrouting priority srcnat; ip daddr %[1]s tcp dport 80 masquerade; }
}`, svc.Spec.ClusterIP)
	for _, cmd := range [][]string{{"sysctl", "-qw", "net.ipv4.ip_forward=1"}, {"nft", "-f", "-"}} {
		c := exec.CommandContext(s.ctx, "ip", append([]string{"netns", "exec", sb.NetnsName()}, cmd...)...)
		c.Stdin = strings.NewReader(rules)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("svclb pod: %s: %v\n%s", cmd, err, out)
		}
	}
	eventually(s.ctx, t, "the LoadBalancer Service answers on the node's port 18090 through its svclb pod", func() bool {
		a, _ := s.send(outsideNetns, corev1.ProtocolTCP, "198.51.100.1:18090", time.Second)
		return strings.HasPrefix(a.Server, "web-")
	})
}

// checkRestartWritesOnlyChanges: edgeovn stopped, one Service deleted meanwhile; the
// restarted controller removes that Service's load balancers and writes nothing else of the
// Services (counted from the northbound database's own transaction log).
func (s *svcEnv) checkRestartWritesOnlyChanges(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(s.daemon.PID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = s.daemon.Wait()
	tables := []string{`"Load_Balancer"`, `"Load_Balancer_Group"`, `"Chassis_Template_Var"`}
	before := nbTransactions(t, s.env, tables...)
	if err := s.kubelet.Kube.CoreV1().Services("default").Delete(s.ctx, "sticky", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.startDaemon(s.ctx, t, "edgeovn-restarted")
	eventually(s.ctx, t, "the Service deleted while edgeovn was down loses its load balancers", func() bool {
		return !strings.Contains(s.nbctl(s.ctx, t, "--bare", "--columns=name", "list", "Load_Balancer"), "svc:default/sticky:")
	})
	eventually(s.ctx, t, "the restarted controller running", func() bool {
		return strings.Contains(s.daemonLog(), "controller role running")
	})
	time.Sleep(time.Second) // a write that should not happen would come now
	if n := nbTransactions(t, s.env, tables...) - before; n != 1 {
		t.Fatalf("the restart wrote %d transactions on load balancers, want 1 (the deleted Service's)", n)
	}
}

// nbTransactions counts the transactions in the northbound database file that touch any of
// the tables (the file is the server's append-only transaction log).
func nbTransactions(t *testing.T, env *env, tables ...string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.rig.Dir, "ovnnb_db.db"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "OVSDB JSON") {
			continue
		}
		for _, tb := range tables {
			if strings.Contains(line, tb+":") {
				n++
				break
			}
		}
	}
	return n
}

// checkLoadBalancerIP: a Local LoadBalancer Service's LoadBalancer IP (routed to the host by
// the outside network) reaches a backend with the client's address and its health check
// answers 200 with both local endpoints, in both modes; with kube-proxy on the host both are
// kube-proxy's, and edgeovn serves no health check of its own (it would take kube-proxy's port).
func (s *svcEnv) checkLoadBalancerIP(t *testing.T, out outsideAt, kubeProxy bool) {
	t.Helper()
	const lbIP = "192.0.2.150"
	svc := createService(s.ctx, t, s.env, "lb-ip", func(svc *corev1.Service) {
		svc.Spec.Type, svc.Spec.Selector = corev1.ServiceTypeLoadBalancer, map[string]string{"app": "web"}
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	})
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: lbIP}}
	if _, err := s.kubelet.Kube.CoreV1().Services("default").UpdateStatus(s.ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.CommandContext(s.ctx, "ip", "netns", "exec", filepath.Base(out.netns), "ip", "route", "add", lbIP+"/32", "via", "198.51.100.1").CombinedOutput(); err != nil {
		t.Fatalf("route %s from outside: %v: %s", lbIP, err, b)
	}
	var a podsim.Answer
	eventually(s.ctx, t, "the LoadBalancer IP answers from outside", func() bool {
		a, _ = s.send(out.netns, corev1.ProtocolTCP, lbIP+":80", time.Second)
		return strings.HasPrefix(a.Server, "web-")
	})
	if a.Client.Addr() != out.addr {
		t.Errorf("LoadBalancer IP, Local: the backend saw %s, want the client's %s", a.Client, out.addr)
	}
	url := fmt.Sprintf("http://198.51.100.1:%d/healthz", svc.Spec.HealthCheckNodePort)
	eventually(s.ctx, t, "the health check answers 200 with 2 local endpoints", func() bool {
		h, err := podsim.HTTPGet(s.ctx, out.netns, url, time.Second)
		return err == nil && h.Status == 200 && strings.Contains(h.Body, `"localEndpoints": 2`)
	})
	if served := strings.Contains(s.daemonLog(), "serving health check"); served == kubeProxy {
		t.Errorf("kube-proxy on the host %v, yet edgeovn serving a health check %v", kubeProxy, served)
	}
}
