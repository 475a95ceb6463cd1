package e2e

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// Kube-OVN's SecurityGroup example, from its documentation (vpc/security-group: "SecurityGroup
// Example"), unchanged; its addresses are of Kube-OVN's default network 10.16.0.0/16.
const kubeOVNSecurityGroup = `apiVersion: kubeovn.io/v1
kind: SecurityGroup
metadata:
  name: sg-example
spec:
  allowSameGroupTraffic: true
  egressRules:
  - ipVersion: ipv4
    policy: allow
    priority: 1
    protocol: all
    remoteAddress: 10.16.0.13 # 10.16.0.0/16 Configure network segment
    remoteType: address
  ingressRules:
  - ipVersion: ipv4
    policy: deny
    priority: 1
    protocol: icmp
    remoteAddress: 10.16.0.14
    remoteType: address
`

// Rules of the test's groups, as manifests write them.
var (
	allow80 = map[string]any{"ipVersion": "ipv4", "protocol": "tcp", "priority": int64(10), "remoteType": "address",
		"remoteAddress": "10.42.0.0/16", "portRangeMin": int64(80), "portRangeMax": int64(80), "policy": "allow"}
	fromClients = map[string]any{"ipVersion": "ipv4", "protocol": "all", "priority": int64(10), "remoteType": "securityGroup",
		"remoteSecurityGroup": "client", "policy": "allow"}
	toAnywhere = map[string]any{"ipVersion": "ipv4", "protocol": "all", "priority": int64(100), "remoteType": "address",
		"remoteAddress": "0.0.0.0/0", "policy": "allow"}
)

