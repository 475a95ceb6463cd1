package e2e

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// hostEndpointPort is where the host itself serves the Service (a hostNetwork pod's port).
const hostEndpointPort = 18083

// TestDualStackNodePortHostEndpoint: without kube-proxy, when a dual-stack NodePort Service's
// only endpoint is the host itself (a hostNetwork pod: upstream's "[Feature:IPv6DualStack]
// ... service endpoints using hostNetwork"), a pod reaches the node port on the host's
// address of each family, and the host reaches each ClusterIP. Both went to the ClusterIP
// through ovn0, and OVN brought the connection back to the host from the host's own join
// address, which the kernel dropped; both now go straight to the host's endpoint.
func TestDualStackNodePortHostEndpoint(t *testing.T) {
	opts := harness.Options{ServiceCIDRs: []netip.Prefix{netip.MustParsePrefix("10.43.0.0/16"), netip.MustParsePrefix("2001:cafe:43::/112")}, NodeIPv6: true}
	env := startEnvFlags(t, false, opts, "--cluster-cidr="+dualClusterCIDR, "--service-cidr="+dualServiceCIDR)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	if err := env.kubelet.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })
	mode := "edgeovn serves host traffic to services and node ports"
	eventually(ctx, t, "edgeovn logs: "+mode, func() bool { return strings.Contains(env.daemonLog(), mode) })

	srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: env.rig.NetnsPath, Port: hostEndpointPort, Name: "host"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	svc := createService(ctx, t, env, "hostnet", func(svc *corev1.Service) {
		svc.Spec.Selector = nil
		svc.Spec.Type, svc.Spec.IPFamilyPolicy = corev1.ServiceTypeNodePort, new(corev1.IPFamilyPolicyRequireDualStack)
		svc.Spec.Ports = svc.Spec.Ports[:1] // http, TCP
	})
	hosts := []netip.Addr{env.rig.NodeIP, env.rig.NodeIP6}
	for _, ip := range hosts {
		family := discoveryv1.AddressTypeIPv4
		if ip.Is6() {
			family = discoveryv1.AddressTypeIPv6
		}
		slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hostnet-" + strings.ToLower(string(family)),
			Labels: map[string]string{discoveryv1.LabelServiceName: "hostnet"}}, AddressType: family,
			Ports:     []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(hostEndpointPort)), Protocol: new(corev1.ProtocolTCP)}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{ip.String()}, NodeName: new(node)}}}
		if _, err := env.kubelet.Kube.DiscoveryV1().EndpointSlices("default").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	client := runPod(ctx, t, env, "client")
	s := &svcEnv{env: env, ctx: ctx}
	for _, ip := range hosts {
		addr := netip.AddrPortFrom(ip, uint16(svc.Spec.Ports[0].NodePort)).String()
		eventually(ctx, t, "the client pod reaches node port "+addr+" served by the host itself", func() bool {
			a, _ := s.send(client.Netns, corev1.ProtocolTCP, addr, time.Second)
			return a.Server == "host"
		})
	}
	for _, cip := range svc.Spec.ClusterIPs {
		addr := netip.AddrPortFrom(netip.MustParseAddr(cip), 80).String()
		eventually(ctx, t, "the host reaches ClusterIP "+addr+" served by the host itself", func() bool {
			a, _ := s.send(env.rig.NetnsPath, corev1.ProtocolTCP, addr, time.Second)
			return a.Server == "host"
		})
	}
}
