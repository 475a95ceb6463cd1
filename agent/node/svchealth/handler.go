package svchealth

import (
	"fmt"
	"net/http"
	"strconv"
)

type handler struct {
	s    *Server
	port uint16
}

// ServeHTTP answers as kube-proxy's hcHandler does, byte for byte.
func (h handler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.s.mu.RLock()
	svc, ok := h.s.services[h.port]
	healthy := h.s.healthy
	h.s.mu.RUnlock()
	if !ok {
		return // closing: kube-proxy logs and answers nothing either
	}
	count := svc.LocalEndpoints
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Load-Balancing-Endpoint-Weight", strconv.Itoa(count))
	if count != 0 && healthy {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	fmt.Fprint(w, body(svc, healthy))
}

// body is kube-proxy's text: dedent of its template, trimmed of newlines.
func body(svc Service, healthy bool) string {
	return fmt.Sprintf("{\n\t\"service\": {\n\t\t\"namespace\": %q,\n\t\t\"name\": %q\n\t},\n\t\"localEndpoints\": %d,\n\t\"serviceProxyHealthy\": %v\n}",
		svc.Namespace, svc.Name, svc.LocalEndpoints, healthy)
}
