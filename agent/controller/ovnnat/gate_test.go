package ovnnat

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// watched lists the resources the fake client was asked to watch since action from.
func watched(dyn *dynamicfake.FakeDynamicClient, from int) []string {
	var out []string
	for _, a := range dyn.Actions()[from:] {
		if w, ok := a.(k8stesting.WatchAction); ok && !slices.Contains(out, w.GetResource().Resource) {
			out = append(out, w.GetResource().Resource)
		}
	}
	slices.Sort(out)
	return out
}

func obj(kind, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubeovn.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name}, "spec": spec}}
}

// TestGate: with no NAT object and no Vpc asking for enableExternal, the family watches only
// the shared Vpc and Subnet informers (none of the four NAT kinds); an OvnEip created later is
// found by the probe, the four informers start and the EIP is in the cache (and queued); once
// it is gone the informers stop; a Vpc with enableExternal opens the gate at once (no probe
// interval waited: the probe here is an hour).
func TestGate(t *testing.T) {
	gvrs := map[schema.GroupVersionResource]string{}
	for _, gvr := range kinds {
		gvrs[gvr] = "List"
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), gvrs)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := New(Request{Dynamic: dyn, Log: slog.New(slog.DiscardHandler), ProbeEvery: 50 * time.Millisecond})
	f := kubeapi.NewInformers(nil, kubeapi.InformerOptions{})
	synced, err := c.Register(f)
	if err != nil {
		t.Fatal(err)
	}
	tctx, stop := context.WithCancel(ctx)
	f.Start(tctx)
	defer func() { stop(); f.Shutdown() }()
	waitFor(ctx, t, "shared caches", func() bool { return synced[0]() && synced[1]() })
	if err := c.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if got := watched(dyn, 0); !slices.Equal(got, []string{"subnets", "vpcs"}) {
		t.Errorf("watches with no NAT object: %v, want only subnets and vpcs", got)
	}
	stopGate := startGate(ctx, c)
	defer func() { stopGate() }()

	eips := dyn.Resource(kubeovn.OvnEipResource)
	if _, err := eips.Create(ctx, obj("OvnEip", "eip1", map[string]any{"externalSubnet": "external"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "eip1 in the cache after the probe", func() bool {
		u, _ := c.get("eip", "eip1")
		return u != nil
	})
	if got := watched(dyn, 0); len(got) != 6 {
		t.Errorf("watches with an OvnEip: %v, want the four NAT kinds too", got)
	}
	if c.queue.Len() == 0 {
		t.Errorf("nothing queued when the gate opened")
	}
	if err := eips.Delete(ctx, "eip1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the gate closed with no NAT object left", func() bool { return !c.gate.isOpen() })

	c.req.ProbeEvery = time.Hour // only the Vpc's event can open it now
	stopGate()
	stopGate = startGate(ctx, c)
	from := len(dyn.Actions())
	if _, err := dyn.Resource(kubeovn.VpcResource).Create(ctx, obj("Vpc", "vpc1", map[string]any{"enableExternal": true}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the gate open after a Vpc with enableExternal", c.gate.isOpen)
	if got := watched(dyn, from); len(got) != 4 {
		t.Errorf("watches started by the Vpc: %v, want the four NAT kinds", got)
	}
}

// startGate runs the gate's loop until the returned function is called.
func startGate(ctx context.Context, c *Controller) func() {
	gctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { c.runGate(gctx); close(done) }()
	return func() { stop(); <-done }
}

func waitFor(ctx context.Context, t *testing.T, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within the test's deadline", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
