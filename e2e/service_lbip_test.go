package e2e

import (
	"context"
	"encoding/json"
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
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// The site's addresses in TestLoadBalancerIPs: LoadBalancer IPs on the host's LAN (as
// MetalLB in L2 mode gives them), external IPs from another range the LAN routes to the host.
const (
	lbCluster  = "192.0.2.100"
	lbLocal    = "192.0.2.101"
	lbProxy    = "192.0.2.102"
	extCluster = "203.0.113.7"
	extLocal   = "203.0.113.8"
	extITP     = "203.0.113.9"
	lbRanges   = "192.0.2.103"
	extRanges  = "203.0.113.10"
)

// lbEnv is one host with a site client on its LAN (the harness's LAN peer namespace) and a
// backend web-1 on 8080, the endpoint of every Service here (EndpointSlices written by the
// test, as the EndpointSlice controller would).
type lbEnv struct {
	*env
	ctx  context.Context
	site string // the site client's namespace path; it sends from the LAN gateway address
	join netip.Addr
	web1 *podsim.Sandbox
}

// TestLoadBalancerIPs: without kube-proxy, a site client on the host's LAN reaches a
// LoadBalancer IP (status set as a load balancer controller would) and an external IP, with
// externalTrafficPolicy Cluster (the backend sees the host's join address) and Local (it
// sees the client; without a local endpoint the traffic is dropped and the health check
// answers 503 instead of 200); an ingress entry with ipMode Proxy is not served; pods reach
// the LoadBalancer and external IPs through OVN with their own address; bad addresses are
// refused with an Event while the host's own listener and the other Services still answer.
func TestLoadBalancerIPs(t *testing.T) {
	env := startEnvOpts(t, false, harness.Options{LANPeer: true})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	if err := env.kubelet.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	s := &lbEnv{env: env, ctx: ctx, site: "/var/run/netns/" + env.rig.LANNetns}
	s.join = nodeJoin(ctx, t, env).IPs[0]
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })
	eventually(ctx, t, "edgeovn serves the services itself", func() bool {
		return strings.Contains(env.daemonLog(), "edgeovn serves host traffic to services and node ports")
	})
	// The LAN sends the site's service addresses to the host, as MetalLB's ARP answers or a
	// router's static route would.
	for _, ip := range []string{lbCluster, lbLocal, lbProxy, extCluster, extLocal, lbRanges, extRanges} {
		if out, err := exec.CommandContext(ctx, "ip", "-n", env.rig.LANNetns, "route", "add", ip+"/32", "via", env.rig.NodeIP.String()).CombinedOutput(); err != nil {
			t.Fatalf("route %s on the LAN: %v: %s", ip, err, out)
		}
	}
	s.web1 = runPodIn(ctx, t, env, "default", "web-1")
	srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: s.web1.Netns, Port: 8080, Name: "web-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	t.Run("ClusterPolicy", s.checkClusterPolicy)
	t.Run("LocalPolicyAndHealthCheck", s.checkLocalPolicy)
	t.Run("IPModeProxy", s.checkIPModeProxy)
	t.Run("FromPods", s.checkFromPods)
	t.Run("BadAddresses", s.checkBadAddresses)
	t.Run("SourceRanges", s.checkSourceRanges)
}

// eventually is the suite's eventually, each wait bounded to 30 s: a subtest that fails
// says so without taking the others' time.
func (s *lbEnv) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	eventually(ctx, t, what, cond)
}

// lbService creates a Service of web-1 (ports http 80 and dns 53 to 8080), its endpoint on
// this node, and its LoadBalancer status when ingress is given.
func (s *lbEnv) lbService(t *testing.T, name string, mut func(*corev1.Service), ingress ...corev1.LoadBalancerIngress) *corev1.Service {
	t.Helper()
	svc := createService(s.ctx, t, s.env, name, mut)
	publishEndpointsOn(s.ctx, t, s.env, name, map[*podsim.Sandbox]string{s.web1: node})
	if len(ingress) == 0 {
		return svc
	}
	svc.Status.LoadBalancer.Ingress = ingress
	out, err := s.kubelet.Kube.CoreV1().Services("default").UpdateStatus(s.ctx, svc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("set the load balancer status of %s: %v", name, err)
	}
	return out
}

// reaches waits until the site client's request to addr is answered by web-1 and returns
// the client address web-1 saw.
func (s *lbEnv) reaches(t *testing.T, from, addr string) netip.Addr {
	t.Helper()
	var a podsim.Answer
	s.eventually(t, addr+" answers from "+from, func() bool {
		a, _ = podsim.Send(s.ctx, podsim.SendRequest{Netns: from, Protocol: corev1.ProtocolTCP, Addr: netip.MustParseAddrPort(addr), Timeout: time.Second})
		return a.Server == "web-1"
	})
	return a.Client.Addr()
}

