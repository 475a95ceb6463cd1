package ctltest

import (
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// Recorder keeps the Events the role reports, as "TYPE REASON NAMESPACE/NAME: MESSAGE".
type Recorder struct {
	mu     sync.Mutex
	events []string
}

var _ record.EventRecorder = (*Recorder)(nil)

// Event records one Event.
func (r *Recorder) Event(obj runtime.Object, eventtype, reason, message string) {
	name := "?"
	if m, err := meta.Accessor(obj); err == nil {
		name = m.GetName()
		if m.GetNamespace() != "" {
			name = m.GetNamespace() + "/" + name
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s %s: %s", eventtype, reason, name, message))
}

// Eventf records one Event.
func (r *Recorder) Eventf(obj runtime.Object, eventtype, reason, format string, args ...any) {
	r.Event(obj, eventtype, reason, fmt.Sprintf(format, args...))
}

// AnnotatedEventf records one Event; the annotations are not kept.
func (r *Recorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventtype, reason, format string, args ...any) {
	r.Eventf(obj, eventtype, reason, format, args...)
}

// Events returns the Events recorded so far, in order.
func (r *Recorder) Events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}
