package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeovn/edgeovn/cni/protocol"
)

// abandonGrace bounds, after the drain, how long Serve waits for the abandoned requests to
// undo what they made (a failed ADD's rollback) before it closes their connections.
const abandonGrace = 5 * time.Second

// Server serves CNI requests on a unix socket.
type Server struct {
	cfg Config
	// gcLock is held shared by ADD, DEL and CHECK and exclusively by GC.
	gcLock sync.RWMutex
	// draining is set once the drain timeout has passed: a request that fails from then on
	// failed because of the shutdown and is abandoned for the plugin to retry.
	draining atomic.Bool
}

// New validates cfg, fills in defaults and returns a Server that is not yet listening.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg}, nil
}

// Serve creates the socket (directory mode 0700, socket 0600: only root may ask for pod
// wiring), replacing a stale socket left by a dead daemon, or serves the one systemd passed
// (Config.Listener, its mode checked the same way), until ctx is done. Requests from a peer
// that is not root (SO_PEERCRED) are refused, as are bodies over 1 MiB; a request must arrive
// whole within ReadTimeout and an idle connection ends after IdleTimeout.
//
// When ctx ends it stops accepting at once: a passed socket stays bound (its queue keeps the
// connections that arrive until the next daemon accepts them), its own socket is removed.
// Requests in flight keep running, with their context alive, for DrainTimeout (the caller
// keeps what they need running until Serve returns); those still running then are cancelled
// and abandoned without an answer, which the plugin retries.
func (s *Server) Serve(ctx context.Context) error {
	ln, err := s.listener()
	if err != nil {
		return err
	}
	reqCtx, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	srv := &http.Server{
		Handler:     s.handler(),
		BaseContext: func(net.Listener) context.Context { return reqCtx },
		ConnContext: withPeer,
		// A client that stalls mid-request, or holds an idle connection, is dropped: the
		// runtime's plugin sends its whole request at once and closes after the answer.
		ReadHeaderTimeout: s.cfg.ReadTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		s.drain(ctx, srv, cancelRequests)
	}()
	s.cfg.Log.Info("cni server listening", "socket", s.cfg.Socket, "passed_by_systemd", s.cfg.Listener != nil)
	if s.cfg.Listening != nil {
		s.cfg.Listening()
	}
	err = srv.Serve(ln)
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("serve cni socket %s: %w", s.cfg.Socket, err)
}

// drain stops accepting, lets requests in flight finish for DrainTimeout, then cancels and
// abandons the rest.
func (s *Server) drain(ctx context.Context, srv *http.Server, cancelRequests context.CancelFunc) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.DrainTimeout)
	defer cancel()
	if srv.Shutdown(dctx) == nil {
		return
	}
	s.draining.Store(true)
	cancelRequests()
	s.cfg.Log.Warn("cni requests still running at shutdown abandoned: the plugin retries them", "after", s.cfg.DrainTimeout)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonGrace)
	defer cancel()
	if srv.Shutdown(actx) != nil {
		_ = srv.Close()
	}
}

// listener is the passed socket, checked, or a new one.
func (s *Server) listener() (net.Listener, error) {
	if s.cfg.Listener == nil {
		return listen(s.cfg.Socket)
	}
	if err := checkPassed(s.cfg.Socket, s.cfg.Log); err != nil {
		return nil, err
	}
	return s.cfg.Listener, nil
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+protocol.Path, s.serveCNI)
	return mux
}
