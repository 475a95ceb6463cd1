package e2e

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestKubeconfigLater is a k3s server's first boot: edgeovn starts before k3s has written its
// kubeconfig. The node role comes up anyway (CNI config installed, STATUS ready: what systemd
// and containerd wait for); a kubeconfig that then appears broken (half written) is logged
// and waited out, with the daemon still running and ready; once the file is right the
// API-bound parts follow and a pod gets its network.
func TestKubeconfigLater(t *testing.T) {
	env, ctx := startNode(t)
	if err := syscall.Kill(env.daemon.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = env.daemon.Wait()
	// So that readiness below is the new daemon's own doing.
	if err := os.Remove(filepath.Join(env.kubelet.ConfDir, "01-edgeovn.conflist")); err != nil {
		t.Fatal(err)
	}
	later := filepath.Join(env.rig.Dir, "later", "k3s.yaml")
	env.startDaemon(ctx, t, "edgeovn-before-k3s", "--kubeconfig="+later) // returns once STATUS is ready
	if log := env.daemonLog(); !strings.Contains(log, "waiting for the kubeconfig") {
		t.Fatalf("daemon does not say it waits for the kubeconfig:\n%s", log)
	}

	b, err := os.ReadFile(env.rig.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(later), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(later, []byte("apiVersion: v1\nclusters: [{name: half-writ"), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the broken kubeconfig logged", func() bool {
		return strings.Contains(env.daemonLog(), "kubeconfig does not load")
	})
	select {
	case <-env.daemon.Done():
		t.Fatalf("a broken kubeconfig stopped edgeovn:\n%s", env.daemonLog())
	default:
	}
	if err := env.kubelet.WaitReady(ctx); err != nil {
		t.Fatalf("not ready with a broken kubeconfig: %v", err)
	}
	if err := os.WriteFile(later, b, 0o600); err != nil {
		t.Fatal(err)
	}
	a := runPod(ctx, t, env, "first")
	checkAnnotations(ctx, t, env, a, netip.MustParsePrefix("10.42.0.0/16"))
}
