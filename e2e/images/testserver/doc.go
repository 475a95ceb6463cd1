// Command testserver is the workload of the e2e suite's real node (run as a container, pod
// name as its hostname). It answers on one port, TCP and UDP alike, with one line
// "<hostname> <client address:port>" (podsim's protocol, so podsim.Send talks to it), and
// serves HTTP for the kubelet and the tests:
//
//	GET /healthz                      200 "ok": the readiness probe
//	GET /dial?proto=tcp|udp&addr=A:P[&bytes=N]
//	                                  one exchange from this pod with a testserver at A:P; with
//	                                  bytes, N bytes each way over TCP first; 200 with the answer
//	GET /stream?proto=tcp|udp&addr=A:P
//	                                  starts (once) an exchange with A:P every 100 ms
//	GET /stats?proto=tcp|udp&addr=A:P JSON {"ok":N,"failed":M,"last_error":"..."} of that stream
//
// It exits on SIGTERM.
package main
