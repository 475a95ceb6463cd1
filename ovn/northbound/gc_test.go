package northbound

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
)

// keepOwners keeps every edgeovn row whose owner is listed: the clean-up under DeleteOwned,
// tested across several owners at once.
type keepOwners struct {
	Owners map[OwnerRef]bool
}

func (k keepOwners) keeps(ids map[string]string) bool {
	return !ovn.IsOwned(ids) || k.Owners[OwnerRef{Kind: ids[ovn.OwnerKindKey], Name: ids[ovn.OwnerKey]}]
}

func TestGCDeletesOnlyUndesiredOwnedRows(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	for i := range 3 {
		f.mustWrite(t, 1, "pod port", func() error { return f.c.EnsurePodPort(f.ctx, numberedPod(i)) })
	}
	f.mustWrite(t, 1, "node", func() error { return f.c.EnsureNode(f.ctx, node1()) })
	// Foreign rows: a switch of its own, a port on our subnet switch, a route on our router.
	f.srv.Run(t, "ovn-nbctl", "ls-add", "admin-net", "--", "lsp-add", "admin-net", "admin.port")
	f.srv.Run(t, "ovn-nbctl", "lsp-add", "ovn-default", "foreign.port")
	f.srv.Run(t, "ovn-nbctl", "lr-route-add", "ovn-cluster", "10.99.0.0/16", "100.64.0.9")
	f.srv.Run(t, "ovn-nbctl", "create", "Address_Set", "name=foreign_set")
	before := f.srv.Run(t, "ovn-nbctl", "show")

	desired := keepOwners{Owners: map[OwnerRef]bool{
		{Kind: ovn.KindCluster, Name: "ovn-cluster"}: true,
		{Kind: ovn.KindSubnet, Name: "ovn-default"}:  true,
		{Kind: ovn.KindPod, Name: "default/p1"}:      true,
	}}
	n, err := f.c.deleteUnless(f.ctx, desired)
	// p0, p2, the node port, its address set and its two policies.
	if err != nil || n != 6 {
		t.Fatalf("GC = %d, %v; want 6 rows deleted", n, err)
	}
	ports := serverPortNames(f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=name", "list", "Logical_Switch_Port"))
	want := []string{"admin.port", "foreign.port", "join-ovn-cluster", "ovn-default-ovn-cluster", "p1.default"}
	if strings.Join(ports, " ") != strings.Join(want, " ") {
		t.Errorf("ports after GC = %v, want %v", ports, want)
	}
	if out := f.srv.Run(t, "ovn-nbctl", "lr-policy-list", "ovn-cluster"); strings.Contains(out, "reroute") {
		t.Errorf("node policies survived GC:\n%s", out)
	}
	for _, want := range []string{"10.99.0.0/16"} {
		if out := f.srv.Run(t, "ovn-nbctl", "lr-route-list", "ovn-cluster"); !strings.Contains(out, want) {
			t.Errorf("foreign route %s deleted:\n%s", want, out)
		}
	}
	if out := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=name", "list", "Address_Set"); strings.TrimSpace(out) != "foreign_set" {
		t.Errorf("address sets after GC = %q, want only foreign_set", out)
	}
	f.mustWrite(t, 0, "GC again", func() error { _, err := f.c.deleteUnless(f.ctx, desired); return err })

	// Dropping the subnet deletes its router ports but keeps its switch: a foreign port is on it.
	delete(desired.Owners, OwnerRef{Kind: ovn.KindSubnet, Name: "ovn-default"})
	if _, err := f.c.deleteUnless(f.ctx, desired); err != nil {
		t.Fatal(err)
	}
	after := f.srv.Run(t, "ovn-nbctl", "show")
	for _, want := range []string{"(ovn-default)", "foreign.port", "(admin-net)", "admin.port", "p1.default"} {
		if !strings.Contains(after, want) {
			t.Errorf("%q gone after GC:\nbefore:\n%s\nafter:\n%s", want, before, after)
		}
	}
	if strings.Contains(after, "ovn-cluster-ovn-default") {
		t.Errorf("undesired subnet router port kept:\n%s", after)
	}
}

