package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

const node = "bench-1"

// tenantRig is one rig with its edgeovn, the node's simulated kubelet and the bench's own
// clients (fast API clients, a northbound cache).
type tenantRig struct {
	rig *harness.Rig
	cl  *benchkit.Clients
	dyn dynamic.Interface
	k   *podsim.Kubelet
	// undo is what stop does besides stopping the rig (the probe server), last first; the
	// rig's teardown removes the sandboxes' namespaces (daemon.Kubelet).
	undo []func()
}

// startRig starts a rig and edgeovn on it, and waits for the node to be ready.
func startRig(ctx context.Context, c config) (_ *tenantRig, err error) {
	rig, err := harness.Start(ctx, harness.Options{Keep: c.keep})
	if err != nil {
		return nil, err
	}
	t := &tenantRig{rig: rig}
	defer func() {
		if err != nil {
			t.stop()
		}
	}()
	if c.keep {
		fmt.Println("rig directory (kept):", rig.Dir)
	}
	if _, err := daemon.Start(ctx, rig, daemon.Spec{Node: node, BinDir: c.bin, Extra: []string{"--log-level=warn"}}); err != nil {
		return t, err
	}
	t.k = daemon.Kubelet(rig, node)
	if err := t.k.EnsureNode(ctx); err != nil {
		return t, err
	}
	if err := t.k.WaitReady(ctx); err != nil {
		return t, err
	}
	if t.cl, err = benchkit.Connect(ctx, rig); err != nil {
		return t, err
	}
	cfg := rig.RESTConfig()
	cfg.QPS, cfg.Burst = 2000, 4000
	if t.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return t, fmt.Errorf("bench dynamic client: %w", err)
	}
	return t, nil
}

func (t *tenantRig) stop() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	if t.cl != nil {
		t.cl.Close()
	}
	t.rig.Stop()
}

// sandbox creates a pod in namespace ns and runs its sandbox (a real network namespace).
func (t *tenantRig) sandbox(ctx context.Context, ns, name string, annotations map[string]string) (*podsim.Sandbox, error) {
	pod, err := t.k.CreatePod(ctx, ns, name, annotations)
	if err != nil {
		return nil, err
	}
	return t.k.RunSandbox(ctx, pod)
}

// create creates a cluster-scoped object of edgeovn's CRDs, retrying while the controller
// installs them as it starts.
func (t *tenantRig) create(ctx context.Context, res schema.GroupVersionResource, obj map[string]any) error {
	u := &unstructured.Unstructured{Object: obj}
	for {
		_, err := t.dyn.Resource(res).Create(ctx, u, metav1.CreateOptions{})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("create %s %s: %w", res.Resource, u.GetName(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// patchSpec replaces the listed fields of an object's spec (a JSON merge patch: a list is
// replaced whole), one API write.
func (t *tenantRig) patchSpec(ctx context.Context, res schema.GroupVersionResource, name string, spec map[string]any) error {
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	if _, err := t.dyn.Resource(res).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("patch %s %s: %w", res.Resource, name, err)
	}
	return nil
}

// namespace creates a namespace and its default ServiceAccount (no controller-manager here).
func (t *tenantRig) namespace(ctx context.Context, name string) error {
	kube := t.cl.Kube
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "default"}}
	if _, err := kube.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account of %s: %w", name, err)
	}
	return nil
}

// podSet is the pods a part creates: pod i in namespaceOf(i) with annotationsOf(i).
type podSet struct {
	n             int
	namespaceOf   func(i int) string
	annotationsOf func(i int) map[string]string
}

// createPods creates the pods on the bench node, 16 at a time (API objects: edgeovn's
// controller gives them addresses and ports, no sandbox), and waits until OVN northbound
// holds at least `ports` pod ports.
func (t *tenantRig) createPods(ctx context.Context, s podSet, ports int) error {
	var g errgroup.Group
	g.SetLimit(16)
	for i := range s.n {
		g.Go(func() error {
			ns := s.namespaceOf(i)
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("pod-%d", i), Annotations: s.annotationsOf(i)},
				Spec: corev1.PodSpec{NodeName: node, AutomountServiceAccountToken: new(bool),
					Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}}}}
			if _, err := t.cl.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create pod %s/%s: %w", ns, pod.Name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return benchkit.Wait(ctx, fmt.Sprintf("%d pod ports in NB", ports), 10*time.Millisecond, func() (bool, error) {
		n, err := t.podPorts(ctx)
		return n >= ports, err
	})
}

// podPorts counts edgeovn's pod ports in the northbound cache.
func (t *tenantRig) podPorts(ctx context.Context) (int, error) {
	var lsps []*nbdb.LogicalSwitchPort
	err := t.cl.NB.WhereCache(func(p *nbdb.LogicalSwitchPort) bool { return p.ExternalIDs[ovn.OwnerKindKey] == ovn.KindPod }).List(ctx, &lsps)
	return len(lsps), err
}
