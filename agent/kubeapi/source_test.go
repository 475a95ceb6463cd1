package kubeapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const testKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`

// TestKubeSourceWaitsForFile: the client is made once the kubeconfig appears (as k3s writes
// it after edgeovn started), not before; a caller whose context ends stops waiting.
func TestKubeSourceWaitsForFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k3s.yaml")
	s := NewSource(path, slog.New(slog.DiscardHandler))

	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Get(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get without the file = %v, want the deadline", err)
	}

	got := make(chan error, 1)
	go func() {
		_, err := s.Get(context.Background())
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("Get returned before the file existed: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := os.WriteFile(path, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Get after the file appeared: %v", err)
	}
}

// TestKubeSourceBadFile: a kubeconfig that exists but does not load is waited out, never an
// error of its own (which would stop the node role): the log names the file and the reason,
// a caller whose context ends hears the reason, and fixing the file is enough.
func TestKubeSourceBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k3s.yaml")
	if err := os.WriteFile(path, []byte("clusters: [not yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	s := NewSource(path, slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil)))
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Get(short); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Get of a broken kubeconfig = %v, want the deadline naming %s", err, path)
	}
	got := make(chan error, 1)
	go func() {
		_, err := s.Get(context.Background())
		got <- err
	}()
	if err := os.WriteFile(path, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("Get after the file was fixed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Get did not pick up the fixed kubeconfig")
	}
	if l := logs.String(); !strings.Contains(l, "kubeconfig does not load") || !strings.Contains(l, path) {
		t.Fatalf("the log does not say the kubeconfig is broken:\n%s", l)
	}
}

// syncWriter lets the test read what the Get goroutine logs.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
