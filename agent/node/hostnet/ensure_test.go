package hostnet

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"

	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// fakePorts plays ovs-vswitchd: AddPort records the spec and creates the kernel interface
// afterwards, from another goroutine, as ovs-vswitchd does once it sees the row.
type fakePorts struct {
	netns ns.NetNS
	calls []vswitch.PortSpec
	err   error
	made  chan error
	// making counts the interface creations in flight: the test's cleanup waits for them
	// before the namespace they run in is closed.
	making sync.WaitGroup
}

var _ Ports = (*fakePorts)(nil)

func (f *fakePorts) AddPort(_ context.Context, spec vswitch.PortSpec) error {
	f.calls = append(f.calls, spec)
	if f.err != nil {
		return f.err
	}
	f.making.Add(1)
	go func() {
		defer f.making.Done()
		f.made <- f.netns.Do(func(ns.NetNS) error {
			if found, err := linkExists(spec.Name); found || err != nil {
				return err
			}
			return addLink(spec.Name)
		})
	}()
	return nil
}

func TestEnsure(t *testing.T) {
	needRoot(t)
	host := newNS(t)
	ports := &fakePorts{netns: host, made: make(chan error, 2)}
	t.Cleanup(ports.making.Wait) // before newNS's cleanup closes host
	spec := testSpec()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	inNS(t, host, func() error {
		if err := Ensure(ctx, ports, spec, nil); err != nil {
			t.Fatalf("ensure: %v", err)
		}
		if err := <-ports.made; err != nil {
			t.Fatalf("create link: %v", err)
		}
		checkWired(t, spec)
		if err := Ensure(ctx, ports, spec, nil); err != nil {
			t.Fatalf("ensure again: %v", err)
		}
		return nil
	})
	want := vswitch.PortSpec{Bridge: "br-int", Name: "ovn0", Type: vswitch.PortInternal, IfaceID: "node-node1",
		MAC: spec.MAC, MTU: 1400}
	if len(ports.calls) != 2 || !reflect.DeepEqual(ports.calls[0], want) || !reflect.DeepEqual(ports.calls[1], want) {
		t.Errorf("AddPort calls %+v, want twice %+v", ports.calls, want)
	}
}

func TestEnsureBadSpecAddsNoPort(t *testing.T) {
	ports := &fakePorts{}
	spec := testSpec()
	spec.Gateway = spec.Address.Addr()
	if err := Ensure(context.Background(), ports, spec, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("error %v, want ErrInvalid", err)
	}
	if len(ports.calls) != 0 {
		t.Errorf("bad spec reached OVS: %+v", ports.calls)
	}
}

func TestEnsurePortError(t *testing.T) {
	boom := errors.New("ovsdb down")
	ports := &fakePorts{err: boom}
	if err := Ensure(context.Background(), ports, testSpec(), nil); !errors.Is(err, boom) {
		t.Errorf("error %v, want the port error", err)
	}
}

// The wait for ovs-vswitchd's interface ends with the caller's context.
func TestWaitLinkEndsWithContext(t *testing.T) {
	needRoot(t)
	host := newNS(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inNS(t, host, func() error {
		if err := WaitLink(ctx, "ovn0"); !errors.Is(err, context.Canceled) {
			t.Errorf("waitLink with no link: %v, want context.Canceled", err)
		}
		return nil
	})
}
