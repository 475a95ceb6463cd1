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

// The Logical_Switch other_config keys of IGMP/MLD snooping (ovn-nb(5)), as Kube-OVN sets
// them for a Subnet's enableMulticastSnoop.
const (
	McastSnoop   = "mcast_snoop"
	McastQuerier = "mcast_querier"
	McastIP4Src  = "mcast_ip4_src"
	McastEthSrc  = "mcast_eth_src"
)

var mcastKeys = []string{McastSnoop, McastQuerier, McastIP4Src, McastEthSrc}

// SwitchMulticastSpec is a switch's multicast snooping: on, with the querier's source
// addresses, or off (every key removed).
type SwitchMulticastSpec struct {
	Switch string
	Snoop  bool
	// QuerierIP and QuerierMAC are the source of the switch's IGMP queries (mcast_ip4_src,
	// mcast_eth_src); without them the switch snoops but does not ask (mcast_querier false),
	// another querier on the network does.
	QuerierIP  netip.Addr
	QuerierMAC string
}

// want is the spec's keys and values; empty when off.
func (s SwitchMulticastSpec) want() map[string]string {
	if !s.Snoop {
		return map[string]string{}
	}
	if !s.QuerierIP.Is4() || s.QuerierMAC == "" {
		return map[string]string{McastSnoop: "true", McastQuerier: "false"}
	}
	return map[string]string{McastSnoop: "true", McastQuerier: "true", McastIP4Src: s.QuerierIP.String(), McastEthSrc: s.QuerierMAC}
}

// EnsureSwitchMulticast makes the switch's multicast keys in other_config exactly the spec's,
// in one transaction, and reports whether it wrote; other keys are left as they are. The
// switch must exist and be edgeovn's.
func (c *Client) EnsureSwitchMulticast(ctx context.Context, spec SwitchMulticastSpec) (bool, error) {
	wrote, err := c.ensureSwitchMulticast(ctx, spec)
	if err != nil {
		return false, fmt.Errorf("ensure multicast snooping of switch %s: %w", spec.Switch, err)
	}
	return wrote, nil
}

func (c *Client) ensureSwitchMulticast(ctx context.Context, spec SwitchMulticastSpec) (bool, error) {
	if err := validateName("switch", spec.Switch); err != nil {
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
	want := spec.want()
	have := maps.Clone(ls.OtherConfig)
	maps.DeleteFunc(have, func(k, _ string) bool { return !slices.Contains(mcastKeys, k) })
	if maps.Equal(have, want) {
		return false, nil
	}
	// Delete the keys, then insert the wanted values: an insert never overwrites a key.
	del := make([]any, 0, len(mcastKeys))
	for _, k := range mcastKeys {
		del = append(del, k)
	}
	ops := []ovsdb.Operation{
		ovn.WaitPresent(nbdb.LogicalSwitchTable, ls.UUID, "name", spec.Switch),
		ovn.MutateSet(nbdb.LogicalSwitchTable, ls.UUID, "other_config", ovsdb.MutateOperationDelete, del...),
	}
	if len(want) > 0 {
		ops = append(ops, ovsdb.Operation{
			Op:        ovsdb.OperationMutate,
			Table:     nbdb.LogicalSwitchTable,
			Where:     []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: ls.UUID})},
			Mutations: []ovsdb.Mutation{*ovsdb.NewMutation("other_config", ovsdb.MutateOperationInsert, ovsdb.OvsMap{GoMap: toAnyMap(want)})},
		})
	}
	return true, c.commit(ctx, ops)
}

func toAnyMap(m map[string]string) map[any]any {
	out := make(map[any]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
