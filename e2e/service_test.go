package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestServices: ClusterIP Services as OVN load balancers, with real traffic between pod
// namespaces: both backends answer over TCP and UDP, a Service without endpoints rejects
// at once and works again when they are back, ClientIP affinity keeps one backend, a pod
// reaches itself through its Service (hairpin), the host reaches the ClusterIP through ovn0,
// and a deleted Service leaves no load balancer behind.
func TestServices(t *testing.T) {
	env, ctx := startNode(t)
	nodeJoin(ctx, t, env)
	web1, web2, client := runPod(ctx, t, env, "web-1"), runPod(ctx, t, env, "web-2"), runPod(ctx, t, env, "client")
	for _, sb := range []*podsim.Sandbox{web1, web2} {
		serveIdent(t, sb.Netns, net.JoinHostPort(sb.IP().String(), "8080"), sb.Pod.Name)
	}
	svc := createService(ctx, t, env, "web", nil)
	vip := svc.Spec.ClusterIP
	publishEndpoints(ctx, t, env, "web", web1, web2)

	seen := map[string]bool{}
	eventually(ctx, t, "both backends answer on "+vip+":80, seeing the client's own address", func() bool {
		a, err := ask(ctx, client.Netns, "tcp", vip+":80", time.Second)
		seen[a] = err == nil
		return seen["web-1 "+client.IP().String()] && seen["web-2 "+client.IP().String()]
	})
	if a, err := ask(ctx, client.Netns, "udp", vip+":53", time.Second); err != nil || !strings.HasPrefix(a, "web-") {
		t.Fatalf("udp %s:53: %q, %v", vip, a, err)
	}

	publishEndpoints(ctx, t, env, "web")
	eventually(ctx, t, "a Service without endpoints rejects", func() bool {
		_, err := ask(ctx, client.Netns, "tcp", vip+":80", time.Second)
		return err == errRefused
	})
	publishEndpoints(ctx, t, env, "web", web2)
	eventually(ctx, t, "endpoints back: web-2 answers", func() bool {
		a, _ := ask(ctx, client.Netns, "tcp", vip+":80", time.Second)
		return strings.HasPrefix(a, "web-2 ")
	})

	hairpin := createService(ctx, t, env, "self", nil)
	publishEndpoints(ctx, t, env, "self", web1)
	eventually(ctx, t, "web-1 reaches itself through its Service (hairpin)", func() bool {
		a, _ := ask(ctx, web1.Netns, "tcp", hairpin.Spec.ClusterIP+":80", time.Second)
		return strings.HasPrefix(a, "web-1 ")
	})

	sticky := createService(ctx, t, env, "sticky", func(s *corev1.Service) {
		s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	})
	publishEndpoints(ctx, t, env, "sticky", web1, web2)
	var first string
	eventually(ctx, t, "sticky Service answers", func() bool {
		first, _ = ask(ctx, client.Netns, "tcp", sticky.Spec.ClusterIP+":80", time.Second)
		return first != ""
	})
	for i := range 10 {
		if a, err := ask(ctx, client.Netns, "tcp", sticky.Spec.ClusterIP+":80", time.Second); a != first {
			t.Fatalf("ClientIP affinity: request %d answered by %q (%v), the first by %q", i, a, err, first)
		}
	}

	eventually(ctx, t, "the host reaches "+vip+" through ovn0", func() bool {
		a, _ := ask(ctx, env.rig.NetnsPath, "tcp", vip+":80", time.Second)
		return strings.HasPrefix(a, "web-2 ")
	})

	checkNodePorts(ctx, t, env, web1, web2)
	checkInternalLocal(ctx, t, env, client, web1, web2)
	checkRestartWritesOnlyChanges(ctx, t, env)

	if err := env.kubelet.Kube.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the deleted Service's load balancers are gone", func() bool {
		return !strings.Contains(env.nbctl(ctx, t, "--bare", "--columns=name", "list", "Load_Balancer"), "svc:default/web:")
	})
}

// checkNodePorts: NodePort Services answer on the node's address from an outside network,
// through every backend (externalTrafficPolicy Cluster, the client masqueraded) or through
// this node's endpoints with the client's own address kept (Local).
func checkNodePorts(ctx context.Context, t *testing.T, env *env, backends ...*podsim.Sandbox) {
	t.Helper()
	outside, outsideNetns := addOutside(ctx, t, env)
	cluster := createService(ctx, t, env, "np-cluster", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort })
	publishEndpoints(ctx, t, env, "np-cluster", backends...)
	local := createService(ctx, t, env, "np-local", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	})
	publishEndpoints(ctx, t, env, "np-local", backends[0])
	join := nodeJoin(ctx, t, env).IPs[0].String()
	for _, c := range []struct {
		svc    *corev1.Service
		source string // what the backend sees
	}{{cluster, join}, {local, outside.String()}} {
		addr := fmt.Sprintf("198.51.100.1:%d", c.svc.Spec.Ports[0].NodePort)
		var a string
		eventually(ctx, t, "node port "+addr+" of "+c.svc.Name+" answers from outside", func() bool {
			a, _ = ask(ctx, outsideNetns, "tcp", addr, time.Second)
			return strings.HasPrefix(a, "web-")
		})
		if !strings.HasSuffix(a, " "+c.source) {
			t.Errorf("node port %s of %s: backend answered %q, want it to have seen %s", addr, c.svc.Name, a, c.source)
		}
		udp := fmt.Sprintf("198.51.100.1:%d", c.svc.Spec.Ports[1].NodePort)
		if a, err := ask(ctx, outsideNetns, "udp", udp, 2*time.Second); !strings.HasPrefix(a, "web-") {
			t.Errorf("udp node port %s of %s: %q, %v", udp, c.svc.Name, a, err)
		}
	}
}

