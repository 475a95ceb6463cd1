// Package queue is the work queue every part of the controller role processes its keys with
// (pods, nodes, StatefulSets, Subnets, namespaces, Services, network policies): client-go's
// rate-limited queue, and Work, the loop that syncs each key and retries a failure with
// backoff (Run: Work until the context ends, the queue shut down then, as a feature runs).
//
// Invariants: one key is never processed by two workers at once; a key added again while it
// is processed comes back once after. NewPriority's queue (the pods') hands out the keys its
// urgent function names before every other key, each level first in, first out: a new pod
// waits behind other new pods only, never behind the re-syncs of allocated pods that a
// restart's initial lists, or a burst's own annotation updates, queue first.
package queue
