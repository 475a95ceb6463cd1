package pinger

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeLister is a cluster of Nodes and their pods.
type fakeLister struct {
	nodes []corev1.Node
	pods  map[string][]corev1.Pod
}

func (f fakeLister) ListNodes(context.Context) ([]corev1.Node, error) { return f.nodes, nil }
func (f fakeLister) ListPods(_ context.Context, node string, limit int) ([]corev1.Pod, error) {
	ps := f.pods[node]
	return ps[:min(limit, len(ps))], nil
}

func allocated(ip string) map[string]string {
	return map[string]string{"ovn.kubernetes.io/ip_address": ip, "ovn.kubernetes.io/cidr": "0.0.0.0/0",
		"ovn.kubernetes.io/mac_address": "0a:00:00:00:00:01", "ovn.kubernetes.io/gateway": "0.0.0.1",
		"ovn.kubernetes.io/logical_switch": "ovn-default", "ovn.kubernetes.io/allocated": "true", "ovn.kubernetes.io/routed": "true"}
}

func node(name, internal, join string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: allocated(join)},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: internal}}}}
}

func pod(name, ip string, hostNet bool) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{HostNetwork: hostNet}}
	if ip != "" {
		p.Annotations = allocated(ip)
	}
	return p
}

func TestListTargetsSamples(t *testing.T) {
	l := fakeLister{nodes: []corev1.Node{node("n2", "192.0.2.2", "100.64.0.3"), node("n1", "192.0.2.1", "100.64.0.2")},
		pods: map[string][]corev1.Pod{
			"n1": {pod("c", "10.42.0.3", false), pod("host", "", true), pod("a", "10.42.0.1", false), pod("b", "10.42.0.2", false)},
			"n2": {pod("z", "10.42.1.9", false), pod("pending", "", false)},
		}}
	tg, err := listTargets(context.Background(), l, pickRequest{Self: "n1", PodsPerNode: 2, MaxTargets: 5})
	if err != nil {
		t.Fatal(err)
	}
	if tg.SrcNodeIP != "192.0.2.1" || !slices.Equal(tg.SrcIPs, []netip.Addr{netip.MustParseAddr("100.64.0.2")}) {
		t.Errorf("source %s %s", tg.SrcNodeIP, tg.SrcIPs)
	}
	var got []string
	for _, n := range tg.Nodes {
		got = append(got, n.Node+"="+n.IP.String())
	}
	for _, p := range tg.Pods {
		got = append(got, p.Node+":"+p.IP.String())
	}
	// Hosts first, then pods host by host in turn, in name order, within 5 in all.
	if want := "n1=100.64.0.2 n2=100.64.0.3 n1:10.42.0.1 n2:10.42.1.9 n1:10.42.0.2"; strings.Join(got, " ") != want {
		t.Errorf("targets %q, want %q", strings.Join(got, " "), want)
	}
}

// dual is allocated for a dual-stack address pair.
func dual(v4, v6 string) map[string]string {
	a := allocated(v4 + "," + v6)
	a["ovn.kubernetes.io/cidr"], a["ovn.kubernetes.io/gateway"] = "0.0.0.0/0,::/0", "0.0.0.1,::1"
	return a
}

