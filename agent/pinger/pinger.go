package pinger

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Kube-OVN's per-target pings: 3 requests 100 ms apart.
const (
	pingCount    = 3
	pingInterval = 100 * time.Millisecond
	pingTimeout  = time.Second
	dnsTimeout   = 5 * time.Second
	// targetsTTL is how long a round's targets are reused: listing them costs 1 + hosts API
	// requests, which every host making every 5 s would be a steady load on a small API server.
	targetsTTL = 30 * time.Second
)

// Config is what a Pinger runs with.
type Config struct {
	Node        string
	Interval    time.Duration
	PodsPerNode int
	MaxTargets  int
	External    []netip.Addr
	// DNSServer is the cluster DNS; InternalDNS and ExternalDNS the names resolved through it
	// (ExternalDNS empty: none).
	DNSServer   netip.Addr
	InternalDNS string
	ExternalDNS string
	Lister      Lister
	// Inconsistent counts this host's OVS pod ports whose logical port is not bound in the
	// southbound; ok false: unknown this round (not exported then).
	Inconsistent func(context.Context) (n int, ok bool)
	Metrics      *Metrics
	Log          *slog.Logger
}

// Pinger runs rounds.
type Pinger struct {
	cfg Config
	mu  sync.Mutex
	// last is the last round's report; seen the label sets exported last round.
	last Round
	seen map[string][]string
	// targets are the sample last listed, at targetsAt (Run's goroutine only).
	targets   Targets
	targetsAt time.Time
	// probe pings (the raw socket's probe; tests replace it).
	probe func(context.Context, ProbeRequest) (map[netip.Addr]Result, error)
}

// New returns a Pinger; Run runs it.
func New(cfg Config) *Pinger {
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	return &Pinger{cfg: cfg, seen: map[string][]string{}, probe: probe}
}

