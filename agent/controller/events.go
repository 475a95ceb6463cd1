package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Event reasons edgeovn reports on pods.
const (
	// ReasonAddressConflict: the pod's annotated or requested address (or MAC) is another pod's.
	ReasonAddressConflict = "AddressConflict"
	// ReasonAllocationFailed: no address could be given (bad pin, exhausted subnet, ...).
	ReasonAllocationFailed = "AllocationFailed"
	// ReasonPoolExhausted: every address of the pod's ovn.kubernetes.io/ip_pool is held by
	// another pod; the pod gets one when one is released.
	ReasonPoolExhausted = "IPPoolExhausted"
)

// newRecorder sends Events to the API server; stop flushes and ends the broadcaster.
func newRecorder(ctx context.Context, kube kubernetes.Interface) (record.EventRecorder, func()) {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	return b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "edgeovn-controller"}), b.Shutdown
}
