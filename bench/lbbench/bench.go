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
	// port toward the same destination every ~14,000 connections (a few seconds here), and
	// the userspace datapath's conntrack drops a SYN that reuses a 5-tuple still in TIME_WAIT
	// (30 s), which a real site's many clients never do at this rate.
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
func (b *bench) setUp(ctx context.Context, sources int) error {
	for i := range sources {
		a := netip.AddrFrom4([4]byte{192, 0, 2, byte(200 + i)})
		if out, err := exec.CommandContext(ctx, "ip", "-n", b.rig.LANNetns, "addr", "add", a.String()+"/24", "dev", "eth0").CombinedOutput(); err != nil {
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

// load is one path's requests: latencies and the time spent.
type load struct {
	lat      []time.Duration
	failed   int
	firstErr string // the first failure's error, "" without
	spent    time.Duration
	// stalled is the clients' time in failed requests (each waits out its 2 s timeout), summed
	// over the clients.
	stalled time.Duration
	workers int
}

func (l load) rate() float64 { return float64(len(l.lat)) / l.spent.Seconds() }

// servingRate is the rate over the time the clients were not waiting out a lost request: a
// lost request (a 5-tuple reused within the userspace conntrack's TIME_WAIT) holds its client
// 2 s, and a few of them decide rate() more than the path does.
func (l load) servingRate() float64 {
	busy := l.spent - l.stalled/time.Duration(max(l.workers, 1))
	return float64(len(l.lat)) / busy.Seconds()
}

// compare runs the rounds, the LoadBalancer IP and the NodePort in turn.
func (b *bench) compare(ctx context.Context, svc *service, o options) (load, load, error) {
	var lb, np load
	for range o.rounds {
		for _, p := range []struct {
			l    *load
			addr netip.AddrPort
		}{{&lb, svc.lbAddr}, {&np, svc.npAddr}} {
			b.round(ctx, p.l, p.addr, o)
		}
	}
	for _, l := range []load{lb, np} {
		if l.failed > len(l.lat)/10 {
			return lb, np, fmt.Errorf("%s: %d of %d requests failed", svc.name, l.failed, l.failed+len(l.lat))
		}
	}
	return lb, np, nil
}

// round sends requests from o.workers clients for o.seconds.
func (b *bench) round(ctx context.Context, l *load, addr netip.AddrPort, o options) {
	start := time.Now()
	end := start.Add(time.Duration(o.seconds * float64(time.Second)))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range o.workers {
		wg.Go(func() {
			for time.Now().Before(end) {
				t0 := time.Now()
				_, err := podsim.Send(ctx, podsim.SendRequest{Netns: b.site, Protocol: corev1.ProtocolTCP, Addr: addr, Timeout: 2 * time.Second, From: b.source()})
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					if l.failed == 0 {
						l.firstErr = "(" + err.Error() + ")"
					}
					l.failed++
					l.stalled += d
				} else {
					l.lat = append(l.lat, d)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	l.spent += time.Since(start)
	l.workers = o.workers
}

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
