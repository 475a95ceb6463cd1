package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// pairRun compares CNI ADD of two kinds of pods of one edgeovn: the base kind in the default
// namespace, the other in a namespace the run binds to a Subnet of its own.
type pairRun struct {
	extra     []string // edgeovn's flags beyond the log level
	namespace string   // the other kind's namespace
	subnet    string   // the Subnet it is bound to (its logical switch)
	objects   []kubeObject
	ips       [2]int // addresses a pod of each kind (base, other) gets; 0: not checked
	title     string // the table's heading, with %d for each kind's pod count
	rows      [2]string
	ratio     string // the ratio's name: of the kinds ratioOf[0] over ratioOf[1]
	ratioOf   [2]int
}

// kubeObject is an object the run creates, under its resource.
type kubeObject struct {
	res schema.GroupVersionResource
	obj map[string]any
}

// The dual-stack run: a dual-stack cluster CIDR for the default namespace's pods, and an
// IPv4-only Subnet bound to the namespace v4only for the others.
const (
	dualCluster = "10.42.0.0/16,2001:cafe:42::/56"
	v4Namespace = "v4only"
	v4Subnet    = "10.77.0.0/16"
)

var dualPair = pairRun{
	extra: []string{"--cluster-cidr=" + dualCluster}, namespace: v4Namespace, subnet: v4Namespace,
	objects: []kubeObject{{kubeovn.SubnetResource, map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Subnet",
		"metadata": map[string]any{"name": v4Namespace},
		"spec":     map[string]any{"cidrBlock": v4Subnet, "namespaces": []any{v4Namespace}}}}},
	ips: [2]int{2, 1},
	title: fmt.Sprintf("CNI ADD through libcni, %%d dual-stack and %%d IPv4-only pods alternating, one edgeovn (cluster %s, Subnet %s %s), %s",
		dualCluster, v4Namespace, v4Subnet, "userspace datapath"),
	rows:    [2]string{"dual stack (IPv4 + IPv6)", "IPv4 only"},
	ratio:   "dual / IPv4",
	ratioOf: [2]int{0, 1},
}

// The custom VPC run: pods of the default namespace on ovn-default, pods of the namespace
// tenant in a Subnet of the Vpc tenant (the namespace bound by the Vpc's defaultSubnet).
const (
	vpcName   = "tenant"
	vpcSubnet = "10.0.1.0/24"
)

var vpcPair = pairRun{
	namespace: vpcName, subnet: vpcName + "-net",
	objects: []kubeObject{
		{kubeovn.VpcResource, map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Vpc",
			"metadata": map[string]any{"name": vpcName},
			"spec":     map[string]any{"namespaces": []any{vpcName}, "defaultSubnet": vpcName + "-net"}}},
		{kubeovn.SubnetResource, map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Subnet",
			"metadata": map[string]any{"name": vpcName + "-net"},
			"spec":     map[string]any{"cidrBlock": vpcSubnet, "vpc": vpcName}}},
	},
	title: fmt.Sprintf("CNI ADD through libcni, %%d pods of the default VPC and %%d of a custom VPC (Vpc %s, Subnet %s) alternating, one edgeovn, %s",
		vpcName, vpcSubnet, "userspace datapath"),
	rows:    [2]string{"default VPC (ovn-cluster)", "custom VPC"},
	ratio:   "custom / default",
	ratioOf: [2]int{1, 0},
}

