package vswitch

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
)

func TestGCDeletesOnlyUndesiredEdgeovnPorts(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	other := BridgeSpec{Name: "br-other", DatapathType: DatapathNetdev, Owner: "node1"}
	f.mustWrite(t, 1, "create other bridge", func() error { return f.c.EnsureBridge(f.ctx, other) })
	f.insertForeignPort(t, "br-int", "eth9")
	for i := range 5 {
		spec := PortSpec{Bridge: "br-int", Name: fmt.Sprintf("p%d", i), IfaceID: fmt.Sprintf("pod%d.default", i)}
		f.mustWrite(t, 1, "add "+spec.Name, func() error { return f.c.AddPort(f.ctx, spec) })
	}
	f.mustWrite(t, 1, "add port on other bridge", func() error {
		return f.c.AddPort(f.ctx, PortSpec{Bridge: "br-other", Name: "q0", IfaceID: "gone.default"})
	})
	f.mustWrite(t, 1, "shape p1", func() error { return f.c.SetPortQoS(f.ctx, QoSSpec{Port: "p1", Type: QoSTypeNoop}) })

	old := gcBatch
	gcBatch = 2
	t.Cleanup(func() { gcBatch = old })
	desired := []string{"pod0.default", "pod3.default"}
	keep := func(p Port) bool { return slices.Contains(desired, p.IfaceID) }
	var n int
	f.mustWrite(t, 2, "gc in batches of two", func() (err error) { n, err = f.c.GC(f.ctx, "br-int", keep); return err })
	if n != 3 {
		t.Errorf("GC deleted %d ports, want 3", n)
	}
	if got := strings.Fields(f.vsctl(t, "list-ports", "br-int")); !slices.Equal(got, []string{"eth9", "p0", "p3"}) {
		t.Errorf("ports left on br-int: %v, want the foreign eth9 and the desired p0, p3", got)
	}
	if got := f.vsctl(t, "get", "Interface", "br-int", "type"); got != "internal" {
		t.Errorf("bridge's internal interface: type %q", got)
	}
	if got := f.vsctl(t, "list-ports", "br-other"); got != "q0" {
		t.Errorf("GC of br-int touched br-other: %q", got)
	}
	if n := f.countRows(t, "QoS"); n != 0 {
		t.Errorf("GC left %d QoS rows of deleted ports", n)
	}
	if got := f.countRows(t, "Interface"); got != 6 { // br-int, eth9, p0, p3, br-other, q0
		t.Errorf("%d interfaces left, want 6: deleted ports' interfaces must go with them", got)
	}
	f.mustWrite(t, 0, "gc again", func() (err error) { n, err = f.c.GC(f.ctx, "br-int", keep); return err })
	if n != 0 {
		t.Errorf("second GC deleted %d ports", n)
	}
}

func TestGCRefusesBadInput(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	f.mustWrite(t, 1, "add port", func() error {
		return f.c.AddPort(f.ctx, PortSpec{Bridge: "br-int", Name: "p0", IfaceID: "pod0.default"})
	})
	if _, err := f.c.GC(f.ctx, "br-int", nil); !errors.Is(err, ovn.ErrInvalid) {
		t.Errorf("nil keep: %v, want ErrInvalid", err)
	}
	if _, err := f.c.GC(f.ctx, "", func(Port) bool { return false }); !errors.Is(err, ovn.ErrInvalid) {
		t.Errorf("empty bridge: %v, want ErrInvalid", err)
	}
	if n, err := f.c.GC(f.ctx, "br-nope", func(Port) bool { return false }); err != nil || n != 0 {
		t.Errorf("missing bridge: %d, %v; want nothing to do", n, err)
	}
	if got := f.vsctl(t, "list-ports", "br-int"); got != "p0" {
		t.Errorf("refused GC deleted ports: %q", got)
	}
}
