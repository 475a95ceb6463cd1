package services

import (
	"errors"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/agent/sourceranges"
)

// refusalMemo remembers what was said about each Service's refused addresses, so a Service
// synced again (each endpoint change) does not repeat its Events.
type refusalMemo struct {
	mu   sync.Mutex
	said map[string][]string // Service key -> messages
}

// report logs and records a Warning Event for each refused address or source range of svc
// not reported since it was last refused.
func (s *Controller) report(svc *corev1.Service, refused []error) {
	key := svc.Namespace + "/" + svc.Name
	msgs := make([]string, len(refused))
	reasons := map[string]string{}
	for i, err := range refused {
		msgs[i] = err.Error()
		reasons[msgs[i]] = ReasonServiceIPRefused
		if errors.Is(err, sourceranges.ErrBadRange) {
			reasons[msgs[i]] = ReasonSourceRangeInvalid
		}
	}
	m := &s.refused
	m.mu.Lock()
	before := m.said[key]
	if m.said == nil {
		m.said = map[string][]string{}
	}
	if len(msgs) == 0 {
		delete(m.said, key)
	} else {
		m.said[key] = msgs
	}
	m.mu.Unlock()
	for _, msg := range msgs {
		if slices.Contains(before, msg) {
			continue
		}
		s.log.Warn("service address or source range refused", "service", key, "err", msg)
		if s.req.Events != nil {
			s.req.Events.Event(svc, corev1.EventTypeWarning, reasons[msg], msg)
		}
	}
}

// forget drops what was said about a Service that is gone.
func (m *refusalMemo) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.said, key)
}
