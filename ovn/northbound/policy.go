package northbound

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"strings"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// RouterPolicySpec is one logical router policy, identified by (Priority, Match) as OVN
// itself does. Reroute needs NextHops; allow and drop must have none.
type RouterPolicySpec struct {
	Router   string
	Priority int // 0-32767
	Match    string
	Action   nbdb.LogicalRouterPolicyAction
	NextHops []netip.Addr
	Owner    OwnerRef
}

// Validate reports what is wrong with the spec.
func (s RouterPolicySpec) Validate() error {
	if err := validateName("router", s.Router); err != nil {
		return err
	}
	what := fmt.Sprintf("router policy %d %q", s.Priority, s.Match)
	switch {
	case s.Priority < 0 || s.Priority > 32767:
		return fmt.Errorf("%w: %s: priority outside 0-32767", ovn.ErrInvalid, what)
	case strings.TrimSpace(s.Match) == "":
		return fmt.Errorf("%w: %s: empty match", ovn.ErrInvalid, what)
	case s.Action == nbdb.LogicalRouterPolicyActionReroute && len(s.NextHops) == 0:
		return fmt.Errorf("%w: %s: reroute without next hops", ovn.ErrInvalid, what)
	case s.Action != nbdb.LogicalRouterPolicyActionReroute && len(s.NextHops) > 0:
		return fmt.Errorf("%w: %s: next hops given for action %q", ovn.ErrInvalid, what, s.Action)
	case s.Action != nbdb.LogicalRouterPolicyActionReroute && s.Action != nbdb.LogicalRouterPolicyActionAllow &&
		s.Action != nbdb.LogicalRouterPolicyActionDrop:
		return fmt.Errorf("%w: %s: unknown action %q", ovn.ErrInvalid, what, s.Action)
	}
	for _, h := range s.NextHops {
		if !h.IsValid() {
			return fmt.Errorf("%w: %s: invalid next hop", ovn.ErrInvalid, what)
		}
	}
	return s.Owner.validate(what)
}

func (s RouterPolicySpec) nextHops() []string {
	out := make([]string, len(s.NextHops))
	for i, h := range s.NextHops {
		out[i] = h.String()
	}
	return out
}

// EnsureRouterPolicy creates the policy or repairs its action, next hops and tags. A policy
// with the same priority and match that edgeovn does not own is ovn.ErrNotOwned.
func (c *Client) EnsureRouterPolicy(ctx context.Context, spec RouterPolicySpec) error {
	ops, err := c.routerPolicyOps(ctx, spec, nil)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure router policy %d %q on %s: %w", spec.Priority, spec.Match, spec.Router, err)
	}
	return nil
}

func (c *Client) routerPolicyOps(ctx context.Context, spec RouterPolicySpec, ops []ovsdb.Operation) ([]ovsdb.Operation, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	lr, err := c.ownedRouter(ctx, spec.Router)
	if err != nil {
		return nil, err
	}
	policies, err := byUUID(ctx, c, lr.Policies, func(u string) *nbdb.LogicalRouterPolicy {
		return &nbdb.LogicalRouterPolicy{UUID: u}
	})
	if err != nil {
		return nil, err
	}
	for _, p := range policies {
		if p.Priority != spec.Priority || p.Match != spec.Match {
			continue
		}
		if !ovn.IsOwned(p.ExternalIDs) {
			return nil, fmt.Errorf("router policy %d %q: %w", spec.Priority, spec.Match, ovn.ErrNotOwned)
		}
		if p.Action == spec.Action && sameSet(p.Nexthops, spec.nextHops()) && ovn.HasAll(p.ExternalIDs, spec.Owner.ids()) {
			return ops, nil
		}
		m := &nbdb.LogicalRouterPolicy{UUID: p.UUID, Action: spec.Action, Nexthops: spec.nextHops(),
			ExternalIDs: merged(p.ExternalIDs, spec.Owner.ids())}
		upd, err := c.nb.Where(m).Update(m, &m.Action, &m.Nexthops, &m.ExternalIDs)
		if err != nil {
			return nil, fmt.Errorf("build update of router policy: %w", err)
		}
		return append(ops, upd...), nil
	}
	row := &nbdb.LogicalRouterPolicy{
		UUID:        namedUUID("policy", len(ops)),
		Priority:    spec.Priority,
		Match:       spec.Match,
		Action:      spec.Action,
		Nexthops:    spec.nextHops(),
		ExternalIDs: maps.Clone(spec.Owner.ids()),
	}
	return c.insertChild(ops, row, row.UUID, parentRef{nbdb.LogicalRouterTable, lr.UUID, lr.Name, "policies"})
}
