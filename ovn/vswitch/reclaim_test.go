package vswitch

import (
	"errors"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
)

// What ovn-controller leaves on a port it released is BindingLost; ReclaimPort takes the
// iface-id away and gives it back (two writes), keeping every other key.
func TestBindingLostAndReclaim(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	spec := PortSpec{Bridge: "br-int", Name: "veth1_h", IfaceID: "web.default", ExternalIDs: map[string]string{"pod_name": "web"}}
	f.mustWrite(t, 1, "add port", func() error { return f.c.AddPort(f.ctx, spec) })
	lost := func() bool {
		ports, err := f.c.Ports(f.ctx, "br-int")
		if err != nil || len(ports) != 1 {
			t.Fatalf("Ports = %+v, %v", ports, err)
		}
		return ports[0].BindingLost()
	}
	if lost() {
		t.Fatal("a port never bound reported lost")
	}
	f.setInterfaceKey(t, "veth1_h", KeyOVNInstalled, "true")
	f.setInterfaceKey(t, "veth1_h", keyInstalledTS, "1795743219524")
	if lost() {
		t.Fatal("a bound port reported lost")
	}
	f.vsctl(t, "remove", "Interface", "veth1_h", "external_ids", KeyOVNInstalled) // a release
	f.waitCache(t, lost)

	f.mustWrite(t, 2, "reclaim", func() error { return f.c.ReclaimPort(f.ctx, "veth1_h") })
	for key, want := range map[string]string{KeyIfaceID: "web.default", "pod_name": "web", ovn.VendorKey: ovn.Vendor} {
		if got := f.vsctl(t, "get", "Interface", "veth1_h", "external_ids:"+key); got != want {
			t.Errorf("after reclaim %s = %q, want %q", key, got, want)
		}
	}

	f.insertForeignPort(t, "br-int", "eth9")
	for name, want := range map[string]error{"eth9": ovn.ErrNotOwned, "nope_h": ovn.ErrNotFound} {
		if err := f.c.ReclaimPort(f.ctx, name); !errors.Is(err, want) {
			t.Errorf("ReclaimPort(%s) = %v, want %v", name, err, want)
		}
	}
	if got := f.vsctl(t, "list-ports", "br-int"); got != "eth9\nveth1_h" {
		t.Errorf("a failed reclaim changed the bridge: %q", got)
	}
}
