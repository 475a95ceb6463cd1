package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// TestUnderlayStatus: the statuses Kube-OVN's controller writes. A ProviderNetwork lists its
// Vlans (status.vlans: the valid ones that conflict with none); a Vlan lists the Subnets naming
// it (status.subnets); a second Vlan with the id of an older one on the same provider is
// status.conflict and the Subnet naming it is refused naming spec.vlan (VlanConflict), the
// first one's Subnet staying Ready. Fields edgeovn does not implement are refused on each node
// with a condition naming them, a Warning Event on the ProviderNetwork naming the node, and the
// host untouched: exchangeLinkName (the NIC is not renamed) and autoCreateVlanSubinterfaces
// naming a missing eth1.200 (no VLAN subinterfaces here).
func TestUnderlayStatus(t *testing.T) {
	w, ctx := startUnderlay(t)
	before := []string{hostView(ctx, t, w.cl.hosts[0]), hostView(ctx, t, w.cl.hosts[1])}
	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: xl\nspec:\n  defaultInterface: eth1\n  exchangeLinkName: true\n")
	w.pnNotReady(ctx, t, "xl", "spec.exchangeLinkName: edgeovn does not rename the host's NIC eth1 (its bridge is br-xl): refused on node edge-1",
		"refused on node edge-2")
	for i, e := range w.cl.hosts {
		if got := hostView(ctx, t, e); got != before[i] {
			t.Errorf("%s changed by a refused exchangeLinkName:\n%s\nwas:\n%s", w.cl.names[i], got, before[i])
		}
	}
	w.pnEvent(ctx, t, "xl", "InitOVSBridgeFailed", "node edge-1: spec.exchangeLinkName")
	if err := w.pns.Delete(ctx, "xl", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: auto\nspec:\n  defaultInterface: eth1.200\n  autoCreateVlanSubinterfaces: true\n")
	w.pnNotReady(ctx, t, "auto", "interface eth1.200 not found on node edge-1 and spec.autoCreateVlanSubinterfaces: edgeovn does not create VLAN subinterfaces",
		"interface eth1.200 not found on node edge-2 and spec.autoCreateVlanSubinterfaces")

	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: site\nspec:\n  defaultInterface: eth1\n")
	w.pnReady(ctx, t, "site")
	applyYAML(ctx, t, w.vlans, "apiVersion: kubeovn.io/v1\nkind: Vlan\nmetadata:\n  name: v100\nspec:\n  id: 100\n  provider: site\n")
	applyYAML(ctx, t, w.vlans, "apiVersion: kubeovn.io/v1\nkind: Vlan\nmetadata:\n  name: flat\nspec:\n  id: 0\n  provider: site\n")
	applyYAML(ctx, t, w.subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: under\nspec:\n  cidrBlock: 192.0.2.0/24\n  gateway: 192.0.2.1\n  vlan: v100\n")
	waitCondition(ctx, t, w.subnets, "under", "Ready", "True", "")
	eventually(ctx, t, "provider network site lists vlans flat and v100", func() bool {
		return slices.Equal(w.pn(ctx, t, "site").Status.Vlans, []string{"flat", "v100"})
	})
	eventually(ctx, t, "vlan v100 lists subnet under", func() bool {
		v := w.vlan(ctx, t, "v100")
		return slices.Equal(v.Status.Subnets, []string{"under"}) && !v.Status.Conflict
	})

	applyYAML(ctx, t, w.vlans, "apiVersion: kubeovn.io/v1\nkind: Vlan\nmetadata:\n  name: dup\nspec:\n  id: 100\n  provider: site\n")
	applyYAML(ctx, t, w.subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: under2\nspec:\n  cidrBlock: 192.0.3.0/24\n  gateway: 192.0.3.1\n  vlan: dup\n")
	var last any
	eventually(ctx, t, "vlan dup conflicts, listing under2", func() bool {
		v := w.vlan(ctx, t, "dup")
		last = v.Status
		return v.Status.Conflict && slices.Equal(v.Status.Subnets, []string{"under2"})
	})
	t.Logf("vlan dup: %+v; v100: %+v", last, w.vlan(ctx, t, "v100").Status)
	waitCondition(ctx, t, w.subnets, "under2", "Validated", "False", "spec.vlan: vlan dup has id 100 on provider site, as vlan v100, which is older or in use")
	waitCondition(ctx, t, w.subnets, "under", "Ready", "True", "")
	if got := w.pn(ctx, t, "site").Status.Vlans; !slices.Equal(got, []string{"flat", "v100"}) {
		t.Errorf("provider network site vlans %v: want [flat v100] (dup conflicts)", got)
	}
	// The older Vlan gone, dup no longer conflicts: its Subnet is applied.
	if err := w.subnets.Delete(ctx, "under", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.vlans.Delete(ctx, "v100", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(ctx, t, w.subnets, "under2", "Ready", "True", "")
	eventually(ctx, t, "provider network site lists dup and flat", func() bool {
		return slices.Equal(w.pn(ctx, t, "site").Status.Vlans, []string{"dup", "flat"}) && !w.vlan(ctx, t, "dup").Status.Conflict
	})
}

func (w *underlayWorld) vlan(ctx context.Context, t *testing.T, name string) *kubeovn.Vlan {
	t.Helper()
	u, err := w.vlans.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := kubeovn.VlanFrom(u)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// pnEvent waits for a Warning Event on the ProviderNetwork with reason and a message holding msg.
func (w *underlayWorld) pnEvent(ctx context.Context, t *testing.T, name, reason, msg string) {
	t.Helper()
	kube := w.cl.hosts[0].kubelet.Kube
	var last []string
	eventually(ctx, t, "event "+reason+" on provider network "+name, func() bool {
		evs, err := kube.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false
		}
		last = last[:0]
		for _, e := range evs.Items {
			last = append(last, e.Type+" "+e.Reason+": "+e.Message)
			if e.Type == "Warning" && e.Reason == reason && strings.Contains(e.Message, msg) && e.InvolvedObject.Kind == "ProviderNetwork" {
				return true
			}
		}
		return false
	})
	t.Logf("events of provider network %s: %v", name, last)
}
