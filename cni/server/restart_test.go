package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/libcni"
)

// systemdSocket creates the socket as edgeovn.socket has systemd create it, here with the
// mode a unit without SocketMode= gets (0666), and returns a function that passes a copy of
// it, as systemd passes one to each start of the service.
func systemdSocket(t *testing.T, sock string) func() net.Listener {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	return func() net.Listener {
		f, err := ln.File()
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		passed, err := net.FileListener(f)
		if err != nil {
			t.Fatal(err)
		}
		passed.(*net.UnixListener).SetUnlinkOnClose(false)
		return passed
	}
}

// serve runs a Server for cfg until the returned stop is called; stop returns Serve's error.
func serve(t *testing.T, cfg Config) (stop func() error) {
	t.Helper()
	if cfg.Pods == nil {
		cfg.Pods, cfg.Ports = &fakePods{}, &fakePorts{}
	}
	cfg.Log = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	listening := make(chan struct{})
	cfg.Listening = func() { close(listening) }
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	select {
	case <-listening:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	var stopped bool
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// TestPassedSocketAcrossRestart is a restart under edgeovn.socket: the Server serves the
// passed socket (tightening its mode to 0600), leaves it bound when it stops, and a STATUS
// the runtime sends while no daemon runs waits in the socket's queue and is answered by the
// next one.
func TestPassedSocketAcrossRestart(t *testing.T) {
	r := &rig{t: t, sock: filepath.Join(t.TempDir(), "run", "cni.sock")}
	bin := needPlugin(t)
	r.cni = libcni.NewCNIConfigWithCacheDir([]string{filepath.Dir(bin)}, t.TempDir(), nil)
	pass := systemdSocket(t, r.sock)
	stop := serve(t, Config{Socket: r.sock, Listener: pass()})
	if fi, err := os.Stat(r.sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("passed socket after Serve: %v, %v; want mode 0600", fi.Mode(), err)
	}
	ctx := context.Background()
	if err := r.cni.GetStatusNetworkList(ctx, r.confList("1.1.0")); err != nil {
		t.Fatalf("STATUS on the passed socket: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(r.sock); err != nil {
		t.Fatalf("the passed socket went with the server: %v", err)
	}
	answered := make(chan error, 1)
	go func() { answered <- r.cni.GetStatusNetworkList(ctx, r.confList("1.1.0")) }()
	select {
	case err := <-answered:
		t.Fatalf("STATUS answered with no daemon running: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	serve(t, Config{Socket: r.sock, Listener: pass()})
	if err := <-answered; err != nil {
		t.Fatalf("STATUS queued across the restart: %v", err)
	}
}

// TestDrainAtShutdown: a request in flight when the daemon is told to stop still runs with a
// live context and gets its answer; one still running after the drain timeout is cancelled
// and its connection closed without an answer (the plugin sends it again to the next daemon,
// where an answer "failed: shutting down" would have failed the pod).
func TestDrainAtShutdown(t *testing.T) {
	for _, c := range []struct {
		name    string
		release time.Duration // when the request's work completes, after the stop
		want    string
	}{
		{"finishes within the drain", 100 * time.Millisecond, "200"},
		{"still running after the drain", time.Hour, "EOF"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "run", "cni.sock")
			entered := make(chan struct{})
			release := make(chan struct{})
			stop := serve(t, Config{Socket: sock, DrainTimeout: 500 * time.Millisecond, Ready: func(ctx context.Context) error {
				close(entered)
				select {
				case <-release:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}})
			got := make(chan string, 1)
			go func() { got <- rawStatus(sock) }()
			<-entered
			stopped := make(chan error, 1)
			go func() { stopped <- stop() }()
			time.AfterFunc(c.release, func() { close(release) })
			if answer := <-got; !strings.Contains(answer, c.want) {
				t.Errorf("answer %q, want %q", answer, c.want)
			}
			if err := <-stopped; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
}

// rawStatus posts a STATUS and returns the HTTP status code, or the transport error.
func rawStatus(sock string) string {
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}, Timeout: 10 * time.Second}
	resp, err := client.Post("http://edgeovn/v1/cni", "application/json", strings.NewReader(`{"command":"STATUS"}`))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "timeout"
		}
		return err.Error()
	}
	resp.Body.Close()
	return resp.Status
}
