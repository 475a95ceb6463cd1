package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// The dual-stack cluster of these tests, in k3s's form.
const (
	dualClusterCIDR = "10.42.0.0/16,2001:cafe:42::/56"
	v6ClusterCIDR   = "2001:cafe:42::/56"
	joinV6          = "fd00:100:64::/112" // Kube-OVN's, taken by default when the cluster has IPv6
	outsideV6Host   = "2001:db8:100::1"
	outsideV6       = "2001:db8:100::2"
)

// TestDualStackPods: in a dual-stack cluster (cluster CIDR and join network of both
// families) a pod gets both addresses; over IPv6 it reaches another pod, its host and an
// "outside" namespace reachable only over IPv6 with no route back to the pods (the outside
// sees the host's address: masquerade), and the host reaches it, each with ping and TCP.
func TestDualStackPods(t *testing.T) {
	env, ctx := startNodeFlags(t, "--cluster-cidr="+dualClusterCIDR)
	a, b := runPod(ctx, t, env, "pod-a"), runPod(ctx, t, env, "pod-b")
	a6, b6 := podIP6(t, a), podIP6(t, b)
	if !a.IP().Is4() {
		t.Fatalf("pod-a: first address %s, want IPv4 (and IPv6 %s)", a.IP(), a6)
	}
	t.Logf("pod-a %s %s, pod-b %s %s", a.IP(), a6, b.IP(), b6)

	join := nodeJoin(ctx, t, env)
	join6 := hostJoin6(ctx, t, env, join.IPs)
	t.Logf("node %s: join addresses %v", node, join.IPs)

	if out, err := podsim.Ping(ctx, a, b6); err != nil {
		t.Fatalf("pod-a -> pod-b over IPv6: %v\n%s", err, out)
	}
	if err := podsim.TCPBetween(ctx, a.Netns, b.Netns, b6); err != nil {
		t.Fatalf("tcp pod-a -> pod-b over IPv6: %v", err)
	}
	checkHostAndOutside6(ctx, t, env, a, join6)
	checkDualStackSubnets(ctx, t, env)
}

// checkDualStackSubnets: a dual-stack Subnet in Kube-OVN's form is applied; a gateway list of
// the wrong order or with a second IPv4 gateway is refused naming the field, and the refused
// change of an applied Subnet keeps it Ready with what it had.
func checkDualStackSubnets(ctx context.Context, t *testing.T, env *env) {
	t.Helper()
	subnets := subnetClient(t, env)
	applyYAML(ctx, t, subnets, dualSubnet("dual1", "10.68.0.1,2001:cafe:68::1"))
	waitCondition(ctx, t, subnets, "dual1", kubeovn.ConditionReady, "True", "")
	applyYAML(ctx, t, subnets, dualSubnet("twov4", "10.69.0.1,10.69.0.2"))
	waitCondition(ctx, t, subnets, "twov4", kubeovn.ConditionValidated, "False", `gateway "10.69.0.1,10.69.0.2": entry 2, 10.69.0.2, is IPv4`)
	cur, err := subnets.Get(ctx, "dual1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(cur.Object, "2001:cafe:68::1,10.68.0.1", "spec", "gateway")
	if _, err := subnets.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update dual1's gateway: %v", err)
	}
	waitCondition(ctx, t, subnets, "dual1", kubeovn.ConditionValidated, "False", `gateway "2001:cafe:68::1,10.68.0.1": entry 1, 2001:cafe:68::1, is IPv6`)
	waitCondition(ctx, t, subnets, "dual1", kubeovn.ConditionReady, "True", "")
	if !env.lspExists(ctx, t, "dual1-ovn-cluster") || env.lspExists(ctx, t, "twov4-ovn-cluster") {
		t.Fatal("dual1 lost its switch after a refused change, or the refused twov4 got one")
	}
}

// dualSubnet is a dual-stack Subnet as Kube-OVN's docs write one (the second octet of
// "10.68.0.1" picks the CIDRs).
func dualSubnet(name, gateway string) string {
	n := strings.Split(gateway, ".")[1]
	if strings.HasPrefix(gateway, "2001") {
		n = "68"
	}
	return "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: " + name + "\nspec:\n  protocol: Dual\n" +
		"  cidrBlock: 10." + n + ".0.0/16,2001:cafe:" + n + "::/64\n  gateway: " + gateway + "\n"
}

