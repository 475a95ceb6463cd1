package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestUnderlayInterfaces: customInterfaces and MTU, and logicalGateway. edge-2's site NIC is
// named site0 (customInterfaces names it for edge-2, defaultInterface eth1 the rest): each
// bridge takes its own NIC with the host's address and route; edge-1's eth1 has MTU 1400 and
// its br-site follows it (the mtu label says so). An underlay Subnet on VLAN 200 with
// logicalGateway: true gets its router port on ovn-cluster at spec.gateway (no site router on
// that VLAN): its pods' gateway is OVN's, they talk across the hosts tagged 200, and reach an
// overlay pod on the other host through the cluster router. Then excludeNodes naming edge-2
// gives site0 its address and route back and takes edge-2 out of the status.
func TestUnderlayInterfaces(t *testing.T) {
	w, ctx := startUnderlay(t)
	h1, h2 := w.cl.hosts[0], w.cl.hosts[1]
	for _, args := range [][]string{{"link", "set", "eth1", "down"}, {"link", "set", "eth1", "name", "site0"}, {"link", "set", "site0", "up"},
		{"route", "add", "198.18.0.0/15", "via", siteLAN.Addr().String(), "dev", "site0"}} {
		if out, err := h2.rig.Run(ctx, "ip", args...); err != nil {
			t.Fatalf("edge-2: ip %v: %v %s", args, err, out)
		}
	}
	if out, err := h1.rig.Run(ctx, "ip", "link", "set", "eth1", "mtu", "1400"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: site\nspec:\n  defaultInterface: eth1\n"+
		"  customInterfaces: [{interface: site0, nodes: ["+w.cl.names[1]+"]}]\n")
	w.pnReady(ctx, t, "site")
	if got := h1.vsctl(ctx, t, "list-ports", "br-site"); !strings.Contains(got, "eth1") {
		t.Errorf("%s: br-site ports %q, want eth1", w.cl.names[0], got)
	}
	if got := h2.vsctl(ctx, t, "list-ports", "br-site"); !strings.Contains(got, "site0") {
		t.Errorf("%s: br-site ports %q, want site0 (customInterfaces)", w.cl.names[1], got)
	}
	if v := hostView(ctx, t, h2); !reMatch(v, `br-site\s+\S+\s+198.51.100.12/24`) || !strings.Contains(v, "198.18.0.0/15 via 198.51.100.1 dev br-site") {
		t.Errorf("%s: want its address and route on br-site:\n%s", w.cl.names[1], v)
	}
	if out, err := h1.rig.Run(ctx, "cat", "/sys/class/net/br-site/mtu"); err != nil || strings.TrimSpace(string(out)) != "1400" {
		t.Errorf("%s: br-site mtu %q %v, want 1400 (eth1's)", w.cl.names[0], out, err)
	}
	n1, err := h1.kubelet.Kube.CoreV1().Nodes().Get(ctx, w.cl.names[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := n1.Labels["site.provider-network.kubernetes.io/mtu"]; got != "1400" {
		t.Errorf("%s: mtu label %q, want 1400", w.cl.names[0], got)
	}

	applyYAML(ctx, t, w.vlans, "apiVersion: kubeovn.io/v1\nkind: Vlan\nmetadata:\n  name: v200\nspec:\n  id: 200\n  provider: site\n")
	applyYAML(ctx, t, w.subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: lgw\nspec:\n  cidrBlock: 192.0.3.0/24\n  gateway: 192.0.3.1\n  vlan: v200\n  logicalGateway: true\n")
	waitCondition(ctx, t, w.subnets, "lgw", kubeovn.ConditionReady, "True", "")
	if got := w.cl.central(ctx, t, "ovn-nbctl", "--db="+w.cl.c.Central.NBEndpoint, "--columns=networks", "list", "Logical_Router_Port", "ovn-cluster-lgw"); !strings.Contains(got, "192.0.3.1/24") {
		t.Errorf("logicalGateway router port: %s", got)
	}
	p1, p2 := w.underlayPod(ctx, t, 0, "l1", "lgw"), w.underlayPod(ctx, t, 1, "l2", "lgw")
	o2 := runPod(ctx, t, h2, "o2")
	if out, err := exec.CommandContext(ctx, "ip", "netns", "exec", p1.NetnsName(), "ip", "route", "show", "default").CombinedOutput(); err != nil || !strings.Contains(string(out), "via 192.0.3.1") {
		t.Errorf("logicalGateway pod's default route %q %v, want via 192.0.3.1", out, err)
	}
	retryPing(ctx, t, p1, netipMust("192.0.3.1"), "logicalGateway pod -> its gateway (OVN's router port)")
	retryPing(ctx, t, p1, p2.IP(), "logicalGateway pod -> pod on the other host")
	tagged := capture(ctx, t, w.site.Switch.Netns, w.site.Leg(h1.rig), "vlan 200 and icmp", func() {
		if _, err := podsim.Ping(ctx, p1, p2.IP()); err != nil {
			t.Error(err)
		}
	})
	if tagged < 6 {
		t.Errorf("logicalGateway pods across hosts: %d ICMP packets tagged 200 on the site leg, want 6", tagged)
	}
	retryPing(ctx, t, p1, o2.IP(), "logicalGateway pod -> overlay pod on the other host (through ovn-cluster)")
	retryPing(ctx, t, o2, p1.IP(), "overlay pod -> logicalGateway pod on the other host")
	if err := podsim.TCP(ctx, p1, o2); err != nil {
		t.Errorf("tcp logicalGateway pod -> overlay pod: %v", err)
	}

	// excludeNodes: edge-2 excluded gives site0 its address and route back and leaves the
	// status; edge-1 keeps its bridge.
	w.patchPN(ctx, t, `{"spec":{"excludeNodes":["`+w.cl.names[1]+`"]}}`)
	eventually(ctx, t, w.cl.names[1]+" excluded: site0 has its address and route back, br-site gone", func() bool {
		v := hostView(ctx, t, h2)
		return !strings.Contains(v, "br-site") && strings.Contains(v, "198.18.0.0/15 via 198.51.100.1 dev site0") && reMatch(v, `site0@\S+\s+\S+\s+198.51.100.12/24`)
	})
	eventually(ctx, t, "readyNodes ["+w.cl.names[0]+"] only", func() bool {
		st := w.pn(ctx, t, "site").Status
		return len(st.ReadyNodes) == 1 && st.ReadyNodes[0] == w.cl.names[0] && st.NodeCondition(w.cl.names[1], kubeovn.ConditionReady) == nil
	})
	if v := hostView(ctx, t, h1); !reMatch(v, `br-site\s+\S+\s+198.51.100.11/24`) {
		t.Errorf("%s: want its bridge kept:\n%s", w.cl.names[0], v)
	}
}

func (w *underlayWorld) patchPN(ctx context.Context, t *testing.T, patch string) {
	t.Helper()
	if _, err := w.pns.Patch(ctx, "site", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch provider network site %s: %v", patch, err)
	}
}
