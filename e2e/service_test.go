package e2e

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestServices runs the Service suite as with `k3s --disable-kube-proxy`: edgeovn serves
// node ports and the host's traffic to ClusterIPs itself.
func TestServices(t *testing.T) { runServiceSuite(t, false) }

// TestServicesWithKubeProxy runs the same suite with kube-proxy on the host as k3s runs it
// (iptables mode, --cluster-cidr): it serves node ports and the host's traffic, edgeovn
// sees it and leaves them to it, and pods' traffic to ClusterIPs is still DNATed in OVN.
func TestServicesWithKubeProxy(t *testing.T) { runServiceSuite(t, true) }

// svcEnv is one host of the Service suite: web-1 and web-2 serve on 8080 (TCP and UDP),
// client asks.
type svcEnv struct {
	*env
	ctx                context.Context
	web1, web2, client *podsim.Sandbox
}

// runServiceSuite: ClusterIP Services as OVN load balancers with endpoints from the real
// EndpointSlice controller and names from CoreDNS, real traffic between pod namespaces, the
// host and an outside network.
func runServiceSuite(t *testing.T, kubeProxy bool) {
	needs := []harness.Component{harness.ControllerManager, harness.CoreDNS}
	if kubeProxy {
		needs = append(needs, harness.KubeProxy)
	}
	if err := harness.Preflight(needs...); err != nil {
		skip.Now(t, "Service suite (run `make deps` as root): %v", err)
	}
	env, ctx := startNode(t)
	nodeJoin(ctx, t, env)
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })
	if _, err := env.rig.StartControllerManager(ctx, harness.ControllerManagerRequest{}); err != nil {
		t.Fatal(err)
	}
	mode := "edgeovn serves host traffic to services and node ports"
	if kubeProxy {
		if _, err := env.rig.StartKubeProxy(ctx, harness.KubeProxyRequest{Node: node}); err != nil {
			t.Fatal(err)
		}
		mode = "kube-proxy serves host traffic to services and node ports"
	}
	eventually(ctx, t, "edgeovn logs: "+mode, func() bool { return strings.Contains(env.daemonLog(), mode) })

	s := &svcEnv{env: env, ctx: ctx}
	s.web1 = s.backend(t, "web-1", map[string]string{"app": "web", "self": "yes"})
	s.web2 = s.backend(t, "web-2", map[string]string{"app": "web"})
	s.client = runPod(ctx, t, env, "client")

	s.checkDNSAndBalancing(t)
	s.checkReject(t)
	s.checkHairpinAndAffinity(t)
	s.checkHost(t)
	outside, outsideNetns := addOutside(ctx, t, env)
	s.checkNodePorts(t, outsideAt{outside, outsideNetns})
	s.checkInternalLocal(t)
	s.checkServiceLB(t, outsideNetns)
	s.checkLoadBalancerIP(t, outsideAt{outside, outsideNetns}, kubeProxy)
	s.checkRestartWritesOnlyChanges(t)
	if err := env.kubelet.Kube.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the deleted Service's load balancers are gone", func() bool {
		return !strings.Contains(env.nbctl(ctx, t, "--bare", "--columns=name", "list", "Load_Balancer"), "svc:default/web:")
	})
}

