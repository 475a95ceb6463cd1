package vswitch

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
)

// mirrorCol reads a column of the Mirror row m0 with port UUIDs turned into port names.
func (f fixture) mirrorCol(t *testing.T, column string) string {
	t.Helper()
	v := f.vsctl(t, "get", "Mirror", DefaultMirrorName, column)
	for _, name := range []string{"veth1_h", "veth2_h", "mirror0"} {
		uuid := f.vsctl(t, "get", "Port", name, "_uuid")
		v = strings.ReplaceAll(v, uuid, name)
	}
	return v
}

func TestSetMirror(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	for _, p := range []PortSpec{{Bridge: "br-int", Name: "veth1_h", IfaceID: "a.default"}, {Bridge: "br-int", Name: "veth2_h", IfaceID: "b.default"}} {
		f.mustWrite(t, 1, "add port "+p.Name, func() error { return f.c.AddPort(f.ctx, p) })
	}
	spec := MirrorSpec{Bridge: "br-int", Name: DefaultMirrorName, Output: "mirror0", Ports: []string{"veth1_h", "not-wired-yet"}}
	f.mustWrite(t, 1, "mirror one port", func() error { return f.c.SetMirror(f.ctx, spec) })
	checks := []struct{ what, got, want string }{
		{"output type", f.vsctl(t, "get", "Interface", "mirror0", "type"), PortInternal},
		{"output iface-id", f.vsctl(t, "--if-exists", "get", "Interface", "mirror0", "external_ids:iface-id"), ""},
		{"output port tag", f.vsctl(t, "get", "Port", "mirror0", "external_ids:"+KeyMirror), DefaultMirrorName},
		{"output", f.mirrorCol(t, "output_port"), "mirror0"},
		{"select_all", f.mirrorCol(t, "select_all"), "false"},
		{"src", f.mirrorCol(t, "select_src_port"), "[veth1_h]"},
		{"dst", f.mirrorCol(t, "select_dst_port"), "[veth1_h]"},
		{"vendor", f.mirrorCol(t, "external_ids:"+ovn.VendorKey), ovn.Vendor},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	f.mustWrite(t, 0, "same mirror again", func() error { return f.c.SetMirror(f.ctx, spec) })

	spec.Ports = []string{"veth2_h"}
	f.mustWrite(t, 1, "mirror the other port", func() error { return f.c.SetMirror(f.ctx, spec) })
	if got := f.mirrorCol(t, "select_src_port"); got != "[veth2_h]" {
		t.Errorf("after switch: src %q, want [veth2_h]", got)
	}
	spec.All, spec.Ports = true, nil
	f.mustWrite(t, 1, "mirror all", func() error { return f.c.SetMirror(f.ctx, spec) })
	if all, src := f.mirrorCol(t, "select_all"), f.mirrorCol(t, "select_src_port"); all != "true" || src != "[]" {
		t.Errorf("global: select_all %q src %q, want true and []", all, src)
	}
	if n := f.countRows(t, "Mirror"); n != 1 {
		t.Errorf("%d Mirror rows, want 1", n)
	}
	f.mustWrite(t, 1, "delete mirror", func() error { return f.c.DeleteMirror(f.ctx, spec) })
	if n, p := f.countRows(t, "Mirror"), f.vsctl(t, "list-ports", "br-int"); n != 0 || strings.Contains(p, "mirror0") {
		t.Errorf("after delete: %d Mirror rows, ports %q", n, p)
	}
	f.mustWrite(t, 0, "delete again", func() error { return f.c.DeleteMirror(f.ctx, spec) })

	// edgeovn cleanup: every edgeovn mirror and output, nobody else's.
	f.mustWrite(t, 1, "mirror again", func() error { return f.c.SetMirror(f.ctx, spec) })
	f.insertForeignPort(t, "br-int", "tap0")
	if outs, err := f.c.MirrorOutputs(f.ctx, "br-int"); err != nil || strings.Join(outs, " ") != "mirror0" {
		t.Errorf("MirrorOutputs = %v, %v; want [mirror0]", outs, err)
	}
	f.mustWrite(t, 1, "delete mirrors", func() error { return f.c.DeleteMirrors(f.ctx, "br-int") })
	if n, p := f.countRows(t, "Mirror"), f.vsctl(t, "list-ports", "br-int"); n != 0 || strings.Contains(p, "mirror0") || !strings.Contains(p, "tap0") {
		t.Errorf("after DeleteMirrors: %d Mirror rows, ports %q", n, p)
	}
}

// A name taken by a port that is not edgeovn's mirror output (someone else's, or edgeovn's
// pod port) is refused and nothing is written.
func TestSetMirrorRefusesTakenOutput(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	f.insertForeignPort(t, "br-int", "tap0")
	f.mustWrite(t, 1, "add port", func() error {
		return f.c.AddPort(f.ctx, PortSpec{Bridge: "br-int", Name: "veth1_h", IfaceID: "a.default"})
	})
	for out, want := range map[string]error{"tap0": ovn.ErrNotOwned, "veth1_h": ovn.ErrConflict, "br-int": ovn.ErrInvalid} {
		spec := MirrorSpec{Bridge: "br-int", Name: DefaultMirrorName, Output: out, All: true}
		f.mustWrite(t, 0, "refused "+out, func() error {
			if err := f.c.SetMirror(f.ctx, spec); !errors.Is(err, want) {
				t.Errorf("output %s: %v, want %v", out, err, want)
			}
			return nil
		})
	}
	if n := f.countRows(t, "Mirror"); n != 0 {
		t.Errorf("%d Mirror rows after refusals", n)
	}
	if owned, err := f.c.MirrorOutputOwned(f.ctx, "tap0"); owned || err != nil {
		t.Errorf("MirrorOutputOwned(tap0) = %v, %v", owned, err)
	}
}
