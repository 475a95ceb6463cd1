package leader

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// right is one verb on one resource the controller role uses; Namespace "" is cluster-wide.
type right struct {
	Group, Resource, Namespace string
	Verbs                      []string
}

// controllerRights lists what the controller role does with the API under cfg: its informers
// (list, watch; StatefulSets too), the patches of pods' and nodes' annotations, its Events,
// its Lease, and the feature informers that are on. packaging/rbac.yaml grants these (and the node role's
// reads); TestRBACManifest checks it against this list.
func controllerRights(cfg Config) []right {
	rs := []right{
		{Resource: "pods", Verbs: []string{"get", "list", "watch", "patch"}},
		{Resource: "nodes", Verbs: []string{"get", "list", "watch", "patch"}},
		{Resource: "events", Verbs: []string{"create", "patch"}},
		{Group: "coordination.k8s.io", Resource: "leases", Namespace: cfg.LeaseNamespace, Verbs: []string{"get", "create", "update"}},
		// Subnets: the CRD installed when absent, ovn-default and join created, finalizers,
		// status; namespaces get Kube-OVN's annotations of their subnets.
		{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Verbs: []string{"get", "create"}},
		{Group: "kubeovn.io", Resource: "subnets", Verbs: []string{"get", "list", "watch", "create", "patch"}},
		{Group: "kubeovn.io", Resource: "subnets/status", Verbs: []string{"patch"}},
		{Resource: "namespaces", Verbs: []string{"list", "watch", "patch"}},
		// Underlay: Subnets with spec.vlan read their Vlan and ProviderNetwork, whose status
		// the controller writes.
		{Group: "kubeovn.io", Resource: "provider-networks", Verbs: []string{"list", "watch"}},
		{Group: "kubeovn.io", Resource: "provider-networks/status", Verbs: []string{"patch"}},
		{Group: "kubeovn.io", Resource: "vlans", Verbs: []string{"list", "watch"}},
		{Group: "kubeovn.io", Resource: "vlans/status", Verbs: []string{"patch"}},
		// Custom VPCs: the Subnets read their Vpc; the Vpc feature holds deleted ones with a
		// finalizer and writes their status.
		{Group: "kubeovn.io", Resource: "vpcs", Verbs: []string{"list", "watch", "patch"}},
		{Group: "kubeovn.io", Resource: "vpcs/status", Verbs: []string{"patch"}},
		// SecurityGroups: finalizers and status.
		{Group: "kubeovn.io", Resource: "security-groups", Verbs: []string{"list", "watch", "patch"}},
		{Group: "kubeovn.io", Resource: "security-groups/status", Verbs: []string{"patch"}},
		// OVN NAT: EIPs (and a Vpc's router EIP, created), FIPs, SNAT and DNAT rules with
		// finalizers and status; the gateway nodes from kube-system/ovn-external-gw-config.
		{Group: "kubeovn.io", Resource: "ovn-eips", Verbs: []string{"list", "watch", "create", "patch", "delete"}},
		{Group: "kubeovn.io", Resource: "ovn-eips/status", Verbs: []string{"patch"}},
		{Group: "kubeovn.io", Resource: "ovn-fips", Verbs: []string{"list", "watch", "patch"}},
		{Group: "kubeovn.io", Resource: "ovn-fips/status", Verbs: []string{"patch"}},
		{Group: "kubeovn.io", Resource: "ovn-snat-rules", Verbs: []string{"list", "watch", "patch"}},
		{Group: "kubeovn.io", Resource: "ovn-snat-rules/status", Verbs: []string{"patch"}},
		{Group: "kubeovn.io", Resource: "ovn-dnat-rules", Verbs: []string{"list", "watch", "patch"}},
		{Group: "kubeovn.io", Resource: "ovn-dnat-rules/status", Verbs: []string{"patch"}},
		{Resource: "configmaps", Namespace: "kube-system", Verbs: []string{"get"}},
		// StatefulSets: a deleted pod's address stays while its StatefulSet wants it back.
		{Group: "apps", Resource: "statefulsets", Verbs: []string{"list", "watch"}},
	}
	if cfg.Services {
		rs = append(rs, right{Resource: "services", Verbs: []string{"list", "watch"}},
			right{Group: "discovery.k8s.io", Resource: "endpointslices", Verbs: []string{"list", "watch"}})
	}
	if cfg.NetworkPolicy {
		rs = append(rs, right{Group: "networking.k8s.io", Resource: "networkpolicies", Verbs: []string{"list", "watch"}})
	}
	return rs
}

// checkRights asks the API server, one SelfSubjectAccessReview per verb, whether this host's
// credentials allow every right; the error lists each one denied. The reviews run at once:
// asked one after another, they were a round trip each (21 with every feature on) before
// every campaign.
func checkRights(ctx context.Context, kube AccessReviewer, rights []right) error {
	type ask struct {
		r    right
		verb string
	}
	var asks []ask
	for _, r := range rights {
		for _, verb := range r.Verbs {
			asks = append(asks, ask{r, verb})
		}
	}
	granted := make([]bool, len(asks))
	g, gctx := errgroup.WithContext(ctx)
	for i, a := range asks {
		g.Go(func() error {
			ok, err := allowed(gctx, kube, a.r, a.verb)
			granted[i] = ok
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("check api rights: %w", err)
	}
	var missing []string
	for i, a := range asks {
		if !granted[i] {
			missing = append(missing, describe(a.r, a.verb))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing api rights (apply packaging/rbac.yaml and use a kubeconfig bound to it): %s",
			strings.Join(missing, ", "))
	}
	return nil
}

func allowed(ctx context.Context, kube AccessReviewer, r right, verb string) (bool, error) {
	resource, sub, _ := strings.Cut(r.Resource, "/") // "subnets/status"
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Group: r.Group, Resource: resource, Subresource: sub,
			Namespace: r.Namespace, Verb: verb}}}
	got, err := kube.Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("review %s: %w", describe(r, verb), err)
	}
	return got.Status.Allowed, nil
}

func describe(r right, verb string) string {
	res := r.Resource
	if r.Group != "" {
		res += "." + r.Group
	}
	if r.Namespace != "" {
		res += " in " + r.Namespace
	}
	return verb + " " + res
}
