package node

import (
	"context"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/bgp"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// bgpRetry is the first wait before the speaker is started again after it could not start
// (at boot the NIC toward the neighbour may come up after edgeovn); it doubles up to
// bgpRetryMax.
var bgpRetry, bgpRetryMax = time.Second, 30 * time.Second

// serveBGP runs the BGP speaker (package bgp) when a neighbour is configured; otherwise
// nothing of it starts. A speaker that cannot start is logged, said in `edgeovn status`,
// and tried again: BGP never stops the node role.
func (r *Role) serveBGP(ctx context.Context, kube *kubeapi.Client) error {
	if !r.req.BGP.Enabled() {
		return nil
	}
	log := r.log.With("component", "bgp")
	var dyn dynamic.Interface
	wait := bgpRetry
	for ctx.Err() == nil {
		var err error
		if dyn == nil && r.req.Dynamic != nil {
			dyn, err = r.req.Dynamic(ctx)
		}
		if err == nil {
			err = bgp.Run(ctx, bgp.Request{BGP: r.req.BGP, NodeName: r.req.NodeName, Kube: kube, Dynamic: dyn,
				Report: r.req.Metrics, Log: log})
		}
		if err == nil || ctx.Err() != nil {
			return nil
		}
		log.Error("bgp speaker not running, retrying", "err", err, "retry_in", wait)
		r.req.Metrics.SetBGP(nil, 0, "speaker not running: "+err.Error()+"\n")
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, bgpRetryMax)
	}
	return nil
}
