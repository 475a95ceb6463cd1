package controller

import (
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/agent/annotation"
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
	q := newPriorityQueue("test", u.urgent)
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
	q := newPriorityQueue("test", u.urgent)
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
	q := newPriorityQueue("test", u.urgent)
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

func TestAwaitsAllocation(t *testing.T) {
	allocated := annotation.Encode(annotation.Network{Switch: DefaultSubnet, IPs: []netip.Addr{netip.MustParseAddr("10.42.0.5")},
		MAC: net.HardwareAddr{0x0a, 0x58, 0x0a, 0x2a, 0, 5}, CIDRs: []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")},
		Gateways: []netip.Addr{netip.MustParseAddr("10.42.0.1")}})
	pods := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new"}, Spec: corev1.PodSpec{NodeName: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pinned", Annotations: map[string]string{annotation.IPAddress: "10.42.0.9"}},
			Spec: corev1.PodSpec{NodeName: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "allocated", Annotations: allocated}, Spec: corev1.PodSpec{NodeName: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "unscheduled"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "host"}, Spec: corev1.PodSpec{NodeName: "n1", HostNetwork: true}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "done"}, Spec: corev1.PodSpec{NodeName: "n1"},
			Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	c := &Controller{pods: corelisters.NewPodLister(idx)}
	for key, want := range map[string]bool{
		"ns/new": true, "ns/pinned": true,
		"ns/allocated": false, "ns/unscheduled": false, "ns/host": false, "ns/done": false, "ns/gone": false, "not/a/key": false,
	} {
		if got := c.awaitsAllocation(key); got != want {
			t.Errorf("awaitsAllocation(%q) = %v, want %v", key, got, want)
		}
	}
}
