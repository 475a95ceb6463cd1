package northbound

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// ACLSpec is one ACL of an edgeovn port group, identified by (Direction, Priority, Match).
type ACLSpec struct {
	PortGroup string
	Direction nbdb.ACLDirection
	Priority  int // 0-32767
	Match     string
	Action    nbdb.ACLAction
	Owner     OwnerRef
}

// Validate reports what is wrong with the spec.
func (s ACLSpec) Validate() error {
	what := fmt.Sprintf("acl %s %d %q", s.Direction, s.Priority, s.Match)
	switch {
	case !matchName.MatchString(s.PortGroup):
		return fmt.Errorf("%w: %s: bad port group name %q", ovn.ErrInvalid, what, s.PortGroup)
	case s.Direction != nbdb.ACLDirectionFromLport && s.Direction != nbdb.ACLDirectionToLport:
		return fmt.Errorf("%w: %s: direction must be from-lport or to-lport", ovn.ErrInvalid, what)
	case s.Priority < 0 || s.Priority > 32767:
		return fmt.Errorf("%w: %s: priority outside 0-32767", ovn.ErrInvalid, what)
	case strings.TrimSpace(s.Match) == "":
		return fmt.Errorf("%w: %s: empty match", ovn.ErrInvalid, what)
	case s.Action == "":
		return fmt.Errorf("%w: %s: no action", ovn.ErrInvalid, what)
	}
	return s.Owner.validate(what)
}

// EnsureACL creates the ACL on the port group, or repairs its action and tags. The port
// group must exist and be edgeovn's.
func (c *Client) EnsureACL(ctx context.Context, spec ACLSpec) error {
	ops, err := c.aclOps(ctx, spec, nil)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure acl %s %d %q on port group %s: %w", spec.Direction, spec.Priority, spec.Match, spec.PortGroup, err)
	}
	return nil
}

func (c *Client) aclOps(ctx context.Context, spec ACLSpec, ops []ovsdb.Operation) ([]ovsdb.Operation, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	pg, err := c.portGroupByName(ctx, spec.PortGroup)
	switch {
	case err != nil:
		return nil, err
	case pg == nil:
		return nil, fmt.Errorf("port group %s: %w", spec.PortGroup, ovn.ErrNotFound)
	case !ovn.IsOwned(pg.ExternalIDs):
		return nil, fmt.Errorf("port group %s: %w", spec.PortGroup, ovn.ErrNotOwned)
	}
	acls, err := byUUID(ctx, c, pg.ACLs, func(u string) *nbdb.ACL { return &nbdb.ACL{UUID: u} })
	if err != nil {
		return nil, err
	}
	for _, a := range acls {
		if a.Direction != spec.Direction || a.Priority != spec.Priority || a.Match != spec.Match {
			continue
		}
		if !ovn.IsOwned(a.ExternalIDs) {
			return nil, fmt.Errorf("acl %q: %w", spec.Match, ovn.ErrNotOwned)
		}
		if a.Action == spec.Action && ovn.HasAll(a.ExternalIDs, spec.Owner.ids()) {
			return ops, nil
		}
		m := &nbdb.ACL{UUID: a.UUID, Action: spec.Action, ExternalIDs: merged(a.ExternalIDs, spec.Owner.ids())}
		upd, err := c.nb.Where(m).Update(m, &m.Action, &m.ExternalIDs)
		if err != nil {
			return nil, fmt.Errorf("build update of acl: %w", err)
		}
		return append(ops, upd...), nil
	}
	row := &nbdb.ACL{
		UUID:        namedUUID("acl", len(ops)),
		Direction:   spec.Direction,
		Priority:    spec.Priority,
		Match:       spec.Match,
		Action:      spec.Action,
		ExternalIDs: maps.Clone(spec.Owner.ids()),
	}
	return c.insertChild(ops, row, row.UUID, parentRef{nbdb.PortGroupTable, pg.UUID, pg.Name, "acls"})
}
