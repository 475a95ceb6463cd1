package vswitch

import (
	"testing"
)

// A pod's new sandbox replaces the port its lost sandbox left behind in the same transaction:
// ovn-controller must never see two interfaces of one logical port (issue 29).
func TestAddPortRemovesStaleTwin(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	old := PortSpec{Bridge: "br-int", Name: "vethold_h", IfaceID: "web.default"}
	other := PortSpec{Bridge: "br-int", Name: "vethother_h", IfaceID: "db.default"}
	for _, s := range []PortSpec{old, other} {
		f.mustWrite(t, 1, "add "+s.Name, func() error { return f.c.AddPort(f.ctx, s) })
	}
	f.setInterfaceKey(t, "vethold_h", KeyOVNInstalled, "true")
	if err := f.c.SetPortQoS(f.ctx, QoSSpec{Port: "vethold_h", Type: QoSTypeNoop}); err != nil {
		t.Fatal(err)
	}
	// Foreign and internal ports with the same iface-id are not edgeovn's pod ports to remove.
	f.insertForeignPort(t, "br-int", "eth9")
	f.vsctl(t, "set", "Interface", "eth9", "external_ids:iface-id=web.default")
	f.waitCache(t, func() bool {
		ids, _, _ := f.c.InterfaceExternalIDs(f.ctx, "eth9")
		return ids[KeyIfaceID] == "web.default"
	})
	internal := PortSpec{Bridge: "br-int", Name: "ovn9", Type: PortInternal, IfaceID: "web.default"}
	f.mustWrite(t, 1, "add internal twin", func() error { return f.c.AddPort(f.ctx, internal) })
	if got := f.vsctl(t, "get", "Interface", "vethold_h", "external_ids:iface-id"); got != "web.default" {
		t.Fatalf("an internal port's add removed the pod's port: iface-id %q", got)
	}

	fresh := PortSpec{Bridge: "br-int", Name: "vethnew_h", IfaceID: "web.default"}
	f.mustWrite(t, 1, "add the new sandbox's port", func() error { return f.c.AddPort(f.ctx, fresh) })
	if got := f.vsctl(t, "list-ports", "br-int"); got != "eth9\novn9\nvethnew_h\nvethother_h" {
		t.Fatalf("list-ports = %q, want the stale vethold_h gone and the rest kept", got)
	}
	if got := f.vsctl(t, "--columns=name", "find", "Interface", "name=vethold_h"); got != "" {
		t.Errorf("stale interface left behind: %q", got)
	}
	if n := f.countRows(t, "QoS"); n != 0 {
		t.Errorf("stale port's QoS row left behind: %d rows", n)
	}
	f.mustWrite(t, 0, "add again", func() error { return f.c.AddPort(f.ctx, fresh) })

	// The same name re-added (same container ID) over a twin still removes the twin.
	f.mustWrite(t, 1, "add old again", func() error { return f.c.AddPort(f.ctx, old) })
	f.mustWrite(t, 1, "re-add new over old", func() error { return f.c.AddPort(f.ctx, fresh) })
	if got := f.vsctl(t, "list-ports", "br-int"); got != "eth9\novn9\nvethnew_h\nvethother_h" {
		t.Fatalf("list-ports = %q after re-adding an unchanged port beside a twin", got)
	}
}
