package northbound

import (
	"context"
	"fmt"
	"maps"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// PortGroupSpec is a port group (its ACLs are managed by EnsureACL), identified by its
// schema-unique name. Ports are logical switch port names, which must exist.
type PortGroupSpec struct {
	Name  string
	Ports []string
	Owner OwnerRef
}

// Validate reports what is wrong with the spec.
func (s PortGroupSpec) Validate() error {
	if !matchName.MatchString(s.Name) {
		return fmt.Errorf("%w: port group name %q: want letters, digits, '_' and '.', not starting with a digit", ovn.ErrInvalid, s.Name)
	}
	for _, p := range s.Ports {
		if err := validateName("port group member", p); err != nil {
			return err
		}
	}
	return s.Owner.validate("port group " + s.Name)
}

// EnsurePortGroup creates the port group or sets its ports and tags; a missing member port
// is ovn.ErrNotFound and nothing is written.
func (c *Client) EnsurePortGroup(ctx context.Context, spec PortGroupSpec) error {
	ops, err := c.portGroupOps(ctx, spec, nil)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure port group %s: %w", spec.Name, err)
	}
	return nil
}

func (c *Client) portGroupOps(ctx context.Context, spec PortGroupSpec, ops []ovsdb.Operation) ([]ovsdb.Operation, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	ports := make([]string, 0, len(spec.Ports))
	for _, name := range spec.Ports {
		lsp, err := c.switchPortByName(ctx, name)
		if err != nil {
			return nil, err
		}
		if lsp == nil {
			return nil, fmt.Errorf("logical switch port %s: %w", name, ovn.ErrNotFound)
		}
		ports = append(ports, lsp.UUID)
	}
	cur, err := c.portGroupByName(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	want := &nbdb.PortGroup{Name: spec.Name, Ports: ports, ExternalIDs: maps.Clone(spec.Owner.ids())}
	if cur == nil {
		want.UUID = namedUUID("pg", len(ops))
		insert, err := c.nb.Create(want)
		if err != nil {
			return nil, fmt.Errorf("build insert of port group: %w", err)
		}
		return append(append(ops, ovn.WaitAbsent(nbdb.PortGroupTable, "name", spec.Name)), insert...), nil
	}
	if !ovn.IsOwned(cur.ExternalIDs) {
		return nil, fmt.Errorf("port group %s: %w", spec.Name, ovn.ErrNotOwned)
	}
	if sameSet(cur.Ports, ports) && ovn.HasAll(cur.ExternalIDs, want.ExternalIDs) {
		return ops, nil
	}
	want.UUID = cur.UUID
	want.ExternalIDs = merged(cur.ExternalIDs, want.ExternalIDs)
	upd, err := c.nb.Where(want).Update(want, &want.Ports, &want.ExternalIDs)
	if err != nil {
		return nil, fmt.Errorf("build update of port group: %w", err)
	}
	return append(ops, upd...), nil
}
