package bgp

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// ReasonBadAnnotation is the Warning Event on an object whose ovn.kubernetes.io/bgp value
// is none of Kube-OVN's.
const ReasonBadAnnotation = "BGPAnnotationInvalid"

// badValues reports each bad annotation once while it stays bad: a log line and a
// Warning Event on the object, from this node's edgeovn.
type badValues struct {
	events record.EventRecorder
	log    *slog.Logger
	said   map[BadValue]bool
}

func newBadValues(ctx context.Context, kube *kubeapi.Client, node string, log *slog.Logger) *badValues {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(kubeapi.EventSink{Client: kube, Ctx: context.WithoutCancel(ctx)})
	context.AfterFunc(ctx, b.Shutdown)
	rec := b.NewRecorder(kubeapi.Scheme, corev1.EventSource{Component: "edgeovn-node", Host: node})
	return &badValues{events: rec, log: log, said: map[BadValue]bool{}}
}

func (b *badValues) report(bad []BadValue, object func(BadValue) runtime.Object) {
	now := make(map[BadValue]bool, len(bad))
	for _, v := range bad {
		now[v] = true
		if b.said[v] {
			continue
		}
		b.log.Warn("bgp annotation refused, that object is not announced", "err", v.Error())
		if obj := object(v); obj != nil {
			b.events.Event(obj, corev1.EventTypeWarning, ReasonBadAnnotation, v.Error()+"; not announced")
		}
	}
	b.said = now
}
