package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

type bench struct {
	rig      *harness.Rig
	kube     kubernetes.Interface
	clients  *benchkit.Clients
	kubelet  *podsim.Kubelet
	site     string // the site client's namespace path
	backends []*podsim.Sandbox
	servers  []*podsim.Server
	services []*service
	// sources are the site client's addresses, taken in turn: one address reuses a source
	// port toward the same destination every ~14,000 connections (a few seconds here), so
	// the backend still holds the tuple in TIME_WAIT (Local keeps the client's address),
	// which a real site's many clients never do at this rate; 250 spread the reuse. With
	// Cluster the host masquerades every connection to its one join address whatever the
	// source (docs/benchmarks.md, LoadBalancer IPs).
	sources []netip.Addr
	next    atomic.Uint64
}

// service is one LoadBalancer Service of the two backends and its two paths.
type service struct {
	name, policy   string
	lbAddr, npAddr netip.AddrPort
	healthPort     int32
}

func newBench(ctx context.Context, rig *harness.Rig) (*bench, error) {
	c, err := benchkit.Connect(ctx, rig)
	if err != nil {
		return nil, err
	}
	return &bench{rig: rig, kube: c.Kube, clients: c, kubelet: daemon.Kubelet(rig, node), site: "/var/run/netns/" + rig.LANNetns}, nil
}

func (b *bench) close() {
	for _, s := range b.servers {
		_ = s.Close()
	}
	b.clients.Close()
}

// setUp runs the backends and the two Services, routes their LoadBalancer IPs from the LAN
// to the host (as MetalLB's ARP answers or the site router would), and waits for both paths.
// maxSources is how many site client addresses 198.51.100.0/24 gives.
const maxSources = 254

func (b *bench) setUp(ctx context.Context, sources int) error {
	if sources > maxSources {
		return fmt.Errorf("-sources %d: at most %d", sources, maxSources)
	}
	for i := range sources {
		// Beyond the LAN's own /24, as a site's clients behind its router are: the host
		// answers them through its default route, which is the LAN's gateway.
		a := netip.AddrFrom4([4]byte{198, 51, 100, byte(1 + i)})
		if out, err := exec.CommandContext(ctx, "ip", "-n", b.rig.LANNetns, "addr", "add", a.String()+"/32", "dev", "eth0").CombinedOutput(); err != nil {
			return fmt.Errorf("site client address %s: %w: %s", a, err, out)
		}
		b.sources = append(b.sources, a)
	}
	if err := b.kubelet.EnsureNode(ctx); err != nil {
		return err
	}
	if err := b.kubelet.WaitReady(ctx); err != nil {
		return err
	}
	for ctx.Err() == nil && !daemon.HostInterfaceBound(ctx, b.rig) {
		time.Sleep(100 * time.Millisecond)
	}
	for _, name := range []string{"web-1", "web-2"} {
		pod, err := b.kubelet.CreatePod(ctx, "default", name, nil)
		if err != nil {
			return err
		}
		sb, err := b.kubelet.RunSandbox(ctx, pod)
		if err != nil {
			return err
		}
		srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: sb.Netns, Port: 8080, Name: name})
		if err != nil {
			return err
		}
		b.backends, b.servers = append(b.backends, sb), append(b.servers, srv)
	}
	for i, policy := range []corev1.ServiceExternalTrafficPolicy{corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal} {
		svc, err := b.createService(ctx, fmt.Sprintf("lb-%d", i), policy, netip.AddrFrom4([4]byte{192, 0, 2, byte(100 + i)}))
		if err != nil {
			return err
		}
		b.services = append(b.services, svc)
	}
	return nil
}

