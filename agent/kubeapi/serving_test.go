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

// apiServer answers /readyz with 500 until readyAfter tries, and the lists of pods and Subnets
// with 200 only once listing is set (before: 403 and 404, as a server whose authorizer and
// custom resource handlers have not synced yet).
type apiServer struct {
	readyz, readyAfter atomic.Int32
	pods, subnets      atomic.Bool
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/readyz":
		if s.readyz.Add(1) <= s.readyAfter.Load() {
			http.Error(w, "[-]poststarthook/scheduling/bootstrap-system-priority-classes failed", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	case r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("limit") == "1" && s.pods.Load():
		_, _ = w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","items":[]}`))
	case r.URL.Path == "/api/v1/pods":
		http.Error(w, `{"kind":"Status","code":403}`, http.StatusForbidden)
	case r.URL.Path == "/apis/kubeovn.io/v1/subnets" && s.subnets.Load():
		_, _ = w.Write([]byte(`{"kind":"SubnetList","apiVersion":"kubeovn.io/v1","items":[]}`))
	default:
		http.NotFound(w, r)
	}
}

func newServingClient(t *testing.T, s *apiServer) (*Client, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := NewForConfig(&rest.Config{Host: srv.URL, QPS: 1000, Burst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

// TestWaitServing: WaitServing returns once /readyz answers 200 (not on 500s, not while
// nothing listens), and a caller whose context ends hears the last answer.
func TestWaitServing(t *testing.T) {
	s := &apiServer{}
	s.readyAfter.Store(3)
	c, srv := newServingClient(t, s)
	log := slog.New(slog.DiscardHandler)
	if err := WaitServing(context.Background(), c, log); err != nil {
		t.Fatalf("WaitServing: %v", err)
	}
	if n := s.readyz.Load(); n != 4 {
		t.Errorf("returned after %d tries, want 4 (three 500s, then 200)", n)
	}

	s.readyAfter.Store(1 << 30)
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := WaitServing(short, c, log)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "bootstrap-system-priority-classes failed") {
		t.Fatalf("WaitServing on a server never ready = %v, want the deadline with the last answer", err)
	}

	srv.Close()
	short2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if err := WaitServing(short2, c, log); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitServing with nothing listening = %v, want the deadline", err)
	}
}

// TestWaitServingBeforeReadyz: after a reboot the lists the informers make are answered about
// a second before /readyz passes; WaitServing returns then, but not while only one of them is
// (a Subnet list that 404s: the custom resources not served yet, or none installed).
func TestWaitServingBeforeReadyz(t *testing.T) {
	s := &apiServer{}
	s.readyAfter.Store(1 << 30)
	s.pods.Store(true)
	c, _ := newServingClient(t, s)
	log := slog.New(slog.DiscardHandler)
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := WaitServing(short, c, log); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("pods listed, Subnets not served, /readyz 500: WaitServing = %v, want it still waiting", err)
	}
	s.pods.Store(false)
	s.subnets.Store(true)
	short2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if err := WaitServing(short2, c, log); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Subnets listed, pods forbidden, /readyz 500: WaitServing = %v, want it still waiting", err)
	}
	s.pods.Store(true)
	bounded, cancel3 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel3()
	if err := WaitServing(bounded, c, log); err != nil {
		t.Fatalf("both listed, /readyz 500: WaitServing = %v, want it to return", err)
	}
}
