package vswitch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// CapZeroSNAT is the Datapath capability by which ovs-vswitchd says its conntrack can commit
// with an all-zero source NAT. ovn-controller reads it: when "true", every ct_commit of a
// stateful ACL becomes ct(commit, nat(src)).
//
// The userspace conntrack of Open vSwitch 3.1 (Debian 12's) keeps a second, "un-NAT" entry for
// each such commit in the same hash chain as the connection itself, and a packet that meets
// that entry first aborts ovs-vswitchd ("assertion conn->conn_type == CT_CONN_TYPE_DEFAULT
// failed in conn_update_state()"). With network policies that took down the whole datapath
// within a minute of probing. Without the capability ovn-controller commits plainly.
const CapZeroSNAT = "ct_zero_snat"

// DisableZeroSNAT sets capabilities:ct_zero_snat=false on the Datapath row of the given type
// when it says "true" (ovs-vswitchd writes the row's capabilities when it creates the datapath,
// at its start). It returns whether it wrote; a missing row is not an error (the capability
// is not published yet).
func (c *Client) DisableZeroSNAT(ctx context.Context, datapathType string) (bool, error) {
	root, err := c.root(ctx)
	if err != nil {
		return false, fmt.Errorf("disable zero snat on %s datapath: %w", datapathType, err)
	}
	uuid, ok := root.Datapaths[datapathType]
	if !ok {
		return false, nil
	}
	dp := &vswitchdb.Datapath{UUID: uuid}
	if err := c.ovs.Get(ctx, dp); err != nil || dp.Capabilities[CapZeroSNAT] != "true" {
		return false, nil // not cached yet: the next change of the table brings it
	}
	ops := []ovsdb.Operation{setKeys(vswitchdb.DatapathTable, uuid, "capabilities", map[string]string{CapZeroSNAT: "false"}, nil)}
	if err := c.commit(ctx, ops); err != nil {
		return false, fmt.Errorf("disable zero snat on %s datapath: %w", datapathType, err)
	}
	return true, nil
}

// KeepZeroSNATOff runs DisableZeroSNAT now and after every change of the Datapath or
// Open_vSwitch tables (ovs-vswitchd restarted, ovn-controller added the row) until ctx ends.
// A failed write is logged and retried after retry.
func (c *Client) KeepZeroSNATOff(ctx context.Context, datapathType string, retry time.Duration, log *slog.Logger) {
	for {
		var again <-chan time.Time
		wrote, err := c.DisableZeroSNAT(ctx, datapathType)
		switch {
		case err != nil:
			log.Warn("cannot turn off all-zero SNAT commits", "datapath", datapathType, "err", err)
			again = time.After(retry)
		case wrote:
			log.Info("userspace conntrack: all-zero SNAT commits turned off (Open vSwitch 3.1 aborts on them)",
				"datapath", datapathType)
		}
		select {
		case <-c.datapathChanged:
		case <-again:
		case <-ctx.Done():
			return
		}
	}
}
