package vswitch

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

func (f fixture) countRows(t *testing.T, table string) int {
	t.Helper()
	return len(strings.Fields(f.vsctl(t, "--bare", "--columns=_uuid", "list", table)))
}

// portQoS returns the port's QoS row column, "" when the port has none.
func (f fixture) portQoS(t *testing.T, port, column string) string {
	t.Helper()
	uuid := f.vsctl(t, "--bare", "--columns=qos", "list", "Port", port)
	if uuid == "" {
		return ""
	}
	return f.vsctl(t, "get", "QoS", uuid, column)
}

// waitCache waits until the client's cache shows what ovs-vsctl wrote (it arrives
// asynchronously) or the fixture's context ends.
func (f fixture) waitCache(t *testing.T, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-f.ctx.Done():
			t.Fatal("cache never showed the change made with ovs-vsctl")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestSetPortQoS(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	f.mustWrite(t, 1, "add port", func() error {
		return f.c.AddPort(f.ctx, PortSpec{Bridge: "br-int", Name: "veth1_h", IfaceID: "web.default"})
	})
	spec := QoSSpec{Port: "veth1_h", Type: QoSTypeNoop}
	f.mustWrite(t, 1, "set qos", func() error { return f.c.SetPortQoS(f.ctx, spec) })
	checks := []struct{ what, got, want string }{
		{"qos type", f.portQoS(t, "veth1_h", "type"), QoSTypeNoop},
		{"vendor tag", f.portQoS(t, "veth1_h", "external_ids:"+ovn.VendorKey), ovn.Vendor},
		{"port tag", f.portQoS(t, "veth1_h", "external_ids:"+KeyQoSPort), "veth1_h"},
		{"iface-id tag", f.portQoS(t, "veth1_h", "external_ids:"+KeyIfaceID), "web.default"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	f.mustWrite(t, 0, "set same qos", func() error { return f.c.SetPortQoS(f.ctx, spec) })

	f.mustWrite(t, 1, "clear qos", func() error { return f.c.SetPortQoS(f.ctx, QoSSpec{Port: "veth1_h"}) })
	if n := f.countRows(t, "QoS"); n != 0 {
		t.Errorf("after clear: %d QoS rows; want none", n)
	}
	f.mustWrite(t, 0, "clear again", func() error { return f.c.SetPortQoS(f.ctx, QoSSpec{Port: "veth1_h"}) })

	f.mustWrite(t, 1, "mark again", func() error { return f.c.SetPortQoS(f.ctx, spec) })
	f.mustWrite(t, 1, "delete port", func() error { return f.c.DeletePort(f.ctx, "br-int", "veth1_h") })
	if n := f.countRows(t, "QoS"); n != 0 {
		t.Errorf("DeletePort left %d QoS rows behind", n)
	}
}

func TestSetPortQoSRefusesBadInputAndForeignRows(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	f.mustWrite(t, 1, "add port", func() error {
		return f.c.AddPort(f.ctx, PortSpec{Bridge: "br-int", Name: "veth1_h", IfaceID: "web.default"})
	})
	f.insertForeignPort(t, "br-int", "eth9")
	// An administrator's QoS row on an edgeovn port.
	f.vsctl(t, "set", "Port", "veth1_h", "qos=@q", "--", "--id=@q", "create", "QoS", "type=linux-htb", "other_config:max-rate=7")
	f.waitCache(t, func() bool {
		p, err := f.c.portByName(f.ctx, "veth1_h")
		return err == nil && p != nil && p.QOS != nil
	})
	before := f.c.writes.Load()
	tests := []struct {
		name string
		spec QoSSpec
		want error
	}{
		{"unknown type", QoSSpec{Port: "veth1_h", Type: "linux-htb"}, ovn.ErrInvalid},
		{"empty port", QoSSpec{Type: QoSTypeNoop}, ovn.ErrInvalid},
		{"missing port", QoSSpec{Port: "veth9_h", Type: QoSTypeNoop}, ovn.ErrNotFound},
		{"foreign port", QoSSpec{Port: "eth9", Type: QoSTypeNoop}, ovn.ErrNotOwned},
		{"foreign qos row", QoSSpec{Port: "veth1_h", Type: QoSTypeNoop}, ovn.ErrNotOwned},
		{"foreign qos row, clear", QoSSpec{Port: "veth1_h"}, ovn.ErrNotOwned},
	}
	for _, tt := range tests {
		if err := f.c.SetPortQoS(f.ctx, tt.spec); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if n := f.c.writes.Load() - before; n != 0 {
		t.Fatalf("refused requests made %d writes", n)
	}
	if got := f.portQoS(t, "veth1_h", "other_config:max-rate"); got != "7" {
		t.Errorf("foreign QoS row changed: max-rate %q", got)
	}
	f.mustWrite(t, 1, "delete port", func() error { return f.c.DeletePort(f.ctx, "br-int", "veth1_h") })
	if n := f.countRows(t, "QoS"); n != 1 {
		t.Errorf("DeletePort removed a foreign QoS row (%d left)", n)
	}
}

// TestSetPortQoSStaleCacheConflicts builds the QoS insert from a cache that does not yet
// know of an administrator's QoS row and checks that the guard refuses it as a conflict.
func TestSetPortQoSStaleCacheConflicts(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	f.mustWrite(t, 1, "add port", func() error {
		return f.c.AddPort(f.ctx, PortSpec{Bridge: "br-int", Name: "veth1_h", IfaceID: "web.default"})
	})
	ops, err := f.c.portQoSOps(f.ctx, QoSSpec{Port: "veth1_h", Type: QoSTypeNoop})
	if err != nil {
		t.Fatal(err)
	}
	f.vsctl(t, "set", "Port", "veth1_h", "qos=@q", "--", "--id=@q", "create", "QoS", "type=linux-htb", "other_config:max-rate=7")
	if err := f.c.commit(f.ctx, ops); !errors.Is(err, ovn.ErrConflict) {
		t.Fatalf("stale QoS insert: %v, want ErrConflict", err)
	}
	if got, n := f.portQoS(t, "veth1_h", "other_config:max-rate"), f.countRows(t, "QoS"); got != "7" || n != 1 {
		t.Errorf("after the refused insert: max-rate %q, %d QoS rows; want the administrator's row alone", got, n)
	}
}

// TestAddPortWithQoS: a port created with its QoS row has it from its first transaction;
// a port that exists keeps its QoS; a QoS on an internal port is refused.
func TestAddPortWithQoS(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	spec := PortSpec{Bridge: "br-int", Name: "veth1_h", IfaceID: "web.default", QoS: QoSTypeNoop}
	f.mustWrite(t, 1, "add port with qos", func() error { return f.c.AddPort(f.ctx, spec) })
	if got := f.portQoS(t, "veth1_h", "type"); got != QoSTypeNoop {
		t.Fatalf("qos type %q, want %q", got, QoSTypeNoop)
	}
	if got := f.portQoS(t, "veth1_h", "external_ids:"+KeyIfaceID); got != "web.default" {
		t.Errorf("qos iface-id tag %q", got)
	}
	if typ, err := f.c.PortQoSType(f.ctx, "veth1_h"); err != nil || typ != QoSTypeNoop {
		t.Errorf("PortQoSType = %q, %v", typ, err)
	}
	f.mustWrite(t, 0, "add the same port again", func() error { return f.c.AddPort(f.ctx, spec) })
	bad := PortSpec{Bridge: "br-int", Name: "ovn9", Type: PortInternal, IfaceID: "node-x", QoS: QoSTypeNoop}
	if err := f.c.AddPort(f.ctx, bad); !errors.Is(err, ovn.ErrInvalid) {
		t.Errorf("qos on an internal port: %v, want ErrInvalid", err)
	}
	f.mustWrite(t, 1, "delete port", func() error { return f.c.DeletePort(f.ctx, "br-int", "veth1_h") })
	if n := f.countRows(t, "QoS"); n != 0 {
		t.Errorf("DeletePort left %d QoS rows behind", n)
	}
}

// TestAnyOwnedQoS: no QoS row, or only a foreign one, is "none shaped"; edgeovn's row on a
// port says yes until the port's shaping is cleared.
func TestAnyOwnedQoS(t *testing.T) {
	f := newFixture(t)
	shaped := func() bool {
		t.Helper()
		ok, err := f.c.AnyOwnedQoS(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	f.mustWrite(t, 1, "add port", func() error {
		return f.c.AddPort(f.ctx, PortSpec{Bridge: "br-int", Name: "veth1_h", IfaceID: "web.default"})
	})
	if shaped() {
		t.Fatal("no QoS row, yet AnyOwnedQoS says yes")
	}
	f.vsctl(t, "create", "QoS", "type=linux-htb")
	f.waitCache(t, func() bool {
		var rows []vswitchdb.QoS
		return f.c.ovs.List(f.ctx, &rows) == nil && len(rows) == 1
	})
	if shaped() {
		t.Error("a foreign QoS row counted as edgeovn's")
	}
	f.mustWrite(t, 1, "set qos", func() error { return f.c.SetPortQoS(f.ctx, QoSSpec{Port: "veth1_h", Type: QoSTypeNoop}) })
	if !shaped() {
		t.Error("edgeovn's QoS row on veth1_h not seen")
	}
	f.mustWrite(t, 1, "clear qos", func() error { return f.c.SetPortQoS(f.ctx, QoSSpec{Port: "veth1_h"}) })
	if shaped() {
		t.Error("the port's shaping was cleared, yet AnyOwnedQoS says yes")
	}
}
