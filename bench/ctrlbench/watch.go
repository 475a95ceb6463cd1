package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ovn-org/libovsdb/client"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// poll is the resolution of the bench's waits on conditions it cannot be told about.
const poll = 10 * time.Millisecond

// podWatch records when the bench first saw each pod of the namespace annotated as allocated,
// from its own informer (events, not polling). Its watch is re-opened where kube-apiserver
// closes it during the burst (kubeapi.Rewatch, as edgeovn's), so the bench's own relists do
// not show up as the controller's time.
type podWatch struct {
	mu        sync.Mutex
	annotated map[string]time.Time // by pod name
}

func watchPods(ctx context.Context, kube kubernetes.Interface, ns string) (*podWatch, error) {
	w := &podWatch{annotated: map[string]time.Time{}}
	inf := kubeapi.NewInformer(kubeapi.ListWatch[*corev1.PodList](kube.CoreV1().Pods(ns), nil), &corev1.Pod{}, nil)
	on := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Annotations[annotation.Allocated] != "true" {
			return
		}
		now := time.Now()
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := w.annotated[p.Name]; !ok {
			w.annotated[p.Name] = now
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: on, UpdateFunc: func(_, o any) { on(o) }}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("sync bench pod informer: %w", ctx.Err())
	}
	return w, nil
}

// at returns when pod name was first seen annotated.
func (w *podWatch) at(name string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.annotated[name]
	return t, ok
}

// portWatch records when each pod port first appeared in the bench's northbound cache (which
// the database updates as each transaction commits), polled every poll.
type portWatch struct {
	mu    sync.Mutex
	since map[string]time.Time // by port name
}

func watchPorts(ctx context.Context, nb client.Client) *portWatch {
	w := &portWatch{since: map[string]time.Time{}}
	go func() {
		for ctx.Err() == nil {
			var lsps []nbdb.LogicalSwitchPort
			if err := nb.List(ctx, &lsps); err == nil {
				now := time.Now()
				w.mu.Lock()
				for _, l := range lsps {
					if _, ok := w.since[l.Name]; !ok && l.ExternalIDs[ovn.OwnerKindKey] == ovn.KindPod {
						w.since[l.Name] = now
					}
				}
				w.mu.Unlock()
			}
			time.Sleep(poll)
		}
	}()
	return w
}

func (w *portWatch) at(port string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.since[port]
	return t, ok
}

// until polls cond until it holds or ctx ends.
func until(ctx context.Context, what string, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(poll):
		}
	}
	return nil
}

func logSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// logHasAfter says whether the log holds s beyond its first offset bytes.
func logHasAfter(path string, offset int64, s string) bool {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < offset {
		return false
	}
	return bytes.Contains(b[offset:], []byte(s))
}

// createNamespace makes the namespace and its default ServiceAccount (no controller-manager
// makes it here, and pods name it).
func createNamespace(ctx context.Context, kube kubernetes.Interface, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "default"}}
	if _, err := kube.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/default: %w", name, err)
	}
	return nil
}

// logTimeAfter returns the time= of the first line beyond offset that holds s (zero if none).
func logTimeAfter(path string, offset int64, s string) time.Time {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < offset {
		return time.Time{}
	}
	for _, line := range bytes.Split(b[offset:], []byte("\n")) {
		if !bytes.Contains(line, []byte(s)) {
			continue
		}
		f := bytes.Fields(line)
		if len(f) == 0 || !bytes.HasPrefix(f[0], []byte("time=")) {
			return time.Time{}
		}
		t, _ := time.Parse(time.RFC3339Nano, string(f[0][len("time="):]))
		return t
	}
	return time.Time{}
}

// logPhasesAfter returns the NAME_ms=VALUE fields of the first line beyond offset that holds s.
func logPhasesAfter(path string, offset int64, s string) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < offset {
		return ""
	}
	for _, line := range bytes.Split(b[offset:], []byte("\n")) {
		if !bytes.Contains(line, []byte(s)) {
			continue
		}
		var out []string
		for _, f := range bytes.Fields(line) {
			if k, _, ok := bytes.Cut(f, []byte("=")); ok && bytes.HasSuffix(k, []byte("_ms")) {
				out = append(out, string(f))
			}
		}
		return strings.Join(out, " ")
	}
	return ""
}
