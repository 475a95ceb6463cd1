package northbound

import (
	"testing"
)

// TestEnsurePodPortStatefulSet: a StatefulSet pod's port carries its StatefulSet, which
// PodPort and PodPorts return; a pod of that name no longer owned by it loses the mark, in
// place; nothing is written when the mark is already right.
func TestEnsurePodPortStatefulSet(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	spec := podSpec("ovn-default", "10.42.0.5")
	spec.StatefulSet = "web/8d1a0f4e-1111"
	f.mustWrite(t, 1, "create statefulset pod port", func() error { return f.c.EnsurePodPort(f.ctx, spec) })
	f.mustWrite(t, 0, "ensure it again", func() error { return f.c.EnsurePodPort(f.ctx, spec) })
	got, ok, err := f.c.PodPort(f.ctx, "web.default")
	if err != nil || !ok || got.StatefulSet != "web/8d1a0f4e-1111" {
		t.Fatalf("PodPort = %+v, %v, %v", got, ok, err)
	}
	all, err := f.c.PodPorts(f.ctx)
	if err != nil || len(all) != 1 || all[0].StatefulSet != "web/8d1a0f4e-1111" {
		t.Fatalf("PodPorts = %+v, %v", all, err)
	}
	first, _ := f.c.switchPortByName(f.ctx, "web.default")

	spec.StatefulSet = ""
	f.mustWrite(t, 1, "a bare pod of that name", func() error { return f.c.EnsurePodPort(f.ctx, spec) })
	lsp, _ := f.c.switchPortByName(f.ctx, "web.default")
	if _, marked := lsp.ExternalIDs[StatefulSetKey]; marked || lsp.UUID != first.UUID {
		t.Fatalf("port after the mark was dropped: uuid %s (was %s), external_ids %v", lsp.UUID, first.UUID, lsp.ExternalIDs)
	}
	f.mustWrite(t, 0, "ensure the bare pod's port again", func() error { return f.c.EnsurePodPort(f.ctx, spec) })
}
