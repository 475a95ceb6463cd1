package controller

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/controller/subnets"
	"github.com/edgeovn/edgeovn/agent/controller/vpcs"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// TestVpcInformerShared: the Subnets and the vpcs feature register on the term's factory and
// watch the Vpcs once between them (each made its own informer, two watches, before).
func TestVpcInformerShared(t *testing.T) {
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
	more, err := vpcs.New(vpcs.Request{Dynamic: dyn, Log: log}).Register(f)
	if err != nil {
		t.Fatal(err)
	}
	ictx, stop := context.WithCancel(ctx)
	f.Start(ictx)
	t.Cleanup(func() { stop(); f.Shutdown(); s.Shutdown() })
	if err := waitSynced(ctx, append(synced, more...)); err != nil {
		t.Fatal(err)
	}
	if err := dyn.Watches.Wait(ctx, "vpcs"); err != nil {
		t.Fatal(err)
	}
	if n := dyn.Watches.Count("vpcs"); n != 1 {
		t.Fatalf("%d watches of vpcs, want 1 (one informer for the Subnets and the vpcs feature)", n)
	}
}