// run measures CNI ADD for pods of both kinds, in pairs (one of each, which goes first
// alternating) so that neither gets the warmer daemon or a quieter moment, and prints both
// rows and their ratios.
func (p pairRun) run(ctx context.Context, rig *harness.Rig, bin string, pods int) error {
	k := daemon.Kubelet(rig, "bench-1")
	if _, err := daemon.Start(ctx, rig, daemon.Spec{Node: k.Node, BinDir: bin, Extra: append([]string{"--log-level=warn"}, p.extra...)}); err != nil {
		return err
	}
	if err := k.EnsureNode(ctx); err != nil {
		return err
	}
	if err := k.WaitReady(ctx); err != nil {
		return err
	}
	if err := p.bind(ctx, rig); err != nil {
		return err
	}
	if err := waitOVN0(ctx, rig); err != nil {
		return err
	}
	adds, err := p.cycle(ctx, k, pods)
	if err != nil {
		return err
	}
	fmt.Printf("\n"+p.title+"\n\n", pods, pods)
	fmt.Println("| pods | ADD p50 | ADD p95 |")
	fmt.Println("|---|---|---|")
	var p50, p95 [2]time.Duration
	for kind := range 2 {
		p50[kind], p95[kind] = addRow(p.rows[kind], adds[kind])
	}
	n, d := p.ratioOf[0], p.ratioOf[1]
	fmt.Printf("\n%s: p50 %.2fx, p95 %.2fx; median of the %d adjacent pairs' ratios %.2fx (each pair under the same load)\n",
		p.ratio, float64(p50[n])/float64(p50[d]), float64(p95[n])/float64(p95[d]), pods-1, pairedRatio(adds[n][1:], adds[d][1:]))
	return nil
}

// cycle adds 2*pods pods, the kinds alternating, and returns each kind's ADD times.
func (p pairRun) cycle(ctx context.Context, k *podsim.Kubelet, pods int) ([2][]time.Duration, error) {
	var adds [2][]time.Duration
	var sbs []*podsim.Sandbox
	defer func() {
		for _, sb := range sbs {
			_ = podsim.RemoveNetns(sb.Netns)
		}
	}()
	for i := range 2 * pods {
		// Pairs alternate which kind goes first: the second of a pair may find the first's
		// work still going on in ovn-controller.
		kind := 0
		if i%2 != (i/2)%2 {
			kind = 1
		}
		ns := [2]string{"default", p.namespace}[kind]
		pod, err := k.CreatePod(ctx, ns, fmt.Sprintf("bench-%d", i), nil)
		if err != nil {
			return adds, err
		}
		sb, err := k.RunSandbox(ctx, pod)
		if sb != nil {
			sbs = append(sbs, sb)
		}
		if err != nil {
			return adds, err
		}
		if want := p.ips[kind]; want != 0 && len(sb.Result.IPs) != want {
			return adds, fmt.Errorf("pod %s/%s got %d addresses, want %d", ns, pod.Name, len(sb.Result.IPs), want)
		}
		adds[kind] = append(adds[kind], sb.AddTime)
	}
	return adds, nil
}

// pairedRatio is the median of a[i]/b[i]: pods created one after the other see the same
// load, which on a shared machine moves more than the difference measured.
func pairedRatio(a, b []time.Duration) float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = float64(a[i]) / float64(b[i])
	}
	slices.Sort(r)
	return r[len(r)/2]
}

func addRow(name string, d []time.Duration) (time.Duration, time.Duration) {
	s := slices.Clone(d[1:]) // the first of each kind waits for its switch's flows
	slices.Sort(s)
	p50, p95 := benchkit.Pct(s, 50), benchkit.Pct(s, 95)
	fmt.Printf("| %s | %v | %v |\n", name, benchkit.Ms(p50), benchkit.Ms(p95))
	return p50, p95
}

// bind makes the other kind's namespace and the run's objects, and waits for the
// controller's binding of the namespace to the run's Subnet.
func (p pairRun) bind(ctx context.Context, rig *harness.Rig) error {
	kube := rig.Kube()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(rig.RESTConfig())
	if err != nil {
		return err
	}
	for _, o := range p.objects {
		u := &unstructured.Unstructured{Object: o.obj}
		for {
			_, err := dyn.Resource(o.res).Create(ctx, u, metav1.CreateOptions{})
			if err == nil {
				break
			}
			select { // the controller installs the CRDs as it starts
			case <-ctx.Done():
				return fmt.Errorf("create %s: %w", u.GetName(), err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	for {
		ns, err := kube.CoreV1().Namespaces().Get(ctx, p.namespace, metav1.GetOptions{})
		if err == nil && ns.Annotations[annotation.LogicalSwitch] == p.subnet {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for namespace %s bound to subnet %s: %w", p.namespace, p.subnet, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
