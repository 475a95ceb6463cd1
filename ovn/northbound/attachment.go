package northbound

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// attachment is a logical switch linked to the router by a router port at Gateway and a
// switch port of type router: the shape of both the join switch and every subnet.
type attachment struct {
	Router       string
	Switch       string
	CIDRs        []netip.Prefix    // one per family
	Gateways     []netip.Addr      // the router port's address in each of CIDRs, in their order
	Owner        map[string]string // tags for the switch and both ports
	CreateRouter bool              // create the router when missing (EnsureCluster only)
	RouteTable   string            // the router port's options:route_table ("" none)
}

func (a attachment) routerPortName() string { return a.Router + "-" + a.Switch }
func (a attachment) switchPortName() string { return a.Switch + "-" + a.Router }

// attached is what the cache holds for an attachment; nil fields are missing rows.
type attached struct {
	router *nbdb.LogicalRouter
	sw     *nbdb.LogicalSwitch
	lrp    *nbdb.LogicalRouterPort
	lsp    *nbdb.LogicalSwitchPort
}

func (c *Client) ensureAttachment(ctx context.Context, a attachment) error {
	cur, err := c.readAttachment(ctx, a)
	if err != nil {
		return err
	}
	ops, err := c.attachmentOps(a, cur)
	if err != nil {
		return err
	}
	return c.commit(ctx, ops)
}

func (c *Client) readAttachment(ctx context.Context, a attachment) (attached, error) {
	var cur attached
	var err error
	if cur.router, err = c.routerByName(ctx, a.Router); err != nil {
		return cur, err
	}
	if cur.router == nil && !a.CreateRouter {
		return cur, fmt.Errorf("logical router %s: %w", a.Router, ovn.ErrNotFound)
	}
	if cur.sw, err = c.switchByName(ctx, a.Switch); err != nil {
		return cur, err
	}
	if cur.lrp, err = c.routerPortByName(ctx, a.routerPortName()); err != nil {
		return cur, err
	}
	if cur.lsp, err = c.switchPortByName(ctx, a.switchPortName()); err != nil {
		return cur, err
	}
	return cur, cur.checkOwned(a)
}

func (cur attached) checkOwned(a attachment) error {
	switch {
	case cur.router != nil && !ovn.IsOwned(cur.router.ExternalIDs):
		return fmt.Errorf("logical router %s: %w", a.Router, ovn.ErrNotOwned)
	case cur.sw != nil && !ovn.IsOwned(cur.sw.ExternalIDs):
		return fmt.Errorf("logical switch %s: %w", a.Switch, ovn.ErrNotOwned)
	case cur.lrp != nil && !ovn.IsOwned(cur.lrp.ExternalIDs):
		return fmt.Errorf("logical router port %s: %w", a.routerPortName(), ovn.ErrNotOwned)
	case cur.lsp != nil && !ovn.IsOwned(cur.lsp.ExternalIDs):
		return fmt.Errorf("logical switch port %s: %w", a.switchPortName(), ovn.ErrNotOwned)
	}
	return nil
}

// attachmentOps builds the difference between cur and a. New rows get named UUIDs and are
// put straight into their new parent's insert, or added to an existing parent by mutation.
func (c *Client) attachmentOps(a attachment, cur attached) ([]ovsdb.Operation, error) {
	lrpRef, ops, err := c.routerPortOps(a, cur.lrp)
	if err != nil {
		return nil, err
	}
	lspRef, lspOps, err := c.switchPortOps(a, cur.lsp)
	if err != nil {
		return nil, err
	}
	ops = append(ops, lspOps...)
	routerOps, err := c.routerOps(a, cur.router, lrpRef)
	if err != nil {
		return nil, err
	}
	ops = append(ops, routerOps...)
	switchOps, err := c.switchOps(a, cur.sw, lspRef)
	if err != nil {
		return nil, err
	}
	return append(ops, switchOps...), nil
}

func (c *Client) routerOps(a attachment, cur *nbdb.LogicalRouter, lrpRef string) ([]ovsdb.Operation, error) {
	if cur == nil {
		ops, err := c.nb.Create(&nbdb.LogicalRouter{
			UUID:        "new_router",
			Name:        a.Router,
			ExternalIDs: ovn.OwnedBy(ovn.KindCluster, a.Router),
			Ports:       []string{lrpRef},
		})
		if err != nil {
			return nil, fmt.Errorf("build logical router %s: %w", a.Router, err)
		}
		return append([]ovsdb.Operation{ovn.WaitAbsent(nbdb.LogicalRouterTable, "name", a.Router)}, ops...), nil
	}
	if slices.Contains(cur.Ports, lrpRef) {
		return nil, nil
	}
	return []ovsdb.Operation{
		ovn.WaitPresent(nbdb.LogicalRouterTable, cur.UUID, "name", a.Router),
		ovn.MutateRefs(nbdb.LogicalRouterTable, cur.UUID, "ports", ovsdb.MutateOperationInsert, lrpRef),
	}, nil
}

func (c *Client) switchOps(a attachment, cur *nbdb.LogicalSwitch, lspRef string) ([]ovsdb.Operation, error) {
	otherConfig := switchOtherConfig(a.CIDRs)
	if cur == nil {
		ops, err := c.nb.Create(&nbdb.LogicalSwitch{
			UUID:        "new_switch",
			Name:        a.Switch,
			OtherConfig: otherConfig,
			ExternalIDs: maps.Clone(a.Owner),
			Ports:       []string{lspRef},
		})
		if err != nil {
			return nil, fmt.Errorf("build logical switch %s: %w", a.Switch, err)
		}
		return append([]ovsdb.Operation{ovn.WaitAbsent(nbdb.LogicalSwitchTable, "name", a.Switch)}, ops...), nil
	}
	var ops []ovsdb.Operation
	if !ovn.HasAll(cur.OtherConfig, otherConfig) || !ovn.HasAll(cur.ExternalIDs, a.Owner) {
		m := &nbdb.LogicalSwitch{
			UUID:        cur.UUID,
			OtherConfig: merged(cur.OtherConfig, otherConfig),
			ExternalIDs: merged(cur.ExternalIDs, a.Owner),
		}
		upd, err := c.nb.Where(m).Update(m, &m.OtherConfig, &m.ExternalIDs)
		if err != nil {
			return nil, fmt.Errorf("build update of logical switch %s: %w", a.Switch, err)
		}
		ops = append(ops, upd...)
	}
	if !slices.Contains(cur.Ports, lspRef) {
		ops = append(ops, ovn.MutateRefs(nbdb.LogicalSwitchTable, cur.UUID, "ports", ovsdb.MutateOperationInsert, lspRef))
	}
	if len(ops) == 0 {
		return nil, nil
	}
	return append([]ovsdb.Operation{ovn.WaitPresent(nbdb.LogicalSwitchTable, cur.UUID, "name", a.Switch)}, ops...), nil
}

// switchOtherConfig follows Kube-OVN: other_config:subnet for IPv4, ipv6_prefix for IPv6.
func switchOtherConfig(cidrs []netip.Prefix) map[string]string {
	out := map[string]string{}
	for _, cidr := range cidrs {
		if cidr.Addr().Is4() {
			out["subnet"] = cidr.String()
		} else {
			out["ipv6_prefix"] = cidr.Addr().String()
		}
	}
	return out
}

// merged returns base with over's keys set; neither is changed.
func merged(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	maps.Copy(out, base)
	maps.Copy(out, over)
	return out
}
