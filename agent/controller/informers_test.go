package controller

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	k8stesting "k8s.io/client-go/testing"

	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/controller/ovnnat"
	"github.com/edgeovn/edgeovn/agent/controller/subnets"
	"github.com/edgeovn/edgeovn/agent/controller/vpcs"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// TestInformersShared: the Subnets, the vpcs and the ovn-nat features register on the term's
// factory and list and watch the Vpcs and the Subnets once between them (the Subnets made
// their own Vpc informer, two watches of vpcs, before 1e846d1, and their own Subnet informer,
// two lists and two watches of subnets, before the term's one).
func TestInformersShared(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	kube, dyn := ctltest.NewKube(t), ctltest.NewDynamic(t, nil)
	f := kubeapi.NewInformers(kube.Client, kubeapi.InformerOptions{Transform: slim})
	s := subnets.New(subnets.Request{Kube: kube.Client, Dynamic: dyn, Log: log})
	synced, err := s.Register(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, feat := range []feature{vpcs.New(vpcs.Request{Dynamic: dyn, Log: log}), ovnnat.New(ovnnat.Request{Dynamic: dyn, Log: log})} {
		more, err := feat.Register(f)
		if err != nil {
			t.Fatal(err)
		}
		synced = append(synced, more...)
	}
	ictx, stop := context.WithCancel(ctx)
	f.Start(ictx)
	t.Cleanup(func() { stop(); f.Shutdown(); s.Shutdown() })
	if err := waitSynced(ctx, synced); err != nil {
		t.Fatal(err)
	}
	for _, resource := range []string{"vpcs", "subnets"} {
		if err := dyn.Watches.Wait(ctx, resource); err != nil {
			t.Fatal(err)
		}
	}
	for _, resource := range []string{"vpcs", "subnets"} {
		lists, watches := 0, 0
		for _, a := range dyn.Actions() {
			if a.GetResource().Resource != resource {
				continue
			}
			switch a.(type) {
			case k8stesting.ListAction:
				lists++
			case k8stesting.WatchAction:
				watches++
			}
		}
		if lists != 1 || watches != 1 {
			t.Errorf("%d lists and %d watches of %s, want 1 and 1 (one informer for the Subnets and the features)", lists, watches, resource)
		}
	}
}
