package vswitch

import "testing"

func TestReaders(t *testing.T) {
	f := newFixture(t, []string{"set", "Open_vSwitch", ".", "external_ids:system-id=edge-1", "external_ids:ovn-encap-ip=192.0.2.5"})
	cfg, err := f.c.OVNConfig(f.ctx)
	if err != nil || cfg[KeySystemID] != "edge-1" || cfg[KeyEncapIP] != "192.0.2.5" {
		t.Fatalf("OVNConfig = %v, %v", cfg, err)
	}
	if _, ok, err := f.c.InterfaceExternalIDs(f.ctx, "veth1_h"); ok || err != nil {
		t.Fatalf("InterfaceExternalIDs of a missing interface: ok %v, err %v", ok, err)
	}
	addPodPort(t, f)
	ids, ok, err := f.c.InterfaceExternalIDs(f.ctx, "veth1_h")
	if err != nil || !ok || ids["iface-id"] != "web.default" {
		t.Fatalf("InterfaceExternalIDs(veth1_h) = %v, %v, %v", ids, ok, err)
	}
}
