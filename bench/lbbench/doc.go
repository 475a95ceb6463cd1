// Command lbbench measures, on the real rig without kube-proxy (OVN, OVS userspace datapath,
// kube-apiserver, edgeovn serving Services itself), what a site client on the host's LAN gets
// from a LoadBalancer IP against the same two backends through the Service's NodePort, in
// the same run (request rate and p50/p99 of one TCP request each: connect, line, answer,
// close), for externalTrafficPolicy Cluster and Local; and the time from an
// endpoint change (the EndpointSlice update sent) to the Local Service's health check
// answering differently (200 to 503 and back). With -node-ip-service, a third Service is
// published on the host's own address (externalIPs), so edgeovn checks the host's listeners
// at each pass of its rules loop while the load's TIME_WAIT sockets pile up.
//
// Every client alternates between the two paths request by request, so both are measured at
// the same moments: two paths measured in blocks one after the other differ by whatever the
// shared machine did during each block (a 5 s block's p50 moved 0.6-1.3 ms from one block to
// the next under load), which is what the Local policy's LoadBalancer IP/NodePort gap of
// 1.1-1.4x was. A path's rate is its answered requests over the clients' time in its own
// requests.
//
//	go run ./bench/lbbench -bin bin [-seconds 10] [-rounds 4] [-workers 4] [-sources 250] [-flips 20] [-node-ip-service] [-per-round]   (as root)
package main
