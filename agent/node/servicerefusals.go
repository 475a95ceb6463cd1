package node

import (
	"context"
	"errors"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// ReasonServiceIPRefused is the Warning Event on a Service whose external or LoadBalancer
// IP this host will not serve because it is the host's own address on a port a host
// listener holds (the controller's refusals use the same reason).
const ReasonServiceIPRefused = "ServiceIPRefused"

// newNodeRecorder sends Events as this node's edgeovn.
func newNodeRecorder(ctx context.Context, kube *kubeapi.Client, node string) (record.EventRecorder, func()) {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(kubeapi.EventSink{Client: kube, Ctx: context.WithoutCancel(ctx)})
	return b.NewRecorder(kubeapi.Scheme, corev1.EventSource{Component: "edgeovn-node", Host: node}), b.Shutdown
}

// refusals reports each refused address once while it stays refused (the loop re-evaluates
// every few seconds): a log line, and an Event for a host listener's port (the controller
// records the others' Events, once for the cluster).
type refusals struct {
	events record.EventRecorder
	log    *slog.Logger
	said   map[string]string // service/ip -> message
}

func newRefusals(events record.EventRecorder, log *slog.Logger) *refusals {
	return &refusals{events: events, log: log, said: map[string]string{}}
}

func (r *refusals) report(refused []refusedIP) {
	now := map[string]string{}
	for _, f := range refused {
		key := f.Service.Namespace + "/" + f.Service.Name + "/" + f.IP.String()
		msg := f.Err.Error() + " on this host"
		now[key] = msg
		if r.said[key] == msg {
			continue
		}
		r.log.Warn("service address refused", "service", f.Service.Namespace+"/"+f.Service.Name, "ip", f.IP.String(), "err", f.Err)
		if r.events != nil && errors.Is(f.Err, errHostListener) {
			r.events.Event(f.Service, corev1.EventTypeWarning, ReasonServiceIPRefused, msg)
		}
	}
	r.said = now
}
