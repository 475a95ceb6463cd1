package main

import (
	"context"
	"fmt"
	"time"

	"github.com/ovn-org/libovsdb/client"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// scale is how many of each the programming benchmark creates.
type scale struct{ policies, pods, namespaces int }

// bench holds a fast API client and a northbound client whose cache shows what edgeovn
// wrote the moment the database has it.
type bench struct {
	kube kubernetes.Interface
	nb   client.Client
}

func newBench(ctx context.Context, rig *harness.Rig) (*bench, error) {
	c, err := benchkit.Connect(ctx, rig)
	if err != nil {
		return nil, err
	}
	return &bench{kube: c.Kube, nb: c.NB}, nil
}

func (b *bench) close() { b.nb.Close() }

func nsName(i int) string { return fmt.Sprintf("np-%d", i) }

// createPods creates the namespaces (team 0-2) and the pods (app-0..9, tier front or back),
// 16 at a time, and waits until OVN northbound has every pod's port.
func (b *bench) createPods(ctx context.Context, sc scale) error {
	for i := range sc.namespaces {
		if err := b.namespace(ctx, nsName(i), map[string]string{"team": fmt.Sprint(i % 3)}); err != nil {
			return err
		}
	}
	var g errgroup.Group
	g.SetLimit(16)
	for i := range sc.pods {
		g.Go(func() error {
			labels := map[string]string{"app": fmt.Sprintf("app-%d", i%10), "tier": []string{"front", "back"}[i%2]}
			return b.pod(ctx, nsName(i%sc.namespaces), fmt.Sprintf("pod-%d", i), labels)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return benchkit.Wait(ctx, fmt.Sprintf("%d pod ports in NB", sc.pods), 2*time.Millisecond, func() (bool, error) {
		var lsps []*nbdb.LogicalSwitchPort
		err := b.nb.WhereCache(func(p *nbdb.LogicalSwitchPort) bool { return p.ExternalIDs[ovn.OwnerKindKey] == ovn.KindPod }).List(ctx, &lsps)
		return len(lsps) >= sc.pods, err
	})
}

func (b *bench) namespace(ctx context.Context, name string, labels map[string]string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := b.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "default"}}
	if _, err := b.kube.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service account of %s: %w", name, err)
	}
	return nil
}

// pod creates a pod on the bench node, as the podsim kubelet's pods look.
func (b *bench) pod(ctx context.Context, ns, name string, labels map[string]string) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}}}}
	if _, err := b.kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create pod %s/%s: %w", ns, name, err)
	}
	return nil
}

// programmed is what the programming benchmark measured.
type programmed struct {
	took               time.Duration
	acls, sets, groups int
}

// programPolicies creates the policies (each selecting one app of its namespace: ingress
// from the front tier and from the namespaces of one team on TCP 80 and 8080-8090, and every
// other one egress to its team on UDP 53) and times them until every one has its ACLs in NB.
func (b *bench) programPolicies(ctx context.Context, sc scale) (programmed, error) {
	start := time.Now()
	var g errgroup.Group
	g.SetLimit(16)
	for i := range sc.policies {
		g.Go(func() error {
			np := policy(nsName(i%sc.namespaces), i)
			_, err := b.kube.NetworkingV1().NetworkPolicies(np.Namespace).Create(ctx, np, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return programmed{}, fmt.Errorf("create policy: %w", err)
	}
	var acls []*nbdb.ACL
	err := benchkit.Wait(ctx, fmt.Sprintf("ACLs of %d policies", sc.policies), 2*time.Millisecond, func() (bool, error) {
		acls = nil
		if err := b.nb.List(ctx, &acls); err != nil {
			return false, err
		}
		owners := map[string]bool{}
		for _, a := range acls {
			if a.ExternalIDs[ovn.OwnerKindKey] == ovn.KindNetworkPolicy {
				owners[a.ExternalIDs[ovn.OwnerKey]] = true
			}
		}
		return len(owners) >= sc.policies, nil
	})
	if err != nil {
		return programmed{}, err
	}
	res := programmed{took: time.Since(start), acls: len(acls)}
	var sets []*nbdb.AddressSet
	var groups []*nbdb.PortGroup
	if err := b.nb.List(ctx, &sets); err != nil {
		return res, err
	}
	if err := b.nb.List(ctx, &groups); err != nil {
		return res, err
	}
	res.sets, res.groups = len(sets), len(groups)
	return res, nil
}

func policy(ns string, i int) *networkingv1.NetworkPolicy {
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	p80, p8080, p53 := intstr.FromInt32(80), intstr.FromInt32(8080), intstr.FromInt32(53)
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("pol-%d", i)},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("app-%d", i%10)}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{
					{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front"}}},
					{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": fmt.Sprint(i % 3)}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &p80}, {Protocol: &tcp, Port: &p8080, EndPort: new(int32(8090))}}}}}}
	if i%2 == 1 {
		np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
		np.Spec.Egress = []networkingv1.NetworkPolicyEgressRule{{
			To:    []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": fmt.Sprint(i % 3)}}}},
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &p53}}}}
	}
	return np
}
