package node

import (
	"context"
	"time"

	"github.com/edgeovn/edgeovn/ovn/appctl"
)

// purgeTimeout bounds one purge: ovs-vswitchd answers it in milliseconds when it runs.
const purgeTimeout = 10 * time.Second

// minPurgeInterval spaces purges out: while pods come and go, every change of a policy's
// address sets is announced, and each purge costs an upcall per active flow. Reports that
// arrive in between are coalesced into the next purge.
const minPurgeInterval = time.Second

// purgeStaleFlows runs on the userspace datapath. Each time ovn-controller reports on br-int
// that it installed another northbound configuration (the controller role bumps NB_Global's
// nb_cfg after every network policy change), it purges ovs-vswitchd's datapath flow cache, so
// every flow is translated again from the OpenFlow tables as they are now.
//
// Why: Open vSwitch 3.1's userspace datapath can keep a cached megaflow whose actions came
// from OpenFlow rules ovn-controller has since replaced: a drop for a pair of pods that a
// policy change now allows (or the other way round). Its revalidator does not repair it, and
// as long as packets keep hitting it (a client that retries), it never idles out: the
// NetworkPolicy truth table saw connections stay blocked for a minute with OpenFlow, the
// logical flows and conntrack all right, until `ovs-appctl revalidator/purge`.
func (r *Role) purgeStaleFlows(ctx context.Context) {
	rundir := appctl.RunDir(r.req.OVSEndpoint)
	r.log.Info("userspace datapath: its flow cache is purged each time ovn-controller installs a network policy change",
		"bridge", Bridge, "rundir", rundir)
	var last time.Time
	r.ovs.OnNBCfgInstalled(ctx, Bridge, r.log, func(ctx context.Context, cfg int64) {
		select {
		case <-time.After(time.Until(last.Add(minPurgeInterval))):
		case <-ctx.Done():
			return
		}
		last = time.Now()
		ctx, cancel := context.WithTimeout(ctx, purgeTimeout)
		defer cancel()
		sock, err := appctl.ControlSocket(rundir)
		if err == nil {
			err = appctl.PurgeFlows(ctx, sock)
		}
		if err != nil {
			r.log.Warn("cannot purge the datapath flow cache: flows cached before a policy change may outlive it",
				"nb_cfg", cfg, "err", err)
			return
		}
		r.log.Debug("datapath flow cache purged", "nb_cfg", cfg, "socket", sock)
	})
}
