package node

import (
	"slices"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn/southbound"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// A port with ovn-installed whose Port_Binding is not up on this chassis is lost (issue 29:
// ovn-controller released it and left ovn-installed="true"), and reclaimed at the second
// check in a row, as a port released in the local database is.
func TestLostAgainstSouthbound(t *testing.T) {
	ids := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	ports := []vswitch.Port{
		{Name: "up_h", IfaceID: "up.default", ExternalIDs: ids("ovn-installed", "true", "ovn-installed-ts", "1")},
		{Name: "down_h", IfaceID: "down.default", ExternalIDs: ids("ovn-installed", "true", "ovn-installed-ts", "1")}, // claimed, up=false
		{Name: "gone_h", IfaceID: "gone.default", ExternalIDs: ids("ovn-installed", "true", "ovn-installed-ts", "1")}, // chassis=[] or another
		{Name: "released_h", IfaceID: "released.default", ExternalIDs: ids("ovn-installed-ts", "1")},                  // the local release
		{Name: "adding_h", IfaceID: "adding.default", ExternalIDs: ids()},                                             // an ADD in flight
	}
	b := southbound.Bindings{Registered: true, Up: map[string]bool{"up.default": true, "down.default": false}}
	want := map[string]string{"down_h": reasonNotUp, "gone_h": reasonNotUp, "released_h": reasonReleased}
	for _, p := range ports {
		lost, why := lostAgainst(p, b)
		if w, ok := want[p.Name]; lost != ok || (ok && why != w) {
			t.Errorf("lostAgainst(%s) = %v, %q; want %v, %q", p.Name, lost, why, ok, w)
		}
	}

	var w bindingWatch
	pred := func(p vswitch.Port) (bool, string) { return lostAgainst(p, b) }
	never := func(string) bool { return false }
	t0 := time.Unix(1000, 0)
	if got := w.due(ports, pred, never, t0); len(got) != 0 {
		t.Errorf("first check: due %v, want none", got)
	}
	var names []string
	for _, p := range w.due(ports, pred, never, t0.Add(driftInterval)) {
		names = append(names, p.Name+": "+p.why)
	}
	if !slices.Equal(names, []string{"down_h: " + reasonNotUp, "gone_h: " + reasonNotUp, "released_h: " + reasonReleased}) {
		t.Errorf("second check: due %q", names)
	}
	if anyInstalled(ports[3:]) || !anyInstalled(ports) {
		t.Error("anyInstalled: the southbound is read only when a port has ovn-installed")
	}
}
