package plugin

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
)

// TestDaemonDown checks the codes a runtime sees when the daemon's socket is missing: DEL
// must fail with "try again later" rather than succeed and leak the daemon's port and veth.
func TestDaemonDown(t *testing.T) {
	shortGrace(t, 200*time.Millisecond)
	sock := filepath.Join(t.TempDir(), "missing.sock")
	conf := []byte(`{"cniVersion":"1.1.0","name":"edgeovn","type":"edgeovn","serverSocket":"` + sock + `","timeout":"2s"}`)
	args := &skel.CmdArgs{ContainerID: "c1", Netns: "/var/run/netns/x", IfName: "eth0",
		Args: "K8S_POD_NAMESPACE=default;K8S_POD_NAME=web", StdinData: conf}
	ctx := context.Background()
	tests := []struct {
		name string
		run  func() error
		want uint
	}{
		{"ADD", func() error { return cmdAdd(ctx, args) }, types.ErrTryAgainLater},
		{"DEL", func() error { return cmdDel(ctx, args) }, types.ErrTryAgainLater},
		{"GC", func() error { return cmdGC(ctx, args) }, types.ErrTryAgainLater},
		{"STATUS", func() error { return cmdStatus(ctx, args) }, types.ErrPluginNotAvailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cniCode(t, tt.run()); got != tt.want {
				t.Errorf("code = %d, want %d", got, tt.want)
			}
		})
	}
}

// shortGrace shortens reconnectGrace for one test.
func shortGrace(t *testing.T, d time.Duration) {
	old := reconnectGrace
	reconnectGrace = d
	t.Cleanup(func() { reconnectGrace = old })
}

// TestDaemonRestarting: a call made while the daemon's socket is gone (a restart) waits for
// the new daemon to listen and gets its answer, instead of failing STATUS (node NotReady) or
// ADD; a daemon that does not come back within the grace is reported as before.
func TestDaemonRestarting(t *testing.T) {
	shortGrace(t, 5*time.Second)
	sock := filepath.Join(t.TempDir(), "cni.sock")
	conf := []byte(`{"cniVersion":"1.1.0","name":"edgeovn","type":"edgeovn","serverSocket":"` + sock + `","timeout":"10s"}`)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{}`))
	})}
	t.Cleanup(func() { srv.Close() })
	go func() {
		time.Sleep(300 * time.Millisecond) // the new daemon starting
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Error(err)
			return
		}
		_ = srv.Serve(ln)
	}()
	start := time.Now()
	if err := cmdStatus(context.Background(), &skel.CmdArgs{StdinData: conf}); err != nil {
		t.Fatalf("STATUS across a restart: %v", err)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Fatalf("STATUS answered after %s, before the daemon listened", waited)
	}

	shortGrace(t, 300*time.Millisecond)
	gone := filepath.Join(t.TempDir(), "gone.sock")
	conf = []byte(`{"cniVersion":"1.1.0","name":"edgeovn","type":"edgeovn","serverSocket":"` + gone + `"}`)
	start = time.Now()
	err := cmdStatus(context.Background(), &skel.CmdArgs{StdinData: conf})
	if got := cniCode(t, err); got != types.ErrPluginNotAvailable || time.Since(start) > 3*time.Second {
		t.Fatalf("daemon gone for good: code %d after %s (%v), want %d after the grace", got, time.Since(start), err, types.ErrPluginNotAvailable)
	}
}