// nodeIPService publishes a ClusterIP Service on the host's own address (spec.externalIPs:
// the node IP, port 8081, which no host listener holds), the way a site without a load
// balancer often publishes one; edgeovn then checks the host's listeners at each pass.
func (b *bench) nodeIPService(ctx context.Context) error {
	api := b.kube.CoreV1().Services("default")
	_, err := api.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "on-node-ip"},
		Spec: corev1.ServiceSpec{ExternalIPs: []string{b.rig.NodeIP.String()},
			Ports: []corev1.ServicePort{{Name: "http", Port: 8081, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create service on-node-ip: %w", err)
	}
	if err := b.publish(ctx, "on-node-ip", node, false); err != nil {
		return err
	}
	return b.waitAnswer(ctx, netip.AddrPortFrom(b.rig.NodeIP, 8081))
}

func (b *bench) createService(ctx context.Context, name string, policy corev1.ServiceExternalTrafficPolicy, lbIP netip.Addr) (*service, error) {
	api := b.kube.CoreV1().Services("default")
	svc, err := api.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: policy,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create service %s: %w", name, err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: lbIP.String()}}
	if svc, err = api.UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("set the load balancer status of %s: %w", name, err)
	}
	if err := b.publish(ctx, name, node, false); err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, "ip", "-n", b.rig.LANNetns, "route", "add", lbIP.String()+"/32", "via", b.rig.NodeIP.String()).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("route %s on the LAN: %w: %s", lbIP, err, out)
	}
	s := &service{name: name, policy: string(policy), lbAddr: netip.AddrPortFrom(lbIP, 80),
		npAddr: netip.AddrPortFrom(b.rig.NodeIP, uint16(svc.Spec.Ports[0].NodePort)), healthPort: svc.Spec.HealthCheckNodePort}
	for _, addr := range []netip.AddrPort{s.lbAddr, s.npAddr} {
		if err := b.waitAnswer(ctx, addr); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// publish writes the Service's EndpointSlice: both backends, on the node given.
func (b *bench) publish(ctx context.Context, svc, on string, update bool) error {
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: svc + "-bench",
		Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8080)), Protocol: new(corev1.ProtocolTCP)}}}
	for _, sb := range b.backends {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{sb.IP().String()}, NodeName: new(on)})
	}
	api := b.kube.DiscoveryV1().EndpointSlices("default")
	var err error
	if update {
		_, err = api.Update(ctx, slice, metav1.UpdateOptions{})
	} else {
		_, err = api.Create(ctx, slice, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("publish endpoints of %s: %w", svc, err)
	}
	return nil
}

func (b *bench) waitAnswer(ctx context.Context, addr netip.AddrPort) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		_, err := podsim.Send(ctx, podsim.SendRequest{Netns: b.site, Protocol: corev1.ProtocolTCP, Addr: addr, Timeout: time.Second})
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s never answered the site client: %w", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// load is one path's requests: latencies, failures and the clients' time in them.
type load struct {
	lat      []time.Duration
	failed   int
	firstErr string // the first failure's error, "" without
	// busy is the clients' time in this path's requests, summed over the clients; stalled is
	// the part in failed requests (each waits out its 2 s timeout).
	busy, stalled time.Duration
	workers       int
}

// add records one request that took d.
func (l *load) add(d time.Duration, err error) {
	l.busy += d
	if err != nil {
		if l.failed == 0 {
			l.firstErr = "(" + err.Error() + ")"
		}
		l.failed++
		l.stalled += d
		return
	}
	l.lat = append(l.lat, d)
}

// rate is the requests a second the clients get on this path: the answered requests over the
// clients' time in this path's requests (the paths share the clients' time, request by
// request, so wall time would halve both).
func (l load) rate() float64 { return perSecond(len(l.lat), l.busy, l.workers) }

// servingRate is the rate over the time the clients were not waiting out a lost request: a
// lost request (its SYN retransmitted past the 2 s timeout) holds its client 2 s, and a few of
// them decide rate() more than the path does.
func (l load) servingRate() float64 {
	return perSecond(len(l.lat), l.busy-l.stalled, l.workers)
}

func perSecond(n int, busy time.Duration, workers int) float64 {
	if busy <= 0 {
		return 0
	}
	return float64(n) * float64(max(workers, 1)) / busy.Seconds()
}

