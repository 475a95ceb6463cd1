package vswitch

import (
	"errors"
	"net"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
)

func mustMAC(t *testing.T, s string) net.HardwareAddr {
	t.Helper()
	mac, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return mac
}

func ovn0Spec(t *testing.T) PortSpec {
	return PortSpec{Bridge: "br-int", Name: "ovn0", Type: PortInternal, IfaceID: "node-node1",
		MAC: mustMAC(t, "0a:58:64:40:00:02"), MTU: 1400}
}

func TestAddInternalPort(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	spec := ovn0Spec(t)
	f.mustWrite(t, 1, "add internal port", func() error { return f.c.AddPort(f.ctx, spec) })
	want := map[string]string{
		"type":                  "internal",
		"mac":                   "0a:58:64:40:00:02",
		"mtu_request":           "1400",
		"external_ids:iface-id": "node-node1",
		"external_ids:vendor":   ovn.Vendor,
	}
	f.checkInterface(t, "ovn0", want)
	f.mustWrite(t, 0, "add same internal port", func() error { return f.c.AddPort(f.ctx, spec) })

	// Another MAC for the join port (the node's port was re-created): the column is repaired
	// and nothing else is touched.
	spec.MAC = mustMAC(t, "0A:58:64:40:00:09")
	f.mustWrite(t, 1, "change mac", func() error { return f.c.AddPort(f.ctx, spec) })
	want["mac"] = "0a:58:64:40:00:09"
	f.checkInterface(t, "ovn0", want)
	f.mustWrite(t, 0, "same mac in other case", func() error { return f.c.AddPort(f.ctx, spec) })

	// Someone changed the row behind our back: mac, mtu and iface-id come back in one write.
	f.vsctl(t, "set", "Interface", "ovn0", "mac=\"0a:58:64:40:00:77\"", "mtu_request=1500", "external_ids:iface-id=x")
	f.waitCache(t, func() bool { // AddPort reads the client's cache, which hears of it a moment later
		i, err := f.c.interfaceByName(f.ctx, "ovn0")
		return err == nil && i != nil && i.ExternalIDs["iface-id"] == "x"
	})
	f.mustWrite(t, 1, "repair", func() error { return f.c.AddPort(f.ctx, spec) })
	f.checkInterface(t, "ovn0", want)

	// nil MAC and zero MTU leave the columns as they are.
	spec.MAC, spec.MTU = nil, 0
	f.mustWrite(t, 0, "unset mac and mtu", func() error { return f.c.AddPort(f.ctx, spec) })
	f.checkInterface(t, "ovn0", want)

	// The host's port is not a pod port: Ports (and so GC) never see it.
	if ports, err := f.c.Ports(f.ctx, "br-int"); err != nil || len(ports) != 0 {
		t.Errorf("Ports lists the internal port: %+v, %v", ports, err)
	}
	n, err := f.c.GC(f.ctx, "br-int", func(Port) bool { return false })
	if err != nil || n != 0 {
		t.Errorf("GC deleted %d ports (%v), want none", n, err)
	}
	if got := f.vsctl(t, "list-ports", "br-int"); got != "ovn0" {
		t.Errorf("list-ports = %q, want ovn0", got)
	}
}

// A system port left where the host port belongs is turned into an internal one.
func TestAddInternalPortRepairsType(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	spec := ovn0Spec(t)
	sys := PortSpec{Bridge: spec.Bridge, Name: spec.Name, IfaceID: spec.IfaceID}
	f.mustWrite(t, 1, "add as system port", func() error { return f.c.AddPort(f.ctx, sys) })
	f.mustWrite(t, 1, "add as internal port", func() error { return f.c.AddPort(f.ctx, spec) })
	f.checkInterface(t, "ovn0", map[string]string{"type": "internal", "mac": "0a:58:64:40:00:02"})
	f.mustWrite(t, 0, "again", func() error { return f.c.AddPort(f.ctx, spec) })
}

func TestAddInternalPortBadInput(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	good := ovn0Spec(t)
	f.mustWrite(t, 1, "add internal port", func() error { return f.c.AddPort(f.ctx, good) })
	bad := map[string]func(*PortSpec){
		"multicast mac": func(s *PortSpec) { s.MAC = mustMAC(t, "01:00:5e:00:00:01") },
		"broadcast mac": func(s *PortSpec) { s.MAC = mustMAC(t, "ff:ff:ff:ff:ff:ff") },
		"zero mac":      func(s *PortSpec) { s.MAC = mustMAC(t, "00:00:00:00:00:00") },
		"long mac":      func(s *PortSpec) { s.MAC = mustMAC(t, "02:00:5e:10:00:00:00:01") },
		"unknown type":  func(s *PortSpec) { s.Type = "patch" },
		"mtu too small": func(s *PortSpec) { s.MTU = 67 },
		"negative mtu":  func(s *PortSpec) { s.MTU = -1 },
		"mac on system": func(s *PortSpec) { s.Type = PortSystem; s.MTU = 0 },
		"mtu on system": func(s *PortSpec) { s.Type = PortSystem; s.MAC = nil },
	}
	for name, mutate := range bad {
		spec := ovn0Spec(t)
		mutate(&spec)
		if err := f.c.AddPort(f.ctx, spec); !errors.Is(err, ovn.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", name, err)
		}
	}
	if n := f.c.writes.Load(); n != 2 {
		t.Fatalf("bad input caused %d writes", n-2)
	}
	f.checkInterface(t, "ovn0", map[string]string{"type": "internal", "mac": "0a:58:64:40:00:02", "mtu_request": "1400"})
}

func (f fixture) checkInterface(t *testing.T, name string, want map[string]string) {
	t.Helper()
	for col, v := range want {
		if got := f.vsctl(t, "get", "Interface", name, col); got != v {
			t.Errorf("interface %s %s = %q, want %q", name, col, got, v)
		}
	}
}
