package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/ovn-org/libovsdb/client"
	"golang.org/x/sync/errgroup"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// bench holds a fast API client and a northbound client whose cache shows what edgeovn
// wrote the moment the database has it.
type bench struct {
	kube kubernetes.Interface
	nb   client.Client
	ns   string
}

func newBench(ctx context.Context, rig *harness.Rig) (*bench, error) {
	c, err := benchkit.Connect(ctx, rig)
	if err != nil {
		return nil, err
	}
	return &bench{kube: c.Kube, nb: c.NB, ns: "default"}, nil
}

func (b *bench) close() { b.nb.Close() }

// createServices creates n Services with one EndpointSlice of 3 endpoints each, 8 at a time.
func (b *bench) createServices(ctx context.Context, n int) error {
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error { return b.createService(ctx, i) })
	}
	return g.Wait()
}

func (b *bench) createService(ctx context.Context, i int) error {
	name := fmt.Sprintf("svc-%d", i)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: b.ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := b.kube.CoreV1().Services(b.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create service %s: %w", name, err)
	}
	_, err := b.kube.DiscoveryV1().EndpointSlices(b.ns).Create(ctx, slice(name, i, 0), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create endpoint slice of %s: %w", name, err)
	}
	return nil
}

// slice is service i's endpoints in generation gen: 3 addresses that change with gen.
func slice(name string, i, gen int) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name + "-bench",
		Labels: map[string]string{discoveryv1.LabelServiceName: name}}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8080))}}}
	for e := range 3 {
		addr := fmt.Sprintf("10.42.%d.%d", 100+(i/250), 1+(i%250))
		if e > 0 || gen > 0 {
			addr = fmt.Sprintf("10.41.%d.%d", (gen*3+e)/250, 1+(gen*3+e)%250)
		}
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{addr}})
	}
	return s
}

// waitProgrammed waits until n Service load balancers hold backends and returns the time
// since start and the number of load balancer rows.
func (b *bench) waitProgrammed(ctx context.Context, n int, start time.Time) (time.Duration, int, error) {
	for {
		var lbs []*nbdb.LoadBalancer
		if err := b.nb.List(ctx, &lbs); err != nil {
			return 0, 0, err
		}
		done := 0
		for _, lb := range lbs {
			for _, backends := range lb.Vips {
				if strings.Count(backends, ",") == 2 {
					done++
				}
			}
		}
		if done >= n {
			return time.Since(start), len(lbs), nil
		}
		select {
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("%d of %d services programmed: %w", done, n, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// endpointChanges changes one Service's endpoints n times and times each change from the
// API's answer to the new backend in northbound.
func (b *bench) endpointChanges(ctx context.Context, n int) ([]time.Duration, error) {
	var out []time.Duration
	api := b.kube.DiscoveryV1().EndpointSlices(b.ns)
	for gen := 1; gen <= n; gen++ {
		cur, err := api.Get(ctx, "svc-0-bench", metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		want := slice("svc-0", 0, gen)
		cur.Endpoints = want.Endpoints
		start := time.Now()
		if _, err := api.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return nil, err
		}
		if err := b.waitBackend(ctx, "svc:default/svc-0:tcp", want.Endpoints[2].Addresses[0]+":8080"); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	slices.Sort(out)
	return out, nil
}

func (b *bench) waitBackend(ctx context.Context, lb, backend string) error {
	for {
		var lbs []*nbdb.LoadBalancer
		err := b.nb.WhereCache(func(l *nbdb.LoadBalancer) bool { return l.Name == lb }).List(ctx, &lbs)
		if err != nil {
			return err
		}
		for _, l := range lbs {
			for _, v := range l.Vips {
				if strings.Contains(v, backend) {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("load balancer %s never got backend %s: %w", lb, backend, ctx.Err())
		case <-time.After(500 * time.Microsecond):
		}
	}
}

// deleteServices deletes the n Services of createServices, 8 at a time, and waits until
// northbound holds at most keep load balancers (the kubernetes Service's).
func (b *bench) deleteServices(ctx context.Context, n, keep int) error {
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error {
			return b.kube.CoreV1().Services(b.ns).Delete(ctx, fmt.Sprintf("svc-%d", i), metav1.DeleteOptions{})
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("delete service: %w", err)
	}
	for {
		var lbs []*nbdb.LoadBalancer
		if err := b.nb.List(ctx, &lbs); err != nil {
			return err
		}
		if len(lbs) <= keep {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d load balancers left after deleting the Services: %w", len(lbs), ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// cniAdds times the pod network's CNI ADD of n pods named prefix-0..n-1, one after the
// other, and returns each pod's time by name.
func (b *bench) cniAdds(ctx context.Context, k *podsim.Kubelet, prefix string, n int) (map[string]time.Duration, error) {
	if err := k.WaitReady(ctx); err != nil {
		return nil, err
	}
	out := map[string]time.Duration{}
	for i := range n {
		pod, err := k.CreatePod(ctx, b.ns, fmt.Sprintf("%s-%d", prefix, i), nil)
		if err != nil {
			return nil, err
		}
		sb, err := k.RunSandbox(ctx, pod)
		if sb != nil {
			defer podsim.RemoveNetns(sb.Netns)
		}
		if err != nil {
			return nil, err
		}
		if i > 0 { // the first pod pays ovn-controller's first flow computation (README)
			out[pod.Name] = sb.AddTime
		}
	}
	return out, nil
}
