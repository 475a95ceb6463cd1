package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// policyCase is one row set of the truth table: the policies in force, then optional steps
// (label changes) after each of which the whole matrix is checked again.
type policyCase struct {
	name     string
	policies func(w *world) []*networkingv1.NetworkPolicy
	steps    []policyStep
}

type policyStep struct {
	name string
	do   func(ctx context.Context, t *testing.T, w *world)
}

func (w *world) ip(key string) string {
	for _, p := range w.pods {
		if p.key() == key {
			return netip.PrefixFrom(p.ip, 32).String()
		}
	}
	panic("no pod " + key)
}

func just(nps ...*networkingv1.NetworkPolicy) func(*world) []*networkingv1.NetworkPolicy {
	return func(*world) []*networkingv1.NetworkPolicy { return nps }
}

var policyCases = []policyCase{
	{name: "no policy: everything reaches everything", policies: just()},
	{name: "deny all ingress in x", policies: just(ingress(pol("x")))},
	{name: "deny all egress in x", policies: just(egress(pol("x")))},
	{name: "deny all both ways in x", policies: just(egress(ingress(pol("x"))))},
	{name: "allow all ingress to x", policies: just(ingress(pol("x"), from(nil)))},
	{name: "deny all egress plus allow all egress in x combine to allow", policies: just(egress(pol("x")), egress(pol("x"), to(nil)))},
	{name: "x/a from its namespace's pod b", policies: just(ingress(pol("x", "pod", "a"), from(nil, pods("pod", "b"))))},
	{name: "x/a from namespace y", policies: just(ingress(pol("x", "pod", "a"), from(nil, nss("ns", "y"))))},
	{name: "x/a from pods b of team blue (both selectors)", policies: just(ingress(pol("x", "pod", "a"), from(nil, both(lbl("team", "blue"), lbl("pod", "b")))))},
	{name: "x/a from pods b of every namespace", policies: just(ingress(pol("x", "pod", "a"), from(nil, both(lbl(), lbl("pod", "b")))))},
	{name: "x/a from pod c of y or z (expressions)", policies: just(ingress(pol("x", "pod", "a"),
		from(nil, both(expr("ns", metav1.LabelSelectorOpIn, "y", "z"), expr("pod", metav1.LabelSelectorOpNotIn, "a", "b")))))},
	{name: "x/a from the pod network except y/b (ipBlock with except)", policies: func(w *world) []*networkingv1.NetworkPolicy {
		return []*networkingv1.NetworkPolicy{ingress(pol("x", "pod", "a"), from(nil, block("10.42.0.0/16", w.ip("y/b"))))}
	}},
	{name: "x/a from z/c only (ipBlock /32)", policies: func(w *world) []*networkingv1.NetworkPolicy {
		return []*networkingv1.NetworkPolicy{ingress(pol("x", "pod", "a"), from(nil, block(w.ip("z/c"))))}
	}},
	{name: "x/a on tcp/80 only", policies: just(ingress(pol("x", "pod", "a"), from(ports(num(tcpP, 80)))))},
	{name: "x/a on tcp 80-81 (endPort) from z", policies: just(ingress(pol("x", "pod", "a"), from(ports(span(tcpP, 80, 81)), nss("ns", "z"))))},
	{name: "x/a on udp/80 only", policies: just(ingress(pol("x", "pod", "a"), from(ports(num(udpP, 80)))))},
	{name: "x/a on any udp port", policies: just(ingress(pol("x", "pod", "a"), from(ports(anyPort(udpP)))))},
	{name: "x/a on sctp only (no tcp or udp)", policies: just(ingress(pol("x", "pod", "a"), from(ports(anyPort(sctpP)))))},
	{name: "x on named port web (80 on a and c, 81 on b)", policies: just(ingress(pol("x"), from(ports(named(tcpP, "web")))))},
	{name: "x on named port serve-81-tcp from y", policies: just(ingress(pol("x"), from(ports(named(tcpP, "serve-81-tcp")), nss("ns", "y"))))},
	{name: "x/a to namespace y only", policies: just(egress(pol("x", "pod", "a"), to(nil, nss("ns", "y"))))},
	{name: "x/a to its pod c on tcp/81", policies: just(egress(pol("x", "pod", "a"), to(ports(num(tcpP, 81)), pods("pod", "c"))))},
	{name: "x/a to z/b only (ipBlock)", policies: func(w *world) []*networkingv1.NetworkPolicy {
		return []*networkingv1.NetworkPolicy{egress(pol("x", "pod", "a"), to(nil, block(w.ip("z/b"))))}
	}},
	{name: "x/a to named port web in y (resolved on the peers)", policies: just(egress(pol("x", "pod", "a"), to(ports(named(tcpP, "web")), nss("ns", "y"))))},
	{name: "x/a to tcp 80-81 anywhere (no udp)", policies: just(egress(pol("x", "pod", "a"), to(ports(span(tcpP, 80, 81)))))},
	{name: "x/a to udp/80 only", policies: just(egress(pol("x", "pod", "a"), to(ports(num(udpP, 80)))))},
	{name: "two ingress policies on x/a: y on any port, z on tcp/81", policies: just(
		ingress(pol("x", "pod", "a"), from(nil, nss("ns", "y"))),
		ingress(pol("x", "pod", "a"), from(ports(num(tcpP, 81)), nss("ns", "z"))))},
	{name: "ingress and egress on x/a, only with x/b", policies: just(
		egress(ingress(pol("x", "pod", "a"), from(nil, pods("pod", "b"))), to(nil, pods("pod", "b"))))},
	{name: "each namespace open to itself only", policies: just(
		ingress(pol("x"), from(nil, pods())), ingress(pol("y"), from(nil, pods())), ingress(pol("z"), from(nil, pods())))},
	{name: "y denies all egress but lets x in: replies pass", policies: just(egress(ingress(pol("y"), from(nil, nss("ns", "x")))))},
	{name: "policy selecting no pod changes nothing", policies: just(ingress(pol("x", "pod", "nobody")))},
	{name: "several rules of one policy add up", policies: just(ingress(pol("z", "pod", "c"),
		from(ports(num(tcpP, 80)), pods("pod", "a")), from(ports(num(udpP, 80)), nss("team", "red")), from(ports(num(tcpP, 81)), block("10.42.0.0/16"))))},
	{name: "x/a from pods b; relabel then delete", policies: just(ingress(pol("x", "pod", "a"), from(nil, both(lbl(), lbl("pod", "b"))))),
		steps: []policyStep{
			{"y/c relabelled pod=b is let in", func(ctx context.Context, t *testing.T, w *world) {
				w.setPodLabels(ctx, t, "y/c", map[string]string{"pod": "b"})
			}},
			{"x/a relabelled pod=z is no longer fenced", func(ctx context.Context, t *testing.T, w *world) {
				w.setPodLabels(ctx, t, "x/a", map[string]string{"pod": "z"})
			}},
			{"labels restored", func(ctx context.Context, t *testing.T, w *world) {
				w.setPodLabels(ctx, t, "y/c", map[string]string{"pod": "c"})
				w.setPodLabels(ctx, t, "x/a", map[string]string{"pod": "a"})
			}},
			{"policy deleted", func(ctx context.Context, t *testing.T, w *world) { w.setPolicies(ctx, t, nil) }},
		}},
	{name: "z from team red; relabel namespaces", policies: just(ingress(pol("z"), from(nil, nss("team", "red")))),
		steps: []policyStep{
			{"y joins team red", func(ctx context.Context, t *testing.T, w *world) {
				w.setNamespaceLabels(ctx, t, "y", map[string]string{"ns": "y", "team": "red"})
			}},
			{"x leaves team red", func(ctx context.Context, t *testing.T, w *world) {
				w.setNamespaceLabels(ctx, t, "x", map[string]string{"ns": "x"})
			}},
			{"teams restored", func(ctx context.Context, t *testing.T, w *world) {
				w.setNamespaceLabels(ctx, t, "y", map[string]string{"ns": "y", "team": "blue"})
				w.setNamespaceLabels(ctx, t, "x", map[string]string{"ns": "x", "team": "red"})
			}},
		}},
	{name: "egress to named port web after a label change of the peer", policies: just(egress(pol("x", "pod", "a"), to(ports(named(tcpP, "web")), pods("pod", "b")))),
		steps: []policyStep{{"x/c relabelled pod=b", func(ctx context.Context, t *testing.T, w *world) {
			w.setPodLabels(ctx, t, "x/c", map[string]string{"pod": "b"})
		}}, {"x/c restored", func(ctx context.Context, t *testing.T, w *world) {
			w.setPodLabels(ctx, t, "x/c", map[string]string{"pod": "c"})
		}}}},
}

