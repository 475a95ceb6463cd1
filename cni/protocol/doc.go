// Package protocol defines the messages the thin CNI binary (/opt/cni/bin/edgeovn) and the
// edgeovn daemon exchange over the daemon's root-only unix socket.
//
// The transport is HTTP/1.1 with JSON bodies over the unix socket at DefaultSocket (or the
// network configuration's serverSocket): the binary POSTs a PodRequest to Path and the daemon
// answers with a Response. A Response carries either a result or an Error with a CNI error
// code; the HTTP status only mirrors it (200 on success) so that a plain proxy or curl shows
// what happened.
//
// Invariants: this package is a leaf that imports only the standard library, so the CNI binary
// stays small and links no netlink, OVSDB or Kubernetes code. Types are plain values and safe
// to share between goroutines once built.
package protocol
