package northbound

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

type opsList = []ovsdb.Operation

// isOwner reports whether external_ids say the row is edgeovn's and owner's.
func isOwner(ids map[string]string, owner OwnerRef) bool {
	return ovn.IsOwned(ids) && ids[ovn.OwnerKindKey] == owner.Kind && ids[ovn.OwnerKey] == owner.Name
}

// claim refuses a row of the wanted name that belongs to someone else.
func claim(ids map[string]string, owner OwnerRef, what string) error {
	if !isOwner(ids, owner) {
		return fmt.Errorf("%s held by %s %s: %w", what, ids[ovn.OwnerKindKey], ids[ovn.OwnerKey], ovn.ErrNotOwned)
	}
	return nil
}

// aclGroupOps builds the operations that make the owner's rows the spec's, and lists the
// member ports that do not exist.
func (c *Client) aclGroupOps(ctx context.Context, spec ACLGroupSpec) (opsList, []string, error) {
	ops, err := c.ownedAddressSetOps(ctx, spec, nil)
	if err != nil {
		return nil, nil, err
	}
	var missing []string
	want := map[string]bool{}
	for _, pg := range spec.PortGroups {
		want[pg.Name] = true
		var miss []string
		ops, miss, err = c.portGroupACLOps(ctx, spec.Owner, pg, ops)
		if err != nil {
			return nil, nil, err
		}
		missing = append(missing, miss...)
	}
	var stale []*nbdb.PortGroup
	err = c.nb.WhereCache(func(pg *nbdb.PortGroup) bool {
		return isOwner(pg.ExternalIDs, spec.Owner) && !want[pg.Name]
	}).List(ctx, &stale)
	if err != nil {
		return nil, nil, fmt.Errorf("read port groups from cache: %w", err)
	}
	for _, pg := range stale {
		// Its ACLs are not root rows: the server deletes them with the last reference.
		ops = append(ops, ovn.DeleteRow(nbdb.PortGroupTable, pg.UUID))
	}
	return ops, missing, nil
}

// ownedAddressSetOps ensures the spec's address sets and deletes the owner's others.
func (c *Client) ownedAddressSetOps(ctx context.Context, spec ACLGroupSpec, ops opsList) (opsList, error) {
	want := map[string]bool{}
	for _, as := range spec.AddressSets {
		as.Owner = spec.Owner
		want[as.Name] = true
		cur, err := c.addressSetByName(ctx, as.Name)
		if err != nil {
			return nil, err
		}
		if cur != nil {
			if err := claim(cur.ExternalIDs, spec.Owner, "address set "+as.Name); err != nil {
				return nil, err
			}
		}
		if ops, err = c.addressSetOps(ctx, as, ops); err != nil {
			return nil, err
		}
	}
	var stale []*nbdb.AddressSet
	err := c.nb.WhereCache(func(as *nbdb.AddressSet) bool {
		return isOwner(as.ExternalIDs, spec.Owner) && !want[as.Name]
	}).List(ctx, &stale)
	if err != nil {
		return nil, fmt.Errorf("read address sets from cache: %w", err)
	}
	for _, as := range stale {
		ops = append(ops, ovn.DeleteRow(nbdb.AddressSetTable, as.UUID))
	}
	return ops, nil
}

// portGroupACLOps creates the port group with its ACLs, or brings an existing one's ports
// and ACLs to the spec's.
func (c *Client) portGroupACLOps(ctx context.Context, owner OwnerRef, spec PortGroupACLs, ops opsList) (opsList, []string, error) {
	ports, missing, err := c.portUUIDs(ctx, spec.Ports)
	if err != nil {
		return nil, nil, err
	}
	cur, err := c.portGroupByName(ctx, spec.Name)
	if err != nil {
		return nil, nil, err
	}
	if cur == nil {
		ops, err = c.createPortGroupACLs(owner, spec, ports, ops)
		return ops, missing, err
	}
	if err := claim(cur.ExternalIDs, owner, "port group "+spec.Name); err != nil {
		return nil, nil, err
	}
	if !sameSet(cur.Ports, ports) {
		m := &nbdb.PortGroup{UUID: cur.UUID, Ports: ports}
		upd, err := c.nb.Where(m).Update(m, &m.Ports)
		if err != nil {
			return nil, nil, fmt.Errorf("build update of port group %s: %w", spec.Name, err)
		}
		ops = append(ops, upd...)
	}
	parent := parentRef{nbdb.PortGroupTable, cur.UUID, cur.Name, "acls"}
	ops, err = c.aclDiffOps(ctx, aclParent{owner: owner, ref: parent, acls: cur.ACLs}, spec.ACLs, ops)
	return ops, missing, err
}

