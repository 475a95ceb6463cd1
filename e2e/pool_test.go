package e2e

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestIPPool: four pods carry one ovn.kubernetes.io/ip_pool of three addresses (as a
// Deployment's template gives it to each of its pods): three get an address of the pool
// each, wired by CNI; the fourth gets an IPPoolExhausted Event naming the pool and no
// address, and gets the address a deleted pod gives back.
func TestIPPool(t *testing.T) {
	env, ctx := startNode(t)
	k := env.kubelet
	pool := map[string]string{annotation.IPPool: "10.42.9.1,10.42.9.2,10.42.9.3"}
	sandboxes := map[string]*podsim.Sandbox{}
	var got []string
	for _, name := range []string{"pool-a", "pool-b", "pool-c"} {
		pod, err := k.CreatePod(ctx, "default", name, pool)
		if err != nil {
			t.Fatal(err)
		}
		sb := runSandbox(ctx, t, env, pod)
		sandboxes[name] = sb
		got = append(got, sb.IP().String())
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"10.42.9.1", "10.42.9.2", "10.42.9.3"}) {
		t.Fatalf("pool pods got %v, want one address of the pool each", got)
	}
	t.Logf("pool pods got %v", got)

	fourth, err := k.CreatePod(ctx, "default", "pool-d", pool)
	if err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(ctx, t, env, fourth, "IPPoolExhausted")
	if !strings.Contains(ev.Message, "10.42.9.1,10.42.9.2,10.42.9.3") || !strings.Contains(ev.Message, "exhausted") {
		t.Fatalf("exhaustion event does not name the pool: %q", ev.Message)
	}
	t.Logf("fourth pod's event: %s: %s", ev.Reason, ev.Message)
	if p, err := k.Kube.CoreV1().Pods("default").Get(ctx, "pool-d", metav1.GetOptions{}); err != nil || p.Annotations[annotation.Allocated] == "true" {
		t.Fatalf("fourth pod allocated from an exhausted pool: %v %v", err, p.Annotations)
	}

	freed := sandboxes["pool-b"]
	if err := k.StopSandbox(ctx, freed, true); err != nil {
		t.Fatal(err)
	}
	if err := k.DeletePod(ctx, freed.Pod); err != nil {
		t.Fatal(err)
	}
	sb := runSandbox(ctx, t, env, fourth)
	if sb.IP() != freed.IP() {
		t.Fatalf("fourth pod got %s after %s was freed", sb.IP(), freed.IP())
	}
	t.Logf("fourth pod got %s once pool-b was deleted", sb.IP())
}

// TestPinsRefused: every pin is checked against the pod's own subnet (a Subnet with excluded
// addresses, bound to its namespace): its gateway, an excluded address, another subnet's
// address, a join-network address, an ip_pool with an excluded entry and an ip_pool naming an
// IPPool object are each refused with an AllocationFailed Event that names the address and
// why; none of those pods gets an address or a port.
func TestPinsRefused(t *testing.T) {
	env, ctx := startNode(t)
	dyn, err := dynamic.NewForConfig(env.rig.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	subnets := dyn.Resource(kubeovn.SubnetResource)
	waitCondition(ctx, t, subnets, "ovn-default", kubeovn.ConditionValidated, "True", "") // the CRD is in
	if _, err := env.rig.Kube().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pins"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	applyYAML(ctx, t, subnets, `apiVersion: kubeovn.io/v1
kind: Subnet
metadata:
  name: pins
spec:
  cidrBlock: 10.77.0.0/24
  gateway: 10.77.0.1
  excludeIps:
  - 10.77.0.2..10.77.0.9
  namespaces:
  - pins
`)
	waitCondition(ctx, t, subnets, "pins", kubeovn.ConditionReady, "True", "")
	tests := []struct {
		name, ns, key, value string
		says                 []string
	}{
		{"pin-gateway", "pins", annotation.IPAddress, "10.77.0.1", []string{"10.77.0.1", "gateway of subnet pins"}},
		{"pin-excluded", "pins", annotation.IPAddress, "10.77.0.5", []string{"10.77.0.5", "excluded range of subnet pins"}},
		{"pin-other", "pins", annotation.IPAddress, "10.42.0.50", []string{"10.42.0.50", "belongs to subnet ovn-default", "not to subnet pins"}},
		{"pin-join", "default", annotation.IPAddress, "100.64.0.9", []string{"100.64.0.9", "belongs to subnet join"}},
		{"pool-excluded", "pins", annotation.IPPool, "10.77.0.20,10.77.0.6", []string{annotation.IPPool, "10.77.0.6", "excluded"}},
		{"pool-object", "pins", annotation.IPPool, "my-pool", []string{`"my-pool"`, "IPPool object", "does not implement"}},
	}
	for _, tt := range tests {
		pod, err := env.kubelet.CreatePod(ctx, tt.ns, tt.name, map[string]string{tt.key: tt.value})
		if err != nil {
			t.Fatal(err)
		}
		ev := waitEvent(ctx, t, env, pod, "AllocationFailed")
		for _, s := range tt.says {
			if !strings.Contains(ev.Message, s) {
				t.Errorf("%s (%s %s): event %q does not say %q", tt.name, tt.key, tt.value, ev.Message, s)
			}
		}
		t.Logf("%s: %s", tt.name, ev.Message)
	}
	list := env.ipamList(ctx, t)
	for _, tt := range tests {
		if strings.Contains(list, tt.ns+"/"+tt.name) || env.lspExists(ctx, t, tt.name+"."+tt.ns) {
			t.Errorf("refused pod %s/%s was allocated:\n%s", tt.ns, tt.name, list)
		}
	}
	if strings.Contains(list, "10.77.0.20") {
		t.Errorf("a pool with a refused entry handed out its good one:\n%s", list)
	}
}