func subnetClient(t *testing.T, env *env) dynamic.NamespaceableResourceInterface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(env.rig.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return dyn.Resource(kubeovn.SubnetResource)
}

// TestIPv6OnlyPods: an IPv6-only cluster (the join network IPv6 too) takes pods out through
// their host the same way: the pod has only an IPv6 address and reaches its host and the
// outside, masqueraded, with ping and TCP.
func TestIPv6OnlyPods(t *testing.T) {
	env, ctx := startNodeFlags(t, "--cluster-cidr="+v6ClusterCIDR)
	a := runPod(ctx, t, env, "pod-a")
	if len(a.Result.IPs) != 1 || !a.IP().Is6() {
		t.Fatalf("pod-a addresses %v, want one IPv6 address", a.Result.IPs)
	}
	join := nodeJoin(ctx, t, env)
	if len(join.IPs) != 1 || !join.IPs[0].Is6() {
		t.Fatalf("node join addresses %v, want one from %s", join.IPs, joinV6)
	}
	checkHostAndOutside6(ctx, t, env, a, hostJoin6(ctx, t, env, join.IPs))

	// A Subnet of a family the cluster has not is refused: its pods could not leave the host.
	subnets := subnetClient(t, env)
	applyYAML(ctx, t, subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: v4\nspec:\n  cidrBlock: 10.66.0.0/16\n")
	waitCondition(ctx, t, subnets, "v4", kubeovn.ConditionValidated, "False", "cidrBlock 10.66.0.0/16 is IPv4 but the cluster")
}

// checkHostAndOutside6: the host reaches the pod over IPv6 and the pod its host (ovn0's join
// address and the host's address on the outside link), and the pod reaches the outside, which
// sees the host's address, ping and TCP each.
func checkHostAndOutside6(ctx context.Context, t *testing.T, env *env, a *podsim.Sandbox, join6 netip.Addr) {
	t.Helper()
	a6 := podIP6(t, a)
	eventually(ctx, t, "host reaches pod-a over IPv6", func() bool {
		_, err := env.rig.Run(ctx, "ping", "-6", "-c", "1", "-W", "1", a6.String())
		return err == nil
	})
	if err := podsim.TCPBetween(ctx, env.rig.NetnsPath, a.Netns, a6); err != nil {
		t.Fatalf("tcp host -> pod-a over IPv6: %v", err)
	}
	outsideNetns := addOutside6(ctx, t, env)
	for _, dst := range []string{join6.String(), outsideV6Host} {
		if out, err := podsim.Ping(ctx, a, netip.MustParseAddr(dst)); err != nil {
			t.Fatalf("pod-a cannot reach its host at %s: %v\n%s", dst, err, out)
		}
	}
	if out, err := podsim.Ping(ctx, a, netip.MustParseAddr(outsideV6)); err != nil {
		t.Fatalf("pod-a cannot reach the outside %s through the host: %v\n%s\n%s", outsideV6, err, out, nftRules(ctx, env))
	}
	srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: outsideNetns, Name: "outside"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ans, err := podsim.Send(ctx, podsim.SendRequest{Netns: a.Netns, Protocol: corev1.ProtocolTCP,
		Addr: netip.AddrPortFrom(netip.MustParseAddr(outsideV6), srv.Port)})
	if err != nil {
		t.Fatalf("tcp pod-a -> outside [%s]:%d: %v\n%s", outsideV6, srv.Port, err, nftRules(ctx, env))
	}
	if ans.Client.Addr().String() != outsideV6Host {
		t.Fatalf("the outside saw pod-a's connection from %s, want the host's %s (masquerade)", ans.Client, outsideV6Host)
	}
	if err := podsim.TCPBetween(ctx, a.Netns, outsideNetns, netip.MustParseAddr(outsideV6)); err != nil {
		t.Fatalf("tcp pod-a -> outside, 140 KB echoed: %v", err)
	}
}

// podIP6 is the sandbox's IPv6 address as its CNI result reported it.
func podIP6(t *testing.T, sb *podsim.Sandbox) netip.Addr {
	t.Helper()
	for _, ip := range sb.Result.IPs {
		if a, ok := netip.AddrFromSlice(ip.Address.IP); ok && a.Unmap().Is6() {
			return a
		}
	}
	t.Fatalf("pod %s has no IPv6 address: %v", sb.Pod.Name, sb.Result.IPs)
	return netip.Addr{}
}

// hostJoin6 waits for ovn0 to hold the node's IPv6 join address (from its annotation) and
// returns it.
func hostJoin6(ctx context.Context, t *testing.T, env *env, ips []netip.Addr) netip.Addr {
	t.Helper()
	var join6 netip.Addr
	for _, ip := range ips {
		if ip.Is6() {
			join6 = ip
		}
	}
	if !join6.IsValid() {
		t.Fatalf("node join addresses %v: no IPv6 one", ips)
	}
	eventually(ctx, t, "ovn0 with the IPv6 join address", func() bool {
		out, err := env.rig.Run(ctx, "ip", "-o", "-6", "addr", "show", "dev", "ovn0")
		return err == nil && strings.Contains(string(out), " "+join6.String()+"/") && !strings.Contains(string(out), "tentative")
	})
	return join6
}

// addOutside6 connects the host to an "outside" namespace over a veth carrying only IPv6
// (2001:db8:100::/64, documentation range) whose only route is that prefix: no route back to
// the pods. It returns the outside's namespace path.
func addOutside6(ctx context.Context, t *testing.T, env *env) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "eovn-out6-" + hex.EncodeToString(b)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", name).Run() })
	run("link", "add", "out6", "netns", env.rig.Netns, "type", "veth", "peer", "name", "eth0", "netns", name)
	run("-n", env.rig.Netns, "addr", "add", outsideV6Host+"/64", "dev", "out6", "nodad")
	run("-n", env.rig.Netns, "link", "set", "out6", "up")
	run("-n", name, "addr", "add", outsideV6+"/64", "dev", "eth0", "nodad")
	run("-n", name, "link", "set", "eth0", "up")
	run("-n", name, "link", "set", "lo", "up")
	return "/var/run/netns/" + name
}

