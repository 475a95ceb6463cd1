package northbound

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"regexp"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// matchName is what OVN accepts as an address set or port group name inside a match
// ("$name", "@name").
var matchName = regexp.MustCompile(`^[a-zA-Z_.][a-zA-Z_.0-9]*$`)

// AddressSetSpec is an address set, identified by its (schema-unique) name.
type AddressSetSpec struct {
	Name      string
	Addresses []netip.Prefix // single addresses as /32 or /128
	Owner     OwnerRef
}

// Validate reports what is wrong with the spec.
func (s AddressSetSpec) Validate() error {
	if !matchName.MatchString(s.Name) {
		return fmt.Errorf("%w: address set name %q: want letters, digits, '_' and '.', not starting with a digit", ovn.ErrInvalid, s.Name)
	}
	for _, p := range s.Addresses {
		if !p.IsValid() || p != p.Masked() {
			return fmt.Errorf("%w: address set %s: %q is not a network prefix", ovn.ErrInvalid, s.Name, p)
		}
	}
	return s.Owner.validate("address set " + s.Name)
}

func (s AddressSetSpec) addresses() []string {
	out := make([]string, len(s.Addresses))
	for i, p := range s.Addresses {
		if p.IsSingleIP() {
			out[i] = p.Addr().String()
		} else {
			out[i] = p.String()
		}
	}
	return out
}

// addressSetOps appends what creates the address set or sets its addresses and tags (the
// node's pods, an ACL group's sets).
func (c *Client) addressSetOps(ctx context.Context, spec AddressSetSpec, ops []ovsdb.Operation) ([]ovsdb.Operation, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	cur, err := c.addressSetByName(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	want := &nbdb.AddressSet{Name: spec.Name, Addresses: spec.addresses(), ExternalIDs: maps.Clone(spec.Owner.ids())}
	if cur == nil {
		want.UUID = namedUUID("as", len(ops))
		insert, err := c.nb.Create(want)
		if err != nil {
			return nil, fmt.Errorf("build insert of address set: %w", err)
		}
		return append(append(ops, ovn.WaitAbsent(nbdb.AddressSetTable, "name", spec.Name)), insert...), nil
	}
	if !ovn.IsOwned(cur.ExternalIDs) {
		return nil, fmt.Errorf("address set %s: %w", spec.Name, ovn.ErrNotOwned)
	}
	tagged := ovn.HasAll(cur.ExternalIDs, want.ExternalIDs)
	if sameSet(cur.Addresses, want.Addresses) && tagged {
		return ops, nil
	}
	if tagged {
		return append(ops, setDiffOps(nbdb.AddressSetTable, cur.UUID, "addresses", cur.Addresses, want.Addresses)...), nil
	}
	want.UUID = cur.UUID
	want.ExternalIDs = merged(cur.ExternalIDs, want.ExternalIDs)
	upd, err := c.nb.Where(want).Update(want, &want.Addresses, &want.ExternalIDs)
	if err != nil {
		return nil, fmt.Errorf("build update of address set: %w", err)
	}
	return append(ops, upd...), nil
}

// setDiffOps turns column's set from cur into want by mutation: a delete of what is gone and
// an insert of what is new. A pod added to a node's address set of 1,000 then writes one
// address, not 1,001, and a concurrent change to other elements is not undone.
func setDiffOps(table, uuid, column string, cur, want []string) []ovsdb.Operation {
	var ops []ovsdb.Operation
	if gone := missingFrom(want, cur); len(gone) > 0 {
		ops = append(ops, ovn.MutateSet(table, uuid, column, ovsdb.MutateOperationDelete, gone...))
	}
	if added := missingFrom(cur, want); len(added) > 0 {
		ops = append(ops, ovn.MutateSet(table, uuid, column, ovsdb.MutateOperationInsert, added...))
	}
	return ops
}

// missingFrom returns the values of from that have is missing, in from's order.
func missingFrom(have, from []string) []any {
	in := make(map[string]bool, len(have))
	for _, v := range have {
		in[v] = true
	}
	var out []any
	for _, v := range from {
		if !in[v] {
			out = append(out, v)
		}
	}
	return out
}
