package plugin

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/cni/protocol"
)

// serveAfter starts, after delay, an HTTP server on socket whose handler is h.
func serveAfter(t *testing.T, socket string, delay time.Duration, h http.HandlerFunc) {
	t.Helper()
	srv := &http.Server{Handler: h}
	t.Cleanup(func() { _ = srv.Close() })
	ready := make(chan struct{})
	go func() {
		time.Sleep(delay) // the daemon restarting: nothing listens meanwhile
		ln, err := net.Listen("unix", socket)
		close(ready)
		if err != nil {
			t.Error(err)
			return
		}
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() { <-ready })
}

func answerOK(w http.ResponseWriter, _ *http.Request) {
	_ = json.NewEncoder(w).Encode(protocol.Response{})
}

// TestCallWaitsForRestart: a daemon that is not listening yet (a restart without socket
// activation) is tried again until it answers, within the window.
func TestCallWaitsForRestart(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "cni.sock")
	serveAfter(t, sock, 300*time.Millisecond, answerOK)
	_, err := call(context.Background(), callRequest{Socket: sock, Timeout: 10 * time.Second, Window: 5 * time.Second,
		Req: protocol.PodRequest{Command: protocol.CommandStatus}, UnreachableCode: protocol.CodePluginNotAvailable})
	if err != nil {
		t.Fatalf("call to a daemon that comes up after 300 ms: %v", err)
	}
}

// TestCallResendsAfterBrokenConnection: a daemon that dies (or abandons the request at
// shutdown) after reading a request, without answering, gets it again; an error it answers
// is not resent.
func TestCallResendsAfterBrokenConnection(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "cni.sock")
	var calls atomic.Int32
	serveAfter(t, sock, 0, func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			panic(http.ErrAbortHandler) // connection closed, no answer
		case 2:
			answerOK(w, r)
		default:
			_ = json.NewEncoder(w).Encode(protocol.Response{Error: &protocol.Error{Code: protocol.CodeTryAgainLater, Msg: "not ready"}})
		}
	})
	req := callRequest{Socket: sock, Timeout: 10 * time.Second, Window: 5 * time.Second,
		Req: protocol.PodRequest{Command: protocol.CommandDel}, UnreachableCode: protocol.CodeTryAgainLater}
	if _, err := call(context.Background(), req); err != nil || calls.Load() != 2 {
		t.Fatalf("call after one broken connection: %v after %d requests, want success after 2", err, calls.Load())
	}
	_, err := call(context.Background(), req)
	if got := cniCode(t, err); got != protocol.CodeTryAgainLater || calls.Load() != 3 {
		t.Fatalf("daemon's own error: code %d after %d requests, want %d after 3 (not resent)", got, calls.Load(), protocol.CodeTryAgainLater)
	}
}
