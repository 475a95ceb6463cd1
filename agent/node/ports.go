package node

import (
	"context"

	"github.com/edgeovn/edgeovn/cni/server"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// ports adapts the Open_vSwitch client to what the CNI server needs: pod ports on br-int.
type ports struct {
	ovs *vswitch.Client
	// added receives a token after each port added (buffered, never blocks).
	added chan<- struct{}
}

var _ server.Ports = ports{}

func (p ports) AddPort(ctx context.Context, r server.PortRequest) error {
	err := p.ovs.AddPort(ctx, vswitch.PortSpec{Bridge: Bridge, Name: r.Name, IfaceID: r.IfaceID, ExternalIDs: r.ExternalIDs, QoS: r.QoS})
	if err == nil && p.added != nil {
		signal(p.added)
	}
	return err
}

func (p ports) DeletePort(ctx context.Context, name string) error {
	return p.ovs.DeletePort(ctx, Bridge, name)
}

func (p ports) WaitInstalled(ctx context.Context, name string) error {
	return p.ovs.WaitInstalled(ctx, name)
}

func (p ports) ListPorts(ctx context.Context) ([]server.PortRequest, error) {
	list, err := p.ovs.Ports(ctx, Bridge)
	if err != nil {
		return nil, err
	}
	out := make([]server.PortRequest, 0, len(list))
	for _, port := range list {
		out = append(out, server.PortRequest{Name: port.Name, IfaceID: port.IfaceID, ExternalIDs: port.ExternalIDs})
	}
	return out, nil
}

// signal leaves a token in ch unless one is pending already.
func signal(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
