package node

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/cni/server"
)

type fixedPods struct{ n server.PodNetwork }

func (f fixedPods) WaitPodNetwork(context.Context, server.PodKey) (server.PodNetwork, error) {
	return f.n, nil
}

// TestPendingPods: before the pod watch exists an ADD waits within its deadline and says
// why it failed; once the watch is set, ADDs (also one already waiting) are served by it.
func TestPendingPods(t *testing.T) {
	p := newPendingPods()
	key := server.PodKey{Namespace: "default", Name: "a"}
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := p.WaitPodNetwork(short, key)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no API server connection yet") {
		t.Fatalf("before the watch: %v", err)
	}
	waiting := make(chan server.PodNetwork, 1)
	go func() {
		n, _ := p.WaitPodNetwork(context.Background(), key)
		waiting <- n
	}()
	p.set(fixedPods{server.PodNetwork{Port: "a.default"}})
	if n := <-waiting; n.Port != "a.default" {
		t.Fatalf("waiting ADD got %+v", n)
	}
	if n, err := p.WaitPodNetwork(context.Background(), key); err != nil || n.Port != "a.default" {
		t.Fatalf("after the watch: %+v, %v", n, err)
	}
}
