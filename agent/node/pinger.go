package node

import (
	"context"
	"strings"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/pinger"
)

// runPinger runs the pinger (--enable-pinger) until ctx ends; its metrics join /metrics and
// its last round is /pinger (edgeovn status).
func (r *Role) runPinger(ctx context.Context, kube *kubeapi.Client) error {
	m := pinger.NewMetrics()
	if err := r.req.Metrics.Register(m.Collectors()...); err != nil {
		return err
	}
	p := pinger.New(pinger.Config{Node: r.req.NodeName, Interval: r.req.PingerInterval, PodsPerNode: r.req.PingerPodsPerNode,
		MaxTargets: r.req.PingerMaxTargets, External: r.req.PingerExternal, DNSServer: r.req.PingerClusterDNS,
		InternalDNS: r.req.PingerInternalDNS, ExternalDNS: r.req.PingerExternalDNS, Lister: pinger.KubeLister{Kube: kube},
		Inconsistent: r.inconsistentBindings, Metrics: m, Log: r.log.With("part", "pinger")})
	r.req.Metrics.SetPingerReport(func() string {
		var b strings.Builder
		p.Last().WriteText(&b, false)
		return b.String()
	})
	p.Run(ctx)
	return nil
}

// inconsistentBindings counts this host's OVS pod ports whose logical port the southbound
// does not have up on this chassis (Kube-OVN's pinger_inconsistent_port_binding); ok false
// while the southbound cannot be read.
func (r *Role) inconsistentBindings(ctx context.Context) (int, bool) {
	ports, err := r.ovs.Ports(ctx, Bridge)
	if err != nil {
		return 0, false
	}
	b, ok := r.sb.read(ctx, r)
	if !ok {
		return 0, false
	}
	n := 0
	for _, p := range ports {
		if !b.UpHere(p.IfaceID) {
			n++
		}
	}
	return n, true
}