// TestSecurityGroup: Kube-OVN's SecurityGroups on real traffic between pod namespaces.
// web lets TCP 80 in from the pod network (an allow-list by port), db lets the client group
// in (by remote group), client lets its members talk (allowSameGroupTraffic) and out
// anywhere. A member receives only what its groups allow, and sends only what they allow
// (web has no egress rule); a pod in web and db gets both; a drop rule at a lower priority
// number beats an allow; each rule removed restores what it changed; the host always gets in
// (kubelet's probes). Beside a NetworkPolicy on the same pod, as docs/securitygroups.md says:
// ingress is decided by the groups alone, egress must pass both. A rule with portRangeMin >
// portRangeMax is refused naming the field, other groups untouched; a pod naming a missing
// group gets an Event. Deleting a group opens its pods again. Then Kube-OVN's documentation
// example, applied unchanged, behaves as Kube-OVN says.
func TestSecurityGroup(t *testing.T) {
	env, ctx := startNode(t)
	dyn, err := dynamic.NewForConfig(env.rig.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	sgs := dyn.Resource(kubeovn.SecurityGroupResource)
	waitCondition(ctx, t, dyn.Resource(kubeovn.SubnetResource), "ovn-default", kubeovn.ConditionValidated, "True", "")
	setGroup(ctx, t, sgs, "web", map[string]any{"ingressRules": []any{allow80}})
	setGroup(ctx, t, sgs, "db", map[string]any{"ingressRules": []any{fromClients}})
	setGroup(ctx, t, sgs, "client", map[string]any{"allowSameGroupTraffic": true, "egressRules": []any{toAnywhere}})
	for _, g := range []string{"web", "db", "client"} {
		waitGroup(ctx, t, sgs, g, kubeovn.ConditionReady, "True", "")
	}

	s1, s2, d1 := sgPod(ctx, t, env, "s1", "web"), sgPod(ctx, t, env, "s2", "web,db"), sgPod(ctx, t, env, "d1", "db")
	c1, c3, c2 := sgPod(ctx, t, env, "c1", "client"), sgPod(ctx, t, env, "c3", "client"), sgPod(ctx, t, env, "c2", "")
	n1 := sgPod(ctx, t, env, "n1", "")
	p := policy6{ctx: ctx, t: t, env: env}

	// Allow-list by port; the host always gets in.
	p.expect(c2.Netns, at(s1, 81), false, "web: c2 to s1 on 81 (not in web's allow-list)")
	p.expect(c2.Netns, at(s1, 80), true, "web: c2 to s1 on 80")
	mustNotReach(ctx, t, c2, s1.IP(), "web let ICMP in")
	p.expect(env.rig.NetnsPath, at(s1, 81), true, "the host (probes) to s1 on 81")
	p.expect(s1.Netns, at(c2, 80), false, "web has no egress rule: s1 to c2")
	// By remote group.
	p.expect(c1.Netns, at(d1, 81), true, "db lets the client group in: c1 to d1 on 81")
	p.expect(c2.Netns, at(d1, 80), false, "db: c2 (no group) to d1")
	// A pod in two groups gets both.
	p.expect(c2.Netns, at(s2, 80), true, "s2 in web and db: c2 on 80 (web)")
	p.expect(c2.Netns, at(s2, 81), false, "s2 in web and db: c2 on 81 (neither)")
	p.expect(c1.Netns, at(s2, 81), true, "s2 in web and db: c1 on 81 (db, from the client group)")
	// Same-group traffic, then turned off and on.
	p.expect(c3.Netns, at(c1, 80), true, "client's members: c3 to c1")
	setGroup(ctx, t, sgs, "client", map[string]any{"allowSameGroupTraffic": false, "egressRules": []any{toAnywhere}})
	p.expect(c3.Netns, at(c1, 80), false, "allowSameGroupTraffic false: c3 to c1")
	setGroup(ctx, t, sgs, "client", map[string]any{"allowSameGroupTraffic": true, "egressRules": []any{toAnywhere}})
	p.expect(c3.Netns, at(c1, 80), true, "allowSameGroupTraffic true again: c3 to c1")

	// A drop at priority 1 beats the allow at 10; removed, the traffic flows again.
	dropC2 := map[string]any{"ipVersion": "ipv4", "protocol": "tcp", "priority": int64(1), "remoteType": "address",
		"remoteAddress": c2.IP().String(), "portRangeMin": int64(80), "portRangeMax": int64(80), "policy": "drop"}
	setGroup(ctx, t, sgs, "web", map[string]any{"ingressRules": []any{allow80, dropC2}})
	p.expect(c2.Netns, at(s1, 80), false, "web's drop of c2 at priority 1")
	p.expect(c1.Netns, at(s1, 80), true, "web's drop names c2 only: c1 to s1")
	setGroup(ctx, t, sgs, "web", map[string]any{"ingressRules": []any{allow80}})
	p.expect(c2.Netns, at(s1, 80), true, "web's drop removed: c2 to s1")
	// The allow removed: s1 is closed; back, open.
	setGroup(ctx, t, sgs, "web", map[string]any{})
	p.expect(c2.Netns, at(s1, 80), false, "web's allow removed: c2 to s1 on 80")
	setGroup(ctx, t, sgs, "web", map[string]any{"ingressRules": []any{allow80}})
	p.expect(c2.Netns, at(s1, 80), true, "web's allow back: c2 to s1 on 80")

	// Beside a NetworkPolicy: ingress is the groups' alone (the policy's deny does not close
	// s1, while it closes n1, in no group); egress must pass both.
	p.set("fence-in", networkingv1.NetworkPolicySpec{PodSelector: *lbl("fence", "yes"),
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}})
	p.expect(c2.Netns, at(n1, 80), false, "the policy's ingress deny on n1 (no group)")
	p.expect(c2.Netns, at(s1, 80), true, "the policy's ingress deny on s1: web's allow decides")
	p.set("c1-out", networkingv1.NetworkPolicySpec{PodSelector: *lbl("app", "c1"),
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}})
	p.expect(c1.Netns, at(d1, 81), false, "client allows c1 out, its egress policy does not: c1 to d1")
	p.expect(c3.Netns, at(d1, 81), true, "c3 (client, no policy) to d1")
	if err := env.kubelet.Kube.NetworkingV1().NetworkPolicies("default").Delete(ctx, "c1-out", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.expect(c1.Netns, at(d1, 81), true, "c1's egress policy removed: c1 to d1")
	if err := env.kubelet.Kube.NetworkingV1().NetworkPolicies("default").Delete(ctx, "fence-in", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.expect(c2.Netns, at(n1, 80), true, "the policy's ingress deny removed: c2 to n1")

	// Bad input: refused naming the field, the other groups untouched.
	bad := map[string]any{"ipVersion": "ipv4", "protocol": "tcp", "priority": int64(5), "remoteType": "address",
		"remoteAddress": "10.42.0.0/16", "portRangeMin": int64(90), "portRangeMax": int64(80), "policy": "allow"}
	setGroup(ctx, t, sgs, "bad", map[string]any{"ingressRules": []any{bad}})
	waitGroup(ctx, t, sgs, "bad", kubeovn.ConditionValidated, "False", "ingressRules[0].portRangeMin 90 is greater than portRangeMax 80")
	waitObjectEvent(ctx, t, env, "", "bad", "InvalidSpec", "ingressRules[0].portRangeMin")
	p.expect(c2.Netns, at(s1, 80), true, "web after bad was refused: c2 to s1 on 80")
	sgPod(ctx, t, env, "m1", "nope")
	waitObjectEvent(ctx, t, env, "default", "m1", "SecurityGroupNotFound", annotation.SecurityGroups+": security group nope not found")

	// Deleting web opens s1 (in web only) again; s2 keeps db's rules.
	if err := sgs.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.expect(c2.Netns, at(s1, 81), true, "web deleted: c2 to s1 on 81")
	p.expect(c2.Netns, at(s2, 81), false, "web deleted: s2 still in db")

	kubeOVNExample(ctx, t, env, sgs)
}

// kubeOVNExample applies Kube-OVN's SecurityGroup example unchanged, with pods at the two
// addresses it names (a Subnet of Kube-OVN's default 10.16.0.0/16, the addresses pinned): a
// member sends only to 10.16.0.13 and its own group, takes nothing but its own group (ICMP from
// 10.16.0.14 dropped by the rule, the rest by the default deny).
func kubeOVNExample(ctx context.Context, t *testing.T, env *env, sgs dynamic.NamespaceableResourceInterface) {
	t.Helper()
	subnets := dynamic.NewForConfigOrDie(env.rig.RESTConfig()).Resource(kubeovn.SubnetResource)
	if _, err := env.rig.Kube().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kx"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	applyYAML(ctx, t, subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: kx\nspec:\n  cidrBlock: 10.16.0.0/16\n  namespaces: [kx]\n")
	waitCondition(ctx, t, subnets, "kx", kubeovn.ConditionReady, "True", "")
	applyYAML(ctx, t, sgs, kubeOVNSecurityGroup)
	waitGroup(ctx, t, sgs, "sg-example", kubeovn.ConditionReady, "True", "")
	pinned := func(ip string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Annotations = map[string]string{annotation.IPAddress: ip} }
	}
	t13 := serving(ctx, t, runPodIn(ctx, t, env, "kx", "t13", pinned("10.16.0.13")))
	t14 := serving(ctx, t, runPodIn(ctx, t, env, "kx", "t14", pinned("10.16.0.14")))
	ex1, ex2 := sgPodIn(ctx, t, env, "kx", "ex1", "sg-example"), sgPodIn(ctx, t, env, "kx", "ex2", "sg-example")
	p := policy6{ctx: ctx, t: t, env: env}
	p.expect(ex1.Netns, at(t13, 80), true, "sg-example lets its members out to 10.16.0.13")
	p.expect(ex1.Netns, at(t14, 80), false, "sg-example: 10.16.0.14 is not in its egress rules")
	p.expect(ex2.Netns, at(ex1, 80), true, "sg-example: same-group traffic")
	p.expect(t13.Netns, at(ex1, 80), false, "sg-example takes nothing from 10.16.0.13")
	p.expect(t14.Netns, at(ex1, 80), false, "sg-example takes nothing from 10.16.0.14")
	mustNotReach(ctx, t, t14, ex1.IP(), "sg-example's ICMP drop from 10.16.0.14")
	u, err := sgs.Get(ctx, "sg-example", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, _, _ := unstructured.NestedMap(u.Object, "status")
	if st["portGroup"] != "ovn.sg.sg.example" || st["ingressLastSyncSuccess"] != true || st["egressLastSyncSuccess"] != true || st["allowSameGroupTraffic"] != true {
		t.Errorf("sg-example status %v, want Kube-OVN's fields", st)
	}
}

