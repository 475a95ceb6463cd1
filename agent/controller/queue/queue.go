package queue

import (
	"time"

	"k8s.io/client-go/util/workqueue"
)

// New is a rate-limited work queue of keys, first in, first out.
func New(name string) workqueue.TypedRateLimitingInterface[string] {
	return newQueueWith(name, workqueue.DefaultQueue[string]())
}

// NewPriority is New with the order of twoLevel: keys urgent names come out first.
func NewPriority(name string, urgent func(key string) bool) workqueue.TypedRateLimitingInterface[string] {
	return newQueueWith(name, &twoLevel{urgent: urgent})
}

// newQueueWith is a rate-limited work queue (client-go's: a key is never handed to two
// workers at once, one added again while it is processed comes back once after) whose waiting
// keys come out in order's order.
func newQueueWith(name string, order workqueue.Queue[string]) workqueue.TypedRateLimitingInterface[string] {
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: name, Queue: order})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: name, Queue: q})
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, DelayingQueue: delaying})
}

// twoLevel orders the pod queue's waiting keys: those urgent says need work now (a pod to
// allocate, a pod gone) before those it does not (the re-sync of a pod that already holds its
// allocation, which finds nothing to change unless something drifted), each level first in,
// first out. So a new pod waits behind other new pods only, never behind the re-sync of every
// existing pod that a restart's initial lists queue first, or that a burst's own annotation
// updates queue. A key added again while it waits (Touch) moves up if it has become urgent.
//
// client-go's workqueue calls it under its own lock (it keeps the set of waiting keys and
// hands each out once): urgent must be quick and must not use the queue.
type twoLevel struct {
	urgent func(key string) bool
	// high and low hold the waiting keys in order; a promoted key leaves a stale entry in
	// low, skipped when reached.
	high, low []entry
	// waiting maps each waiting key to its one live entry.
	waiting map[string]entry
	next    uint64 // the next entry's number
}

// entry is a key's place in a level; its number tells a live entry from a stale one.
type entry struct {
	key  string
	n    uint64
	high bool
}

var _ workqueue.Queue[string] = (*twoLevel)(nil)

// Push adds a key that is not waiting.
func (q *twoLevel) Push(key string) {
	q.put(key, q.urgent(key))
}

// Touch is an Add of a key already waiting: it moves up if it now needs work.
func (q *twoLevel) Touch(key string) {
	if e, ok := q.waiting[key]; ok && !e.high && q.urgent(key) {
		q.put(key, true)
	}
}

func (q *twoLevel) put(key string, high bool) {
	if q.waiting == nil {
		q.waiting = map[string]entry{}
	}
	e := entry{key: key, n: q.next, high: high}
	q.next++
	q.waiting[key] = e
	if high {
		q.high = append(q.high, e)
	} else {
		q.low = append(q.low, e)
	}
}

// Len is the number of waiting keys.
func (q *twoLevel) Len() int { return len(q.waiting) }

// Pop returns the first urgent key, else the first other one; client-go calls it only when
// Len is above zero.
func (q *twoLevel) Pop() string {
	for _, level := range []*[]entry{&q.high, &q.low} {
		for len(*level) > 0 {
			e := (*level)[0]
			(*level)[0] = entry{} // the array outlives the entry: let the string go
			*level = (*level)[1:]
			if q.waiting[e.key] == e {
				delete(q.waiting, e.key)
				return e.key
			}
		}
	}
	return "" // not reached while Len > 0: every waiting key has its live entry in a level
}
