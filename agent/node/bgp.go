package node

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/edgeovn/edgeovn/agent/bgp"
	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/podwatch"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// bgpRetry is the first wait before the speaker is started again after it could not start
// (at boot the NIC toward the neighbour may come up after edgeovn); it doubles up to
// bgpRetryMax.
var bgpRetry, bgpRetryMax = time.Second, 30 * time.Second

// serveBGP runs the BGP speaker (package bgp: its informers here, the speaker process
// edgeovn-bgp beside this binary) while a neighbour is configured; otherwise nothing of it
// starts. New options from BGPReload stop the speaker and start it again with them (or
// start or stop it, as a neighbour appears or goes); the same options again change nothing.
func (r *Role) serveBGP(ctx context.Context, kube *kubeapi.Client, pods bgp.Pods) error {
	cfg := r.req.BGP
	log := r.log.With("component", "bgp")
	for {
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.runBGP(runCtx, cfg, kube, pods, log)
		}()
		next, ok := r.nextBGP(ctx, cfg, log)
		cancel()
		<-done
		if !ok {
			return nil
		}
		if !next.Enabled() {
			r.req.Metrics.SetBGP(nil, 0, "")
		}
		log.Info("bgp options reloaded", "neighbors", fmt.Sprint(next.Neighbors()), "was", fmt.Sprint(cfg.Neighbors()))
		cfg = next
	}
}

// nextBGP waits for options from BGPReload that differ from cur; false when ctx ends first.
func (r *Role) nextBGP(ctx context.Context, cur config.BGP, log *slog.Logger) (config.BGP, bool) {
	for {
		select {
		case <-ctx.Done():
			return cur, false
		case next := <-r.req.BGPReload:
			if reflect.DeepEqual(next, cur) {
				log.Info("bgp options reloaded: unchanged")
				continue
			}
			return next, true
		}
	}
}

// runBGP runs the speaker with cfg until ctx ends; without a neighbour it returns at once. A
// speaker that cannot start is logged, said in `edgeovn status`, and tried again: BGP never
// stops the node role.
func (r *Role) runBGP(ctx context.Context, cfg config.BGP, kube *kubeapi.Client, pods bgp.Pods, log *slog.Logger) {
	if !cfg.Enabled() {
		return
	}
	speaker, err := speakerPath()
	if err != nil {
		log.Error("bgp speaker not found", "err", err)
		r.req.Metrics.SetBGP(nil, 0, "speaker not running: "+err.Error()+"\n")
		return
	}
	// The Subnets and this host's pods are the node role's own watches (the host wiring's,
	// the CNI server's), shared.
	select {
	case <-ctx.Done():
		return
	case <-r.subnetsSet:
	}
	subnets := r.subnets.Load().informer
	wait := bgpRetry
	for ctx.Err() == nil {
		err := bgp.Run(ctx, bgp.Request{BGP: cfg, NodeName: r.req.NodeName, Kube: kube, Pods: pods, Subnets: subnets,
			Report: r.req.Metrics, Speaker: speaker, HostIPv4: r.encapIPv4, Log: log})
		if err == nil || ctx.Err() != nil {
			return
		}
		log.Error("bgp speaker not running, retrying", "err", err, "retry_in", wait)
		r.req.Metrics.SetBGP(nil, 0, "speaker not running: "+err.Error()+"\n")
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, bgpRetryMax)
	}
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