// portUUIDs resolves logical switch port names; names without a port are returned apart.
func (c *Client) portUUIDs(ctx context.Context, names []string) ([]string, []string, error) {
	uuids := make([]string, 0, len(names))
	var missing []string
	for _, name := range names {
		lsp, err := c.switchPortByName(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		if lsp == nil {
			missing = append(missing, name)
			continue
		}
		uuids = append(uuids, lsp.UUID)
	}
	return uuids, missing, nil
}

func (c *Client) createPortGroupACLs(owner OwnerRef, spec PortGroupACLs, ports []string, ops opsList) (opsList, error) {
	pg := &nbdb.PortGroup{UUID: namedUUID("pg", len(ops)), Name: spec.Name, Ports: ports, ExternalIDs: owner.ids()}
	for _, r := range spec.ACLs {
		row := aclRow(owner, r)
		row.UUID = namedUUID("acl", len(ops))
		insert, err := c.nb.Create(row)
		if err != nil {
			return nil, fmt.Errorf("build insert of acl %q: %w", r.Match, err)
		}
		ops = append(ops, insert...)
		pg.ACLs = append(pg.ACLs, row.UUID)
	}
	insert, err := c.nb.Create(pg)
	if err != nil {
		return nil, fmt.Errorf("build insert of port group %s: %w", spec.Name, err)
	}
	return append(append(ops, ovn.WaitAbsent(nbdb.PortGroupTable, "name", spec.Name)), insert...), nil
}

func aclRow(owner OwnerRef, r ACLRule) *nbdb.ACL {
	row := &nbdb.ACL{Direction: r.Direction, Priority: r.Priority, Match: r.Match, Action: r.Action,
		Log: r.Log, ExternalIDs: owner.ids(), Options: map[string]string{}}
	if r.Name != "" {
		row.Name = &r.Name
	}
	if r.AfterLB {
		row.Options["apply-after-lb"] = "true"
	}
	return row
}

// aclParent is a row that holds ACLs (a port group, a switch) and which of them are owner's
// to manage: all of a port group's (the group is owner's), only the owner's of a switch.
type aclParent struct {
	owner OwnerRef
	ref   parentRef
	acls  []string
	// onlyOwned leaves the ACLs without owner's tags alone (another owner's on a shared switch).
	onlyOwned bool
}

// aclDiffOps brings the parent's ACLs to want: ACLs are matched by (direction, priority,
// match), repaired in place when their action, name, log, options or tags differ, inserted
// when missing, and unreferenced (so the server deletes them) when not wanted.
func (c *Client) aclDiffOps(ctx context.Context, p aclParent, want []ACLRule, ops opsList) (opsList, error) {
	acls, err := byUUID(ctx, c, p.acls, func(u string) *nbdb.ACL { return &nbdb.ACL{UUID: u} })
	if err != nil {
		return nil, err
	}
	have := make(map[aclKey]*nbdb.ACL, len(acls))
	var drop []string
	for _, a := range acls {
		if p.onlyOwned && !isOwner(a.ExternalIDs, p.owner) {
			continue
		}
		k := aclKey{a.Direction, a.Priority, a.Match}
		if have[k] != nil {
			drop = append(drop, a.UUID) // a duplicate: keep one
			continue
		}
		have[k] = a
	}
	wanted := map[aclKey]bool{}
	for _, r := range want {
		wanted[r.key()] = true
		if ops, err = c.aclRuleOps(p, have[r.key()], r, ops); err != nil {
			return nil, err
		}
	}
	for k, a := range have {
		if !wanted[k] {
			drop = append(drop, a.UUID)
		}
	}
	if len(drop) > 0 {
		slices.Sort(drop)
		ops = append(ops, ovn.MutateRefs(p.ref.Table, p.ref.UUID, p.ref.Column, ovsdb.MutateOperationDelete, drop...))
	}
	return ops, nil
}

// aclRuleOps inserts the rule into the parent, or repairs the existing row cur.
func (c *Client) aclRuleOps(p aclParent, cur *nbdb.ACL, r ACLRule, ops opsList) (opsList, error) {
	want := aclRow(p.owner, r)
	if cur == nil {
		want.UUID = namedUUID("acl", len(ops))
		return c.insertChild(ops, want, want.UUID, p.ref)
	}
	if cur.Action == want.Action && cur.Log == want.Log && ptrEqual(cur.Name, want.Name) &&
		maps.Equal(cur.Options, want.Options) && ovn.HasAll(cur.ExternalIDs, want.ExternalIDs) {
		return ops, nil
	}
	want.UUID = cur.UUID
	want.ExternalIDs = merged(cur.ExternalIDs, want.ExternalIDs)
	upd, err := c.nb.Where(want).Update(want, &want.Action, &want.Log, &want.Name, &want.Options, &want.ExternalIDs)
	if err != nil {
		return nil, fmt.Errorf("build update of acl %q: %w", r.Match, err)
	}
	return append(ops, upd...), nil
}

func ptrEqual(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
