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

// PeeringSpec links a Vpc's router to another Vpc's, as Kube-OVN's vpcPeerings: a router port
// "<vpc>-<remote>" at Local whose peer is the remote router's "<remote>-<vpc>" (made by the
// remote Vpc's own peering; until then the link is down).
type PeeringSpec struct {
	Remote string
	Local  netip.Prefix // localConnectIP, "169.254.0.1/30"
}

func (p PeeringSpec) portName(vpc string) string { return vpc + "-" + p.Remote }

// peeringOps appends what makes the router's peering ports exactly spec's: missing ones
// added, changed ones repaired, the Vpc's peering ports it no longer asks for removed.
func (c *Client) peeringOps(ctx context.Context, spec VpcSpec, ops []ovsdb.Operation) ([]ovsdb.Operation, error) {
	lr, err := c.ownedRouter(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	ports, err := byUUID(ctx, c, lr.Ports, func(u string) *nbdb.LogicalRouterPort { return &nbdb.LogicalRouterPort{UUID: u} })
	if err != nil {
		return nil, err
	}
	ids := spec.owner().ids()
	have := map[string]*nbdb.LogicalRouterPort{}
	for _, p := range ports {
		if ovn.HasAll(p.ExternalIDs, ids) {
			have[p.Name] = p
		}
	}
	for _, p := range spec.Peerings {
		name, peer := p.portName(spec.Name), p.Remote+"-"+spec.Name
		want := nbdb.LogicalRouterPort{Name: name, MAC: GatewayMAC(p.Local.Addr()).String(), Networks: []string{p.Local.String()},
			Peer: &peer, ExternalIDs: maps.Clone(ids)}
		cur := have[name]
		delete(have, name)
		if cur == nil {
			if other, err := c.routerPortByName(ctx, name); err != nil || other != nil {
				return nil, fmt.Errorf("peering port %s: %w", name, ovn.ErrNotOwned)
			}
			want.UUID = namedUUID("peer", len(ops))
			var err error
			if ops, err = c.insertChild(ops, &want, want.UUID, parentRef{nbdb.LogicalRouterTable, lr.UUID, lr.Name, "ports"}); err != nil {
				return nil, err
			}
			continue
		}
		if cur.MAC == want.MAC && sameSet(cur.Networks, want.Networks) && cur.Peer != nil && *cur.Peer == peer {
			continue
		}
		want.UUID = cur.UUID
		upd, err := c.nb.Where(&want).Update(&want, &want.MAC, &want.Networks, &want.Peer)
		if err != nil {
			return nil, fmt.Errorf("build update of peering port %s: %w", name, err)
		}
		ops = append(ops, upd...)
	}
	for _, p := range have {
		ops = append(ops, ovn.MutateRefs(nbdb.LogicalRouterTable, lr.UUID, "ports", ovsdb.MutateOperationDelete, p.UUID),
			ovn.DeleteRow(nbdb.LogicalRouterPortTable, p.UUID))
	}
	return ops, nil
}
