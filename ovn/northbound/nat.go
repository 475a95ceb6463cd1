package northbound

import (
	"context"
	"fmt"
	"maps"
	"net/netip"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// NATSpec is the one NAT row an owner (an OvnFip, an OvnSnatRule) has on a router, as
// Kube-OVN's AddNat writes it: type dnat_and_snat (a FIP: LogicalIP an address; with
// LogicalPort and ExternalMAC set OVN does the NAT on the port's chassis) or snat (LogicalIP
// an address or a CIDR).
type NATSpec struct {
	Router      string
	Type        nbdb.NATType
	ExternalIP  netip.Addr
	LogicalIP   netip.Prefix // a single address is its /32 (/128)
	LogicalPort string       // optional
	ExternalMAC string       // optional, with LogicalPort
	Options     map[string]string
	Owner       OwnerRef
}

// Validate reports what is wrong with the spec.
func (s NATSpec) Validate() error {
	what := fmt.Sprintf("nat %s %s", s.Type, s.ExternalIP)
	switch {
	case validateName("router", s.Router) != nil:
		return fmt.Errorf("%w: %s: router name is required", ovn.ErrInvalid, what)
	case s.Type != nbdb.NATTypeSNAT && s.Type != nbdb.NATTypeDNATAndSNAT:
		return fmt.Errorf("%w: %s: type must be snat or dnat_and_snat", ovn.ErrInvalid, what)
	case !s.ExternalIP.IsValid() || !s.LogicalIP.IsValid() || s.ExternalIP.Is4() != s.LogicalIP.Addr().Is4():
		return fmt.Errorf("%w: %s: external and logical addresses of one family are required", ovn.ErrInvalid, what)
	case s.Type == nbdb.NATTypeDNATAndSNAT && !s.LogicalIP.IsSingleIP():
		return fmt.Errorf("%w: %s: a dnat_and_snat logical ip is one address", ovn.ErrInvalid, what)
	}
	return s.Owner.validate(what)
}

func (s NATSpec) logicalIP() string {
	if s.LogicalIP.IsSingleIP() {
		return s.LogicalIP.Addr().String()
	}
	return s.LogicalIP.Masked().String()
}

// row is the desired NAT row, named uuid new_nat.
func (s NATSpec) row() *nbdb.NAT {
	n := &nbdb.NAT{UUID: "new_nat", Type: s.Type, ExternalIP: s.ExternalIP.String(), LogicalIP: s.logicalIP(),
		Options: maps.Clone(s.Options), ExternalIDs: s.Owner.ids()}
	if s.LogicalPort != "" {
		port, mac := s.LogicalPort, s.ExternalMAC
		n.LogicalPort, n.ExternalMAC = &port, &mac
	}
	return n
}

func sameNAT(a, b *nbdb.NAT) bool {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return a.Type == b.Type && a.ExternalIP == b.ExternalIP && a.LogicalIP == b.LogicalIP && str(a.LogicalPort) == str(b.LogicalPort) &&
		str(a.ExternalMAC) == str(b.ExternalMAC) && maps.Equal(a.Options, b.Options)
}

// EnsureNAT makes spec's row the only NAT row its owner has (on any router), in one
// transaction: a right row is left alone (nothing is written), others of the owner go.
func (c *Client) EnsureNAT(ctx context.Context, spec NATSpec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	lr, err := c.ownedRouter(ctx, spec.Router)
	if err != nil {
		return fmt.Errorf("ensure %s of %s: %w", spec.Type, spec.Owner.Name, err)
	}
	want := spec.row()
	ops, found, err := c.ownedNATOps(ctx, spec.Owner, func(routerUUID string, n *nbdb.NAT) bool {
		return routerUUID == lr.UUID && sameNAT(n, want)
	})
	if err != nil {
		return err
	}
	if !found {
		if ops, err = c.insertChild(ops, want, want.UUID, parentRef{nbdb.LogicalRouterTable, lr.UUID, lr.Name, "nat"}); err != nil {
			return err
		}
	}
	if err := c.commit(ctx, ops); err != nil {
		return fmt.Errorf("ensure %s %s -> %s of %s on %s: %w", spec.Type, spec.ExternalIP, spec.logicalIP(), spec.Owner.Name, spec.Router, err)
	}
	return nil
}

// ownedNATOps returns the deletions of the owner's NAT rows that keep does not keep, and
// whether it kept one (at most one is kept).
func (c *Client) ownedNATOps(ctx context.Context, owner OwnerRef, keep func(routerUUID string, n *nbdb.NAT) bool) ([]ovsdb.Operation, bool, error) {
	var routers []*nbdb.LogicalRouter
	if err := c.nb.List(ctx, &routers); err != nil {
		return nil, false, fmt.Errorf("list routers from cache: %w", err)
	}
	ids := owner.ids()
	var ops []ovsdb.Operation
	found := false
	for _, lr := range routers {
		nats, err := byUUID(ctx, c, lr.Nat, func(u string) *nbdb.NAT { return &nbdb.NAT{UUID: u} })
		if err != nil {
			return nil, false, err
		}
		for _, n := range nats {
			if !ovn.HasAll(n.ExternalIDs, ids) {
				continue
			}
			if !found && keep(lr.UUID, n) {
				found = true
				continue
			}
			ops = append(ops, ovn.MutateRefs(nbdb.LogicalRouterTable, lr.UUID, "nat", ovsdb.MutateOperationDelete, n.UUID),
				ovn.DeleteRow(nbdb.NATTable, n.UUID))
		}
	}
	return ops, found, nil
}
