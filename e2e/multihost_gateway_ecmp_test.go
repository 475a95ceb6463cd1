package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"os/exec"
	"regexp"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestCentralizedGatewayEcmp: three hosts; a centralized Subnet with enableEcmp and
// gatewayNode "edge-1,edge-2" sends a pod's (on edge-3) flows to the site through both
// gateway hosts at once (the site's tcpdump sees TCP connections from twenty source ports
// arrive masqueraded to edge-1's and to edge-2's address), and through edge-2 alone once edge-1 is
// NotReady; then with gatewayNodeSelectors (role=gw) instead of gatewayNode, the labelled
// Node is the gateway host, and moving the label moves the traffic; status.activateGateway
// follows.
func TestCentralizedGatewayEcmp(t *testing.T) {
	cl, ctx := startCluster(t, 3)
	e3 := cl.hosts[2]
	dyn, err := dynamic.NewForConfig(cl.c.Central.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	subnets := dyn.Resource(kubeovn.SubnetResource)
	waitCondition(ctx, t, subnets, "ovn-default", kubeovn.ConditionValidated, "True", "")
	setReady(ctx, t, cl, 0, true)
	setReady(ctx, t, cl, 1, true)
	applyYAML(ctx, t, subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: ecmp\nspec:\n  cidrBlock: 10.167.0.0/16\n"+
		"  gatewayType: centralized\n  gatewayNode: edge-1,edge-2\n  enableEcmp: true\n  natOutgoing: true\n")
	waitCondition(ctx, t, subnets, "ecmp", kubeovn.ConditionReady, "True", "")
	waitCondition(ctx, t, subnets, "ecmp", kubeovn.ConditionUnsupported, "False", "")

	p := runPodIn(ctx, t, e3, "default", "c", inSubnet("ecmp"))
	site := harness.UnderlayGateway()
	ip := func(i int) string { return cl.hosts[i].kubelet.NodeIP.String() }
	leaveThrough := func(want []string, active, when string) {
		t.Helper()
		var got map[string]int
		for deadline := time.Now().Add(60 * time.Second); ; {
			got = tcpSources(ctx, cl.c.Central.Netns, p, site)
			if slices.Equal(slices.Sorted(maps.Keys(got)), want) {
				break
			}
			if time.Now().After(deadline) {
				out, _ := cl.c.Central.Run(ctx, "ovn-nbctl", "--db="+cl.c.Central.NBEndpoint, "lr-policy-list", "ovn-cluster")
				groups, _ := e3.rig.Run(ctx, "ovs-ofctl", "dump-groups", "br-int")
				dp, _ := e3.rig.Run(ctx, "ovs-appctl", "dpctl/dump-flows")
				t.Fatalf("%s: the site saw the pod's flows from %v, want from %v\n%s\n%s\n%s", when, got, want, out, groups, dp)
			}
		}
		if st := subnetStatus(ctx, t, subnets, "ecmp"); st.ActivateGateway != active {
			t.Errorf("%s: activateGateway %q, want %q", when, st.ActivateGateway, active)
		}
		t.Logf("%s: the site sees the pod's 20 flows as %v", when, got)
	}
	leaveThrough([]string{ip(0), ip(1)}, "edge-1,edge-2", "enableEcmp, edge-1 and edge-2 Ready")
	setReady(ctx, t, cl, 0, false)
	leaveThrough([]string{ip(1)}, "edge-2", "edge-1 not Ready")
	setReady(ctx, t, cl, 0, true)
	leaveThrough([]string{ip(0), ip(1)}, "edge-1,edge-2", "edge-1 Ready again")

	// gatewayNodeSelectors: the Nodes labelled role=gw.
	labelNode(ctx, t, cl, 1, "gw")
	patchSubnet(ctx, t, subnets, "ecmp", map[string]any{"gatewayNode": nil, "enableEcmp": nil,
		"gatewayNodeSelectors": []any{map[string]any{"matchLabels": map[string]any{"role": "gw"}}}})
	leaveThrough([]string{ip(1)}, "edge-2", "gatewayNodeSelectors role=gw, edge-2 labelled")
	labelNode(ctx, t, cl, 0, "gw")
	labelNode(ctx, t, cl, 1, "")
	leaveThrough([]string{ip(0)}, "edge-1", "the label moved to edge-1")
}

// tcpSources opens twenty TCP connections (twenty source ports: twenty flows) from the pod to
// the site's port 9999 and returns the source addresses of the SYNs the site's tcpdump saw,
// with their counts. TCP, not UDP: OVS's symmetric L4 hash, which OVN's ECMP selection uses,
// leaves UDP ports out, so UDP flows between two addresses all take one next hop.
func tcpSources(ctx context.Context, netns string, from *podsim.Sandbox, site netip.Addr) map[string]int {
	// Not CommandContext: killing timeout at the deadline would leave tcpdump holding the pipe.
	cmd := exec.Command("ip", "netns", "exec", netns, "timeout", "5", "tcpdump", "-lni", "any",
		fmt.Sprintf("tcp[tcpflags] & tcp-syn != 0 and dst host %s and dst port 9999", site))
	out := make(chan []byte, 1)
	go func() { b, _ := cmd.CombinedOutput(); out <- b }()
	time.Sleep(700 * time.Millisecond)
	script := fmt.Sprintf("for i in $(seq 1 20); do timeout 2 bash -c 'exec 3<>/dev/tcp/%s/9999' 2>/dev/null & done; wait", site)
	_, _ = exec.CommandContext(ctx, "ip", "netns", "exec", from.NetnsName(), "bash", "-c", script).CombinedOutput()
	b := <-out
	got := map[string]int{}
	for _, m := range synSource.FindAllStringSubmatch(string(b), -1) {
		got[m[1]]++
	}
	return got
}

var synSource = regexp.MustCompile(`IP (\d+\.\d+\.\d+\.\d+)\.\d+ > \S+: Flags \[S\]`)

// labelNode sets host i's Node label role to value, or removes it with "".
func labelNode(ctx context.Context, t *testing.T, cl *cluster, i int, value string) {
	t.Helper()
	var v any = value
	if value == "" {
		v = nil
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{"role": v}}})
	if _, err := cl.c.Central.Kube().CoreV1().Nodes().Patch(ctx, cl.names[i], types.MergePatchType, b, metav1.PatchOptions{}); err != nil {
		t.Fatalf("label node %s: %v", cl.names[i], err)
	}
}

// subnetStatus reads a Subnet's status.
func subnetStatus(ctx context.Context, t *testing.T, subnets dynamic.NamespaceableResourceInterface, name string) kubeovn.SubnetStatus {
	t.Helper()
	u, err := subnets.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := kubeovn.FromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	return st.Status
}