// sgPod runs a pod of default labelled app=<name> (and fence=yes) in the groups ("": none),
// serving TCP on 80 and 81.
func sgPod(ctx context.Context, t *testing.T, env *env, name, groups string) *podsim.Sandbox {
	t.Helper()
	return sgPodIn(ctx, t, env, "default", name, groups)
}

func sgPodIn(ctx context.Context, t *testing.T, env *env, ns, name, groups string) *podsim.Sandbox {
	t.Helper()
	sb := runPodIn(ctx, t, env, ns, name, func(p *corev1.Pod) {
		p.Labels = map[string]string{"app": name, "fence": "yes"}
		if groups != "" {
			p.Annotations = map[string]string{annotation.SecurityGroups: groups}
		}
	})
	return serving(ctx, t, sb)
}

// serving starts the test server on 80 and 81 in the pod.
func serving(ctx context.Context, t *testing.T, sb *podsim.Sandbox) *podsim.Sandbox {
	t.Helper()
	for _, port := range []uint16{80, 81} {
		srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: sb.Netns, Port: port, Name: sb.Pod.Name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
	}
	return sb
}

func at(sb *podsim.Sandbox, port uint16) netip.AddrPort { return netip.AddrPortFrom(sb.IP(), port) }

// setGroup creates the group with spec, or replaces its spec.
func setGroup(ctx context.Context, t *testing.T, sgs dynamic.NamespaceableResourceInterface, name string, spec map[string]any) {
	t.Helper()
	for range 5 {
		u, err := sgs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			u = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "SecurityGroup",
				"metadata": map[string]any{"name": name}, "spec": spec}}
			if _, err = sgs.Create(ctx, u, metav1.CreateOptions{}); err == nil {
				return
			}
			t.Logf("create security group %s: %v", name, err)
			continue
		}
		u.Object["spec"] = spec
		if _, err = sgs.Update(ctx, u, metav1.UpdateOptions{}); err == nil {
			return
		}
		t.Logf("update security group %s: %v", name, err)
	}
	t.Fatalf("set security group %s: conflicts", name)
}

// waitGroup waits for the group's condition to have status and a message containing msg.
func waitGroup(ctx context.Context, t *testing.T, sgs dynamic.NamespaceableResourceInterface, name, typ, status, msg string) {
	t.Helper()
	eventually(ctx, t, "security group "+name+" condition "+typ+"="+status+" "+msg, func() bool {
		u, err := sgs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		sg, err := kubeovn.SecurityGroupFrom(u)
		if err != nil {
			return false
		}
		for _, c := range sg.Status.Conditions {
			if c.Type == typ {
				return c.Status == status && strings.Contains(c.Message, msg)
			}
		}
		return false
	})
}

// waitObjectEvent waits for an Event on the object (namespace "": cluster-scoped, in default) with
// the reason and a message containing msg.
func waitObjectEvent(ctx context.Context, t *testing.T, env *env, ns, name, reason, msg string) {
	t.Helper()
	if ns == "" {
		ns = "default"
	}
	eventually(ctx, t, "event "+reason+" on "+name, func() bool {
		evs, err := env.rig.Kube().CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == name && e.Reason == reason && strings.Contains(e.Message, msg) {
				return true
			}
		}
		return false
	})
}
