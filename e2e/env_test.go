package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// env is one simulated host: the rig of real components, edgeovn running in it, and a
// kubelet stand-in.
type env struct {
	rig     *harness.Rig
	kubelet *podsim.Kubelet
	daemon  *harness.Process
	// sd, when edgeovn runs as under systemd, holds its CNI socket across restarts
	// (edgeovn.socket) and hears its READY=1.
	sd     *daemon.Systemd
	bin    string
	bins   string
	ipamDB string
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// buildBinaries builds edgeovn, its CNI plugin and the plugins it ships from this tree, once
// per test binary.
func buildBinaries(t *testing.T) string {
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "edgeovn-e2e-bin-")
		if buildErr != nil {
			return
		}
		for pkg, out := range map[string]string{"github.com/edgeovn/edgeovn": "edgeovn",
			"github.com/edgeovn/edgeovn/cni/cmd/edgeovn-cni":               "edgeovn-cni",
			"github.com/edgeovn/edgeovn/agent/bgp/cmd/edgeovn-bgp":         "edgeovn-bgp",
			"github.com/containernetworking/plugins/plugins/main/loopback": "loopback",
			"github.com/containernetworking/plugins/plugins/main/macvlan":  "macvlan"} {
			// edgeovn_testhooks: the crash-window test's hook (agent/controller/testhook.go).
			cmd := exec.Command("go", "build", "-tags", "edgeovn_testhooks", "-o", filepath.Join(binDir, out), pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if b, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// startEnv starts a rig and edgeovn in it; everything stops by PID when the test ends.
func startEnv(t *testing.T) *env { return startEnvWith(t, false) }

// startEnvWith starts a rig and edgeovn in it, supervised as by systemd (edgeovn.socket
// passing the CNI socket, READY=1 awaited) or not.
func startEnvWith(t *testing.T, supervised bool) *env {
	t.Helper()
	return startEnvOpts(t, supervised, harness.Options{})
}

// startEnvOpts is startEnvWith with rig options (Log and Keep are set here).
func startEnvOpts(t *testing.T, supervised bool, opts harness.Options) *env {
	t.Helper()
	return startEnvFlags(t, supervised, opts)
}

// startEnvFlags is startEnvOpts with edgeovn flags of the test's own (after daemonFlags).
func startEnvFlags(t *testing.T, supervised bool, opts harness.Options, extra ...string) *env {
	t.Helper()
	if err := harness.Preflight(); err != nil {
		skip.Now(t, "end-to-end tier: real components unavailable (run `make deps` as root): %v", err)
	}
	bins := buildBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	opts.Log, opts.Keep = log, os.Getenv("EDGEOVN_E2E_KEEP") != ""
	rig, err := harness.Start(ctx, opts)
	if err != nil {
		t.Fatalf("start rig: %v", err)
	}
	t.Cleanup(rig.Stop)
	e := &env{rig: rig, bin: filepath.Join(bins, "edgeovn"), ipamDB: daemon.IPAMDatabase(rig)}
	e.kubelet = daemon.Kubelet(rig, node)
	e.bins = bins
	if supervised {
		if e.sd, err = daemon.NewSystemd(rig, daemon.Spec{Node: node, BinDir: bins, Extra: append(daemonFlags, extra...)}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.sd.Close() })
		e.startSupervised(ctx, t, "edgeovn")
	} else {
		e.startDaemon(ctx, t, "edgeovn", extra...)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(e.daemonLog())
		}
	})
	return e
}

// startNode starts an env and registers its Node, as kubelet does; the context ends with the
// test.
func startNode(t *testing.T) (*env, context.Context) {
	t.Helper()
	return startNodeFlags(t)
}

// startNodeFlags is startNode with edgeovn flags of the test's own.
func startNodeFlags(t *testing.T, extra ...string) (*env, context.Context) {
	t.Helper()
	e := startEnvFlags(t, false, harness.Options{}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	if err := e.kubelet.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	return e, ctx
}

// startDaemon starts edgeovn in the rig with its log in <rig dir>/<name>.log, and waits for
// CNI STATUS to succeed.
// Extra flags come last and override the defaults.
func (e *env) startDaemon(ctx context.Context, t *testing.T, name string, extra ...string) {
	t.Helper()
	var err error
	e.daemon, err = daemon.Start(ctx, e.rig, daemon.Spec{Name: name, Node: node, BinDir: e.bins, Extra: append(daemonFlags, extra...)})
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	if err := e.kubelet.WaitReady(ctx); err != nil {
		t.Fatalf("%s not ready: %v\n%s", name, err, e.daemonLog())
	}
}

// daemonFlags are the e2e suite's flags for edgeovn.
var daemonFlags = []string{"--log-level=debug",
	// A restarted daemon takes the Lease over from its dead self only after it expires.
	"--lease-duration=4s", "--lease-renew-deadline=3s", "--lease-retry-period=500ms"}

// startSupervised starts edgeovn through e.sd and waits for its READY=1 and CNI STATUS.
func (e *env) startSupervised(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	n := e.sd.Readies()
	p, err := e.sd.Start(ctx, name)
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	e.daemon = p
	if _, err := e.sd.WaitReady(ctx, n); err != nil {
		t.Fatalf("%v\n%s", err, e.daemonLog())
	}
	if err := e.kubelet.WaitReady(ctx); err != nil {
		t.Fatalf("%s not ready: %v\n%s", name, err, e.daemonLog())
	}
}

// testWriter sends the harness's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}
