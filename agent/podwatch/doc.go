// Package podwatch is the node role's view of the pods scheduled to this host: an informer
// restricted to spec.nodeName, and waiters that the CNI server blocks on until the controller
// role has annotated a pod as allocated.
//
// Waiting is driven by informer events, never by polling: a waiter takes the pod's change
// channel before it reads the cache, so an update that lands between the read and the wait
// still wakes it. A pod whose UID differs from the one the runtime asked for is an older
// object of the same name and is waited past. The cache keeps of each pod only its name,
// namespace, uid, annotations, resourceVersion, and for the BGP announcement deletionTimestamp,
// hostNetwork and phase: a field read here must be kept by slimPod.
// An attachment network's waiter (PodKey.Provider "<nad>.<ns>.ovn") reads the provider's
// annotations ("<provider>.kubernetes.io/..."), its port "<pod>.<ns>.<provider>", its routes,
// and whether it carries the default route (default_route; unset: no).
// A pod the controller cannot allocate carries the reason (edgeovn.io/network-error): a waiter
// for a network of it not yet allocated fails at once with that reason, an allocated one is
// still returned.
// OnChange is the one way to hear of a change: it gives each changed pod's key to the other
// parts of the node role (the QoS shaper queues it; the mirror folds the calls into a token and
// re-reads List), without a second watch. Pod reads one pod from the cache, List all of them.
// Safe for concurrent use.
package podwatch
