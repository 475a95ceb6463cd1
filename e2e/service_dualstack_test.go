package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
	"github.com/edgeovn/edgeovn/e2e/skip"
)

// dualServiceCIDR is k3s's dual-stack --service-cidr.
const dualServiceCIDR = "10.43.0.0/16,2001:cafe:43::/112"

// TestDualStackServices runs the dual-stack Service matrix as with `k3s --disable-kube-proxy`:
// the API server has both service ranges and assigns the ClusterIPs by ipFamilyPolicy; edgeovn
// balances both families in OVN and serves IPv6 node ports itself.
func TestDualStackServices(t *testing.T) { runDualStackServices(t, svcMatrix{}) }

// TestDualStackServicesWithKubeProxy runs the same matrix with kube-proxy (iptables mode and
// its ip6tables half, --cluster-cidr of both families) serving the host's traffic and node
// ports, and OVN the pods' traffic to ClusterIPs.
func TestDualStackServicesWithKubeProxy(t *testing.T) {
	runDualStackServices(t, svcMatrix{kubeProxy: true})
}

// TestIPv6OnlyServices runs the matrix in an IPv6-only cluster (pods, join network and
// service range IPv6 only) without kube-proxy: every Service is IPv6 single stack, whatever
// its ipFamilyPolicy, and RequireDualStack is refused by the API server.
func TestIPv6OnlyServices(t *testing.T) { runDualStackServices(t, svcMatrix{v6only: true}) }

// TestIPv6OnlyServicesWithKubeProxy runs the IPv6-only matrix with kube-proxy (its ip6tables
// half, --cluster-cidr the IPv6 pod range) serving the host's traffic and node ports.
func TestIPv6OnlyServicesWithKubeProxy(t *testing.T) {
	runDualStackServices(t, svcMatrix{kubeProxy: true, v6only: true})
}

// svcMatrix is one run of the matrix: kube-proxy on the host or not, a dual-stack or an
// IPv6-only cluster.
type svcMatrix struct{ kubeProxy, v6only bool }

