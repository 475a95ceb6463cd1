package subnets

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/podnet"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// Kube-OVN's namespace annotations edgeovn writes: the namespace's subnets (comma-joined),
// their CIDRs and excluded addresses (";" between subnets), as Kube-OVN does.
const (
	NamespaceCIDR       = "ovn.kubernetes.io/cidr"
	NamespaceExcludeIPs = "ovn.kubernetes.io/exclude_ips"
	// namespaceWritten is the logical_switch value edgeovn derived and wrote: a different
	// value was set by a person, and binds the namespace (when no Subnet lists it).
	namespaceWritten = "edgeovn.io/logical_switch"
)

// namespaceSubnets chooses a namespace's subnets as Kube-OVN does: the Subnets whose
// spec.namespaces lists it (by name), else the subnet its ovn.kubernetes.io/logical_switch
// annotation names when a person set it, else the default subnet. userSet says the annotation
// chose.
func (s *Controller) namespaceSubnets(ns *corev1.Namespace) (names []string, userSet bool) {
	s.mu.RLock()
	for name, a := range s.applied {
		if !a.deleting && slices.Contains(a.spec.Namespaces, ns.Name) {
			names = append(names, name)
		}
	}
	s.mu.RUnlock()
	if len(names) > 0 {
		slices.Sort(names)
		return names, false
	}
	if v := ns.Annotations[annotation.LogicalSwitch]; v != "" && v != ns.Annotations[namespaceWritten] {
		return strings.Split(v, ","), true
	}
	if vs := s.namespaceVpcSubnet(ns.Name); vs != "" {
		return []string{vs}, false
	}
	return []string{s.defaultSubnet()}, false
}

// defaultSubnet is the Subnet marked default: true other than ovn-default (the oldest, when
// several are), else ovn-default.
func (s *Controller) defaultSubnet() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	best := ""
	for name, a := range s.applied {
		if name == kubeovn.DefaultSubnet || name == kubeovn.JoinSubnet || !a.spec.Default || a.deleting {
			continue
		}
		if b, ok := s.applied[best]; best == "" || !ok || a.created.Before(b.created) || a.created.Equal(b.created) && name < best {
			best = name
		}
	}
	if best == "" {
		return kubeovn.DefaultSubnet
	}
	return best
}

// PodSubnet is the subnet a new pod gets its address in: its own logical_switch annotation,
// else its namespace's first subnet. An error says why it cannot be allocated now.
func (s *Controller) PodSubnet(pod *corev1.Pod, asked string) (string, error) {
	name := asked
	if name == "" {
		ns, err := s.nsList.Get(pod.Namespace)
		if err != nil {
			return "", fmt.Errorf("namespace %s: %w", pod.Namespace, err)
		}
		names, _ := s.namespaceSubnets(ns)
		name = names[0]
	}
	if !podnet.IsPodSubnet(name) {
		return "", fmt.Errorf("logical switch %q holds the nodes' addresses: a pod cannot have one", name)
	}
	a, ok := s.get(name)
	switch {
	case !ok:
		return "", fmt.Errorf("subnet %q does not exist or is not valid (see its status)", name)
	case a.deleting:
		return "", fmt.Errorf("subnet %q is being deleted", name)
	}
	return name, nil
}

// syncNamespace writes Kube-OVN's annotations of the namespace's subnets.
func (s *Controller) syncNamespace(ctx context.Context, name string) error {
	ns, err := s.nsList.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get namespace %s: %w", name, err)
	}
	names, userSet := s.namespaceSubnets(ns)
	var cidrs, excludes []string
	for _, n := range names {
		a, ok := s.get(n)
		if !ok {
			continue
		}
		cidrs = append(cidrs, a.spec.CIDRBlock)
		excludes = append(excludes, strings.Join(a.spec.ExcludeIps, ","))
	}
	want := map[string]string{annotation.LogicalSwitch: strings.Join(names, ","),
		NamespaceCIDR: strings.Join(cidrs, ";"), NamespaceExcludeIPs: strings.Join(excludes, ";")}
	if !userSet {
		want[namespaceWritten] = want[annotation.LogicalSwitch]
	}
	patch, err := annotation.Patch(ns.Annotations, want)
	if err != nil || patch == nil {
		return err
	}
	_, err = s.req.Kube.Namespaces().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("annotate namespace %s: %w", name, err)
	}
	return nil
}

// enqueueNamespaces queues every namespace: a Subnet's binding changed.
func (s *Controller) enqueueNamespaces() {
	nss, err := s.nsList.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ns := range nss {
		s.nsQ.Add(ns.Name)
	}
}