// TestListTargetsDualStack: a dual-stack host's ovn0 and pods are a target per address (IPv4
// first), a pod counts once towards PodsPerNode, MaxTargets counts addresses and never splits a
// pod's pair, and each family's series carry the ovn0 address of that family as src_pod_ip.
func TestListTargetsDualStack(t *testing.T) {
	n1, n2 := node("n1", "192.0.2.1", ""), node("n2", "192.0.2.2", "")
	n1.Annotations, n2.Annotations = dual("100.64.0.2", "fd00:100:64::2"), dual("100.64.0.3", "fd00:100:64::3")
	a, b, c := pod("a", "", false), pod("b", "", false), pod("c", "", false)
	a.Annotations, b.Annotations, c.Annotations = dual("10.42.0.1", "fd00:10:42::1"), dual("10.42.0.2", "fd00:10:42::2"), dual("10.42.1.1", "fd00:10:42:1::1")
	l := fakeLister{nodes: []corev1.Node{n1, n2}, pods: map[string][]corev1.Pod{"n1": {b, a}, "n2": {c}}}
	tg, err := listTargets(context.Background(), l, pickRequest{Self: "n1", PodsPerNode: 2, MaxTargets: 9})
	if err != nil {
		t.Fatal(err)
	}
	if want := []netip.Addr{netip.MustParseAddr("100.64.0.2"), netip.MustParseAddr("fd00:100:64::2")}; !slices.Equal(tg.SrcIPs, want) {
		t.Errorf("source addresses %v, want %v", tg.SrcIPs, want)
	}
	var got []string
	for _, n := range tg.Nodes {
		got = append(got, n.Node+"="+n.IP.String())
	}
	for _, p := range tg.Pods {
		got = append(got, p.Node+":"+p.IP.String())
	}
	// 4 host addresses, then a (n1) and c (n2) as pairs; b's pair would make 10 > 9.
	want := "n1=100.64.0.2 n1=fd00:100:64::2 n2=100.64.0.3 n2=fd00:100:64::3 n1:10.42.0.1 n1:fd00:10:42::1 n2:10.42.1.1 n2:fd00:10:42:1::1"
	if strings.Join(got, " ") != want {
		t.Errorf("targets %q, want %q", strings.Join(got, " "), want)
	}

	m := NewMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.Collectors()...)
	p := New(Config{Node: "n1", Metrics: m})
	res := map[netip.Addr]Result{}
	for _, pt := range tg.Pods {
		res[pt.IP] = Result{Sent: 3, Received: 3, RTT: time.Millisecond}
	}
	var r Round
	p.export(tg, res, &r)
	lost := gather(t, reg)["pinger_pod_ping_lost_total"]
	for _, pair := range [][2]string{{"100.64.0.2", "10.42.1.1"}, {"fd00:100:64::2", "fd00:10:42:1::1"}} {
		if !strings.Contains(lost, `src_pod_ip="`+pair[0]+`",target_node_ip="192.0.2.2",target_node_name="n2",target_pod_ip="`+pair[1]+`"`) {
			t.Errorf("no series from %s to %s in:\n%s", pair[0], pair[1], lost)
		}
	}
}

// TestMetricsParse: a round's metrics, as /metrics serves them, parse with the Prometheus
// text parser and carry Kube-OVN's names and labels; a target gone from the sample takes
// its series with it.
func TestMetricsParse(t *testing.T) {
	m := NewMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.Collectors()...)
	p := New(Config{Node: "n1", Metrics: m})
	tg := Targets{SrcNodeIP: "192.0.2.1", SrcIPs: []netip.Addr{netip.MustParseAddr("100.64.0.2")},
		Nodes: []NodeTarget{{Node: "n2", IP: netip.MustParseAddr("100.64.0.3")}},
		Pods:  []PodTarget{{Node: "n2", NodeIP: "192.0.2.2", IP: netip.MustParseAddr("10.42.1.9")}}}
	res := map[netip.Addr]Result{
		netip.MustParseAddr("100.64.0.3"): {Sent: 3, Received: 2, RTT: 700 * time.Microsecond},
		netip.MustParseAddr("10.42.1.9"):  {Sent: 3, Received: 3, RTT: 400 * time.Microsecond},
	}
	var r Round
	p.export(tg, res, &r)
	dnsResult(m.internalDNSHealthy, m.internalDNSUnhealthy, m.internalDNSLatency, "n1", DNSResult{Took: 3 * time.Millisecond})
	m.inconsistentPortBinding.WithLabelValues("n1").Set(0)
	families := gather(t, reg)
	want := map[string]string{
		"pinger_node_ping_lost_total":      `src_node_ip="192.0.2.1",src_node_name="n1",src_pod_ip="100.64.0.2",target_node_ip="100.64.0.3",target_node_name="n2"`,
		"pinger_pod_ping_lost_total":       `target_pod_ip="10.42.1.9"`,
		"pinger_pod_ping_latency_ms":       `target_node_ip="192.0.2.2"`,
		"pinger_pod_ping_count_total":      `target_node_name="n2"`,
		"pinger_node_ping_latency_ms":      `src_pod_ip="100.64.0.2"`,
		"pinger_node_ping_count_total":     `src_node_name="n1"`,
		"pinger_internal_dns_healthy":      `nodeName="n1"`,
		"pinger_internal_dns_latency_ms":   `nodeName="n1"`,
		"pinger_inconsistent_port_binding": `nodeName="n1"`,
	}
	for name, labels := range want {
		text, ok := families[name]
		if !ok {
			t.Errorf("metric %s missing", name)
			continue
		}
		if !strings.Contains(text, labels) {
			t.Errorf("metric %s: labels %s not in %s", name, labels, text)
		}
	}
	if v := families["pinger_node_ping_lost_total"]; !strings.HasSuffix(strings.TrimSpace(v), " 1") {
		t.Errorf("node lost: %s, want 1", v)
	}
	p.export(Targets{SrcNodeIP: tg.SrcNodeIP, SrcIPs: tg.SrcIPs, Nodes: tg.Nodes}, res, &r)
	if _, ok := gather(t, reg)["pinger_pod_ping_lost_total"]; ok {
		t.Error("a pod gone from the sample still has its series")
	}
}