// runDualStackServices: Services of each ipFamilyPolicy (SingleStack IPv6, PreferDualStack,
// RequireDualStack) get the ClusterIPs the API server assigns from a dual-stack range; a pod
// reaches every ClusterIP of each over TCP and UDP, seen with its own address of that
// family; the host reaches the IPv6 ones; an outside network reachable only over IPv6
// reaches the NodePorts on the host's IPv6 address (Cluster: from the host's IPv6 join
// address without kube-proxy; Local: with the client's own address).
func runDualStackServices(t *testing.T, m svcMatrix) {
	kubeProxy := m.kubeProxy
	needs := []harness.Component{harness.ControllerManager, harness.CoreDNS}
	if kubeProxy {
		needs = append(needs, harness.KubeProxy)
	}
	if err := harness.Preflight(needs...); err != nil {
		skip.Now(t, "dual-stack Service suite (run `make deps` as root): %v", err)
	}
	opts := harness.Options{ServiceCIDRs: []netip.Prefix{netip.MustParsePrefix("10.43.0.0/16"), netip.MustParsePrefix("2001:cafe:43::/112")}}
	flags := []string{"--cluster-cidr=" + dualClusterCIDR, "--service-cidr=" + dualServiceCIDR}
	if m.v6only {
		opts.ServiceCIDRs = opts.ServiceCIDRs[1:]
		flags = []string{"--cluster-cidr=" + v6ClusterCIDR, "--service-cidr=" + opts.ServiceCIDRs[0].String()}
	}
	env := startEnvFlags(t, false, opts, flags...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	if err := env.kubelet.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	join6 := hostJoin6(ctx, t, env, nodeJoin(ctx, t, env).IPs)
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })
	if _, err := env.rig.StartControllerManager(ctx, harness.ControllerManagerRequest{}); err != nil {
		t.Fatal(err)
	}
	mode := "edgeovn serves host traffic to services and node ports"
	if kubeProxy {
		podCIDR := dualClusterCIDR
		if m.v6only {
			podCIDR = v6ClusterCIDR
		}
		if _, err := env.rig.StartKubeProxy(ctx, harness.KubeProxyRequest{Node: node, Extra: []string{"--cluster-cidr=" + podCIDR}}); err != nil {
			t.Fatal(err)
		}
		mode = "kube-proxy serves host traffic to services and node ports"
	}
	eventually(ctx, t, "edgeovn logs: "+mode, func() bool { return strings.Contains(env.daemonLog(), mode) })

	s := &svcEnv{env: env, ctx: ctx}
	s.web1 = s.backend(t, "web-1", map[string]string{"app": "web"})
	s.web2 = s.backend(t, "web-2", map[string]string{"app": "web"})
	s.client = runPod(ctx, t, env, "client")
	web := func(svc *corev1.Service) { svc.Spec.Selector = map[string]string{"app": "web"} }
	v6 := createService(ctx, t, env, "v6", func(svc *corev1.Service) {
		web(svc)
		svc.Spec.Type, svc.Spec.ExternalTrafficPolicy = corev1.ServiceTypeNodePort, corev1.ServiceExternalTrafficPolicyLocal
		svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = []corev1.IPFamily{corev1.IPv6Protocol}, new(corev1.IPFamilyPolicySingleStack)
		svc.Spec.ExternalIPs = []string{externalV6}
	})
	prefer := createService(ctx, t, env, "prefer", func(svc *corev1.Service) {
		web(svc)
		svc.Spec.Type, svc.Spec.IPFamilyPolicy = corev1.ServiceTypeNodePort, new(corev1.IPFamilyPolicyPreferDualStack)
	})
	want := map[*corev1.Service]string{v6: "[IPv6]", prefer: "[IPv4 IPv6]"}
	svcs := []*corev1.Service{v6, prefer}
	if m.v6only {
		want[prefer] = "[IPv6]"
		s.checkRequireDualStackRefused(t)
	} else {
		dual := createService(ctx, t, env, "dual", func(svc *corev1.Service) {
			web(svc)
			svc.Spec.IPFamilyPolicy = new(corev1.IPFamilyPolicyRequireDualStack)
		})
		want[dual] = "[IPv4 IPv6]"
		svcs = append(svcs, dual)
	}
	names := map[string][]string{}
	for _, svc := range svcs {
		if got := fmt.Sprint(svc.Spec.IPFamilies); got != want[svc] || len(svc.Spec.ClusterIPs) != len(svc.Spec.IPFamilies) {
			t.Fatalf("service %s: families %s, ClusterIPs %v; want %s, one ClusterIP each", svc.Name, got, svc.Spec.ClusterIPs, want[svc])
		}
		for _, ip := range svc.Spec.ClusterIPs {
			s.checkClusterIP6(t, svc.Name, netip.MustParseAddr(ip))
		}
		names[svc.Name] = svc.Spec.ClusterIPs
	}
	s.checkDNS6(t, names)
	vip6 := netip.AddrPortFrom(netip.MustParseAddr(prefer.Spec.ClusterIPs[len(prefer.Spec.ClusterIPs)-1]), 80).String()
	eventually(ctx, t, "the host reaches "+vip6, func() bool {
		a, _ := s.send(env.rig.NetnsPath, corev1.ProtocolTCP, vip6, time.Second)
		return strings.HasPrefix(a.Server, "web-")
	})

	outside := addOutside6(ctx, t, env)
	wantCluster := join6 // Cluster policy: the host's join address, as for IPv4
	if kubeProxy {
		wantCluster = netip.Addr{} // kube-proxy masquerades to an address of its choosing
	}
	s.checkNodePort6(t, outside, prefer, wantCluster)
	s.checkNodePort6(t, outside, v6, netip.MustParseAddr(outsideV6))
	s.checkExternalIP6(t, outside, v6)
}

// externalV6 is the IPv6-only Service's external IP, routed by the outside network to the host.
const externalV6 = "2001:db8:ee::7"

// checkExternalIP6 asks the Service's IPv6 external IP from the outside network (routed there
// through the host), TCP and UDP; Local policy: the backend sees the outside's own address.
func (s *svcEnv) checkExternalIP6(t *testing.T, outsideNetns string, svc *corev1.Service) {
	t.Helper()
	s.env.mustRun(s.ctx, t, "ip", "-n", filepath.Base(outsideNetns), "-6", "route", "replace", externalV6+"/128", "via", outsideV6Host)
	for _, p := range svc.Spec.Ports {
		addr := netip.AddrPortFrom(netip.MustParseAddr(externalV6), uint16(p.Port)).String()
		var a podsim.Answer
		eventually(s.ctx, t, fmt.Sprintf("external IP %s of %s answers over %s from the IPv6 outside", addr, svc.Name, p.Protocol), func() bool {
			a, _ = s.send(outsideNetns, p.Protocol, addr, time.Second)
			return strings.HasPrefix(a.Server, "web-")
		})
		if a.Client.Addr() != netip.MustParseAddr(outsideV6) {
			t.Errorf("external IP %s/%s of %s: the backend saw %s, want the outside's %s", addr, p.Protocol, svc.Name, a.Client, outsideV6)
		}
	}
}

