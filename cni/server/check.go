package server

import (
	"context"
	"fmt"
	"time"

	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// checkTimeout bounds CHECK's wait for the port binding: a healthy port is bound already.
const checkTimeout = 10 * time.Second

// check verifies the pair, the pod's addresses and OVN's binding of the port.
func (s *Server) check(ctx context.Context, req protocol.PodRequest) *protocol.Error {
	if req.ContainerID == "" || req.IfName == "" {
		return badRequest("CHECK needs a container ID and an interface name")
	}
	if err := podnet.ValidateNetns(req.Netns); err != nil {
		return &protocol.Error{Code: protocol.CodeInvalidNetns, Msg: fmt.Sprintf("CHECK: bad netns %q", req.Netns), Details: err.Error()}
	}
	s.gcLock.RLock()
	defer s.gcLock.RUnlock()
	ctx, cancel := context.WithTimeout(ctx, min(checkTimeout, s.cfg.Timeout))
	defer cancel()
	hostIf := hostIfName(req)
	err := podnet.Check(ctx, podnet.CheckRequest{
		Netns: req.Netns, IfName: req.IfName, HostIfName: hostIf,
		IPs: req.ExpectedIPs, DisableTxChecksum: s.cfg.DisableTxChecksum,
	})
	if err != nil {
		return cniError("check pod interface "+hostIf, err)
	}
	if err := s.cfg.Ports.WaitInstalled(ctx, hostIf); err != nil {
		return retryable("check OVN binding of port "+hostIf, err)
	}
	return nil
}