// Run runs a round every Interval until ctx ends.
func (p *Pinger) Run(ctx context.Context) {
	t := time.NewTicker(p.cfg.Interval)
	defer t.Stop()
	for {
		r := p.Round(ctx)
		p.mu.Lock()
		p.last = r
		p.mu.Unlock()
		if r.Err != "" && ctx.Err() == nil {
			p.cfg.Log.Warn("pinger round", "err", r.Err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Last is the last round's report (zero before the first).
func (p *Pinger) Last() Round {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// Round runs one round and exports it.
func (p *Pinger) Round(ctx context.Context) Round {
	start := time.Now()
	r := Round{Start: start}
	t, err := p.sample(ctx, start)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	addrs := append([]netip.Addr{}, p.cfg.External...)
	for _, n := range t.Nodes {
		addrs = append(addrs, n.IP)
	}
	for _, pod := range t.Pods {
		addrs = append(addrs, pod.IP)
	}
	res, err := p.probe(ctx, ProbeRequest{Targets: addrs, Count: pingCount, Interval: pingInterval, Timeout: pingTimeout})
	if err != nil {
		r.Err = err.Error()
		return r
	}
	if !p.targetsAt.Equal(start) && anyAllLost(t, res) {
		// A pod or host that answered nothing may be gone since the sample was listed: list
		// again, and what is gone is not reported (as loss) at all.
		p.targetsAt = time.Time{}
		if fresh, err := p.sample(ctx, start); err == nil {
			t = stillListed(t, fresh)
		}
	}
	p.export(t, res, &r)
	r.InternalDNS = lookup(ctx, p.cfg.DNSServer, clusterName(p.cfg.InternalDNS))
	m := p.cfg.Metrics
	dnsResult(m.internalDNSHealthy, m.internalDNSUnhealthy, m.internalDNSLatency, p.cfg.Node, r.InternalDNS)
	if p.cfg.ExternalDNS != "" {
		d := lookup(ctx, p.cfg.DNSServer, p.cfg.ExternalDNS)
		r.ExternalDNS = &d
		dnsResult(m.externalDNSHealthy, m.externalDNSUnhealthy, m.externalDNSLatency, p.cfg.Node, d)
	}
	if p.cfg.Inconsistent != nil {
		if n, ok := p.cfg.Inconsistent(ctx); ok {
			r.Inconsistent = n
			m.inconsistentPortBinding.WithLabelValues(p.cfg.Node).Set(float64(n))
		}
	}
	r.Took = time.Since(start)
	return r
}

// sample returns the targets, listed again when the last list is older than targetsTTL.
func (p *Pinger) sample(ctx context.Context, now time.Time) (Targets, error) {
	if !p.targetsAt.IsZero() && now.Sub(p.targetsAt) < targetsTTL {
		return p.targets, nil
	}
	t, err := listTargets(ctx, p.cfg.Lister, pickRequest{Self: p.cfg.Node, PodsPerNode: p.cfg.PodsPerNode, MaxTargets: p.cfg.MaxTargets})
	if err != nil {
		return t, err
	}
	p.targets, p.targetsAt = t, now
	return t, nil
}

// anyAllLost says whether some pod or host target got no reply at all.
func anyAllLost(t Targets, res map[netip.Addr]Result) bool {
	for _, n := range t.Nodes {
		if r := res[n.IP]; r.Sent > 0 && r.Received == 0 {
			return true
		}
	}
	for _, pod := range t.Pods {
		if r := res[pod.IP]; r.Sent > 0 && r.Received == 0 {
			return true
		}
	}
	return false
}

// stillListed keeps of t the targets fresh lists too.
func stillListed(t, fresh Targets) Targets {
	pods, nodes := map[PodTarget]bool{}, map[NodeTarget]bool{}
	for _, p := range fresh.Pods {
		pods[p] = true
	}
	for _, n := range fresh.Nodes {
		nodes[n] = true
	}
	out := Targets{SrcNodeIP: t.SrcNodeIP, SrcIPs: t.SrcIPs}
	for _, p := range t.Pods {
		if pods[p] {
			out.Pods = append(out.Pods, p)
		}
	}
	for _, n := range t.Nodes {
		if nodes[n] {
			out.Nodes = append(out.Nodes, n)
		}
	}
	return out
}

// export records each target's result under Kube-OVN's labels and deletes the series of the
// targets that left the sample.
func (p *Pinger) export(t Targets, res map[netip.Addr]Result, r *Round) {
	m := p.cfg.Metrics
	src := func(target netip.Addr) []string {
		from := ""
		if a := t.srcIP(target); a.IsValid() {
			from = a.String()
		}
		return []string{p.cfg.Node, t.SrcNodeIP, from}
	}
	now := map[string][]string{}
	for _, n := range t.Nodes {
		labels := append(src(n.IP), n.Node, n.IP.String())
		observe(m.nodeLatency, m.nodeLost, m.nodeTotal, labels, res[n.IP])
		now["node\x00"+strings.Join(labels, "\x00")] = labels
		r.add("node", n.Node, n.IP, res[n.IP])
	}
	for _, pod := range t.Pods {
		labels := append(src(pod.IP), pod.Node, pod.NodeIP, pod.IP.String())
		observe(m.podLatency, m.podLost, m.podTotal, labels, res[pod.IP])
		now["pod\x00"+strings.Join(labels, "\x00")] = labels
		r.add("pod", pod.Node, pod.IP, res[pod.IP])
	}
	for _, a := range p.cfg.External {
		labels := append(src(a), a.String())
		observe(m.externalLatency, m.externalLost, nil, labels, res[a])
		r.add("external", "", a, res[a])
	}
	for k, labels := range p.seen {
		if _, ok := now[k]; ok {
			continue
		}
		if strings.HasPrefix(k, "node\x00") {
			forget(labels, m.nodeLatency, m.nodeLost, m.nodeTotal)
		} else {
			forget(labels, m.podLatency, m.podLost, m.podTotal)
		}
	}
	p.seen = now
}

// DNSResult is one lookup's outcome.
type DNSResult struct {
	Name  string
	Addrs []string
	Took  time.Duration
	Err   error
}

// clusterName makes a short in-cluster name (Kube-OVN's default "kubernetes.default",
// resolved in a pod through its search path) fully qualified; a name ending in a dot, or
// already under .svc.cluster.local, is taken as it is.
func clusterName(name string) string {
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".cluster.local") {
		return name
	}
	if strings.Count(name, ".") >= 2 {
		return name
	}
	return name + ".svc.cluster.local"
}

// lookup resolves name through server (port 53), as a pod's resolver would ask it.
func lookup(ctx context.Context, server netip.Addr, name string) DNSResult {
	ctx, cancel := context.WithTimeout(ctx, dnsTimeout)
	defer cancel()
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, netip.AddrPortFrom(server, 53).String())
	}}
	start := time.Now()
	addrs, err := r.LookupHost(ctx, name)
	res := DNSResult{Name: name, Addrs: addrs, Took: time.Since(start)}
	if err != nil {
		res.Err = fmt.Errorf("resolve %s through %s: %w", name, server, err)
	}
	return res
}