func (s *lbEnv) checkClusterPolicy(t *testing.T) {
	s.lbService(t, "lb-cluster", func(svc *corev1.Service) { svc.Spec.Type = corev1.ServiceTypeLoadBalancer },
		corev1.LoadBalancerIngress{IP: lbCluster})
	s.lbService(t, "ext-cluster", func(svc *corev1.Service) { svc.Spec.ExternalIPs = []string{extCluster} })
	for _, addr := range []string{lbCluster + ":80", extCluster + ":80"} {
		if got := s.reaches(t, s.site, addr); got != s.join {
			t.Errorf("externalTrafficPolicy Cluster, %s: web-1 saw %s, want the host's join address %s", addr, got, s.join)
		}
	}
	a, err := podsim.Send(s.ctx, podsim.SendRequest{Netns: s.site, Protocol: corev1.ProtocolUDP, Addr: netip.MustParseAddrPort(lbCluster + ":53"), Timeout: 2 * time.Second})
	if a.Server != "web-1" {
		t.Errorf("udp %s:53 from the site: %+v, %v", lbCluster, a, err)
	}
}

func (s *lbEnv) checkLocalPolicy(t *testing.T) {
	local := func(svc *corev1.Service) {
		svc.Spec.Type, svc.Spec.ExternalTrafficPolicy = corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyLocal
	}
	lb := s.lbService(t, "lb-local", local, corev1.LoadBalancerIngress{IP: lbLocal})
	s.lbService(t, "ext-local", func(svc *corev1.Service) { local(svc); svc.Spec.ExternalIPs = []string{extLocal} })
	client := netip.MustParseAddr("192.0.2.1") // the LAN peer's first address
	for _, addr := range []string{lbLocal + ":80", extLocal + ":80"} {
		if got := s.reaches(t, s.site, addr); got != client {
			t.Errorf("externalTrafficPolicy Local, %s: web-1 saw %s, want the site client's %s", addr, got, client)
		}
	}
	hc := fmt.Sprintf("http://%s:%d/healthz", s.rig.NodeIP, lb.Spec.HealthCheckNodePort)
	s.healthIs(t, hc, http.StatusOK, 1)
	publishEndpointsOn(s.ctx, t, s.env, "lb-local", map[*podsim.Sandbox]string{s.web1: "edge-2"})
	s.healthIs(t, hc, http.StatusServiceUnavailable, 0)
	_, err := podsim.Send(s.ctx, podsim.SendRequest{Netns: s.site, Protocol: corev1.ProtocolTCP, Addr: netip.MustParseAddrPort(lbLocal + ":80"), Timeout: time.Second})
	if !strings.Contains(fmt.Sprint(err), podsim.ErrTimeout.Error()) {
		t.Errorf("Local without a local endpoint: %v, want the request dropped (timeout)", err)
	}
	publishEndpointsOn(s.ctx, t, s.env, "lb-local", map[*podsim.Sandbox]string{s.web1: node})
	s.healthIs(t, hc, http.StatusOK, 1)
}

// healthIs waits for the health check to answer status with kube-proxy's body.
func (s *lbEnv) healthIs(t *testing.T, url string, status, count int) {
	t.Helper()
	var a podsim.HTTPAnswer
	var err error
	s.eventually(t, fmt.Sprintf("the health check %s answers %d", url, status), func() bool {
		a, err = podsim.HTTPGet(s.ctx, s.site, url, time.Second)
		return err == nil && a.Status == status
	})
	var body struct {
		Service struct {
			Namespace, Name string
		} `json:"service"`
		LocalEndpoints      int  `json:"localEndpoints"`
		ServiceProxyHealthy bool `json:"serviceProxyHealthy"`
	}
	if err := json.Unmarshal([]byte(a.Body), &body); err != nil || body.Service.Name != "lb-local" || body.Service.Namespace != "default" ||
		body.LocalEndpoints != count || !body.ServiceProxyHealthy || a.Header.Get("X-Load-Balancing-Endpoint-Weight") != fmt.Sprint(count) {
		t.Errorf("health check %s: %d %v %q (%v), want default/lb-local with %d local endpoints", url, a.Status, a.Header, a.Body, err, count)
	}
}

