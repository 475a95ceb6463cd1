package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
)

// rig is a running Server with fake Pods and Ports, reached the way containerd reaches it:
// libcni executing the real binary with a conflist.
type rig struct {
	t     *testing.T
	sock  string
	pods  *fakePods
	ports *fakePorts
	ready atomic.Bool
	cni   *libcni.CNIConfig
}

func newRig(t *testing.T, edit func(*Config)) *rig {
	t.Helper()
	bin := needPlugin(t)
	r := &rig{t: t, sock: filepath.Join(t.TempDir(), "run", "cni.sock"), pods: &fakePods{}, ports: &fakePorts{}}
	r.ready.Store(true)
	cfg := Config{
		Socket: r.sock, Pods: r.pods, Ports: r.ports, DisableTxChecksum: true,
		Ready: func(context.Context) error {
			if !r.ready.Load() {
				return errors.New("br-int not up yet")
			}
			return nil
		},
		Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	waitForSocket(t, r.sock, done)
	r.cni = libcni.NewCNIConfigWithCacheDir([]string{filepath.Dir(bin)}, t.TempDir(), nil)
	return r
}

// waitForSocket waits until Serve has created the socket (or failed).
func waitForSocket(t *testing.T, sock string, done chan error) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("Serve returned early: %v", err)
		default:
		}
		if fi, err := os.Stat(sock); err == nil && fi.Mode().Type() == os.ModeSocket {
			return
		}
	}
	t.Fatalf("socket %s never appeared", sock)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// confList is the conflist k3s's containerd would read, at the given spec version.
func (r *rig) confList(version string) *libcni.NetworkConfigList {
	r.t.Helper()
	conf := fmt.Sprintf(`{"cniVersion":%q,"name":"edgeovn","plugins":[{"type":"edgeovn","serverSocket":%q,"timeout":"30s"}]}`, version, r.sock)
	list, err := libcni.ConfListFromBytes([]byte(conf))
	if err != nil {
		r.t.Fatal(err)
	}
	return list
}

func (r *rig) runtimeConf(containerID, netns, namespace, name string) *libcni.RuntimeConf {
	args := [][2]string{{"IgnoreUnknown", "1"}, {"K8S_POD_NAMESPACE", namespace}, {"K8S_POD_INFRA_CONTAINER_ID", containerID}}
	if name != "" {
		args = append(args, [2]string{"K8S_POD_NAME", name})
	}
	return &libcni.RuntimeConf{ContainerID: containerID, NetNS: netns, IfName: "eth0", Args: args}
}

// newPodNS creates a pod's network namespace, removed when the test ends.
func newPodNS(t *testing.T) ns.NetNS {
	t.Helper()
	n, err := testutils.NewNS()
	if err != nil {
		t.Fatalf("create pod netns: %v", err)
	}
	t.Cleanup(func() {
		_ = n.Close()
		_ = testutils.UnmountNS(n)
	})
	return n
}

// cniCode extracts the CNI error code the binary reported.
func cniCode(t *testing.T, err error) uint {
	t.Helper()
	var e *types.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a CNI error", err, err)
	}
	return e.Code
}

func containerID(n int) string {
	return fmt.Sprintf("%012x%052x", n, n)
}
