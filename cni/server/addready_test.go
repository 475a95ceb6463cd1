package server

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// TestAddAsksAddReady: an ADD is guarded by AddReady (the node role's answer that may reuse a
// recent verdict), STATUS by Ready: each refuses when its own question says no. Every ADD,
// refused or not, calls AddStarted first; STATUS and DEL do not.
func TestAddAsksAddReady(t *testing.T) {
	var addReady atomic.Bool
	var started atomic.Int32
	r := newRig(t, func(c *Config) {
		c.AddStarted = func() { started.Add(1) }
		c.AddReady = func(context.Context) error {
			if !addReady.Load() {
				return errors.New("ovs-vswitchd not running")
			}
			return nil
		}
	})
	ctx := context.Background()
	list := r.confList("1.1.0")
	podNS := newPodNS(t)
	rt := r.runtimeConf(containerID(41), podNS.Path(), "shop", "cart")
	r.pods.set("shop", "cart", testNetwork(41, "shop", "cart"))

	if _, err := r.cni.AddNetworkList(ctx, list, rt); err == nil {
		t.Fatal("ADD succeeded while AddReady said not ready")
	}
	addReady.Store(true)
	r.ready.Store(false)
	if err := r.cni.GetStatusNetworkList(ctx, list); err == nil {
		t.Fatal("STATUS succeeded while Ready said not ready")
	}
	if _, err := r.cni.AddNetworkList(ctx, list, rt); err != nil {
		t.Fatalf("ADD with AddReady passing (Ready failing): %v", err)
	}
	if err := r.cni.DelNetworkList(ctx, list, rt); err != nil {
		t.Fatalf("DEL: %v", err)
	}
	if n := started.Load(); n != 2 {
		t.Errorf("AddStarted called %d times for 2 ADDs, a STATUS and a DEL", n)
	}
}