// backend runs a pod with labels that serves on 8080 and is reported Running and Ready.
func (s *svcEnv) backend(t *testing.T, name string, labels map[string]string) *podsim.Sandbox {
	t.Helper()
	sb := runPodIn(s.ctx, t, s.env, "default", name, func(p *corev1.Pod) { p.Labels = labels })
	srv, err := podsim.Serve(s.ctx, podsim.ServeRequest{Netns: sb.Netns, Port: 8080, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if err := s.kubelet.MarkRunning(s.ctx, sb); err != nil {
		t.Fatal(err)
	}
	return sb
}

// send asks addr over proto from the namespace.
func (s *svcEnv) send(netns string, proto corev1.Protocol, addr string, timeout time.Duration) (podsim.Answer, error) {
	return podsim.Send(s.ctx, podsim.SendRequest{Netns: netns, Protocol: proto, Addr: netip.MustParseAddrPort(addr), Timeout: timeout})
}

// checkDNSAndBalancing: CoreDNS behind the kube-dns Service at 10.43.0.10 (k3s's) answers the
// client with the ClusterIPs of kubernetes and web; by that name the client reaches both of
// web's backends over TCP, which see its own address, and over UDP.
func (s *svcEnv) checkDNSAndBalancing(t *testing.T) {
	t.Helper()
	dns := runPodIn(s.ctx, t, s.env, "kube-system", "coredns", func(p *corev1.Pod) { p.Labels = map[string]string{"k8s-app": "kube-dns"} })
	if _, err := s.rig.StartCoreDNS(s.ctx, harness.CoreDNSRequest{Netns: dns.Netns}); err != nil {
		t.Fatal(err)
	}
	if err := s.kubelet.MarkRunning(s.ctx, dns); err != nil {
		t.Fatal(err)
	}
	createServiceIn(s.ctx, t, s.env, "kube-system", "kube-dns", func(svc *corev1.Service) {
		svc.Spec.ClusterIP, svc.Spec.Selector = "10.43.0.10", map[string]string{"k8s-app": "kube-dns"}
		svc.Spec.Ports = []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
			{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP}}
	})
	web := createService(s.ctx, t, s.env, "web", nil)
	kubernetes, err := s.kubelet.Kube.CoreV1().Services("default").Get(s.ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	server := netip.MustParseAddrPort("10.43.0.10:53")
	for name, want := range map[string]string{"kubernetes.default.svc.cluster.local": kubernetes.Spec.ClusterIP,
		"web.default.svc.cluster.local": web.Spec.ClusterIP} {
		var got []netip.Addr
		eventually(s.ctx, t, "the client resolves "+name+" through kube-dns at "+server.String(), func() bool {
			got, err = podsim.Lookup(s.ctx, s.client.Netns, server, name)
			return err == nil && len(got) == 1 && got[0].String() == want
		})
	}
	seen := map[string]bool{}
	eventually(s.ctx, t, "both backends answer web.default.svc.cluster.local:80, seeing the client's address", func() bool {
		addrs, err := podsim.Lookup(s.ctx, s.client.Netns, server, "web.default.svc.cluster.local")
		if err != nil || len(addrs) == 0 {
			return false
		}
		a, err := s.send(s.client.Netns, corev1.ProtocolTCP, netip.AddrPortFrom(addrs[0], 80).String(), time.Second)
		seen[a.Server] = err == nil && a.Client.Addr() == s.client.IP()
		return seen["web-1"] && seen["web-2"]
	})
	if a, err := s.send(s.client.Netns, corev1.ProtocolUDP, web.Spec.ClusterIP+":53", 2*time.Second); err != nil || !strings.HasPrefix(a.Server, "web-") {
		t.Fatalf("udp %s:53: %+v, %v", web.Spec.ClusterIP, a, err)
	}
}

// checkReject: with no ready endpoint the Service rejects at once; back up, it answers.
func (s *svcEnv) checkReject(t *testing.T) {
	t.Helper()
	vip := s.clusterIP(t, "web") + ":80"
	for _, sb := range []*podsim.Sandbox{s.web1, s.web2} {
		if err := s.kubelet.MarkNotReady(s.ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	eventually(s.ctx, t, "a Service without ready endpoints rejects", func() bool {
		_, err := s.send(s.client.Netns, corev1.ProtocolTCP, vip, time.Second)
		return errors.Is(err, podsim.ErrRefused)
	})
	if err := s.kubelet.MarkRunning(s.ctx, s.web2); err != nil {
		t.Fatal(err)
	}
	eventually(s.ctx, t, "web-2 ready again: it answers", func() bool {
		a, _ := s.send(s.client.Netns, corev1.ProtocolTCP, vip, time.Second)
		return a.Server == "web-2"
	})
	if err := s.kubelet.MarkRunning(s.ctx, s.web1); err != nil {
		t.Fatal(err)
	}
}

// checkHairpinAndAffinity: web-1 reaches itself through its own Service; with ClientIP
// affinity every request goes to one backend.
func (s *svcEnv) checkHairpinAndAffinity(t *testing.T) {
	t.Helper()
	self := createService(s.ctx, t, s.env, "self", func(svc *corev1.Service) { svc.Spec.Selector = map[string]string{"self": "yes"} })
	eventually(s.ctx, t, "web-1 reaches itself through its Service (hairpin)", func() bool {
		a, _ := s.send(s.web1.Netns, corev1.ProtocolTCP, self.Spec.ClusterIP+":80", time.Second)
		return a.Server == "web-1"
	})
	sticky := createService(s.ctx, t, s.env, "sticky", func(svc *corev1.Service) {
		svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		svc.Spec.Selector = map[string]string{"app": "web"}
	})
	var first podsim.Answer
	eventually(s.ctx, t, "sticky Service answers from both endpoints' slice", func() bool {
		first, _ = s.send(s.client.Netns, corev1.ProtocolTCP, sticky.Spec.ClusterIP+":80", time.Second)
		return first.Server != "" && strings.Count(s.nbctl(s.ctx, t, "--bare", "--columns=vips", "find", "Load_Balancer", `name="svc:default/sticky:tcp"`), ":8080") == 2
	})
	for i := range 10 {
		if a, err := s.send(s.client.Netns, corev1.ProtocolTCP, sticky.Spec.ClusterIP+":80", time.Second); a.Server != first.Server {
			t.Fatalf("ClientIP affinity: request %d answered by %q (%v), the first by %q", i, a.Server, err, first.Server)
		}
	}
}

// checkHost: the host reaches a ClusterIP (through ovn0 and OVN, or through kube-proxy).
func (s *svcEnv) checkHost(t *testing.T) {
	t.Helper()
	vip := s.clusterIP(t, "web") + ":80"
	eventually(s.ctx, t, "the host reaches "+vip, func() bool {
		a, _ := s.send(s.rig.NetnsPath, corev1.ProtocolTCP, vip, time.Second)
		return strings.HasPrefix(a.Server, "web-")
	})
}

func (s *svcEnv) clusterIP(t *testing.T, name string) string {
	t.Helper()
	svc, err := s.kubelet.Kube.CoreV1().Services("default").Get(s.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc.Spec.ClusterIP
}

// createService creates a ClusterIP Service in default selecting app=<name>, with ports
// http 80 -> 8080 (TCP) and dns 53 -> 8080 (UDP).
func createService(ctx context.Context, t *testing.T, env *env, name string, mut func(*corev1.Service)) *corev1.Service {
	t.Helper()
	return createServiceIn(ctx, t, env, "default", name, func(svc *corev1.Service) {
		svc.Spec.Selector = map[string]string{"app": name}
		svc.Spec.Ports = []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP},
			{Name: "dns", Port: 53, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolUDP}}
		if mut != nil {
			mut(svc)
		}
	})
}

func createServiceIn(ctx context.Context, t *testing.T, env *env, namespace, name string, mut func(*corev1.Service)) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	mut(svc)
	out, err := env.kubelet.Kube.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create service %s/%s: %v", namespace, name, err)
	}
	return out
}

// vsctl runs ovs-vsctl against the rig's Open_vSwitch database.
func (e *env) vsctl(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, err := e.rig.Run(ctx, "ovs-vsctl", append([]string{"--db=" + e.rig.OVSEndpoint}, args...)...)
	if err != nil {
		t.Fatalf("ovs-vsctl %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

func (e *env) nbctl(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, err := e.rig.Run(ctx, "ovn-nbctl", append([]string{"--db=" + e.rig.NBEndpoint}, args...)...)
	if err != nil {
		t.Fatalf("ovn-nbctl %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}
