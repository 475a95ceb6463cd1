package podwatch

import corev1 "k8s.io/api/core/v1"

// Subscribe returns a channel that receives a token after any change of this node's pods
// (tokens coalesce: a reader re-reads List). For the node's reconcilers of pod annotations
// (mirroring); call it before Run.
func (w *Watcher) Subscribe() <-chan struct{} {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	w.subscribers = append(w.subscribers, ch)
	w.mu.Unlock()
	return ch
}

// List returns this node's pods as the cache has them (slimPod: name, namespace, uid,
// annotations, deletion timestamp, hostNetwork and phase only); callers must not change them.
func (w *Watcher) List() []*corev1.Pod {
	objs := w.informer.GetStore().List()
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			out = append(out, p)
		}
	}
	return out
}

// HasSynced reports whether the informer has listed the node's pods once.
func (w *Watcher) HasSynced() bool { return w.informer.HasSynced() }

// signalSubscribers is called with w.mu held.
func (w *Watcher) signalSubscribers() {
	for _, ch := range w.subscribers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
