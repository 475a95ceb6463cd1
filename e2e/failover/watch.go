package failover

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// poll is how often the scenario looks at the API and northbound: the resolution of its times.
const poll = 20 * time.Millisecond

// watcher reads the scenario's state: the Lease, the pods' annotations, the pod ports.
type watcher struct {
	rig *harness.Rig
	cl  *benchkit.Clients
}

// until polls cond until it holds or ctx ends.
func (w *watcher) until(ctx context.Context, what string, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(poll):
		}
	}
	return nil
}

func (w *watcher) holder(ctx context.Context) string {
	l, err := w.cl.Kube.CoordinationV1().Leases("kube-system").Get(ctx, "edgeovn-controller", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// annotated returns each pod's annotated address by "namespace/name".
func (w *watcher) annotated(ctx context.Context) map[string]netip.Addr {
	out := map[string]netip.Addr{}
	pods, err := w.cl.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return out
	}
	for _, p := range pods.Items {
		if n, err := annotation.Decode(p.Annotations); err == nil && len(n.IPs) > 0 {
			out[p.Namespace+"/"+p.Name] = n.IPs[0]
		}
	}
	return out
}

func (w *watcher) allocated(ctx context.Context) int { return len(w.annotated(ctx)) }

// ports returns each edgeovn pod port's first address by port name, from the bench's own
// northbound cache.
func (w *watcher) ports(ctx context.Context) map[string]netip.Addr {
	out := map[string]netip.Addr{}
	var lsps []nbdb.LogicalSwitchPort
	if err := w.cl.NB.List(ctx, &lsps); err != nil {
		return out
	}
	for _, lsp := range lsps {
		if lsp.ExternalIDs[ovn.OwnerKindKey] != ovn.KindPod || len(lsp.Addresses) == 0 {
			continue
		}
		if f := strings.Fields(lsp.Addresses[0]); len(f) > 1 {
			if ip, err := netip.ParseAddr(f[1]); err == nil {
				out[lsp.Name] = ip
			}
		}
	}
	return out
}

// portName is Kube-OVN's port name of the pod "namespace/name": "name.namespace".
func portName(key string) string {
	ns, name, _ := strings.Cut(key, "/")
	return name + "." + ns
}

func logHas(p *harness.Process, s string) bool {
	b, _ := os.ReadFile(p.Log)
	return strings.Contains(string(b), s)
}

func pod(name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name},
		Spec: corev1.PodSpec{NodeName: node, AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}}}}
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

// Duplicates lists every address held twice among annotations, and among ports.
func Duplicates(r Result) []string {
	var dups []string
	for what, m := range map[string]map[string]netip.Addr{"annotation": r.Annotated, "port": r.Ports} {
		seen := map[netip.Addr]string{}
		for k, ip := range m {
			if o, dup := seen[ip]; dup {
				dups = append(dups, fmt.Sprintf("%s %s: %s and %s", what, ip, o, k))
			}
			seen[ip] = k
		}
	}
	return dups
}
