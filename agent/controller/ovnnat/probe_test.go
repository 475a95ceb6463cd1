package ovnnat

import (
	"context"
	"log/slog"
	"net/netip"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// lookBarrier holds each first look's list (one item) until the four NAT kinds' lists have
// all come, or until wait has passed: lists made one after another meet at most one at a time.
type lookBarrier struct {
	dynamic.Interface
	wait time.Duration

	mu      sync.Mutex
	arrived map[string]bool
	all     chan struct{} // closed when the four have come
	most    int           // the most lists held at once
}

func (b *lookBarrier) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return heldList{b.Interface.Resource(gvr), b, gvr.Resource}
}

func (b *lookBarrier) arrive(resource string) {
	b.mu.Lock()
	b.arrived[resource] = true
	b.most = max(b.most, len(b.arrived))
	if len(b.arrived) == len(gatedKinds) {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(b.wait):
	}
	b.mu.Lock()
	delete(b.arrived, resource)
	b.mu.Unlock()
}

type heldList struct {
	dynamic.NamespaceableResourceInterface
	b        *lookBarrier
	resource string
}

func (h heldList) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if opts.Limit == 1 {
		h.b.arrive(h.resource)
	}
	return h.NamespaceableResourceInterface.List(ctx, opts)
}

// TestProbeThenOpen: the term's first look lists the four NAT kinds at once, in the
// background from Probe, and an OvnEip that exists when the term starts is in the cache, so in
// Claims, once Open returns: the IPAM reconcile that follows keeps its address. With no NAT
// object a Vpc with enableExternal in the synced cache opens the gate; with neither it stays
// closed.
func TestProbeThenOpen(t *testing.T) {
	eip := obj("OvnEip", "eip1", map[string]any{"externalSubnet": "external"})
	eip.Object["status"] = map[string]any{"v4Ip": "192.0.2.11", "macAddress": "0a:00:00:00:00:11", "ready": true}
	for _, tc := range []struct {
		name     string
		objs     map[schema.GroupVersionResource]*unstructured.Unstructured
		wantOpen bool
	}{
		{"an OvnEip", map[schema.GroupVersionResource]*unstructured.Unstructured{kubeovn.OvnEipResource: eip}, true},
		{"a Vpc with enableExternal", map[schema.GroupVersionResource]*unstructured.Unstructured{
			kubeovn.VpcResource: obj("Vpc", "vpc1", map[string]any{"enableExternal": true})}, true},
		{"nothing", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			gvrs := map[schema.GroupVersionResource]string{}
			for _, gvr := range kinds {
				gvrs[gvr] = "List"
			}
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), gvrs)
			for gvr, o := range tc.objs {
				if err := dyn.Tracker().Create(gvr, o, ""); err != nil {
					t.Fatal(err)
				}
			}
			b := &lookBarrier{Interface: dyn, wait: 2 * time.Second, arrived: map[string]bool{}, all: make(chan struct{})}
			c := New(Request{Dynamic: b, Log: slog.New(slog.DiscardHandler), ProbeEvery: time.Hour})
			c.Probe(ctx) // as the term starts
			f := kubeapi.NewInformers(nil, kubeapi.InformerOptions{})
			synced, err := c.Register(f)
			if err != nil {
				t.Fatal(err)
			}
			tctx, stop := context.WithCancel(ctx)
			f.Start(tctx)
			defer func() { stop(); f.Shutdown(); c.gate.close() }()
			waitFor(ctx, t, "shared caches", func() bool { return synced[0]() && synced[1]() })
			if err := c.Open(ctx); err != nil {
				t.Fatal(err)
			}
			if b.most != len(gatedKinds) {
				t.Errorf("the first look's lists: at most %d at once, want the %d NAT kinds together", b.most, len(gatedKinds))
			}
			if c.gate.isOpen() != tc.wantOpen {
				t.Fatalf("gate open %v after Open, want %v", c.gate.isOpen(), tc.wantOpen)
			}
			claims := c.Claims()
			if tc.name == "an OvnEip" && (len(claims) != 1 || claims[0].IPs[0] != netip.MustParseAddr("192.0.2.11")) {
				t.Errorf("claims after Open: %+v, want eip1's 192.0.2.11", claims)
			}
		})
	}
}
