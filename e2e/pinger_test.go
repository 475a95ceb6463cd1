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
// and count requests with none lost, beside the IPv4 ones.
func TestPingerDualStack(t *testing.T) {
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
}
