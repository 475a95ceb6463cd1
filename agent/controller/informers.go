package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// termInformers is the term's informer factory, started with the pods and nodes; the
// subnets and features register theirs after and start them with ctx.
type termInformers struct {
	factory *kubeapi.Informers
	ctx     context.Context // the informers run until it ends
	synced  []cache.InformerSynced
	stop    func() // ends them and waits for them to stop
}

// startInformers registers the pod and node informers (the pod queue fed by their events,
// the pods indexed by node) and starts them.
func (c *Controller) startInformers(ctx context.Context) (*termInformers, error) {
	factory := kubeapi.NewInformers(c.req.Kube, kubeapi.InformerOptions{Transform: slim})
	podInformer, nodeInformer := factory.Pods(), factory.Nodes()
	c.pods, c.nodes = podInformer.Lister(), nodeInformer.Lister()
	if err := podInformer.Informer().AddIndexers(cache.Indexers{byNodeIndex: podNodeName}); err != nil {
		return nil, fmt.Errorf("index pods by node: %w", err)
	}
	c.podsByNode = podInformer.Informer().GetIndexer()
	if err := c.watch(podInformer.Informer(), nodeInformer.Informer()); err != nil {
		return nil, err
	}
	ictx, cancel := context.WithCancel(ctx)
	factory.Start(ictx)
	return &termInformers{factory: factory, ctx: ictx,
		synced: []cache.InformerSynced{podInformer.Informer().HasSynced, nodeInformer.Informer().HasSynced},
		// Shutdown waits for every informer started, which stop only once ictx ends: a term
		// that fails while its context lives must end them first.
		stop: func() { cancel(); factory.Shutdown() }}, nil
}

// syncPoll is how often waitSynced looks: client-go's WaitForCacheSync looks every 100 ms,
// a tenth of the whole restart's goal.
const syncPoll = 5 * time.Millisecond

// waitSynced waits until every informer has its initial list.
func waitSynced(ctx context.Context, synced []cache.InformerSynced) error {
	err := wait.PollUntilContextCancel(ctx, syncPoll, true, func(context.Context) (bool, error) {
		for _, s := range synced {
			if !s() {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("sync caches: %w", err)
	}
	return nil
}
