package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
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
func newRecorder(ctx context.Context, kube *kubeapi.Client) (record.EventRecorder, func()) {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(kubeapi.EventSink{Client: kube, Ctx: context.WithoutCancel(ctx)})
	return b.NewRecorder(kubeapi.Scheme, corev1.EventSource{Component: "edgeovn-controller"}), b.Shutdown
}
