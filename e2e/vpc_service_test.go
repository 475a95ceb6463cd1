package e2e

import (
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestVpcServices checks what docs/vpc.md says a custom VPC's pods get of Services and the
// host: a ClusterIP whose endpoints are pods of the client's own VPC answers (the cluster's
// load balancers are on that VPC's switches too, endpoints from the real EndpointSlice
// controller); a ClusterIP whose endpoints are in the default VPC (as CoreDNS's are) does not;
// the host does not reach a custom VPC's pods (no join, no ovn0 route: Kube-OVN #7130).
func TestVpcServices(t *testing.T) {
	if err := harness.Preflight(harness.ControllerManager); err != nil {
		skip.Now(t, "Services in a custom VPC (run `make deps` as root): %v", err)
	}
	env, ctx := startNode(t)
	if _, err := env.rig.StartControllerManager(ctx, harness.ControllerManagerRequest{}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.rig.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	subnets, vpcs := dyn.Resource(kubeovn.SubnetResource), dyn.Resource(kubeovn.VpcResource)
	waitCondition(ctx, t, subnets, "ovn-default", kubeovn.ConditionValidated, "True", "")
	if _, err := env.rig.Kube().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "t1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	applyYAML(ctx, t, vpcs, "apiVersion: kubeovn.io/v1\nkind: Vpc\nmetadata:\n  name: tenant1\nspec:\n  namespaces: [t1]\n  defaultSubnet: t1-net\n")
	applyYAML(ctx, t, subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: t1-net\nspec:\n  vpc: tenant1\n  cidrBlock: 10.0.1.0/24\n")
	waitCondition(ctx, t, subnets, "t1-net", kubeovn.ConditionReady, "True", "")

	// The namespace has no Subnet of its own: the Vpc's defaultSubnet serves it.
	web := runPodIn(ctx, t, env, "t1", "web", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web"} })
	client := runPodIn(ctx, t, env, "t1", "client")
	dweb := runPodIn(ctx, t, env, "default", "dweb", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "dweb"} })
	for _, sb := range []*podsim.Sandbox{web, dweb} {
		srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: sb.Netns, Port: 8080, Name: sb.Pod.Name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		if err := env.kubelet.MarkRunning(ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	if !netip.MustParsePrefix("10.0.1.0/24").Contains(web.IP()) {
		t.Fatalf("pod in t1 got %s, want an address of tenant1's defaultSubnet t1-net", web.IP())
	}
	inVpc := createServiceIn(ctx, t, env, "t1", "web", func(s *corev1.Service) { webPorts(s, "web") })
	other := createServiceIn(ctx, t, env, "default", "dweb", func(s *corev1.Service) { webPorts(s, "dweb") })

	var ans podsim.Answer
	eventually(ctx, t, "the ClusterIP of a Service of tenant1's pods answers tenant1's client", func() bool {
		ans, err = podsim.Send(ctx, podsim.SendRequest{Netns: client.Netns, Protocol: corev1.ProtocolTCP,
			Addr: netip.AddrPortFrom(netip.MustParseAddr(inVpc.Spec.ClusterIP), 80), Timeout: time.Second})
		return err == nil && ans.Server == "web"
	})
	// The default VPC's Service is in the load balancer too, but its endpoint is not in tenant1.
	if ans, err := podsim.Send(ctx, podsim.SendRequest{Netns: client.Netns, Protocol: corev1.ProtocolTCP,
		Addr: netip.AddrPortFrom(netip.MustParseAddr(other.Spec.ClusterIP), 80), Timeout: 2 * time.Second}); err == nil {
		t.Fatalf("tenant1's client reached the default VPC's Service (answer %+v): docs/vpc.md says it does not", ans)
	}
	// The host does not reach tenant1's pods.
	if out, err := env.rig.Run(ctx, "ping", "-c", "2", "-W", "1", web.IP().String()); err == nil {
		t.Fatalf("the host reached %s in tenant1: docs/vpc.md says it does not\n%s", web.IP(), out)
	}
}

func webPorts(s *corev1.Service, app string) {
	s.Spec.Selector = map[string]string{"app": app}
	s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}
}
