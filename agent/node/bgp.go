package node

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/edgeovn/edgeovn/agent/bgp"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/podwatch"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// bgpRetry is the first wait before the speaker is started again after it could not start
// (at boot the NIC toward the neighbour may come up after edgeovn); it doubles up to
// bgpRetryMax.
var bgpRetry, bgpRetryMax = time.Second, 30 * time.Second

// serveBGP runs the BGP speaker (package bgp: its informers here, the speaker process
// edgeovn-bgp beside this binary) when a neighbour is configured; otherwise nothing of it
// starts. A speaker that cannot start is logged, said in `edgeovn status`, and tried again:
// BGP never stops the node role.
func (r *Role) serveBGP(ctx context.Context, kube *kubeapi.Client, pods bgp.Pods) error {
	if !r.req.BGP.Enabled() {
		return nil
	}
	log := r.log.With("component", "bgp")
	speaker, err := speakerPath()
	if err != nil {
		log.Error("bgp speaker not found", "err", err)
		r.req.Metrics.SetBGP(nil, 0, "speaker not running: "+err.Error()+"\n")
		return nil
	}
	// The Subnets and this host's pods are the node role's own watches (the host wiring's,
	// the CNI server's), shared.
	select {
	case <-ctx.Done():
		return nil
	case <-r.subnetsSet:
	}
	subnets := r.subnets.Load().informer
	wait := bgpRetry
	for ctx.Err() == nil {
		err := bgp.Run(ctx, bgp.Request{BGP: r.req.BGP, NodeName: r.req.NodeName, Kube: kube, Pods: pods, Subnets: subnets,
			Report: r.req.Metrics, Speaker: speaker, HostIPv4: r.encapIPv4, Log: log})
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

var _ bgp.Pods = (*podwatch.Watcher)(nil)

// speakerName is the speaker process's binary, installed next to edgeovn's.
const speakerName = "edgeovn-bgp"

func speakerPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find %s: %w", speakerName, err)
	}
	return filepath.Join(filepath.Dir(exe), speakerName), nil
}

// encapIPv4 is this host's tunnel endpoint (ovn-encap-ip, kept by syncEncap): its own IPv4
// address, the BGP router ID of a host with no IPv4 neighbour.
func (r *Role) encapIPv4(ctx context.Context) (netip.Addr, error) {
	cfg, err := r.ovs.OVNConfig(ctx)
	if err != nil {
		return netip.Addr{}, err
	}
	a, err := netip.ParseAddr(cfg[vswitch.KeyEncapIP])
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%s %q: %w", vswitch.KeyEncapIP, cfg[vswitch.KeyEncapIP], err)
	}
	return a, nil
}
