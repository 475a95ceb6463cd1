package harness

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	types100 "github.com/containernetworking/cni/pkg/types/100"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/edgeovn/edgeovn/e2e/podsim"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestServiceComponents: the API server answers on the node's address as well as on
// loopback; kube-controller-manager turns a Service and a pod the simulated kubelet reports
// running into an EndpointSlice with the pod's address, and follows the pod's readiness;
// kube-proxy, in iptables mode (k3s's) and in nftables mode, programs the Service with that
// endpoint. No pod network is needed: the endpoint is the address the kubelet reported.
func TestServiceComponents(t *testing.T) {
	if err := Preflight(ControllerManager, KubeProxy); err != nil {
		skip.Now(t, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r := startRig(t, ctx, Options{})
	c, err := r.DialContext(ctx, "tcp", netip.AddrPortFrom(r.NodeIP, apiServerPort).String())
	if err != nil {
		t.Fatalf("API server not reachable at the node's address: %v", err)
	}
	c.Close()

	if _, err := r.StartControllerManager(ctx, ControllerManagerRequest{}); err != nil {
		t.Fatal(err)
	}
	k := &podsim.Kubelet{Kube: r.Kube(), Node: "edge-1", NodeIP: r.NodeIP}
	if err := k.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	sb := runningPod(t, ctx, k, "web-1", netip.MustParseAddr("10.42.0.5"))
	createService(t, ctx, r, "web")
	waitEndpoint(t, ctx, r, "web", sb.IP(), true)
	if err := k.MarkNotReady(ctx, sb); err != nil {
		t.Fatal(err)
	}
	waitEndpoint(t, ctx, r, "web", sb.IP(), false)
	if err := k.MarkRunning(ctx, sb); err != nil {
		t.Fatal(err)
	}
	waitEndpoint(t, ctx, r, "web", sb.IP(), true)

	for _, mode := range []KubeProxyMode{KubeProxyIPTables, KubeProxyNFTables} {
		t.Run(string(mode), func(t *testing.T) {
			p, err := r.StartKubeProxy(ctx, KubeProxyRequest{Node: k.Node, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			waitFor(t, ctx, "kube-proxy rules for default/web to "+sb.IP().String(), func() error {
				rules, err := r.ProxyRules(ctx, mode)
				if err != nil {
					return err
				}
				if !strings.Contains(rules, "default/web") || !strings.Contains(rules, sb.IP().String()) {
					return fmt.Errorf("not in the rules:\n%s", rules)
				}
				return nil
			})
		})
	}
}

// runningPod creates a pod labelled app=<name's prefix> and reports it running with addr, as
// if its sandbox had got that address from the network plugin.
func runningPod(t *testing.T, ctx context.Context, k *podsim.Kubelet, name string, addr netip.Addr) *podsim.Sandbox {
	t.Helper()
	app, _, _ := strings.Cut(name, "-")
	pod, err := k.CreatePod(ctx, "default", name, nil, func(p *corev1.Pod) { p.Labels = map[string]string{"app": app} })
	if err != nil {
		t.Fatal(err)
	}
	ipnet := net.IPNet{IP: addr.AsSlice(), Mask: net.CIDRMask(16, 32)}
	sb := &podsim.Sandbox{Pod: pod, Result: &types100.Result{IPs: []*types100.IPConfig{{Address: ipnet}}}}
	if err := k.MarkRunning(ctx, sb); err != nil {
		t.Fatal(err)
	}
	return sb
}

// createService creates a ClusterIP Service selecting app=<name> on TCP 80 and UDP 53.
func createService(t *testing.T, ctx context.Context, r *Rig, name string) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{
			{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)},
			{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(5353)},
		}},
	}
	if _, err := r.Kube().CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitEndpoint waits until the Service's EndpointSlices list addr with the given readiness.
func waitEndpoint(t *testing.T, ctx context.Context, r *Rig, svc string, addr netip.Addr, ready bool) {
	t.Helper()
	what := fmt.Sprintf("EndpointSlice of %s with %s ready=%t", svc, addr, ready)
	waitFor(t, ctx, what, func() error {
		list, err := r.Kube().DiscoveryV1().EndpointSlices("default").List(ctx,
			metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
		if err != nil {
			return err
		}
		for _, s := range list.Items {
			for _, ep := range s.Endpoints {
				if len(ep.Addresses) == 1 && ep.Addresses[0] == addr.String() && ep.Conditions.Ready != nil && *ep.Conditions.Ready == ready {
					return nil
				}
			}
		}
		return fmt.Errorf("slices: %v", list.Items)
	})
}
