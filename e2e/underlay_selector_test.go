package e2e

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// TestUnderlayNodeSelector: a ProviderNetwork with spec.nodeSelector (site=a) applies to the
// nodes whose labels match it, as in Kube-OVN, and excludeNodes is then not read: edge-1
// (labelled, though in excludeNodes) gets br-site, edge-2 (not labelled) keeps eth1 as it is
// and has no condition in the status. Each node carries Kube-OVN's labels
// site.provider-network.kubernetes.io/ready, interface and mtu where it is ready, exclude
// where the network does not apply. Labels are followed: edge-2 labelled joins, edge-1
// unlabelled gives eth1 its address back and leaves the status. spec.vlanInterfaces naming
// an interface the host has is refused on that node naming the field, what is wired staying.
// Deleting the ProviderNetwork removes the labels.
func TestUnderlayNodeSelector(t *testing.T) {
	w, ctx := startUnderlay(t)
	kube := w.cl.hosts[0].kubelet.Kube
	n1, n2 := w.cl.names[0], w.cl.names[1]
	h1, h2 := w.cl.hosts[0], w.cl.hosts[1]
	nodeLabel := func(node, value string) {
		t.Helper()
		v := "null"
		if value != "" {
			v = `"` + value + `"`
		}
		if _, err := kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(`{"metadata":{"labels":{"site":`+v+`}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	providerLabels := func(node string) map[string]string {
		n, err := kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for k, v := range n.Labels {
			if strings.Contains(k, ".provider-network.kubernetes.io/") {
				out[k] = v
			}
		}
		return out
	}
	waitLabels := func(node string, want map[string]string) {
		t.Helper()
		var got map[string]string
		eventually(ctx, t, node+"'s provider labels "+fmt.Sprint(want), func() bool {
			got = providerLabels(node)
			return maps.Equal(got, want)
		})
	}
	ready := func(h *env) map[string]string {
		mtu, err := h.rig.Run(ctx, "cat", "/sys/class/net/eth1/mtu")
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{"site.provider-network.kubernetes.io/ready": "true", "site.provider-network.kubernetes.io/interface": "eth1",
			"site.provider-network.kubernetes.io/mtu": strings.TrimSpace(string(mtu))}
	}
	excluded := map[string]string{"site.provider-network.kubernetes.io/exclude": "true"}
	status := func(wantReady []string, node string, has bool) {
		t.Helper()
		var last kubeovn.ProviderNetworkStatus
		eventually(ctx, t, fmt.Sprintf("readyNodes %v, %s's condition present %v", wantReady, node, has), func() bool {
			last = w.pn(ctx, t, "site").Status
			return slices.Equal(last.ReadyNodes, wantReady) && (last.NodeCondition(node, kubeovn.ConditionReady) != nil) == has
		})
		t.Logf("provider network site: %+v", last)
	}

	nodeLabel(n1, "a")
	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: site\nspec:\n  defaultInterface: eth1\n"+
		"  nodeSelector: {matchLabels: {site: a}}\n  excludeNodes: ["+n1+"]\n")
	status([]string{n1}, n2, false)
	waitLabels(n1, ready(h1))
	waitLabels(n2, excluded)
	if v := hostView(ctx, t, h1); !reMatch(v, `br-site\s+\S+\s+198.51.100.11/24`) {
		t.Errorf("%s (selected): want its address on br-site:\n%s", n1, v)
	}
	if v := hostView(ctx, t, h2); strings.Contains(v, "br-site") || !reMatch(v, `eth1@\S+\s+\S+\s+198.51.100.12/24`) {
		t.Errorf("%s (not selected): want eth1 untouched, no br-site:\n%s", n2, v)
	}

	nodeLabel(n2, "a")
	w.pnReady(ctx, t, "site")
	waitLabels(n2, ready(h2))
	eventually(ctx, t, n2+"'s address on br-site", func() bool { return reMatch(hostView(ctx, t, h2), `br-site\s+\S+\s+198.51.100.12/24`) })

	nodeLabel(n1, "")
	status([]string{n2}, n1, false)
	waitLabels(n1, excluded)
	eventually(ctx, t, n1+" unselected: eth1 has its address and route back, br-site gone", func() bool {
		v := hostView(ctx, t, h1)
		return !strings.Contains(v, "br-site") && strings.Contains(v, "198.18.0.0/15 via 198.51.100.1 dev eth1") && reMatch(v, `eth1@\S+\s+\S+\s+198.51.100.11/24`)
	})

	// spec.vlanInterfaces naming an interface edge-2 has (a macvlan standing for eth1.10: this
	// kernel has no 8021q): refused on edge-2 naming the field; br-site stays as it is.
	if out, err := h2.rig.Run(ctx, "ip", "link", "add", "link", "eth1", "name", "eth1.10", "type", "macvlan"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if _, err := w.pns.Patch(ctx, "site", types.MergePatchType, []byte(`{"spec":{"vlanInterfaces":["eth1.10"]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	w.pnNotReady(ctx, t, "site", "spec.vlanInterfaces/preserveVlanInterfaces: VLAN subinterfaces eth1.10 of eth1 on node "+n2)
	waitLabels(n2, map[string]string{})
	if v := hostView(ctx, t, h2); !reMatch(v, `br-site\s+\S+\s+198.51.100.12/24`) {
		t.Errorf("%s: a refused change must leave br-site wired:\n%s", n2, v)
	}

	if err := w.pns.Delete(ctx, "site", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitLabels(n1, map[string]string{})
	waitLabels(n2, map[string]string{})
	eventually(ctx, t, n2+": eth1 has its address back", func() bool {
		return reMatch(hostView(ctx, t, h2), `eth1@\S+\s+\S+\s+198.51.100.12/24`)
	})
}
