package server

import (
	"context"
	"time"

	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// del removes the container's port and veth pair. It never asks the API about the pod, and
// every step succeeds when its object is already gone, so DEL can be repeated and works for
// pods and namespaces that no longer exist.
func (s *Server) del(ctx context.Context, req protocol.PodRequest) *protocol.Error {
	if req.ContainerID == "" {
		return badRequest("DEL without a container ID")
	}
	s.gcLock.RLock()
	defer s.gcLock.RUnlock()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	log := s.requestLog(req)
	hostIf := hostIfName(req)
	if s.cfg.HostPorts != nil && attachmentProvider(req) == "" { // the primary's DEL stops them
		if err := s.cfg.HostPorts.Delete(ctx, req.ContainerID); err != nil {
			return retryable("stop serving the host ports of container "+req.ContainerID, err)
		}
	}
	if err := s.cfg.Ports.DeletePort(ctx, hostIf); err != nil {
		return retryable("delete ovs port "+hostIf, err)
	}
	if err := podnet.Teardown(ctx, hostIf, req.Netns); err != nil {
		return cniError("delete veth "+hostIf, err)
	}
	log.Info("pod network deleted", "duration", time.Since(start))
	return nil
}
