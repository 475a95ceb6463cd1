package server

import (
	"context"
	"fmt"
	"net"

	"golang.org/x/sys/unix"

	"github.com/edgeovn/edgeovn/cni/protocol"
)

// peerKey is the context key of a connection's peer credentials.
type peerKey struct{}

// peer is who connected, as the kernel recorded it at connect (SO_PEERCRED): it cannot be
// forged by the client, unlike anything it sends.
type peer struct {
	cred *unix.Ucred
	err  error
}

// withPeer is the http.Server's ConnContext: it records each connection's peer credentials.
func withPeer(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, peerKey{}, readPeer(c))
}

func readPeer(c net.Conn) peer {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return peer{err: fmt.Errorf("connection is %T, not a unix socket", c)}
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return peer{err: fmt.Errorf("read peer credentials: %w", err)}
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return peer{err: fmt.Errorf("read peer credentials: %w", err)}
	}
	if credErr != nil {
		return peer{err: fmt.Errorf("read peer credentials (SO_PEERCRED): %w", credErr)}
	}
	return peer{cred: cred}
}

// checkPeer refuses a request whose sender is not root: only the container runtime (root)
// may have pods wired, whatever the socket's file mode says.
func checkPeer(ctx context.Context) *protocol.Error {
	p, ok := ctx.Value(peerKey{}).(peer)
	switch {
	case !ok:
		return &protocol.Error{Code: protocol.CodeInvalidEnvironment, Msg: "edgeovn refuses the cni request: peer credentials unknown"}
	case p.err != nil:
		return &protocol.Error{Code: protocol.CodeInvalidEnvironment, Msg: "edgeovn refuses the cni request: peer credentials unknown", Details: p.err.Error()}
	case p.cred.Uid != 0:
		return &protocol.Error{Code: protocol.CodeInvalidEnvironment,
			Msg: fmt.Sprintf("edgeovn refuses cni requests from uid %d (pid %d): only root may wire pods", p.cred.Uid, p.cred.Pid)}
	}
	return nil
}