// checkClusterIP6 asks a ClusterIP from the client pod, TCP and UDP, until a backend answers;
// the backend must see the client's own address of the ClusterIP's family (no NAT on the way).
func (s *svcEnv) checkClusterIP6(t *testing.T, name string, ip netip.Addr) {
	t.Helper()
	want := s.client.IP()
	if ip.Is6() {
		want = podIP6(t, s.client)
	}
	for _, c := range []struct {
		proto corev1.Protocol
		port  uint16
	}{{corev1.ProtocolTCP, 80}, {corev1.ProtocolUDP, 53}} {
		addr := netip.AddrPortFrom(ip, c.port).String()
		var a podsim.Answer
		eventually(s.ctx, t, fmt.Sprintf("client reaches %s ClusterIP %s over %s", name, addr, c.proto), func() bool {
			a, _ = s.send(s.client.Netns, c.proto, addr, time.Second)
			return strings.HasPrefix(a.Server, "web-")
		})
		if a.Client.Addr() != want {
			t.Errorf("%s ClusterIP %s over %s: the backend saw %s, want the client's %s", name, addr, c.proto, a.Client, want)
		}
	}
}

// checkNodePort6 asks the Service's node port on the host's IPv6 address from the outside
// network, TCP and UDP; the backend must see source (when valid).
func (s *svcEnv) checkNodePort6(t *testing.T, outsideNetns string, svc *corev1.Service, source netip.Addr) {
	t.Helper()
	for _, p := range svc.Spec.Ports {
		addr := netip.AddrPortFrom(netip.MustParseAddr(outsideV6Host), uint16(p.NodePort)).String()
		var a podsim.Answer
		eventually(s.ctx, t, fmt.Sprintf("node port %s of %s answers over %s from the IPv6 outside", addr, svc.Name, p.Protocol), func() bool {
			a, _ = s.send(outsideNetns, p.Protocol, addr, time.Second)
			return strings.HasPrefix(a.Server, "web-")
		})
		if source.IsValid() && a.Client.Addr() != source {
			t.Errorf("node port %s/%s of %s: the backend saw %s, want %s", addr, p.Protocol, svc.Name, a.Client, source)
		}
	}
}

// checkRequireDualStackRefused: in an IPv6-only cluster the API server refuses a
// RequireDualStack Service (there is no IPv4 service range), as it says.
func (s *svcEnv) checkRequireDualStackRefused(t *testing.T) {
	t.Helper()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "dual"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "web"}, IPFamilyPolicy: new(corev1.IPFamilyPolicyRequireDualStack),
		Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
	_, err := s.kubelet.Kube.CoreV1().Services("default").Create(s.ctx, svc, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "RequireDualStack") {
		t.Fatalf("a RequireDualStack Service in an IPv6-only cluster: err %v, want the API server's refusal", err)
	}
}

// checkDNS6: CoreDNS behind a (PreferDualStack) kube-dns Service, asked at its IPv6 ClusterIP,
// answers A and AAAA with each Service's ClusterIPs (an IPv6-only Service: AAAA alone).
func (s *svcEnv) checkDNS6(t *testing.T, want map[string][]string) {
	t.Helper()
	dns := runPodIn(s.ctx, t, s.env, "kube-system", "coredns", func(p *corev1.Pod) { p.Labels = map[string]string{"k8s-app": "kube-dns"} })
	if _, err := s.rig.StartCoreDNS(s.ctx, harness.CoreDNSRequest{Netns: dns.Netns}); err != nil {
		t.Fatal(err)
	}
	if err := s.kubelet.MarkRunning(s.ctx, dns); err != nil {
		t.Fatal(err)
	}
	kubeDNS := createServiceIn(s.ctx, t, s.env, "kube-system", "kube-dns", func(svc *corev1.Service) {
		svc.Spec.Selector = map[string]string{"k8s-app": "kube-dns"}
		svc.Spec.IPFamilyPolicy = new(corev1.IPFamilyPolicyPreferDualStack)
		svc.Spec.Ports = []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
			{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP}}
	})
	server := netip.AddrPortFrom(netip.MustParseAddr(kubeDNS.Spec.ClusterIPs[len(kubeDNS.Spec.ClusterIPs)-1]), 53)
	for name, ips := range want {
		fqdn := name + ".default.svc.cluster.local"
		var got []netip.Addr
		eventually(s.ctx, t, "CoreDNS at "+server.String()+" answers "+fqdn, func() bool {
			var err error
			got, err = podsim.Lookup(s.ctx, s.client.Netns, server, fqdn)
			return err == nil
		})
		var gotS []string
		for _, a := range got {
			gotS = append(gotS, a.String())
		}
		slices.Sort(gotS)
		wantS := slices.Sorted(slices.Values(ips))
		if !slices.Equal(gotS, wantS) {
			t.Errorf("%s at %s = %v, want the ClusterIPs %v (A and AAAA)", fqdn, server, gotS, wantS)
		}
	}
}
