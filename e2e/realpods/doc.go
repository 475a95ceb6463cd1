// Package realpods runs pods on the harness's real node (kubelet + containerd): the
// testserver pod's spec (imported image, never pulled), waiting for a pod to reach a state
// the kubelet reports, and a client for a pod's testserver HTTP API (its /dial and /stream
// make traffic start inside the pod), used by the e2e suite and podbench alike.
package realpods
