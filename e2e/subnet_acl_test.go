package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// TestSubnetACLs applies Kube-OVN's Subnet ACL example unchanged (kubeOVNACL: a to-lport drop
// of 10.10.0.2 and a from-lport allow-related from it, both at 1002) and checks it with ping
// and TCP: nobody reaches 10.10.0.2, neither a pod of its own Subnet nor one of the default
// subnet, while 10.10.0.2 reaches them (its connections are allowed, their replies pass) and
// the others reach each other. allowEWTraffic: true adds Kube-OVN's same-subnet allow at 1900:
// the pod of its own Subnet reaches it, the default subnet's still does not. A match OVN
// would not parse is refused naming the entry, and no ACL or traffic changes. Removing the
// acls restores the traffic and leaves no ACL.
func TestSubnetACLs(t *testing.T) {
	env, _ := startNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(env.rig.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	subnets := dyn.Resource(kubeovn.SubnetResource)
	waitCondition(ctx, t, subnets, "ovn-default", kubeovn.ConditionValidated, "True", "")
	applyYAML(ctx, t, subnets, kubeOVNACL)
	waitCondition(ctx, t, subnets, "acl", kubeovn.ConditionReady, "True", "")
	waitCondition(ctx, t, subnets, "acl", kubeovn.ConditionUnsupported, "False", "")

	inACL := func(ip string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Annotations = map[string]string{annotation.LogicalSwitch: "acl", annotation.IPAddress: ip}
		}
	}
	target, peer := runPodIn(ctx, t, env, "default", "target", inACL("10.10.0.2")), runPodIn(ctx, t, env, "default", "peer", inACL("10.10.0.3"))
	d := runPod(ctx, t, env, "d")
	t.Logf("target %s, peer %s, default %s", target.IP(), peer.IP(), d.IP())
	if target.IP().String() != "10.10.0.2" {
		t.Fatalf("target got %s, want its pin 10.10.0.2", target.IP())
	}
	othersReach := func(when string) {
		t.Helper()
		mustReach(ctx, t, target, d, when)
		mustReach(ctx, t, target, peer, when)
		mustReach(ctx, t, peer, d, when)
		mustReach(ctx, t, d, peer, when)
	}
	mustBeBlocked(ctx, t, peer, target, "Kube-OVN's acl example")
	mustBeBlocked(ctx, t, d, target, "Kube-OVN's acl example")
	othersReach("Kube-OVN's acl example")

	patchSubnet(ctx, t, subnets, "acl", map[string]any{"allowEWTraffic": true})
	eventually(ctx, t, "allowEWTraffic's two ACLs", func() bool { return len(subnetACLVersions(ctx, t, env, "acl")) == 4 })
	ewOpen := func(when string) {
		t.Helper()
		mustReach(ctx, t, peer, target, when)
		mustBeBlocked(ctx, t, d, target, when)
		othersReach(when)
	}
	ewOpen("allowEWTraffic")

	before := subnetACLVersions(ctx, t, env, "acl")
	patchSubnet(ctx, t, subnets, "acl", map[string]any{"acls": []map[string]any{
		{"action": "drop", "direction": "to-lport", "match": "ip4.dst == 10.10.0.3 &&", "priority": 1002}}})
	waitCondition(ctx, t, subnets, "acl", kubeovn.ConditionValidated, "False", `acls[0].match: invalid OVN match "ip4.dst == 10.10.0.3 &&"`)
	waitCondition(ctx, t, subnets, "acl", kubeovn.ConditionReady, "True", "change refused, the spec applied before stays in force")
	ewOpen("after a bad acl match")
	if after := subnetACLVersions(ctx, t, env, "acl"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the refused acls changed the ACLs: %v -> %v", before, after)
	}

	patchSubnet(ctx, t, subnets, "acl", map[string]any{"acls": nil})
	waitCondition(ctx, t, subnets, "acl", kubeovn.ConditionValidated, "True", "")
	eventually(ctx, t, "no ACL left with the acls removed", func() bool { return len(subnetACLVersions(ctx, t, env, "acl")) == 0 })
	mustReach(ctx, t, peer, target, "acls removed")
	mustReach(ctx, t, d, target, "acls removed")
	othersReach("acls removed")
}
