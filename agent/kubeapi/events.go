package kubeapi

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// EventSink writes an event recorder's Events (core/v1) through the client, each in its own
// namespace, as client-go's typed EventSinkImpl does.
type EventSink struct {
	Client *Client
	// Ctx bounds every write (record's sink interface carries no context).
	Ctx context.Context
}

var _ record.EventSink = EventSink{}

// Create creates the Event.
func (s EventSink) Create(e *corev1.Event) (*corev1.Event, error) {
	return s.Client.Events(e.Namespace).Create(s.Ctx, e, metav1.CreateOptions{})
}

// Update replaces the Event.
func (s EventSink) Update(e *corev1.Event) (*corev1.Event, error) {
	return s.Client.Events(e.Namespace).Update(s.Ctx, e, metav1.UpdateOptions{})
}

// Patch applies a strategic merge patch (a repeated Event's count and time) to the Event.
func (s EventSink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	return s.Client.Events(e.Namespace).Patch(s.Ctx, e.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{})
}