func TestGCDeletesInBatches(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	const pods = 2*GCBatch + 50
	specs := make([]PodPortSpec, pods)
	for i := range specs {
		specs[i] = numberedPod(i)
	}
	f.mustWrite(t, 1, "create pods in one transaction", func() error { return f.c.EnsurePodPorts(f.ctx, specs) })
	desired := keepOwners{Owners: map[OwnerRef]bool{
		{Kind: ovn.KindCluster, Name: "ovn-cluster"}: true,
		{Kind: ovn.KindSubnet, Name: "ovn-default"}:  true,
	}}
	f.mustWrite(t, 3, "GC of every pod", func() error {
		n, err := f.c.deleteUnless(f.ctx, desired)
		if err == nil && n != pods {
			t.Errorf("GC deleted %d rows, want %d", n, pods)
		}
		return err
	})
	ports := serverPortNames(f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=name", "list", "Logical_Switch_Port"))
	if strings.Join(ports, " ") != "join-ovn-cluster ovn-default-ovn-cluster" {
		t.Errorf("ports after GC = %v", ports)
	}
}

// TestDeleteOwned: one node's rows (join port, address set, two policies) go; another node's,
// the cluster's and the pods' stay; a second call deletes nothing; an empty owner is refused.
func TestDeleteOwned(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	f.mustWrite(t, 1, "pod port", func() error { return f.c.EnsurePodPort(f.ctx, numberedPod(0)) })
	one, two := node1(), node1()
	two.Name, two.JoinIP, two.NodeIP = "edge-2", two.JoinIP.Next(), two.NodeIP.Next()
	for _, n := range []NodeSpec{one, two} {
		f.mustWrite(t, 1, "node "+n.Name, func() error { return f.c.EnsureNode(f.ctx, n) })
	}
	if _, err := f.c.DeleteOwned(f.ctx, OwnerRef{Kind: ovn.KindNode}); !errors.Is(err, ovn.ErrInvalid) {
		t.Fatalf("DeleteOwned without a name = %v, want ErrInvalid", err)
	}
	if nodes, err := f.c.Nodes(f.ctx); err != nil || strings.Join(nodes, " ") != "edge-2 node1" {
		t.Fatalf("Nodes = %v, %v; want [edge-2 node1]", nodes, err)
	}
	n, err := f.c.DeleteOwned(f.ctx, OwnerRef{Kind: ovn.KindNode, Name: one.Name})
	if err != nil || n != 4 {
		t.Fatalf("DeleteOwned(%s) = %d, %v; want 4 rows deleted", one.Name, n, err)
	}
	ports := serverPortNames(f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=name", "list", "Logical_Switch_Port"))
	want := []string{"join-ovn-cluster", NodePortName(two.Name), "ovn-default-ovn-cluster", "p0.default"}
	if strings.Join(ports, " ") != strings.Join(want, " ") {
		t.Errorf("ports after deleting %s = %v, want %v", one.Name, ports, want)
	}
	policies := f.srv.Run(t, "ovn-nbctl", "lr-policy-list", "ovn-cluster")
	if strings.Count(policies, "reroute") != 2 || strings.Contains(policies, one.NodeIP.String()) {
		t.Errorf("policies after deleting %s:\n%s", one.Name, policies)
	}
	if nodes, err := f.c.Nodes(f.ctx); err != nil || strings.Join(nodes, " ") != "edge-2" {
		t.Fatalf("Nodes after deleting %s = %v, %v", one.Name, nodes, err)
	}
	f.mustWrite(t, 0, "delete again", func() error {
		_, err := f.c.DeleteOwned(f.ctx, OwnerRef{Kind: ovn.KindNode, Name: one.Name})
		return err
	})
}
