package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// The custom VPC run: pods of the default namespace on ovn-default, pods of the namespace
// tenant in a Subnet of the Vpc tenant (the namespace bound by the Vpc's defaultSubnet).
const (
	vpcName   = "tenant"
	vpcSubnet = "10.0.1.0/24"
)

// runVpc measures CNI ADD for pods of the default VPC and of a custom VPC of one edgeovn, in
// pairs alternating which goes first (as runDual), and prints both rows and their ratios.
func runVpc(ctx context.Context, rig *harness.Rig, bin string, pods int) error {
	k := daemon.Kubelet(rig, "bench-1")
	if _, err := daemon.Start(ctx, rig, daemon.Spec{Node: k.Node, BinDir: bin, Extra: []string{"--log-level=warn"}}); err != nil {
		return err
	}
	if err := k.EnsureNode(ctx); err != nil {
		return err
	}
	if err := k.WaitReady(ctx); err != nil {
		return err
	}
	if err := customVpc(ctx, rig); err != nil {
		return err
	}
	if err := waitOVN0(ctx, rig); err != nil {
		return err
	}
	var def, custom []time.Duration
	var sbs []*podsim.Sandbox
	defer func() {
		for _, sb := range sbs {
			_ = podsim.RemoveNetns(sb.Netns)
		}
	}()
	for i := range 2 * pods {
		inVpc := i%2 != (i/2)%2
		ns := map[bool]string{false: "default", true: vpcName}[inVpc]
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
		if inVpc {
			custom = append(custom, sb.AddTime)
		} else {
			def = append(def, sb.AddTime)
		}
	}
	fmt.Printf("\nCNI ADD through libcni, %d pods of the default VPC and %d of a custom VPC (Vpc %s, Subnet %s) alternating, one edgeovn, %s\n\n",
		pods, pods, vpcName, vpcSubnet, "userspace datapath")
	fmt.Println("| pods | ADD p50 | ADD p95 |")
	fmt.Println("|---|---|---|")
	p50d, p95d := dualRow("default VPC (ovn-cluster)", def)
	p50c, p95c := dualRow("custom VPC", custom)
	fmt.Printf("\ncustom / default: p50 %.2fx, p95 %.2fx; median of the %d adjacent pairs' ratios %.2fx (each pair under the same load)\n",
		float64(p50c)/float64(p50d), float64(p95c)/float64(p95d), pods-1, pairedRatio(custom[1:], def[1:]))
	return nil
}

// customVpc makes the namespace tenant, the Vpc tenant listing it with its Subnet as
// defaultSubnet, and waits for the controller's binding on the namespace.
func customVpc(ctx context.Context, rig *harness.Rig) error {
	kube := rig.Kube()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: vpcName}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(rig.RESTConfig())
	if err != nil {
		return err
	}
	objs := []struct {
		res dynamic.NamespaceableResourceInterface
		obj *unstructured.Unstructured
	}{
		{dyn.Resource(kubeovn.VpcResource), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Vpc",
			"metadata": map[string]any{"name": vpcName},
			"spec":     map[string]any{"namespaces": []any{vpcName}, "defaultSubnet": vpcName + "-net"}}}},
		{dyn.Resource(kubeovn.SubnetResource), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Subnet",
			"metadata": map[string]any{"name": vpcName + "-net"},
			"spec":     map[string]any{"cidrBlock": vpcSubnet, "vpc": vpcName}}}},
	}
	for _, o := range objs {
		for {
			_, err := o.res.Create(ctx, o.obj, metav1.CreateOptions{})
			if err == nil {
				break
			}
			select { // the controller installs the CRDs as it starts
			case <-ctx.Done():
				return fmt.Errorf("create %s: %w", o.obj.GetName(), err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	for {
		ns, err := kube.CoreV1().Namespaces().Get(ctx, vpcName, metav1.GetOptions{})
		if err == nil && ns.Annotations[annotation.LogicalSwitch] == vpcName+"-net" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for namespace %s bound to its vpc's subnet: %w", vpcName, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
