package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"sync"
)

// fakePods hands out allocations set by the test; unknown pods wait until ctx ends, as a pod
// the controller has not allocated yet does.
type fakePods struct {
	mu    sync.Mutex
	nets  map[string]PodNetwork // by namespace/name
	calls []PodKey
}

var _ Pods = (*fakePods)(nil)

func (f *fakePods) set(ns, name string, pn PodNetwork) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.nets == nil {
		f.nets = map[string]PodNetwork{}
	}
	f.nets[ns+"/"+name] = pn
}

// setAttachment hands out pn for the pod's attachment network of provider.
func (f *fakePods) setAttachment(ns, name, provider string, pn PodNetwork) {
	f.set(ns, name+"|"+provider, pn)
}

func (f *fakePods) WaitPodNetwork(ctx context.Context, k PodKey) (PodNetwork, error) {
	f.mu.Lock()
	f.calls = append(f.calls, k)
	key := k.Namespace + "/" + k.Name
	if k.Provider != "" {
		key += "|" + k.Provider
	}
	pn, ok := f.nets[key]
	f.mu.Unlock()
	if ok {
		return pn, nil
	}
	<-ctx.Done()
	return PodNetwork{}, fmt.Errorf("wait for pod %s/%s: %w", k.Namespace, k.Name, ctx.Err())
}

func (f *fakePods) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// fakePorts records br-int's pod ports.
type fakePorts struct {
	mu         sync.Mutex
	ports      map[string]PortRequest
	deleted    []string
	installErr error
}

var _ Ports = (*fakePorts)(nil)

var errNoPort = errors.New("no such port")

func (f *fakePorts) AddPort(_ context.Context, r PortRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ports == nil {
		f.ports = map[string]PortRequest{}
	}
	f.ports[r.Name] = r
	return nil
}

func (f *fakePorts) DeletePort(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.ports, name)
	f.deleted = append(f.deleted, name)
	return nil
}

func (f *fakePorts) WaitInstalled(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.ports[name]; !ok {
		return fmt.Errorf("wait for %s: %w", name, errNoPort)
	}
	return f.installErr
}

func (f *fakePorts) ListPorts(context.Context) ([]PortRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Collect(maps.Values(f.ports)), nil
}

func (f *fakePorts) get(name string) (PortRequest, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.ports[name]
	return p, ok
}

// testNetwork is an allocation in k3s's default cluster CIDR for the pod name.namespace.
func testNetwork(n int, ns, name string) PodNetwork {
	return PodNetwork{
		Switch:   "ovn-default",
		Port:     name + "." + ns,
		MAC:      net.HardwareAddr{0x0a, 0x58, 0x0a, 0x2a, 0x00, byte(n)},
		IPs:      []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 42, 0, byte(n)}), 16)},
		Gateways: []netip.Addr{netip.MustParseAddr("10.42.0.1")},
		MTU:      1400,
	}
}
