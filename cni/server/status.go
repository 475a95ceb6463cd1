package server

import (
	"context"

	"github.com/edgeovn/edgeovn/cni/protocol"
)

// status answers CNI STATUS: code 50 (plugin not available) until the datapath is up, which
// makes containerd report the node NetworkPluginNotReady and hold new pods back.
func (s *Server) status(ctx context.Context) *protocol.Error {
	if err := s.cfg.Ready(ctx); err != nil {
		return &protocol.Error{Code: protocol.CodePluginNotAvailable, Msg: "edgeovn node datapath not ready", Details: err.Error()}
	}
	return nil
}
