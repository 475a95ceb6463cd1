// Package svchealth serves the per-Service health checks kube-proxy serves for
// externalTrafficPolicy Local LoadBalancer Services, on their healthCheckNodePort, when
// edgeovn replaces kube-proxy: load balancers (cloud ones, MetalLB in BGP mode, kube-vip)
// probe it to send traffic only to nodes with a local endpoint.
//
// The answer is kube-proxy's (pkg/proxy/healthcheck, v1.34): any path, 200 when the node
// has a local ready endpoint and the node's service rules are written, 503 otherwise; headers
// Content-Type application/json, X-Content-Type-Options nosniff and
// X-Load-Balancing-Endpoint-Weight (the count); the body the same JSON text
// ({"service": {"namespace", "name"}, "localEndpoints", "serviceProxyHealthy"}).
//
// Invariants: a port is listened on exactly while a Service asks for it; Sync replaces the
// whole set (a Service gone closes its listener), and a port that cannot be bound is
// reported and tried again on the next Sync, without touching the others.
//
// Concurrency: Sync and Close may be called from any goroutine; requests read the counts
// under a lock, so an answer reflects the last Sync that returned.
package svchealth
