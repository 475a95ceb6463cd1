package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// kubeOVNCentralized is Kube-OVN's centralized gateway example (guide/subnet), unchanged.
const kubeOVNCentralized = `apiVersion: kubeovn.io/v1
kind: Subnet
metadata:
  name: centralized
spec:
  protocol: IPv4
  cidrBlock: 10.166.0.0/16
  default: false
  excludeIps:
  - 10.166.0.1
  gateway: 10.166.0.1
  gatewayType: centralized
  gatewayNode: "node1,node2"
  natOutgoing: true
`

// TestCentralizedGateway: three hosts; Kube-OVN's centralized example applied unchanged names
// hosts this cluster has not (node1, node2) and is refused naming gatewayNode, with no field
// unsupported; with gatewayNode "edge-1,edge-2" a pod on edge-3 reaches the site (the
// central's underlay address) masqueraded to edge-1's address while edge-1 is Ready (tcpdump at
// the site), to edge-2's once edge-1 is not, and to its own host's with neither Ready
// (distributed); status.activateGateway follows.
func TestCentralizedGateway(t *testing.T) {
	cl, ctx := startCluster(t, 3)
	e3 := cl.hosts[2]
	dyn, err := dynamic.NewForConfig(cl.c.Central.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	subnets := dyn.Resource(kubeovn.SubnetResource)
	waitCondition(ctx, t, subnets, "ovn-default", kubeovn.ConditionValidated, "True", "")
	applyYAML(ctx, t, subnets, kubeOVNCentralized)
	waitCondition(ctx, t, subnets, "centralized", kubeovn.ConditionValidated, "False", `gatewayNode "node1,node2" names no node`)
	waitCondition(ctx, t, subnets, "centralized", kubeovn.ConditionUnsupported, "False", "")
	patchSubnet(ctx, t, subnets, "centralized", map[string]any{"gatewayNode": "edge-1,edge-2"})
	waitCondition(ctx, t, subnets, "centralized", kubeovn.ConditionReady, "True", "")

	p := runPodIn(ctx, t, e3, "default", "c", inSubnet("centralized"))
	site := harness.UnderlayGateway()
	leavesAs := func(want netip.Addr, active, when string) {
		t.Helper()
		var got string
		eventually(ctx, t, when+": the site sees "+want.String(), func() bool {
			got = siteSource(ctx, t, cl.c.Central.Netns, p, site)
			return got == want.String()
		})
		u, err := subnets.Get(ctx, "centralized", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := kubeovn.FromUnstructured(u); st == nil || st.Status.ActivateGateway != active {
			t.Errorf("%s: activateGateway %q, want %q", when, st.Status.ActivateGateway, active)
		}
		t.Logf("%s: the site sees the pod as %s", when, got)
	}
	ip := func(i int) netip.Addr { return cl.hosts[i].kubelet.NodeIP }
	leavesAs(ip(2), "", "no gateway host Ready: its own host")
	setReady(ctx, t, cl, 0, true)
	setReady(ctx, t, cl, 1, true)
	leavesAs(ip(0), "edge-1", "edge-1 Ready")
	setReady(ctx, t, cl, 0, false)
	leavesAs(ip(1), "edge-2", "edge-1 not Ready")
	setReady(ctx, t, cl, 0, true)
	leavesAs(ip(0), "edge-1", "edge-1 Ready again")
}

// setReady sets host i's Node Ready condition (no kubelet reports it in this rig).
func setReady(ctx context.Context, t *testing.T, cl *cluster, i int, ready bool) {
	t.Helper()
	nodes := cl.c.Central.Kube().CoreV1().Nodes()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	for {
		n, err := nodes.Get(ctx, cl.names[i], metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, LastHeartbeatTime: metav1.Now()}}
		if _, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
	}
}

var icmpSource = regexp.MustCompile(`IP (\d+\.\d+\.\d+\.\d+) > \S+: ICMP echo request`)

// siteSource pings the site from the pod and returns the source address tcpdump sees there.
func siteSource(ctx context.Context, t *testing.T, netns string, from *podsim.Sandbox, site netip.Addr) string {
	t.Helper()
	// Not CommandContext: killing timeout at the deadline would leave tcpdump holding the pipe.
	cmd := exec.Command("ip", "netns", "exec", netns, "timeout", "4", "tcpdump", "-lni", "any", "-c", "1",
		fmt.Sprintf("icmp[icmptype] == icmp-echo and dst host %s", site))
	out := make(chan []byte, 1)
	go func() { b, _ := cmd.CombinedOutput(); out <- b }()
	time.Sleep(700 * time.Millisecond)
	_, _ = podsim.Ping(ctx, from, site)
	b := <-out
	if m := icmpSource.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}
