package node

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/podwatch"
	"github.com/edgeovn/edgeovn/cni/server"
)

// runWithAPI runs what needs the API server, once there is a client and the server is ready
// (kubeapi.WaitServing: informers started earlier back off for seconds): the watch on this
// node's pods (which CNI ADD waits on) and the host wiring (from this Node's annotations). It starts
// after the role's own start (AfterStart), which it would otherwise slow down.
func (r *Role) runWithAPI(ctx context.Context, pods *pendingPods) error {
	if !AfterStart(ctx, r.started) {
		return nil
	}
	kube, err := r.req.Kube(ctx)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return err
	}
	if err := kubeapi.WaitServing(ctx, kube, r.log); err != nil {
		return nil // only ctx's end
	}
	r.req.Startup.Mark("kube_client")
	watcher, err := podwatch.New(podwatch.Request{Pods: kube.Pods(""), NodeName: r.req.NodeName, MTU: r.req.MTU, Log: r.log})
	if err != nil {
		return err
	}
	r.shaper.watcher.Store(watcher)
	pods.set(subnetPods{Pods: watcher, view: r.subnetView})
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return r.serveMirror(ctx, kube, watcher) })
	if r.req.EnablePinger {
		g.Go(func() error { return r.runPinger(ctx, kube) })
	}
	g.Go(func() error { return watcher.Run(ctx) })
	g.Go(func() error { return r.shaper.run(ctx, kube, r.req.NodeName, watcher) })
	g.Go(func() error { return r.wireHost(ctx, kube) })
	g.Go(func() error { return r.serveServices(ctx, kube) })
	g.Go(func() error { return r.serveUnderlay(ctx, kube) })
	g.Go(func() error { return r.serveBGP(ctx, kube, watcher) })
	return g.Wait()
}

// pendingPods serves server.Pods before the pod watch exists: a CNI ADD that comes before the
// API client does waits for it, within its own deadline, and says why if that ends first.
type pendingPods struct {
	ready   chan struct{}
	watcher server.Pods
}

func newPendingPods() *pendingPods { return &pendingPods{ready: make(chan struct{})} }

// set hands over to the watcher; called once.
func (p *pendingPods) set(w server.Pods) {
	p.watcher = w
	close(p.ready)
}

func (p *pendingPods) WaitPodNetwork(ctx context.Context, k server.PodKey) (server.PodNetwork, error) {
	select {
	case <-p.ready:
		return p.watcher.WaitPodNetwork(ctx, k)
	case <-ctx.Done():
		return server.PodNetwork{}, fmt.Errorf("pod %s/%s: no API server connection yet (waiting for the kubeconfig): %w", k.Namespace, k.Name, ctx.Err())
	}
}
