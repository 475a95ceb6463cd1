package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestPingerLoss: the pinger runs on three hosts against real pods; nftables on the underlay
// drops half the packets between edge-1 and edge-2 (numgen), and from then on each of those two
// reports loss to the other's pods and ovn0, and no other pair reports any. The metrics are
// read with the Prometheus text parser, and /pinger lists the lossy targets.
func TestPingerLoss(t *testing.T) {
	cl, ctx := startCluster(t, 3, "--enable-pinger", "--pinger-interval=1s")
	pods := make([]placedPod, 3)
	for i := range pods {
		pods[i] = placedPod{runPod(ctx, t, cl.hosts[i], fmt.Sprintf("pinged-%d", i)), i}
		if err := cl.hosts[i].kubelet.MarkRunning(ctx, pods[i].sb); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range pods {
		for _, b := range pods {
			if a.sb != b.sb {
				retryPing(ctx, t, a.sb, b.sb.IP(), a.sb.Pod.Name+" -> "+b.sb.Pod.Name)
			}
		}
	}
	// Every host has pinged every pod and ovn0 once before the baseline.
	eventually(ctx, t, "a pinger round with every target on each host", func() bool {
		for i := range cl.hosts {
			if len(scrapePinger(ctx, t, cl, i).count) < 6 {
				return false
			}
		}
		return true
	})
	base := make([]pingerCounts, 3)
	for i := range cl.hosts {
		base[i] = scrapePinger(ctx, t, cl, i)
	}
	dropBetween(ctx, t, cl.c.UnderlayNetns(), cl.hosts[0].rig.NodeIP.String(), cl.hosts[1].rig.NodeIP.String())

	var now []pingerCounts
	eventually(ctx, t, "5 pinger rounds under loss", func() bool {
		now = make([]pingerCounts, 3)
		for i := range cl.hosts {
			now[i] = scrapePinger(ctx, t, cl, i)
			for k, c := range now[i].count {
				if c-base[i].count[k] < 15 {
					return false
				}
			}
		}
		return true
	})
	lossy := map[string]bool{"edge-1>edge-2": true, "edge-2>edge-1": true}
	for i := range cl.hosts {
		for k := range now[i].count {
			lost := now[i].lost[k] - base[i].lost[k]
			sent := now[i].count[k] - base[i].count[k]
			t.Logf("%s: %v of %v lost", k, lost, sent)
			if lossy[k.pair()] && lost == 0 {
				t.Errorf("%s: no loss reported across the lossy link (%v sent)", k, sent)
			}
			if !lossy[k.pair()] && lost != 0 {
				t.Errorf("%s: %v lost where nothing drops", k, lost)
			}
		}
	}
	text := pingerEndpoint(ctx, t, cl, 0)
	t.Logf("/pinger on edge-1:\n%s", text)
	if !strings.Contains(text, "edge-2") || !strings.Contains(text, "round at") {
		t.Errorf("/pinger on edge-1 does not list edge-2's lossy targets:\n%s", text)
	}
	status, _ := cl.hosts[0].command(ctx, "status")
	t.Logf("edgeovn status on edge-1:\n%s", status)
	if !regexp.MustCompile(`pinger\s+round at`).MatchString(status) {
		t.Errorf("edgeovn status on edge-1 does not show the last pinger round:\n%s", status)
	}
}

// pingerKey is one exported series: kind (pod, node), source and target host, target address.
type pingerKey struct{ kind, src, dst, ip string }

func (k pingerKey) pair() string   { return k.src + ">" + k.dst }
func (k pingerKey) String() string { return k.kind + " " + k.src + " -> " + k.dst + " " + k.ip }

type pingerCounts struct{ count, lost map[pingerKey]float64 }

// scrapePinger reads host i's /metrics and parses it with the Prometheus text parser.
func scrapePinger(ctx context.Context, t *testing.T, cl *cluster, i int) pingerCounts {
	t.Helper()
	body := getOps(ctx, t, cl, i, "/metrics")
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("edge-%d /metrics does not parse: %v", i+1, err)
	}
	out := pingerCounts{count: map[pingerKey]float64{}, lost: map[pingerKey]float64{}}
	for _, kind := range []string{"pod", "node"} {
		for name, into := range map[string]map[pingerKey]float64{"pinger_" + kind + "_ping_count_total": out.count, "pinger_" + kind + "_ping_lost_total": out.lost} {
			mf := families[name]
			if mf == nil {
				continue
			}
			for _, m := range mf.Metric {
				l := labelMap(m)
				ip := l["target_pod_ip"]
				if kind == "node" {
					ip = l["target_node_ip"]
				}
				into[pingerKey{kind, l["src_node_name"], l["target_node_name"], ip}] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.Label {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func pingerEndpoint(ctx context.Context, t *testing.T, cl *cluster, i int) string {
	return getOps(ctx, t, cl, i, "/pinger")
}

// getOps GETs path from host i's metrics address (127.0.0.1:10665 in its namespace).
func getOps(ctx context.Context, t *testing.T, cl *cluster, i int, path string) string {
	t.Helper()
	rig := cl.hosts[i].rig
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return rig.DialContext(ctx, network, addr)
	}}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:10665"+path, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("edge-%d %s: %v", i+1, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// dropBetween drops, on the underlay bridge, half the packets between the two addresses in
// each direction (nftables numgen).
func dropBetween(ctx context.Context, t *testing.T, netns, a, b string) {
	t.Helper()
	rules := fmt.Sprintf(`table bridge loss {
	chain impair {
		type filter hook forward priority 0;
		ip saddr %[1]s ip daddr %[2]s numgen random mod 2 == 0 drop
		ip saddr %[2]s ip daddr %[1]s numgen random mod 2 == 0 drop
	}
}
`, a, b)
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", netns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft on the underlay: %v: %s", err, out)
	}
}

// TestPingerDualStack: in a dual-stack cluster every host pings every pod and every host's
// ovn0 at each of their addresses (Kube-OVN pings each of a pod's IPs): the IPv6 series exist
// and count requests with none lost, beside the IPv4 ones. The DNS check resolves through a
// real CoreDNS behind the cluster DNS address (10.43.0.10, a ClusterIP reached from the host
// through ovn0) on both hosts, and says unhealthy once CoreDNS is stopped.
func TestPingerDualStack(t *testing.T) {
	if err := harness.Preflight(harness.CoreDNS); err != nil {
		skip.Now(t, "pinger DNS check (run `make deps` as root): %v", err)
	}
	cl, ctx := startClusterWith(t, clusterSpec{hosts: 2, extra: []string{"--cluster-cidr=" + dualClusterCIDR,
		"--service-cidr=10.43.0.0/16,2001:cafe:43::/112", "--enable-pinger", "--pinger-interval=1s"},
		serviceCIDRs: []netip.Prefix{netip.MustParsePrefix("10.43.0.0/16"), netip.MustParsePrefix("2001:cafe:43::/112")}})
	var want []pingerKey
	for i, h := range cl.hosts {
		sb := runPod(ctx, t, h, fmt.Sprintf("pinged-%d", i))
		if err := h.kubelet.MarkRunning(ctx, sb); err != nil {
			t.Fatal(err)
		}
		join := nodeJoinOf(ctx, t, h, cl.names[i])
		for j := range cl.hosts {
			src := cl.names[j]
			want = append(want, pingerKey{"pod", src, cl.names[i], sb.IP().String()}, pingerKey{"pod", src, cl.names[i], podIP6(t, sb).String()})
			for _, ip := range join.IPs {
				want = append(want, pingerKey{"node", src, cl.names[i], ip.String()})
			}
		}
	}
	var got []pingerCounts
	eventually(ctx, t, "3 pinger rounds at every address of every pod and ovn0", func() bool {
		got = make([]pingerCounts, len(cl.hosts))
		for i := range cl.hosts {
			got[i] = scrapePinger(ctx, t, cl, i)
		}
		for _, k := range want {
			if got[slices.Index(cl.names, k.src)].count[k] < 9 {
				return false
			}
		}
		return true
	})
	for _, k := range want {
		c := got[slices.Index(cl.names, k.src)]
		t.Logf("%s: %v of %v lost", k, c.lost[k], c.count[k])
		if c.lost[k] != 0 {
			t.Errorf("%s: %v of %v lost on a network that drops nothing", k, c.lost[k], c.count[k])
		}
	}
	checkPingerDNS(ctx, t, cl)
}

// checkPingerDNS runs CoreDNS in a pod on the first host behind the Service kube-dns at
// 10.43.0.10 (the pinger's default cluster DNS); every host's pinger says the internal DNS is
// healthy, and unhealthy once CoreDNS is stopped.
func checkPingerDNS(ctx context.Context, t *testing.T, cl *cluster) {
	t.Helper()
	h := cl.hosts[0]
	sb := runPod(ctx, t, h, "coredns")
	p, err := h.rig.StartCoreDNS(ctx, harness.CoreDNSRequest{Netns: sb.Netns})
	if err != nil {
		t.Fatalf("start coredns in pod %s: %v", sb.Pod.Name, err)
	}
	createServiceIn(ctx, t, h, "kube-system", "kube-dns", func(svc *corev1.Service) {
		svc.Spec.ClusterIP = "10.43.0.10"
		svc.Spec.Ports = []corev1.ServicePort{{Name: "dns", Port: 53, TargetPort: intstr.FromInt32(53), Protocol: corev1.ProtocolUDP}}
	})
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-dns-test",
		Labels: map[string]string{discoveryv1.LabelServiceName: "kube-dns"}}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports:     []discoveryv1.EndpointPort{{Name: new("dns"), Port: new(int32(53)), Protocol: new(corev1.ProtocolUDP)}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{sb.IP().String()}, NodeName: new(cl.names[0])}}}
	if _, err := h.kubelet.Kube.DiscoveryV1().EndpointSlices("kube-system").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dnsHealth := func(want float64) func() bool {
		return func() bool {
			for i := range cl.hosts {
				if pingerGauge(ctx, t, cl, i, "pinger_internal_dns_healthy") != want {
					return false
				}
			}
			return true
		}
	}
	eventually(ctx, t, "internal DNS healthy on every host (CoreDNS behind 10.43.0.10)", dnsHealth(1))
	if err := p.Stop(); err != nil {
		t.Logf("stop coredns: %v", err)
	}
	eventually(ctx, t, "internal DNS unhealthy on every host once CoreDNS is stopped", dnsHealth(0))
	for i := range cl.hosts {
		if v := pingerGauge(ctx, t, cl, i, "pinger_internal_dns_unhealthy"); v != 1 {
			t.Errorf("%s: pinger_internal_dns_unhealthy = %v with CoreDNS stopped, want 1", cl.names[i], v)
		}
	}
}

// pingerGauge is host i's value of a gauge without labels other than nodeName (-1: absent).
func pingerGauge(ctx context.Context, t *testing.T, cl *cluster, i int, name string) float64 {
	t.Helper()
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(strings.NewReader(getOps(ctx, t, cl, i, "/metrics")))
	if err != nil {
		t.Fatalf("%s /metrics does not parse: %v", cl.names[i], err)
	}
	if mf := families[name]; mf != nil && len(mf.Metric) == 1 {
		return mf.Metric[0].GetGauge().GetValue()
	}
	return -1
}
