package northbound

import (
	"testing"
)

// TestEnsurePodPortSecurity: a port is created with port security (its MAC and addresses) by
// default and without it when NoPortSecurity asks; turned off and on in place (same row), each
// change one write, again none.
func TestEnsurePodPortSecurity(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	spec := podSpec("ovn-default", "10.42.0.5")
	f.mustWrite(t, 1, "create pod port", func() error { return f.c.EnsurePodPort(f.ctx, spec) })
	first, _ := f.c.switchPortByName(f.ctx, "web.default")
	if len(first.PortSecurity) != 1 || first.PortSecurity[0] != spec.addresses() {
		t.Fatalf("default port security %v, want [%s]", first.PortSecurity, spec.addresses())
	}
	for _, off := range []bool{true, false} {
		spec.NoPortSecurity = off
		f.mustWrite(t, 1, "port security off="+map[bool]string{true: "true", false: "false"}[off], func() error { return f.c.EnsurePodPort(f.ctx, spec) })
		lsp, _ := f.c.switchPortByName(f.ctx, "web.default")
		if lsp.UUID != first.UUID || (len(lsp.PortSecurity) == 0) != off || len(lsp.Addresses) != 1 {
			t.Fatalf("NoPortSecurity %v: uuid %s (was %s), port_security %v, addresses %v", off, lsp.UUID, first.UUID, lsp.PortSecurity, lsp.Addresses)
		}
		f.mustWrite(t, 0, "again", func() error { return f.c.EnsurePodPort(f.ctx, spec) })
	}
	spec.Name, spec.IPs, spec.NoPortSecurity = "gw.default", podSpec("ovn-default", "10.42.0.6").IPs, true
	f.mustWrite(t, 1, "create a port without port security", func() error { return f.c.EnsurePodPort(f.ctx, spec) })
	if lsp, _ := f.c.switchPortByName(f.ctx, "gw.default"); len(lsp.PortSecurity) != 0 {
		t.Fatalf("created with NoPortSecurity: port_security %v", lsp.PortSecurity)
	}
}
