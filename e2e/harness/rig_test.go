package harness

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// startRig starts a rig or skips the test with Preflight's reason.
func startRig(t *testing.T, ctx context.Context, o Options) *Rig {
	t.Helper()
	if err := Preflight(); err != nil {
		skip.Now(t, "%v", err)
	}
	r, err := Start(ctx, o)
	if err != nil {
		t.Fatalf("start rig: %v", err)
	}
	t.Cleanup(r.Stop)
	return r
}

// TestRig is the rig's self-test: the API server answers, two pods on one logical switch
// ping each other through OVN on the userspace datapath, and Stop leaves nothing behind.
func TestRig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := startRig(t, ctx, Options{})

	if _, err := r.Kube().CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("list namespaces through the rig's API server: %v", err)
	}
	checkKubeconfig(t, ctx, r)

	configureChassis(t, ctx, r)
	a := testPod{name: "pa", mac: "0a:58:0a:2a:00:0a", ip: "10.42.0.10", netns: r.Netns + "-pa"}
	b := testPod{name: "pb", mac: "0a:58:0a:2a:00:0b", ip: "10.42.0.11", netns: r.Netns + "-pb"}
	run(t, ctx, r, "ovn-nbctl", "--db="+r.NBEndpoint, "ls-add", "sw0")
	for _, p := range []testPod{a, b} {
		addPod(t, ctx, r, p)
	}
	for _, p := range []testPod{a, b} {
		waitOVNInstalled(t, ctx, r, p)
	}
	if out, err := runInPod(ctx, a, "ping", "-c", "3", "-W", "1", b.ip); err != nil {
		t.Fatalf("ping %s -> %s: %v\n%s", a.name, b.ip, err, out)
	}

	assertTeardown(t, r)
}

// checkKubeconfig uses the written kubeconfig the way edgeovn will, from inside the netns.
func checkKubeconfig(t *testing.T, ctx context.Context, r *Rig) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", r.Kubeconfig)
	if err != nil {
		t.Fatalf("load kubeconfig %s: %v", r.Kubeconfig, err)
	}
	cfg.Dial = r.DialContext
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("get namespace default with kubeconfig %s: %v", r.Kubeconfig, err)
	}
}

// assertTeardown stops the rig and checks that no process it started is alive, and that the
// namespace and the run directory are gone.
func assertTeardown(t *testing.T, r *Rig) {
	t.Helper()
	procs := append([]*Process(nil), r.procs...)
	if len(procs) < 8 {
		t.Fatalf("rig started %d processes, want at least 8", len(procs))
	}
	if err := r.Close(); err != nil {
		t.Fatalf("stop rig: %v", err)
	}
	for _, p := range procs {
		if err := syscall.Kill(p.PID, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still exists after Stop: kill 0 = %v", p.Name, p.PID, err)
		}
	}
	if _, err := os.Stat(r.NetnsPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("netns %s still exists after Stop: %v", r.NetnsPath, err)
	}
	if _, err := os.Stat(r.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run dir %s still exists after Stop: %v", r.Dir, err)
	}
}

// TestStopDir starts a detached rig and tears it down the way `make demo-down` does.
func TestStopDir(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("/tmp", "eovn-sd-") // t.TempDir() is too long for sockets
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := startRig(t, ctx, Options{Dir: dir, Detach: true})
	recs, err := readPidRecords(dir)
	if err != nil || len(recs) != len(r.procs) {
		t.Fatalf("pids file: %d records, %v; want %d", len(recs), err, len(r.procs))
	}
	if _, err := Start(ctx, Options{Dir: dir}); !errors.Is(err, ErrDirInUse) {
		t.Fatalf("second Start in %s: err = %v, want ErrDirInUse", dir, err)
	}

	if err := StopDir(dir); err != nil {
		t.Fatalf("StopDir: %v", err)
	}
	for _, rec := range recs {
		if rec.alive() {
			t.Errorf("%s (pid %d) alive after StopDir", rec.Name, rec.PID)
		}
	}
	if _, err := os.Stat(r.NetnsPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("netns %s still exists after StopDir: %v", r.NetnsPath, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dir %s still exists after StopDir: %v", dir, err)
	}
	if err := StopDir(dir); !errors.Is(err, ErrNoRig) {
		t.Errorf("StopDir again: err = %v, want ErrNoRig", err)
	}
}

// TestStartFailure: a component that dies while starting fails Start with ErrNotReady and the
// tail of its log, and everything already started is torn down.
func TestStartFailure(t *testing.T) {
	if err := Preflight(); err != nil {
		skip.Now(t, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("/tmp", "eovn-sf-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	fake := filepath.Join(dir, "fake-apiserver")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'fake apiserver: boom'\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	r, err := Start(ctx, Options{Dir: dir, KubeAPIServer: fake, Keep: true})
	if r != nil || !errors.Is(err, ErrNotReady) {
		t.Fatalf("Start with a dying kube-apiserver = %v, %v; want ErrNotReady", r, err)
	}
	t.Logf("Start failed as it should: %v", err)
	if !strings.Contains(err.Error(), "kube-apiserver") || !strings.Contains(err.Error(), "fake apiserver: boom") {
		t.Errorf("error does not name the component and show its log: %v", err)
	}
	recs, err := readPidRecords(dir)
	if err != nil || len(recs) != 8 {
		t.Fatalf("pids file after failed start: %d records, %v; want 8", len(recs), err)
	}
	for _, rec := range recs {
		if rec.alive() {
			t.Errorf("%s (pid %d) alive after failed Start", rec.Name, rec.PID)
		}
	}
	name, err := os.ReadFile(filepath.Join(dir, netnsFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(netnsDir, strings.TrimSpace(string(name)))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("netns %s left after failed Start: %v", name, err)
	}
}
