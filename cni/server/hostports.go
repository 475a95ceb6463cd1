package server

import (
	"errors"
	"fmt"

	"github.com/edgeovn/edgeovn/cni/protocol"
)

// hostPorts is what an ADD serves of the pod's hostPorts: its record ("" without any).
type hostPorts struct {
	pod    PodHostPorts
	record string
}

// checkHostPorts checks the ADD's port mappings before anything is wired, so that bad input
// fails the ADD with an error naming the mapping and leaves nothing behind.
func (s *Server) checkHostPorts(req protocol.PodRequest, pn PodNetwork) (hostPorts, *protocol.Error) {
	if len(req.PortMappings) == 0 {
		return hostPorts{}, nil
	}
	if s.cfg.HostPorts == nil {
		return hostPorts{}, &protocol.Error{Code: protocol.CodeInvalidNetworkConfig,
			Msg: fmt.Sprintf("ADD for pod %s/%s asks for host ports, which this daemon does not serve", req.PodNamespace, req.PodName)}
	}
	hp := hostPorts{pod: PodHostPorts{ContainerID: req.ContainerID, IPs: pn.IPs, Mappings: req.PortMappings}}
	record, err := s.cfg.HostPorts.Check(hp.pod)
	if err != nil {
		return hostPorts{}, hostPortsError(req, err)
	}
	hp.record = record
	return hp, nil
}

// hostPortsError is 7 (invalid network configuration) for bad mappings, 11 (try again
// later) for the rest (nftables busy or failing).
func hostPortsError(req protocol.PodRequest, err error) *protocol.Error {
	msg := fmt.Sprintf("serve the host ports of pod %s/%s", req.PodNamespace, req.PodName)
	if errors.Is(err, ErrInvalidPortMappings) {
		return &protocol.Error{Code: protocol.CodeInvalidNetworkConfig, Msg: msg, Details: err.Error()}
	}
	return retryable(msg, err)
}
