package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/vishvananda/netlink"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

func TestStatusFollowsReady(t *testing.T) {
	r := newRig(t, nil)
	r.ready.Store(false)
	list := r.confList("1.1.0")
	err := r.cni.GetStatusNetworkList(context.Background(), list)
	if got := cniCode(t, err); got != types.ErrPluginNotAvailable {
		t.Errorf("STATUS before ready: code %d, want %d (%v)", got, types.ErrPluginNotAvailable, err)
	}
	podNS := newPodNS(t)
	r.pods.set("default", "early", testNetwork(30, "default", "early"))
	_, err = r.cni.AddNetworkList(context.Background(), list, r.runtimeConf(containerID(30), podNS.Path(), "default", "early"))
	if got := cniCode(t, err); got != types.ErrTryAgainLater {
		t.Errorf("ADD before ready: code %d, want %d (%v)", got, types.ErrTryAgainLater, err)
	}
	r.ready.Store(true)
	if err := r.cni.GetStatusNetworkList(context.Background(), list); err != nil {
		t.Errorf("STATUS after ready: %v", err)
	}
}

func TestSocketIsRootOnly(t *testing.T) {
	r := newRig(t, nil)
	fi, err := os.Stat(r.sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
	}
	di, err := os.Stat(filepath.Dir(r.sock))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("socket directory mode %v, want 0700", di.Mode().Perm())
	}
}

func TestServeReplacesStaleSocketOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		skip.Now(t, "needs root")
	}
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = ln.Close() // a dead daemon's socket file stays behind
	if l, err := listen(stale); err != nil {
		t.Errorf("listen over a stale socket: %v", err)
	} else {
		defer l.Close()
		if _, err := listen(stale); err == nil {
			t.Errorf("listen over a live socket succeeded")
		}
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := listen(file); err == nil {
		t.Errorf("listen over a regular file succeeded")
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Errorf("regular file was replaced")
	}
}

// TestGCRemovesOnlyStaleAttachments makes the stale attachment with a runtime whose cache
// is lost (so libcni cannot DEL it first) and leaves a veth without a port behind: only the
// daemon's GC can remove them.
func TestGCRemovesOnlyStaleAttachments(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	list := r.confList("1.1.0")
	forgetful := libcni.NewCNIConfigWithCacheDir(r.cni.Path, t.TempDir(), nil)
	var rts []*libcni.RuntimeConf
	for i, name := range []string{"keep", "drop"} {
		podNS := newPodNS(t)
		r.pods.set("default", name, testNetwork(40+i, "default", name))
		rt := r.runtimeConf(containerID(40+i), podNS.Path(), "default", name)
		runtime := r.cni
		if name == "drop" {
			runtime = forgetful
		}
		if _, err := runtime.AddNetworkList(ctx, list, rt); err != nil {
			t.Fatalf("ADD %s: %v", name, err)
		}
		rts = append(rts, rt)
	}
	// A port that is not a pod port (no container ID) must survive GC.
	if err := r.ports.AddPort(ctx, PortRequest{Name: "ovn0", IfaceID: "node-a"}); err != nil {
		t.Fatal(err)
	}
	orphan := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: podnet.HostIfName(containerID(49))}, PeerName: "orphanpeer"}
	if err := netlink.LinkAdd(orphan); err != nil {
		t.Fatalf("create orphan veth: %v", err)
	}
	valid := []types.GCAttachment{{ContainerID: rts[0].ContainerID, IfName: rts[0].IfName}}
	if err := r.cni.GCNetworkList(ctx, list, &libcni.GCArgs{ValidAttachments: valid}); err != nil {
		t.Fatalf("GC: %v", err)
	}
	keepIf, dropIf := podnet.HostIfName(rts[0].ContainerID), podnet.HostIfName(rts[1].ContainerID)
	for name, want := range map[string]bool{keepIf: true, dropIf: false, "ovn0": true} {
		if _, ok := r.ports.get(name); ok != want {
			t.Errorf("port %s present %v after GC, want %v", name, ok, want)
		}
	}
	hostIfs, err := podnet.ListHostIfs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(hostIfs) != 1 || hostIfs[0] != keepIf {
		t.Errorf("host veths after GC = %v, want [%s]", hostIfs, keepIf)
	}
}
