package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/agent/annotation"
)

// floorWorkers is the bare annotator's concurrency: edgeovn's default controller workers.
const floorWorkers = 64

// runFloor starts the bare annotator (-floor): the least any controller that writes each new
// pod's annotation must cost on this API server. It watches the namespace's pods and patches
// each unannotated one with an annotation of edgeovn's size and form, from its own client
// (edgeovn's rate: QPS 500, burst 1000) and 64 workers: no IPAM, no northbound, no Lease.
func (b *bench) runFloor(ctx context.Context) error {
	cfg := b.rig.RESTConfig()
	cfg.QPS, cfg.Burst, cfg.UserAgent = 500, 1000, "ctrlbench-floor"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("floor api client: %w", err)
	}
	f := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace))
	inf := f.Core().V1().Pods().Informer()
	q := workqueue.NewTyped[string]()
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			q.Add(key)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue}); err != nil {
		return fmt.Errorf("floor informer: %w", err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("sync floor informer: %w", ctx.Err())
	}
	go func() { <-ctx.Done(); q.ShutDown() }()
	var n atomic.Uint32
	g := new(errgroup.Group)
	for range floorWorkers {
		g.Go(func() error {
			for {
				key, quit := q.Get()
				if quit {
					return nil
				}
				ns, name, _ := cache.SplitMetaNamespaceKey(key)
				patch, err := floorPatch(n.Add(1))
				if err == nil {
					_, err = kube.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
				}
				if err != nil && ctx.Err() == nil {
					fmt.Println("floor: patch", key, err)
				}
				q.Done(key)
			}
		})
	}
	go func() { _ = g.Wait() }()
	return nil
}

// floorPatch is the merge patch edgeovn writes on an allocated pod, with the i-th address.
func floorPatch(i uint32) ([]byte, error) {
	ip := netip.AddrFrom4([4]byte{10, 16, byte(i >> 8), byte(i)})
	mac := net.HardwareAddr{0x0a, 0x58, 0x0a, 0x10, byte(i >> 8), byte(i)}
	n := annotation.Network{Switch: "ovn-default", IPs: []netip.Addr{ip}, MAC: mac,
		CIDRs: []netip.Prefix{netip.MustParsePrefix("10.16.0.0/16")}, Gateways: []netip.Addr{netip.MustParseAddr("10.16.0.1")}}
	return json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotation.Encode(n)}})
}
