package queue

import (
	"slices"
	"sync"
	"testing"

	"k8s.io/client-go/util/workqueue"
)

// urgentSet is a classifier whose answers the test changes while keys wait.
type urgentSet struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (u *urgentSet) set(key string, v bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.keys == nil {
		u.keys = map[string]bool{}
	}
	u.keys[key] = v
}

func (u *urgentSet) urgent(key string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.keys[key]
}

// drain takes every waiting key in the order the queue hands them out.
func drain(t *testing.T, q workqueue.TypedRateLimitingInterface[string]) []string {
	t.Helper()
	var out []string
	for q.Len() > 0 {
		key, quit := q.Get()
		if quit {
			t.Fatal("queue shut down")
		}
		out = append(out, key)
		q.Done(key)
		q.Forget(key)
	}
	return out
}

// The restart's case: the informers' initial lists queue every allocated pod (in name order)
// before the pod created while edgeovn was down; that pod comes out first all the same.
func TestPriorityQueueNewPodFirst(t *testing.T) {
	var u urgentSet
	u.set("ns/p-1000", true)
	q := NewPriority("test", u.urgent)
	defer q.ShutDown()
	for _, k := range []string{"ns/p-0000", "ns/p-0001", "ns/p-0002", "ns/p-1000", "ns/p-0003"} {
		q.Add(k)
	}
	q.Add("ns/p-0001") // already waiting: still once
	got := drain(t, q)
	want := []string{"ns/p-1000", "ns/p-0000", "ns/p-0001", "ns/p-0002", "ns/p-0003"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// A key added again while it waits moves up when it has become urgent, and is handed out once.
func TestPriorityQueuePromotes(t *testing.T) {
	var u urgentSet
	q := NewPriority("test", u.urgent)
	defer q.ShutDown()
	for _, k := range []string{"a", "b", "c"} {
		q.Add(k)
	}
	u.set("c", true)
	q.Add("c")
	if n := q.Len(); n != 3 {
		t.Fatalf("Len %d after a promotion, want 3", n)
	}
	if got, want := drain(t, q), []string{"c", "a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	// The promoted key's stale entry is skipped, also when the key waits again at the low level.
	u.set("c", false)
	q.Add("d")
	q.Add("c")
	if got, want := drain(t, q), []string{"d", "c"}; !slices.Equal(got, want) {
		t.Fatalf("order after the promotion %v, want %v", got, want)
	}
}

// client-go's guarantees stay: a key added while it is processed is not handed to another
// worker, and comes back once when it is done, at the level it has then.
func TestPriorityQueueKeyProcessedOnce(t *testing.T) {
	var u urgentSet
	q := NewPriority("test", u.urgent)
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	key, _ := q.Get()
	if key != "a" {
		t.Fatalf("first key %q, want a", key)
	}
	u.set("a", true)
	q.Add("a") // while processed
	if got, _ := q.Get(); got != "b" {
		t.Fatalf("got %q while a is processed, want b", got)
	}
	q.Done("b")
	if q.Len() != 0 {
		t.Fatalf("a waits while it is processed: Len %d", q.Len())
	}
	q.Done("a")
	if got := drain(t, q); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after Done: %v, want [a]", got)
	}
}
