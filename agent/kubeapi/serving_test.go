package kubeapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestWaitServing: WaitServing returns only once /readyz answers 200 (not on 500s, not while
// nothing listens), and a caller whose context ends hears the last answer.
func TestWaitServing(t *testing.T) {
	var hits, readyAfter atomic.Int32
	readyAfter.Store(3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		if hits.Add(1) <= readyAfter.Load() {
			http.Error(w, "[-]poststarthook/rbac/bootstrap-roles failed", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	c, err := NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	if err := WaitServing(context.Background(), c, log); err != nil {
		t.Fatalf("WaitServing: %v", err)
	}
	if n := hits.Load(); n != 4 {
		t.Errorf("returned after %d tries, want 4 (three 500s, then 200)", n)
	}

	readyAfter.Store(1 << 30)
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = WaitServing(short, c, log)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "bootstrap-roles failed") {
		t.Fatalf("WaitServing on a server never ready = %v, want the deadline with the last answer", err)
	}

	srv.Close()
	short2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if err := WaitServing(short2, c, log); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitServing with nothing listening = %v, want the deadline", err)
	}
}
