package vswitch

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
)

// NBCfgKey is the key of a bridge's external_ids under which ovn-controller reports the
// northbound configuration number (NB_Global nb_cfg) whose flows it has installed in OpenFlow.
const NBCfgKey = "ovn-nb-cfg"

// InstalledNBCfg returns the northbound configuration number ovn-controller last reported as
// installed on bridge; ok is false while it has reported none (or the bridge does not exist).
// A value that is not a number is an error naming it.
func (c *Client) InstalledNBCfg(ctx context.Context, bridge string) (cfg int64, ok bool, err error) {
	br, err := c.bridgeByName(ctx, bridge)
	if err != nil || br == nil {
		return 0, false, err
	}
	v, ok := br.ExternalIDs[NBCfgKey]
	if !ok {
		return 0, false, nil
	}
	cfg, err = strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("bridge %s external_ids:%s=%q: not a number: %w", bridge, NBCfgKey, v, err)
	}
	return cfg, true, nil
}

// OnNBCfgInstalled calls do each time ovn-controller reports on bridge that it has installed
// another northbound configuration, until ctx ends. The number found at the start is the
// baseline (what was installed before the call needs nothing); a number that goes down (the
// northbound database was recreated) counts as another. do runs on this goroutine, so
// reports that arrive meanwhile are coalesced into one call with the latest number. One
// caller at a time: the Bridge table's change token is not shared.
func (c *Client) OnNBCfgInstalled(ctx context.Context, bridge string, log *slog.Logger, do func(ctx context.Context, cfg int64)) {
	last, _, err := c.InstalledNBCfg(ctx, bridge)
	if err != nil {
		log.Warn("cannot read ovn-controller's installed configuration", "bridge", bridge, "err", err)
	}
	for {
		select {
		case <-c.bridgeChanged:
		case <-ctx.Done():
			return
		}
		cfg, ok, err := c.InstalledNBCfg(ctx, bridge)
		switch {
		case err != nil:
			log.Warn("cannot read ovn-controller's installed configuration", "bridge", bridge, "err", err)
		case ok && cfg != last:
			last = cfg
			do(ctx, cfg)
		}
	}
}