// checkIPModeProxy: an ingress entry with ipMode Proxy is the load balancer's own proxy's
// address: not served on the host (kube-proxy 1.30+ leaves it alone too).
func (s *lbEnv) checkIPModeProxy(t *testing.T) {
	mode := corev1.LoadBalancerIPModeProxy
	s.lbService(t, "lb-proxy", func(svc *corev1.Service) { svc.Spec.Type = corev1.ServiceTypeLoadBalancer },
		corev1.LoadBalancerIngress{IP: lbProxy, IPMode: &mode})
	s.reaches(t, s.site, lbCluster+":80") // the rules are current
	if a, err := podsim.Send(s.ctx, podsim.SendRequest{Netns: s.site, Protocol: corev1.ProtocolTCP, Addr: netip.MustParseAddrPort(lbProxy + ":80"), Timeout: time.Second}); err == nil {
		t.Errorf("ipMode Proxy address %s answered: %+v", lbProxy, a)
	}
}

// checkFromPods: a pod reaches the LoadBalancer and external IPs with its own address (the
// DNAT happens in OVN on its switch, as for a ClusterIP), whatever the external policy.
// With internalTrafficPolicy Local and the only endpoint on another node, the ClusterIP
// answers nothing while the external IP still reaches it (the internal policy is the
// ClusterIP's alone).
func (s *lbEnv) checkFromPods(t *testing.T) {
	client := runPodIn(s.ctx, t, s.env, "default", "client")
	for _, addr := range []string{lbCluster + ":80", extCluster + ":80", lbLocal + ":80", extLocal + ":80"} {
		if got := s.reaches(t, client.Netns, addr); got != client.IP() {
			t.Errorf("from a pod, %s: web-1 saw %s, want the pod's own %s", addr, got, client.IP())
		}
	}
	itp := createService(s.ctx, t, s.env, "itp-ext", func(svc *corev1.Service) {
		svc.Spec.Selector, svc.Spec.ExternalIPs = nil, []string{extITP}
		svc.Spec.InternalTrafficPolicy = new(corev1.ServiceInternalTrafficPolicyLocal)
	})
	publishEndpointsOn(s.ctx, t, s.env, "itp-ext", map[*podsim.Sandbox]string{s.web1: "edge-2"})
	if got := s.reaches(t, client.Netns, extITP+":80"); got != client.IP() {
		t.Errorf("the external IP of an internalTrafficPolicy Local Service: web-1 saw %s, want the pod's own %s", got, client.IP())
	}
	if a, err := podsim.Send(s.ctx, podsim.SendRequest{Netns: client.Netns, Protocol: corev1.ProtocolTCP, Addr: netip.MustParseAddrPort(itp.Spec.ClusterIP + ":80"), Timeout: time.Second}); err == nil {
		t.Errorf("internalTrafficPolicy Local ClusterIP without a local endpoint answered: %+v", a)
	}
}

// checkBadAddresses: an external IP that is the host's own address on a port a host
// listener holds, and a LoadBalancer IP in the pod network, are refused for their Service
// with a Warning Event naming the address; the host's listener still answers from the site,
// and the other Services are unaffected.
func (s *lbEnv) checkBadAddresses(t *testing.T) {
	sshd, err := podsim.Serve(s.ctx, podsim.ServeRequest{Netns: s.rig.NetnsPath, Port: 22, Name: "host-sshd"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sshd.Close() })
	hostAddr := s.rig.NodeIP.String()
	createService(s.ctx, t, s.env, "ext-ssh", func(svc *corev1.Service) {
		svc.Spec.ExternalIPs = []string{hostAddr}
		svc.Spec.Ports[0].Port = 22
	})
	publishEndpointsOn(s.ctx, t, s.env, "ext-ssh", map[*podsim.Sandbox]string{s.web1: node})
	s.lbService(t, "lb-in-pods", func(svc *corev1.Service) { svc.Spec.Type = corev1.ServiceTypeLoadBalancer },
		corev1.LoadBalancerIngress{IP: "10.42.200.1"})
	for name, says := range map[string]string{"ext-ssh": "external IP " + hostAddr, "lb-in-pods": "LoadBalancer IP 10.42.200.1"} {
		s.eventually(t, "a ServiceIPRefused Event on "+name+" saying "+says, func() bool {
			evs, err := s.kubelet.Kube.CoreV1().Events("default").List(s.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=ServiceIPRefused"})
			return err == nil && len(evs.Items) > 0 && evs.Items[0].Type == corev1.EventTypeWarning && strings.Contains(evs.Items[0].Message, says)
		})
	}
	for i := range 5 {
		a, err := podsim.Send(s.ctx, podsim.SendRequest{Netns: s.site, Protocol: corev1.ProtocolTCP, Addr: netip.MustParseAddrPort(hostAddr + ":22"), Timeout: time.Second})
		if a.Server != "host-sshd" {
			t.Fatalf("request %d to the host's own listener %s:22: %+v, %v, want host-sshd", i, hostAddr, a, err)
		}
	}
	if got := s.reaches(t, s.site, lbCluster+":80"); got != s.join {
		t.Errorf("another Service after the refusals: web-1 saw %s", got)
	}
}
