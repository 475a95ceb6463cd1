package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// The dual-stack run: a dual-stack cluster CIDR for the default namespace's pods, and an
// IPv4-only Subnet bound to the namespace v4only for the others, in one edgeovn.
const (
	dualCluster = "10.42.0.0/16,2001:cafe:42::/56"
	v4Namespace = "v4only"
	v4Subnet    = "10.77.0.0/16"
)

// runDual measures CNI ADD for dual-stack and IPv4-only pods of one edgeovn, in pairs (one of
// each, which goes first alternating) so that neither gets the warmer daemon or a quieter
// moment, and prints both rows and their ratios.
func runDual(ctx context.Context, rig *harness.Rig, bin string, pods int) error {
	k := daemon.Kubelet(rig, "bench-1")
	if _, err := daemon.Start(ctx, rig, daemon.Spec{Node: k.Node, BinDir: bin, Extra: []string{"--log-level=warn", "--cluster-cidr=" + dualCluster}}); err != nil {
		return err
	}
	if err := k.EnsureNode(ctx); err != nil {
		return err
	}
	if err := k.WaitReady(ctx); err != nil {
		return err
	}
	if err := v4Only(ctx, rig); err != nil {
		return err
	}
	if err := waitOVN0(ctx, rig); err != nil {
		return err
	}
	var dual, v4 []time.Duration
	var sbs []*podsim.Sandbox
	defer func() {
		for _, sb := range sbs {
			_ = podsim.RemoveNetns(sb.Netns)
		}
	}()
	for i := range 2 * pods {
		// Pairs alternate which kind goes first: the second of a pair may find the first's
		// work still going on in ovn-controller.
		isV4 := i%2 != (i/2)%2
		ns := map[bool]string{false: "default", true: v4Namespace}[isV4]
		pod, err := k.CreatePod(ctx, ns, fmt.Sprintf("bench-%d", i), nil)
		if err != nil {
			return err
		}
		sb, err := k.RunSandbox(ctx, pod)
		if sb != nil {
			sbs = append(sbs, sb)
		}
		if err != nil {
			return err
		}
		if want := map[bool]int{false: 2, true: 1}[isV4]; len(sb.Result.IPs) != want {
			return fmt.Errorf("pod %s/%s got %d addresses, want %d", ns, pod.Name, len(sb.Result.IPs), want)
		}
		if isV4 {
			v4 = append(v4, sb.AddTime)
		} else {
			dual = append(dual, sb.AddTime)
		}
	}
	fmt.Printf("\nCNI ADD through libcni, %d dual-stack and %d IPv4-only pods alternating, one edgeovn (cluster %s, Subnet %s %s), %s\n\n",
		pods, pods, dualCluster, v4Namespace, v4Subnet, "userspace datapath")
	fmt.Println("| pods | ADD p50 | ADD p95 |")
	fmt.Println("|---|---|---|")
	p50d, p95d := dualRow("dual stack (IPv4 + IPv6)", dual)
	p50v, p95v := dualRow("IPv4 only", v4)
	fmt.Printf("\ndual / IPv4: p50 %.2fx, p95 %.2fx; median of the %d adjacent pairs' ratios %.2fx (each pair under the same load)\n",
		float64(p50d)/float64(p50v), float64(p95d)/float64(p95v), pods-1, pairedRatio(dual[1:], v4[1:]))
	return nil
}

// pairedRatio is the median of dual[i]/v4[i]: pods created one after the other see the same
// load, which on a shared machine moves more than the difference measured.
func pairedRatio(dual, v4 []time.Duration) float64 {
	r := make([]float64, len(dual))
	for i := range dual {
		r[i] = float64(dual[i]) / float64(v4[i])
	}
	slices.Sort(r)
	return r[len(r)/2]
}

func dualRow(name string, d []time.Duration) (time.Duration, time.Duration) {
	s := slices.Clone(d[1:]) // the first of each kind waits for its switch's flows
	slices.Sort(s)
	p50, p95 := benchkit.Pct(s, 50), benchkit.Pct(s, 95)
	fmt.Printf("| %s | %v | %v |\n", name, benchkit.Ms(p50), benchkit.Ms(p95))
	return p50, p95
}

// v4Only makes the namespace v4only and an IPv4-only Subnet bound to it, and waits for the
// controller's binding on the namespace.
func v4Only(ctx context.Context, rig *harness.Rig) error {
	kube := rig.Kube()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: v4Namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(rig.RESTConfig())
	if err != nil {
		return err
	}
	sn := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Subnet",
		"metadata": map[string]any{"name": v4Namespace},
		"spec":     map[string]any{"cidrBlock": v4Subnet, "namespaces": []any{v4Namespace}}}}
	for {
		_, err := dyn.Resource(kubeovn.SubnetResource).Create(ctx, sn, metav1.CreateOptions{})
		if err == nil {
			break
		}
		select { // the controller installs the CRD as it starts
		case <-ctx.Done():
			return fmt.Errorf("create subnet %s: %w", v4Namespace, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	for {
		ns, err := kube.CoreV1().Namespaces().Get(ctx, v4Namespace, metav1.GetOptions{})
		if err == nil && ns.Annotations[annotation.LogicalSwitch] == v4Namespace {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for namespace %s bound to its subnet: %w", v4Namespace, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
