package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/edgeovn/edgeovn/cni/protocol"
)

// shutdownGrace is how long Serve lets in-flight requests finish after ctx ends; their
// contexts are already cancelled then, so they only need to clean up and answer.
const shutdownGrace = 5 * time.Second

// Server serves CNI requests on a unix socket.
type Server struct {
	cfg Config
	// gcLock is held shared by ADD, DEL and CHECK and exclusively by GC.
	gcLock sync.RWMutex
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
// wiring), replaces a stale socket left by a dead daemon, and serves until ctx is done. It
// then stops accepting, lets in-flight requests answer, and removes the socket. Requests from
// a peer that is not root (SO_PEERCRED) are refused, as are bodies over 1 MiB; a request must
// arrive whole within ReadTimeout and an idle connection ends after IdleTimeout.
func (s *Server) Serve(ctx context.Context) error {
	ln, err := listen(s.cfg.Socket)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:     s.handler(),
		BaseContext: func(net.Listener) context.Context { return ctx },
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
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
	}()
	s.cfg.Log.Info("cni server listening", "socket", s.cfg.Socket)
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

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+protocol.Path, s.serveCNI)
	return mux
}
