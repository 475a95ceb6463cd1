package opsserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// Request configures the server.
type Request struct {
	// Address is host:port to listen on.
	Address string
	// Metrics serves /metrics.
	Metrics http.Handler
	// Alive answers /healthz, Ready /readyz: nil means 200.
	Alive func() error
	Ready func(ctx context.Context) error
	// Controller answers /controller: this host's controller state (leader, candidate,
	// ineligible) and why; nil: no such endpoint.
	Controller func() (state, reason string)
	// BGP answers /bgp: the speaker's peers and announced prefixes ("" : none runs, 404).
	BGP func() string
	// Pinger answers /pinger: the pinger's last round (ok false: the pinger is off, 404).
	Pinger func() (string, bool)
	// Profiling serves Go's profiles under /debug/pprof/ (net/http/pprof): off by default,
	// for an operator who asks where the time or memory goes.
	Profiling bool
	Log       *slog.Logger
	// Listening, if set, gets the bound address once the server accepts connections.
	Listening func(net.Addr)
}

// readyTimeout bounds one /readyz evaluation; the checks are local and each has its own
// timeout of a second.
const readyTimeout = 10 * time.Second

// Serve listens on req.Address and serves until ctx ends. A listen failure is its error.
func Serve(ctx context.Context, req Request) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", req.Address)
	if err != nil {
		return fmt.Errorf("listen for /metrics, /healthz, /readyz (metrics-address): %w", err)
	}
	srv := &http.Server{Handler: Handler(req), ReadHeaderTimeout: 5 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if req.Log != nil {
		req.Log.Info("serving /metrics, /healthz and /readyz", "address", ln.Addr().String())
	}
	if req.Listening != nil {
		req.Listening(ln.Addr())
	}
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", req.Address, err)
	}
	return nil
}

// Handler routes the three endpoints.
func Handler(req Request) http.Handler {
	mux := http.NewServeMux()
	if req.Metrics != nil {
		mux.Handle("GET /metrics", req.Metrics)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		answer(w, call(req.Alive))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		var err error
		if req.Ready != nil {
			err = req.Ready(ctx)
		}
		answer(w, err)
	})
	if req.Pinger != nil {
		mux.HandleFunc("GET /pinger", func(w http.ResponseWriter, _ *http.Request) {
			text, ok := req.Pinger()
			if !ok {
				http.Error(w, "pinger off (enable-pinger)", http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprint(w, text)
		})
	}
	if req.Controller != nil {
		mux.HandleFunc("GET /controller", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			state, reason := req.Controller()
			if state == "" {
				state = "starting"
			}
			if reason != "" {
				state += ": " + reason
			}
			fmt.Fprintln(w, state)
		})
	}
	if req.BGP != nil {
		mux.HandleFunc("GET /bgp", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			s := req.BGP()
			if s == "" {
				http.Error(w, "no bgp speaker on this host (no neighbor-address configured)", http.StatusNotFound)
				return
			}
			fmt.Fprint(w, s)
		})
	}
	if req.Profiling {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
}

func call(f func() error) error {
	if f == nil {
		return nil
	}
	return f()
}

func answer(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ok: %v\n", err)
		return
	}
	fmt.Fprintln(w, "ok")
}
