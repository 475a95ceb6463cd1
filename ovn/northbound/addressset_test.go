package northbound

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// A change to a large address set is written as the difference: one address out, one in,
// not the whole set again; the row then holds exactly the wanted set.
func TestAddressSetWritesTheDifference(t *testing.T) {
	f := newFixture(t)
	spec := AddressSetSpec{Name: "node1.pods_ip4", Owner: OwnerRef{Kind: ovn.KindNode, Name: "node1"}}
	for i := range 1000 {
		spec.Addresses = append(spec.Addresses, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 42, byte(i / 250), byte(2 + i%250)}), 32))
	}
	ensure := func() error { // what EnsureNode and EnsureACLGroup write for one address set
		ops, err := f.c.addressSetOps(f.ctx, spec, nil)
		if err == nil {
			err = f.c.commit(f.ctx, ops)
		}
		return err
	}
	f.mustWrite(t, 1, "address set of 1,000", ensure)
	spec.Addresses = append(slices.Clone(spec.Addresses[1:]), netip.MustParsePrefix("10.42.9.9/32"))
	ops, err := f.c.addressSetOps(f.ctx, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range ops {
		if op.Op != ovsdb.OperationMutate || len(op.Mutations) != 1 {
			t.Fatalf("op %s on %s, want mutations only", op.Op, op.Table)
		}
		m := op.Mutations[0]
		set, _ := m.Value.(ovsdb.OvsSet)
		got = append(got, fmt.Sprintf("%s %v", m.Mutator, set.GoSet))
	}
	if want := []string{"delete [10.42.0.2]", "insert [10.42.9.9]"}; !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
	f.mustWrite(t, 1, "one address out, one in", ensure)
	f.mustWrite(t, 0, "again", ensure)
	out := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=addresses", "find", "Address_Set", "name=node1.pods_ip4")
	fields := strings.Fields(strings.ReplaceAll(out, ",", " "))
	if len(fields) != 1000 || !slices.Contains(fields, "10.42.9.9") || slices.Contains(fields, "10.42.0.2") {
		t.Errorf("address set holds %d addresses (want 1000, with 10.42.9.9 and without 10.42.0.2)", len(fields))
	}
	// A set whose tags were lost is rewritten whole, tags included.
	f.srv.Run(t, "ovn-nbctl", "remove", "Address_Set", "node1.pods_ip4", "external_ids", ovn.OwnerKindKey)
	f.waitCache(t, "the removed tag", func() bool {
		cur, err := f.c.addressSetByName(f.ctx, spec.Name)
		return err == nil && cur != nil && cur.ExternalIDs[ovn.OwnerKindKey] == ""
	})
	ops, err = f.c.addressSetOps(f.ctx, spec, nil)
	if err != nil || len(ops) != 1 || ops[0].Op != ovsdb.OperationUpdate || ops[0].Table != nbdb.AddressSetTable {
		t.Fatalf("repair of tags: %v %+v, want one update", err, ops)
	}
}
