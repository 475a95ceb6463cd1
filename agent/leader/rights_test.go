package leader

import (
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestRBACGrantsControllerRights: the shipped ClusterRole grants every verb the eligibility
// check asks for with all features on, so a host bound to it is never refused for a right the
// package forgot.
func TestRBACGrantsControllerRights(t *testing.T) {
	b, err := os.ReadFile("../../packaging/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role *rbacv1.ClusterRole
	for _, doc := range strings.Split(string(b), "\n---\n") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if err != nil {
			t.Fatalf("decode packaging/rbac.yaml: %v", err)
		}
		if r, ok := obj.(*rbacv1.ClusterRole); ok {
			role = r
		}
	}
	if role == nil {
		t.Fatal("packaging/rbac.yaml has no ClusterRole")
	}
	for _, r := range controllerRights(Config{LeaseNamespace: "kube-system", Services: true, NetworkPolicy: true}) {
		for _, verb := range r.Verbs {
			if !granted(role.Rules, r.Group, r.Resource, verb) {
				t.Errorf("ClusterRole %s does not grant %s", role.Name, describe(r, verb))
			}
		}
	}
}

func granted(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(p rbacv1.PolicyRule) bool {
		return slices.Contains(p.APIGroups, group) && slices.Contains(p.Resources, resource) && slices.Contains(p.Verbs, verb)
	})
}