// TestDualStackMultiHost: three hosts of a dual-stack cluster; Geneve over the IPv4 underlay
// carries IPv6 pod traffic between them: a pod reaches a pod on another host and that
// host's IPv6 join address, ping and TCP, and an IPv6 ClusterIP whose endpoint is that pod;
// a pod on the third host reaches both over IPv6 (ping and TCP).
func TestDualStackMultiHost(t *testing.T) {
	cl, ctx := startClusterWith(t, clusterSpec{hosts: 3, extra: []string{"--cluster-cidr=" + dualClusterCIDR, "--service-cidr=10.43.0.0/16,2001:cafe:43::/112"},
		serviceCIDRs: []netip.Prefix{netip.MustParsePrefix("10.43.0.0/16"), netip.MustParsePrefix("2001:cafe:43::/112")}})
	a, b := runPod(ctx, t, cl.hosts[0], "pod-a"), runPod(ctx, t, cl.hosts[1], "pod-b")
	b6 := podIP6(t, b)
	retryPing(ctx, t, a, b6, "pod-a ("+cl.names[0]+") -> pod-b ("+cl.names[1]+") over IPv6")
	if err := podsim.TCPBetween(ctx, a.Netns, b.Netns, b6); err != nil {
		t.Fatalf("tcp pod-a -> pod-b across hosts over IPv6: %v", err)
	}
	join := nodeJoinOf(ctx, t, cl.hosts[1], cl.names[1])
	join6 := hostJoin6(ctx, t, cl.hosts[1], join.IPs)
	retryPing(ctx, t, a, join6, "pod-a ("+cl.names[0]+") -> host "+cl.names[1]+"'s IPv6 join address")
	if err := podsim.TCPBetween(ctx, a.Netns, cl.hosts[1].rig.NetnsPath, join6); err != nil {
		t.Fatalf("tcp pod-a -> host %s's IPv6 join address: %v", cl.names[1], err)
	}
	checkClusterIP6Across(ctx, t, cl.hosts[0], a, b, cl.names[1])
	c := runPod(ctx, t, cl.hosts[2], "pod-c")
	for _, to := range []*podsim.Sandbox{a, b} {
		what := "pod-c (" + cl.names[2] + ") -> " + to.Pod.Name + " over IPv6"
		retryPing(ctx, t, c, podIP6(t, to), what)
		if err := podsim.TCPBetween(ctx, c.Netns, to.Netns, podIP6(t, to)); err != nil {
			t.Fatalf("tcp %s: %v", what, err)
		}
	}
}