// TestNetworkPolicyTruthTable probes every source x destination x port of the x/y/z, a/b/c
// grid with real connections through OVN for each policy set, and compares with the API's
// semantics (the oracle); the host must always reach every pod.
func TestNetworkPolicyTruthTable(t *testing.T) {
	e := startEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := e.kubelet.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	w := startWorld(ctx, t, e)
	start := time.Now()
	checks := 0
	for i, c := range policyCases {
		nps := c.policies(w)
		for j, np := range nps {
			np.Name = fmt.Sprintf("c%02d-%d", i, j)
		}
		if len(nps) > 0 || len(w.policies) > 0 {
			w.change(ctx, func() { w.setPolicies(ctx, t, nps) })
		}
		w.check(ctx, t, c.name)
		checks++
		for _, s := range c.steps {
			w.change(ctx, func() { s.do(ctx, t, w) })
			w.check(ctx, t, c.name+": "+s.name)
			checks++
		}
		t.Logf("case %d %q: ok (%v)", i, c.name, time.Since(start).Round(time.Millisecond))
	}
	w.change(ctx, func() { w.setPolicies(ctx, t, nil) })
	w.check(ctx, t, "every policy deleted")
	t.Logf("truth table: %d cases, %d matrices of %d probes, %v", len(policyCases), checks+1, len(w.cells()), time.Since(start).Round(time.Millisecond))
	w.checkFlowCachePurged(ctx, t)
	w.checkServiceDNAT(ctx, t)
	if aborts := e.datapathAborts(); aborts != "" {
		t.Fatal(aborts)
	}
	if os.Getenv("EDGEOVN_E2E_KEEP") == "" {
		e.checkNoPolicyRows(ctx, t)
	}
}

// checkNoPolicyRows: with every policy deleted, no policy port group, ACL or address set is
// left but the hosts' set.
func (e *env) checkNoPolicyRows(ctx context.Context, t *testing.T) {
	t.Helper()
	eventually(ctx, t, "no policy rows left", func() bool {
		out, err := e.rig.Run(ctx, "ovn-nbctl", "--db="+e.rig.NBEndpoint, "--bare", "--columns=name", "list", "Port_Group", "--", "list", "ACL")
		return err == nil && strings.TrimSpace(string(out)) == ""
	})
}
