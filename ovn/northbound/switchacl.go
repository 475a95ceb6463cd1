package northbound

import (
	"context"
	"fmt"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// SwitchACLsSpec is every ACL one owner has on a logical switch (a private Subnet's isolation
// rules): ACLs on the switch itself apply to all its ports, the router port included, with no
// membership to keep up as pods come and go.
type SwitchACLsSpec struct {
	Switch string
	Owner  OwnerRef
	ACLs   []ACLRule
}

// Validate reports what is wrong with the spec.
func (s SwitchACLsSpec) Validate() error {
	if err := validateName("switch", s.Switch); err != nil {
		return err
	}
	what := fmt.Sprintf("acls of %s %s on switch %s", s.Owner.Kind, s.Owner.Name, s.Switch)
	if err := s.Owner.validate(what); err != nil {
		return err
	}
	// The rules are checked as a port group's would be; the name only satisfies that check.
	if err := validateRules(PortGroupACLs{Name: "switch", ACLs: s.ACLs}); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// EnsureSwitchACLs makes the owner's ACLs on the switch exactly the spec's, in one
// transaction, and reports whether it wrote: missing ACLs are inserted, differing ones repaired,
// the owner's others removed (an empty spec removes them all). ACLs of other owners, and ACLs
// without edgeovn's tags, are never touched. The switch must exist and be edgeovn's.
func (c *Client) EnsureSwitchACLs(ctx context.Context, spec SwitchACLsSpec) (bool, error) {
	wrote, err := c.ensureSwitchACLs(ctx, spec)
	if err != nil {
		return false, fmt.Errorf("ensure acls of %s %s on switch %s: %w", spec.Owner.Kind, spec.Owner.Name, spec.Switch, err)
	}
	return wrote, nil
}

func (c *Client) ensureSwitchACLs(ctx context.Context, spec SwitchACLsSpec) (bool, error) {
	if err := spec.Validate(); err != nil {
		return false, err
	}
	ls, err := c.switchByName(ctx, spec.Switch)
	switch {
	case err != nil:
		return false, err
	case ls == nil:
		return false, fmt.Errorf("logical switch %s: %w", spec.Switch, ovn.ErrNotFound)
	case !ovn.IsOwned(ls.ExternalIDs):
		return false, fmt.Errorf("logical switch %s: %w", spec.Switch, ovn.ErrNotOwned)
	}
	p := aclParent{owner: spec.Owner, ref: parentRef{nbdb.LogicalSwitchTable, ls.UUID, ls.Name, "acls"}, acls: ls.ACLs, onlyOwned: true}
	ops, err := c.aclDiffOps(ctx, p, spec.ACLs, nil)
	if err != nil || len(ops) == 0 {
		return false, err
	}
	return true, c.commit(ctx, ops)
}