// gather renders the registry as text and parses it back: name -> its samples as text.
func gather(t *testing.T, reg *prometheus.Registry) map[string]string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			t.Fatal(err)
		}
	}
	var parser expfmt.TextParser
	parsed, err := parser.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatalf("text parser: %v", err)
	}
	out := map[string]string{}
	for name, mf := range parsed {
		var b bytes.Buffer
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
		out[name] = b.String()
	}
	return out
}

// TestProbeLoopback pings this host's loopback, both families at once, over the raw sockets
// (root only).
func TestProbeLoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("raw ICMP socket needs root")
	}
	lo, lo6 := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")
	res, err := probe(context.Background(), ProbeRequest{Targets: []netip.Addr{lo, lo6, lo}, Count: 3, Interval: 10 * time.Millisecond, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []netip.Addr{lo, lo6} {
		if r := res[a]; r.Sent != 3 || r.Received != 3 || r.RTT <= 0 {
			t.Errorf("loopback %s: %+v, want 3 sent, 3 received, an rtt", a, r)
		}
	}
}

// countingLister counts ListNodes calls.
type countingLister struct {
	*fakeLister
	lists int
}

func (c *countingLister) ListNodes(ctx context.Context) ([]corev1.Node, error) {
	c.lists++
	return c.fakeLister.ListNodes(ctx)
}

// TestRoundReusesSampleAndDropsGoneTargets: rounds within 30 s reuse the listed sample; a
// target that answered nothing makes the round list again, and a pod gone since is not
// reported as loss, while one still listed is.
func TestRoundReusesSampleAndDropsGoneTargets(t *testing.T) {
	fl := &fakeLister{nodes: []corev1.Node{node("n1", "192.0.2.1", "100.64.0.2")},
		pods: map[string][]corev1.Pod{"n1": {pod("a", "10.42.0.1", false), pod("b", "10.42.0.2", false)}}}
	l := &countingLister{fakeLister: fl}
	m := NewMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.Collectors()...)
	p := New(Config{Node: "n1", PodsPerNode: 2, MaxTargets: 10, Lister: l, Metrics: m,
		DNSServer: netip.MustParseAddr("127.53.0.9"), InternalDNS: "kubernetes.default"})
	silent := map[netip.Addr]bool{}
	p.probe = func(_ context.Context, req ProbeRequest) (map[netip.Addr]Result, error) {
		out := map[netip.Addr]Result{}
		for _, a := range req.Targets {
			out[a] = Result{Sent: 3, Received: 3, RTT: time.Millisecond}
			if silent[a] {
				out[a] = Result{Sent: 3}
			}
		}
		return out, nil
	}
	ctx := context.Background()
	p.Round(ctx)
	p.Round(ctx)
	if l.lists != 1 {
		t.Fatalf("two rounds listed %d times, want once", l.lists)
	}
	lost := func() string { return gather(t, reg)["pinger_pod_ping_lost_total"] }

	silent[netip.MustParseAddr("10.42.0.2")] = true // b answers nothing, still listed: loss
	p.Round(ctx)
	if l.lists != 2 || !strings.Contains(lost(), `target_pod_ip="10.42.0.2"} 3`) {
		t.Fatalf("b silent and listed: %d lists, lost:\n%s", l.lists, lost())
	}
	fl.pods["n1"] = fl.pods["n1"][:1] // b deleted: no longer reported at all
	p.Round(ctx)
	if strings.Contains(lost(), "10.42.0.2") {
		t.Errorf("a pod gone since the sample was listed is still reported:\n%s", lost())
	}
	if !strings.Contains(lost(), `target_pod_ip="10.42.0.1"} 0`) {
		t.Errorf("pod a's series:\n%s", lost())
	}
}
