package svchealth

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Service is one health check: the Service's name, its healthCheckNodePort, and how many
// ready endpoints (distinct addresses) it has on this node.
type Service struct {
	Namespace, Name string
	Port            uint16
	LocalEndpoints  int
}

// Server serves the health checks. The zero value is not usable: use New.
type Server struct {
	log *slog.Logger
	// addr is the listen address without the port ("" for all of the host's addresses).
	addr string

	mu        sync.RWMutex
	services  map[uint16]Service
	healthy   bool
	listeners map[uint16]*http.Server
}

// New returns a Server listening on addr's ports ("" for every address, as kube-proxy does
// with no --nodeport-addresses).
func New(addr string, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{log: log, addr: addr, services: map[uint16]Service{}, listeners: map[uint16]*http.Server{}}
}

// Sync makes the server answer for exactly svcs; healthy is serviceProxyHealthy (the node's
// service rules are written). It returns the ports it could not listen on, joined.
func (s *Server) Sync(svcs []Service, healthy bool) error {
	want := make(map[uint16]Service, len(svcs))
	for _, svc := range svcs {
		want[svc.Port] = svc
	}
	s.mu.Lock()
	s.services, s.healthy = want, healthy
	var closing []*http.Server
	for port, srv := range s.listeners {
		if _, ok := want[port]; !ok {
			closing = append(closing, srv)
			delete(s.listeners, port)
		}
	}
	var errs []error
	for port, svc := range want {
		if s.listeners[port] != nil {
			continue
		}
		srv, err := s.listen(port)
		if err != nil {
			errs = append(errs, fmt.Errorf("health check of %s/%s: %w", svc.Namespace, svc.Name, err))
			continue
		}
		s.listeners[port] = srv
		s.log.Info("serving health check", "service", svc.Namespace+"/"+svc.Name, "port", port)
	}
	s.mu.Unlock()
	for _, srv := range closing {
		_ = srv.Close()
	}
	return errors.Join(errs...)
}

// Close stops every listener.
func (s *Server) Close() { _ = s.Sync(nil, false) }

func (s *Server) listen(port uint16) (*http.Server, error) {
	addr := net.JoinHostPort(s.addr, strconv.Itoa(int(port)))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: handler{s: s, port: port}, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}