// checkClusterIP6Across: an IPv6 single-stack Service whose one endpoint is pod b on another
// host; pod a reaches it at its ClusterIP (OVN's load balancer on a's switch, then Geneve) and b
// sees a's own IPv6 address.
func checkClusterIP6Across(ctx context.Context, t *testing.T, env *env, a, b *podsim.Sandbox, bNode string) {
	t.Helper()
	svc := createService(ctx, t, env, "cross6", func(svc *corev1.Service) {
		svc.Spec.Selector = nil
		svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = []corev1.IPFamily{corev1.IPv6Protocol}, new(corev1.IPFamilyPolicySingleStack)
	})
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cross6-test",
		Labels: map[string]string{discoveryv1.LabelServiceName: "cross6"}}, AddressType: discoveryv1.AddressTypeIPv6,
		Ports:     []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8080)), Protocol: new(corev1.ProtocolTCP)}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{podIP6(t, b).String()}, NodeName: new(bNode)}}}
	if _, err := env.kubelet.Kube.DiscoveryV1().EndpointSlices("default").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: b.Netns, Port: 8080, Name: "pod-b"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	vip := netip.AddrPortFrom(netip.MustParseAddr(svc.Spec.ClusterIP), 80)
	var ans podsim.Answer
	eventually(ctx, t, "pod-a reaches "+vip.String()+" (endpoint pod-b on "+bNode+")", func() bool {
		ans, _ = podsim.Send(ctx, podsim.SendRequest{Netns: a.Netns, Protocol: corev1.ProtocolTCP, Addr: vip, Timeout: time.Second})
		return ans.Server == "pod-b"
	})
	if ans.Client.Addr() != podIP6(t, a) {
		t.Fatalf("IPv6 ClusterIP across hosts: pod-b saw %s, want pod-a's %s", ans.Client, podIP6(t, a))
	}
}

// nodeJoinOf is nodeJoin for the host named name.
func nodeJoinOf(ctx context.Context, t *testing.T, env *env, name string) annotation.Network {
	t.Helper()
	var n annotation.Network
	eventually(ctx, t, "join annotations on node "+name, func() bool {
		obj, err := env.kubelet.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		n, err = annotation.Decode(obj.Annotations)
		return err == nil && n.Switch == "join" && len(n.IPs) == 2
	})
	return n
}

// TestHostPortIPv6: in a dual-stack cluster a pod's hostPort (TCP and UDP) answers on the
// host's IPv6 address ("ip6 edgeovn-hostport"): from an IPv6-only outside network with the
// client's address kept, from the host itself and from another pod over IPv6.
func TestHostPortIPv6(t *testing.T) {
	env, ctx := startNodeFlags(t, "--cluster-cidr="+dualClusterCIDR)
	pod, err := env.kubelet.CreatePod(ctx, "default", "web", nil, func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{
			{ContainerPort: 8080, HostPort: 18080, Protocol: corev1.ProtocolTCP},
			{ContainerPort: 8080, HostPort: 18080, Protocol: corev1.ProtocolUDP}}
	})
	if err != nil {
		t.Fatal(err)
	}
	hostJoin6(ctx, t, env, nodeJoin(ctx, t, env).IPs)
	sb := runSandbox(ctx, t, env, pod)
	client := runPod(ctx, t, env, "client")
	outside := addOutside6(ctx, t, env)
	srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: sb.Netns, Port: 8080, Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	host := netip.AddrPortFrom(netip.MustParseAddr(outsideV6Host), 18080)
	reach := hostPortProbe{ctx: ctx, t: t, env: env}
	reach.answers("IPv6 outside, tcp", outside, corev1.ProtocolTCP, host, netip.MustParseAddr(outsideV6))
	reach.answers("IPv6 outside, udp", outside, corev1.ProtocolUDP, host, netip.MustParseAddr(outsideV6))
	reach.answers("the host, its IPv6 address", env.rig.NetnsPath, corev1.ProtocolTCP, host, netip.Addr{})
	reach.answers("another pod over IPv6, tcp", client.Netns, corev1.ProtocolTCP, host, netip.Addr{})
}
