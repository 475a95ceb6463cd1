package podwatch

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/cni/server"
)

var allocated = map[string]string{
	annotation.Allocated: "true", annotation.Routed: "true", annotation.LogicalSwitch: "ovn-default",
	annotation.IPAddress: "10.42.0.7", annotation.CIDR: "10.42.0.0/16", annotation.Gateway: "10.42.0.1",
	annotation.MACAddress: "0a:58:0a:2a:00:07",
}

func start(t *testing.T, pods ...*corev1.Pod) (*Watcher, *fake.Clientset) {
	t.Helper()
	kube := fake.NewClientset()
	for _, p := range pods {
		if _, err := kube.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := New(Request{Pods: kube.CoreV1().Pods(""), NodeName: "n1", MTU: 1400, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w, kube
}

func pod(uid string, ann map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: k8stypes.UID("uid-" + uid), Annotations: ann},
		Spec: corev1.PodSpec{NodeName: "n1"}}
}

// TestWaitWokenByAnnotation: the waiter blocks until the controller's annotation arrives as an
// informer event, then returns the pod network with the port name and MTU.
func TestWaitWokenByAnnotation(t *testing.T) {
	p := pod("1", nil)
	w, kube := start(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan error, 1)
	var n server.PodNetwork
	go func() {
		var err error
		n, err = w.WaitPodNetwork(ctx, server.PodKey{Namespace: "default", Name: "p", UID: "uid-1"})
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("returned before allocation: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	p.Annotations = allocated
	if _, err := kube.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if n.Port != "p.default" || n.MTU != 1400 || n.IPs[0].String() != "10.42.0.7/16" || n.Gateways[0].String() != "10.42.0.1" {
		t.Fatalf("network %+v", n)
	}
}

// TestWaitSkipsOtherUID: an older pod of the same name is not taken for the new one.
func TestWaitSkipsOtherUID(t *testing.T) {
	w, _ := start(t, pod("old", allocated))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := w.WaitPodNetwork(ctx, server.PodKey{Namespace: "default", Name: "p", UID: "uid-new"})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "default/p") {
		t.Fatalf("err %v, want a deadline error naming default/p", err)
	}
	if _, err := w.WaitPodNetwork(context.Background(), server.PodKey{Namespace: "default", Name: "p", UID: "uid-old"}); err != nil {
		t.Fatalf("matching uid: %v", err)
	}
}

// TestWaitBrokenAnnotation: a malformed allocation is an error naming the pod, not a wait.
func TestWaitBrokenAnnotation(t *testing.T) {
	bad := map[string]string{}
	for k, v := range allocated {
		bad[k] = v
	}
	bad[annotation.IPAddress] = "10.42.0.999"
	w, _ := start(t, pod("1", bad))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, err := w.WaitPodNetwork(ctx, server.PodKey{Namespace: "default", Name: "p"})
		if err != nil && strings.Contains(err.Error(), annotation.IPAddress) && strings.Contains(err.Error(), "default/p") {
			return
		}
		if ctx.Err() != nil || err == nil {
			t.Fatalf("err %v, want an error naming the pod and the annotation", err)
		}
	}
}

// The node's cache holds every pod of the node: it keeps of each only what lookup and the BGP
// announcement read, and lookup still finds the network.
func TestCacheKeepsOnlyWhatLookupReads(t *testing.T) {
	p := pod("1", allocated)
	p.Labels = map[string]string{"app": "web"}
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "registry.example/web:1", Args: []string{"--serve"}}}
	p.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}}
	p.Status.Phase = corev1.PodRunning
	w, _ := start(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := w.WaitPodNetwork(ctx, server.PodKey{Namespace: "default", Name: "p", UID: "uid-1"})
	if err != nil || n.Switch != "ovn-default" || n.Port != annotation.PortName("default", "p") {
		t.Fatalf("WaitPodNetwork = %+v, %v; want ovn-default's port of default/p", n, err)
	}
	obj, ok, err := w.informer.GetStore().GetByKey("default/p")
	if err != nil || !ok {
		t.Fatalf("pod not cached: %v", err)
	}
	c := obj.(*corev1.Pod)
	if c.UID != "uid-1" || c.Annotations[annotation.IPAddress] != "10.42.0.7" {
		t.Errorf("cached pod lost what lookup reads: uid %q, annotations %v", c.UID, c.Annotations)
	}
	if c.Status.Phase != corev1.PodRunning {
		t.Errorf("cached pod lost its phase (the BGP announcement reads it): %q", c.Status.Phase)
	}
	if len(c.Spec.Containers) != 0 || len(c.Spec.Tolerations) != 0 || len(c.Status.Conditions) != 0 || len(c.Labels) != 0 || len(c.ManagedFields) != 0 {
		t.Errorf("cached pod keeps what nothing reads: %+v", c)
	}
}

// TestOnChange: a handler added after the cache holds a pod is told of it (QoS and the mirror
// start after the watch), then of its update and its deletion, each with the pod's key.
func TestOnChange(t *testing.T) {
	w, kube := start(t, pod("1", nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), w.HasSynced) {
		t.Fatal("pod cache never synced")
	}
	keys := make(chan string, 10)
	if err := w.OnChange(func(ns, name string) { keys <- ns + "/" + name }); err != nil {
		t.Fatal(err)
	}
	next := func(what string) {
		t.Helper()
		select {
		case k := <-keys:
			if k != "default/p" {
				t.Fatalf("%s: key %q, want default/p", what, k)
			}
		case <-ctx.Done():
			t.Fatalf("%s: not told", what)
		}
	}
	next("cached pod")
	if _, err := kube.CoreV1().Pods("default").Update(ctx, pod("1", allocated), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	next("update")
	if err := kube.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	next("deletion")
}

// TestWaitNetworkError: a pod the controller cannot allocate fails its waiter, as soon as the
// reason arrives, with that reason; a network of it already allocated is still returned.
func TestWaitNetworkError(t *testing.T) {
	p := pod("1", nil)
	w, kube := start(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan error, 1)
	go func() {
		_, err := w.WaitPodNetwork(ctx, server.PodKey{Namespace: "default", Name: "p", UID: "uid-1", Provider: "a.default.ovn"})
		got <- err
	}()
	const reason = "attachment networks: attachment default/a: no Subnet has provider a.default.ovn"
	p.Annotations = map[string]string{annotation.NetworkErrorKey: reason}
	if _, err := kube.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err == nil || !strings.Contains(err.Error(), reason) || !strings.Contains(err.Error(), "default/p") {
		t.Fatalf("err %v, want the controller's reason for pod default/p", err)
	}
	p.Annotations = map[string]string{annotation.NetworkErrorKey: reason}
	for k, v := range allocated {
		p.Annotations[k] = v
	}
	if _, err := kube.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		n, err := w.WaitPodNetwork(ctx, server.PodKey{Namespace: "default", Name: "p", UID: "uid-1"})
		if err == nil && n.Port == "p.default" {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("primary network allocated beside a network error: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // the informer has not seen the update yet
	}
}
