package agent

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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
	s := &kubeSource{path: path, log: slog.New(slog.DiscardHandler)}

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

// TestKubeSourceBadFile: a kubeconfig that exists but does not load is an error naming it.
func TestKubeSourceBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k3s.yaml")
	if err := os.WriteFile(path, []byte("clusters: [not yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &kubeSource{path: path, log: slog.New(slog.DiscardHandler)}
	if _, err := s.Get(context.Background()); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Get of a broken kubeconfig = %v, want an error naming %s", err, path)
	}
}
