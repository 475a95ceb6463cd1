package node

import (
	"testing"

	"github.com/edgeovn/edgeovn/cni/server"
)

func withMTU(u any, mtu int64) any {
	u.(interface{ UnstructuredContent() map[string]any }).UnstructuredContent()["spec"].(map[string]any)["mtu"] = mtu
	return u
}

// TestSubnetMTU: a pod gets its Subnet's validated spec.mtu in place of the node's; a
// Subnet without one, or not validated, leaves the node's; a refused change keeps the MTU
// taken before; an attachment's subnet counts the same (the ADD's switch is its subnet).
func TestSubnetMTU(t *testing.T) {
	v := &subnetView{defaultNAT: true}
	v.refresh([]any{
		withMTU(subnetObj("jumbo", "10.50.0.0/24", false, true), 9000),
		withMTU(subnetObj("small", "10.51.0.0/24", false, true), 1300),
		subnetObj("plain", "10.52.0.0/24", false, true),
		withMTU(subnetObj("refused", "10.53.0.0/24", false, false), 1200),
	})
	pod := func(sw string) int { return withSubnetMTU(server.PodNetwork{Switch: sw, MTU: 1400}, v).MTU }
	for sw, want := range map[string]int{"jumbo": 9000, "small": 1300, "plain": 1400, "refused": 1400, "ovn-default": 1400} {
		if got := pod(sw); got != want {
			t.Errorf("pod on %s: mtu %d, want %d", sw, got, want)
		}
	}
	// small's change to 70000, first with the status of before (Validated True), then refused
	// (Validated False, Ready True): 1300 stays.
	v.refresh([]any{withMTU(subnetObj("small", "10.51.0.0/24", false, true), 70000)})
	if got := pod("small"); got != 1300 {
		t.Errorf("with the bad mtu not yet refused: mtu %d, want 1300 kept", got)
	}
	v.refresh([]any{withMTU(changeRefused("small", "10.51.0.0/24"), 70000)})
	if got := pod("small"); got != 1300 {
		t.Errorf("after a refused change: mtu %d, want 1300 kept", got)
	}
	if got := withSubnetMTU(server.PodNetwork{Switch: "small", MTU: 1400}, nil).MTU; got != 1400 {
		t.Errorf("before the Subnets are watched: mtu %d, want the node's", got)
	}
}
