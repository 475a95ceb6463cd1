package northbound

import (
	"context"
	"fmt"
	"strings"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// ACLGroupSpec is every port group, ACL and address set one owner has (a NetworkPolicy, or
// the default-deny rows of a namespace): EnsureACLGroup makes the owner's rows exactly these.
type ACLGroupSpec struct {
	Owner       OwnerRef
	PortGroups  []PortGroupACLs
	AddressSets []AddressSetSpec // their Owner is set to the group's
}

// PortGroupACLs is a port group with the ACLs it holds. Ports are logical switch port names.
type PortGroupACLs struct {
	Name  string
	Ports []string
	ACLs  []ACLRule
}

// ACLRule is one ACL of a port group, identified within it by (Direction, Priority, Match).
type ACLRule struct {
	Direction nbdb.ACLDirection
	Priority  int // 0-32767
	Match     string
	Action    nbdb.ACLAction
	// Name is shown in ovn-controller's ACL log; at most 63 bytes (OVN's limit).
	Name string
	Log  bool
	// AfterLB (options:apply-after-lb) evaluates a from-lport ACL after the switch's load
	// balancers, so it sees a Service's backend instead of its virtual IP.
	AfterLB bool
}

// MaxACLName is the longest ACL name OVN accepts.
const MaxACLName = 63

// Validate reports what is wrong with the spec.
func (s ACLGroupSpec) Validate() error {
	what := fmt.Sprintf("acl group of %s %s", s.Owner.Kind, s.Owner.Name)
	if err := s.Owner.validate(what); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, pg := range s.PortGroups {
		if err := (PortGroupSpec{Name: pg.Name, Ports: pg.Ports, Owner: s.Owner}).Validate(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if seen[pg.Name] {
			return fmt.Errorf("%w: %s: port group %s twice", ovn.ErrInvalid, what, pg.Name)
		}
		seen[pg.Name] = true
		if err := validateRules(pg); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	for _, as := range s.AddressSets {
		as.Owner = s.Owner
		if err := as.Validate(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if seen["$"+as.Name] {
			return fmt.Errorf("%w: %s: address set %s twice", ovn.ErrInvalid, what, as.Name)
		}
		seen["$"+as.Name] = true
	}
	return nil
}

func validateRules(pg PortGroupACLs) error {
	keys := map[aclKey]bool{}
	for _, r := range pg.ACLs {
		spec := ACLSpec{PortGroup: pg.Name, Direction: r.Direction, Priority: r.Priority, Match: r.Match,
			Action: r.Action, Owner: OwnerRef{Kind: "k", Name: "n"}}
		if err := spec.Validate(); err != nil {
			return err
		}
		if len(r.Name) > MaxACLName || strings.ContainsAny(r.Name, "\"\n") {
			return fmt.Errorf("%w: acl %q: name %q longer than %d bytes or quoted", ovn.ErrInvalid, r.Match, r.Name, MaxACLName)
		}
		if r.AfterLB && r.Direction != nbdb.ACLDirectionFromLport {
			return fmt.Errorf("%w: acl %q: apply-after-lb is for from-lport ACLs only", ovn.ErrInvalid, r.Match)
		}
		k := r.key()
		if keys[k] {
			return fmt.Errorf("%w: port group %s: acl %s %d %q twice", ovn.ErrInvalid, pg.Name, r.Direction, r.Priority, r.Match)
		}
		keys[k] = true
	}
	return nil
}

// aclKey identifies an ACL within its port group.
type aclKey struct {
	direction string
	priority  int
	match     string
}

func (r ACLRule) key() aclKey { return aclKey{r.Direction, r.Priority, r.Match} }

// ACLGroupResult says what EnsureACLGroup did.
type ACLGroupResult struct {
	// Missing lists member ports that do not exist (yet): they were left out.
	Missing []string
	// Wrote is whether a transaction was committed.
	Wrote bool
}

// EnsureACLGroup makes the owner's port groups, ACLs and address sets exactly the spec's,
// in one transaction: it creates what is missing, repairs what differs, and deletes the
// owner's rows the spec no longer has. Rows of other owners are never touched; a port group
// or address set of the spec's name that is not edgeovn's, or is another owner's, is
// ovn.ErrNotOwned. Member ports that do not exist are left out and listed in the result.
func (c *Client) EnsureACLGroup(ctx context.Context, spec ACLGroupSpec) (ACLGroupResult, error) {
	var res ACLGroupResult
	err := spec.Validate()
	if err == nil {
		var ops opsList
		ops, res.Missing, err = c.aclGroupOps(ctx, spec)
		if err == nil && len(ops) > 0 {
			res.Wrote = true
			err = c.commit(ctx, ops)
		}
	}
	if err != nil {
		return res, fmt.Errorf("ensure acl group of %s %s: %w", spec.Owner.Kind, spec.Owner.Name, err)
	}
	return res, nil
}