// compare measures the LoadBalancer IP (load 0) and the node port (load 1) in the same
// rounds, each client alternating between them request by request (client w starts with
// path w%2), so both paths meet the same moments of the machine. Measured in blocks of
// seconds one after the other, the paths' p50s differed by the machine's drift between the
// blocks (0.6-1.3 ms from one 5 s block to the next with other work on the 2 cores), not by
// the path.
func (b *bench) compare(ctx context.Context, svc *service, o options) (load, load, error) {
	paths := [2]netip.AddrPort{svc.lbAddr, svc.npAddr}
	var loads [2]load
	for r := range o.rounds {
		before := [2]int{len(loads[0].lat), len(loads[1].lat)}
		b.round(ctx, &loads, paths, o)
		if o.perRound {
			for i, name := range []string{"LoadBalancer IP", "NodePort"} {
				l := loads[i].lat[before[i]:]
				fmt.Printf("round %d %s %s: %d requests, p50 %d us, p99 %d us\n", r, svc.policy, name, len(l),
					benchkit.Pct(l, 50).Microseconds(), benchkit.Pct(l, 99).Microseconds())
			}
		}
	}
	for _, l := range loads {
		if l.failed > len(l.lat)/10 {
			return loads[0], loads[1], fmt.Errorf("%s: %d of %d requests failed", svc.name, l.failed, l.failed+len(l.lat))
		}
	}
	return loads[0], loads[1], nil
}

// round sends requests from o.workers clients for o.seconds, each alternating between the
// paths.
func (b *bench) round(ctx context.Context, loads *[2]load, paths [2]netip.AddrPort, o options) {
	end := time.Now().Add(time.Duration(o.seconds * float64(time.Second)))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range o.workers {
		wg.Go(func() {
			for i := w; time.Now().Before(end); i++ {
				p := pathOf(i)
				t0 := time.Now()
				_, err := podsim.Send(ctx, podsim.SendRequest{Netns: b.site, Protocol: corev1.ProtocolTCP, Addr: paths[p], Timeout: 2 * time.Second, From: b.source()})
				d := time.Since(t0)
				mu.Lock()
				loads[p].add(d, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	loads[0].workers, loads[1].workers = o.workers, o.workers
}

// pathOf is the path of a client's i-th request (counted from its own index): 0, 1, 0, ...
func pathOf(i int) int { return i % 2 }

// source is the next site client address (none: the kernel's choice).
func (b *bench) source() netip.Addr {
	if len(b.sources) == 0 {
		return netip.Addr{}
	}
	return b.sources[b.next.Add(1)%uint64(len(b.sources))]
}

// healthFlips moves the Local Service's endpoints off this node and back, timing each
// change from the EndpointSlice update sent to the health check's new status.
func (b *bench) healthFlips(ctx context.Context, flips int) ([]time.Duration, []time.Duration, error) {
	var svc *service
	for _, s := range b.services {
		if s.policy == string(corev1.ServiceExternalTrafficPolicyLocal) {
			svc = s
		}
	}
	url := fmt.Sprintf("http://%s:%d/healthz", b.rig.NodeIP, svc.healthPort)
	if err := b.waitHealth(ctx, url, http.StatusOK); err != nil {
		return nil, nil, err
	}
	var down, up []time.Duration
	for range flips {
		for _, f := range []struct {
			on     string
			status int
			out    *[]time.Duration
		}{{"elsewhere", http.StatusServiceUnavailable, &down}, {node, http.StatusOK, &up}} {
			t0 := time.Now()
			if err := b.publish(ctx, svc.name, f.on, true); err != nil {
				return nil, nil, err
			}
			if err := b.waitHealth(ctx, url, f.status); err != nil {
				return nil, nil, err
			}
			*f.out = append(*f.out, time.Since(t0))
		}
	}
	return down, up, nil
}

// waitHealth asks the health check from the site until it answers status.
func (b *bench) waitHealth(ctx context.Context, url string, status int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		a, err := podsim.HTTPGet(ctx, b.site, url, time.Second)
		if err == nil && a.Status == status {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("health check %s: never %d (last %d, %v)", url, status, a.Status, errors.Join(err, ctx.Err()))
		}
		time.Sleep(2 * time.Millisecond) // leave the daemon the CPU it needs to answer
	}
}
