package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgeovn/edgeovn/agent/node/hostnet"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// CleanupOVS is what Cleanup needs of the Open_vSwitch database.
type CleanupOVS interface {
	Ports(ctx context.Context, bridge string) ([]vswitch.Port, error)
	HasPort(ctx context.Context, name string) (bool, error)
	DeletePort(ctx context.Context, bridge, name string) error
	ProviderBridges(ctx context.Context) ([]vswitch.ProviderBridge, error)
	uplinkOVS
	Close()
}

var _ CleanupOVS = (*vswitch.Client)(nil)

// nft removes edgeovn's nftables tables: the masquerade of pod traffic and the node ports.
func (c *cleaner) nft(do bool) {
	tables, err := hostnet.OwnedTables()
	if err != nil {
		c.errs = append(c.errs, err)
		return
	}
	for _, name := range tables {
		what := "nftables table " + name
		if !do {
			fmt.Fprintln(c.out, "would remove", what)
			continue
		}
		if err := hostnet.DeleteTable(name); err != nil {
			c.errs = append(c.errs, err)
			continue
		}
		fmt.Fprintln(c.out, "removed", what)
	}
}

// routes removes edgeovn's routes (hostnet.RouteProtocol), before ovn0 goes, so that each is
// said; no other route is touched.
func (c *cleaner) routes(do bool) {
	routes, err := hostnet.OwnedRoutes()
	if err != nil {
		c.errs = append(c.errs, err)
		return
	}
	for _, r := range routes {
		what := "route " + r.Text
		if !do {
			fmt.Fprintln(c.out, "would remove", what)
			continue
		}
		if err := hostnet.DeleteRoute(r); err != nil {
			c.errs = append(c.errs, err)
			continue
		}
		fmt.Fprintln(c.out, "removed", what)
	}
}

// ovs removes edgeovn's pod ports on br-int, then ovn0. Ports edgeovn did not create are
// refused by DeletePort (ovn.ErrNotOwned) and reported kept.
func (c *cleaner) ovs(ctx context.Context, req CleanupRequest, do bool) {
	db, err := req.OVS(ctx)
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("ovs ports and %s left in place: %w", HostInterface, err))
		return
	}
	defer db.Close()
	ports, err := db.Ports(ctx, Bridge)
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("list pod ports on %s: %w", Bridge, err))
		return
	}
	c.providerBridges(ctx, db, do)
	c.mirrors(ctx, db, do)
	names := make([]string, 0, len(ports)+1)
	for _, p := range ports {
		names = append(names, p.Name)
	}
	if ok, err := db.HasPort(ctx, HostInterface); err != nil {
		c.errs = append(c.errs, err)
	} else if ok {
		names = append(names, HostInterface)
	}
	for _, name := range names {
		what := fmt.Sprintf("ovs port %s on %s", name, Bridge)
		if !do {
			fmt.Fprintln(c.out, "would remove", what)
			continue
		}
		err := db.DeletePort(ctx, Bridge, name)
		switch {
		case errors.Is(err, ovn.ErrNotOwned):
			fmt.Fprintln(c.out, "keep", what, "(not created by edgeovn)")
		case err != nil:
			c.errs = append(c.errs, err)
		default:
			fmt.Fprintln(c.out, "removed", what)
		}
	}
}

// providerBridges gives each provider bridge's NIC the host's addresses and routes back and
// removes the bridge and its ovn-bridge-mappings entry.
func (c *cleaner) providerBridges(ctx context.Context, db CleanupOVS, do bool) {
	brs, err := db.ProviderBridges(ctx)
	if err != nil {
		c.errs = append(c.errs, err)
		return
	}
	for _, b := range brs {
		what := fmt.Sprintf("provider bridge %s (uplink %v, its addresses and routes go back to the uplink)", b.Name, b.NICs)
		if !do {
			fmt.Fprintln(c.out, "would remove", what)
			continue
		}
		if err := giveBackBridge(ctx, db, b, discard{}); err != nil {
			c.errs = append(c.errs, err)
			continue
		}
		fmt.Fprintln(c.out, "removed", what)
	}
}

type discard struct{}

func (discard) Info(string, ...any) {}