// checkInternalLocal: with internalTrafficPolicy Local a client reaches only its own
// node's endpoints (web-2 is published on another node), and none when its node has none.
func checkInternalLocal(ctx context.Context, t *testing.T, env *env, client, here, elsewhere *podsim.Sandbox) {
	t.Helper()
	svc := createService(ctx, t, env, "itp-local", func(s *corev1.Service) {
		s.Spec.InternalTrafficPolicy = new(corev1.ServiceInternalTrafficPolicyLocal)
	})
	vip := svc.Spec.ClusterIP + ":80"
	publishEndpointsOn(ctx, t, env, "itp-local", map[*podsim.Sandbox]string{here: node, elsewhere: "edge-2"})
	eventually(ctx, t, "internalTrafficPolicy Local answers from this node's endpoint", func() bool {
		a, _ := ask(ctx, client.Netns, "tcp", vip, time.Second)
		return strings.HasPrefix(a, here.Pod.Name+" ")
	})
	for i := range 10 {
		if a, err := ask(ctx, client.Netns, "tcp", vip, time.Second); !strings.HasPrefix(a, here.Pod.Name+" ") {
			t.Fatalf("internalTrafficPolicy Local: request %d answered %q (%v), want only %s", i, a, err, here.Pod.Name)
		}
	}
	publishEndpointsOn(ctx, t, env, "itp-local", map[*podsim.Sandbox]string{elsewhere: "edge-2"})
	eventually(ctx, t, "internalTrafficPolicy Local without a local endpoint answers nothing", func() bool {
		a, err := ask(ctx, client.Netns, "tcp", vip, 500*time.Millisecond)
		return a == "" && err != nil
	})
}

// checkRestartWritesOnlyChanges: edgeovn stopped, one Service deleted meanwhile; the
// restarted controller removes that Service's load balancers and writes nothing else of the
// Services (counted from the northbound database's own transaction log).
func checkRestartWritesOnlyChanges(ctx context.Context, t *testing.T, env *env) {
	t.Helper()
	if err := syscall.Kill(env.daemon.PID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = env.daemon.Wait()
	before := nbTransactions(t, env, `"Load_Balancer"`, `"Load_Balancer_Group"`, `"Chassis_Template_Var"`)
	if err := env.kubelet.Kube.CoreV1().Services("default").Delete(ctx, "sticky", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.startDaemon(ctx, t, "edgeovn-restarted")
	eventually(ctx, t, "the Service deleted while edgeovn was down loses its load balancers", func() bool {
		return !strings.Contains(env.nbctl(ctx, t, "--bare", "--columns=name", "list", "Load_Balancer"), "svc:default/sticky:")
	})
	eventually(ctx, t, "the restarted controller running", func() bool {
		return strings.Contains(env.daemonLog(), "controller role running")
	})
	time.Sleep(time.Second) // a write that should not happen would come now
	if n := nbTransactions(t, env, `"Load_Balancer"`, `"Load_Balancer_Group"`, `"Chassis_Template_Var"`) - before; n != 1 {
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

// createService creates a ClusterIP Service in default selecting app=<name>, with ports
// http 80 -> 8080 (TCP) and dns 53 -> 8080 (UDP).
func createService(ctx context.Context, t *testing.T, env *env, name string, mut func(*corev1.Service)) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP},
			{Name: "dns", Port: 53, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolUDP}}}}
	if mut != nil {
		mut(svc)
	}
	out, err := env.kubelet.Kube.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create service %s: %v", name, err)
	}
	return out
}

// publishEndpoints writes the Service's EndpointSlice with the sandboxes as ready endpoints
// on this node.
func publishEndpoints(ctx context.Context, t *testing.T, env *env, svc string, sbs ...*podsim.Sandbox) {
	t.Helper()
	on := map[*podsim.Sandbox]string{}
	for _, sb := range sbs {
		on[sb] = node
	}
	publishEndpointsOn(ctx, t, env, svc, on)
}

// publishEndpointsOn writes the Service's EndpointSlice with each sandbox as a ready
// endpoint on the node it names.
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

func (e *env) nbctl(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, err := e.rig.Run(ctx, "ovn-nbctl", append([]string{"--db=" + e.rig.NBEndpoint}, args...)...)
	if err != nil {
		t.Fatalf("ovn-nbctl %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}
