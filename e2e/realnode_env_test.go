package e2e

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/images"
	"github.com/edgeovn/edgeovn/e2e/realpods"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// realEnv is an env whose pods run on a real kubelet and containerd.
type realEnv struct {
	*env
	node   *harness.RealNode
	client *realpods.Client
}

var (
	imagesOnce sync.Once
	imageTars  []string
	imagesErr  error
)

// buildImages builds the pause and testserver images once per test binary, into the binary
// directory (removed by TestMain).
func buildImages(t *testing.T) []string {
	bins := buildBinaries(t)
	imagesOnce.Do(func() {
		dir := filepath.Join(bins, "images")
		if imagesErr = os.MkdirAll(dir, 0o755); imagesErr == nil {
			imageTars, imagesErr = images.Build(context.Background(), dir)
		}
	})
	if imagesErr != nil {
		t.Fatal(imagesErr)
	}
	return imageTars
}

// startRealNode starts a rig, edgeovn in it as the other tests run it, and a real node
// (containerd reading the CNI config edgeovn writes, the kubelet registering the Node), and
// waits until the node is Ready: containerd's CNI STATUS to edgeovn passes. The context ends
// with the test.
func startRealNode(t *testing.T) (*realEnv, context.Context) {
	t.Helper()
	return startRealNodeFlags(t)
}

// startRealNodeFlags is startRealNode with edgeovn flags of the test's own.
func startRealNodeFlags(t *testing.T, extra ...string) (*realEnv, context.Context) {
	t.Helper()
	if err := harness.Preflight(harness.RealNodeParts...); err != nil {
		skip.Now(t, "real node tests: kubelet or containerd unavailable (run `make deps` as root): %v", err)
	}
	tars := buildImages(t)
	e := startEnvFlags(t, false, harness.Options{}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	k := daemon.Kubelet(e.rig, node)
	n, err := e.rig.StartRealNode(ctx, harness.RealNodeRequest{Name: node, CNIConfDir: k.ConfDir, CNIBinDir: k.BinDir,
		Images: tars, SandboxImage: images.Pause})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("real node teardown: %v", err)
		}
	})
	if _, err := n.WaitReady(ctx, "True"); err != nil {
		t.Fatalf("%v\n%s", err, e.daemonLog())
	}
	return &realEnv{env: e, node: n, client: realpods.NewClient(e.rig.DialContext)}, ctx
}
