package e2e

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// TestHealthFollowsDatapath kills ovs-vswitchd, then ovn-controller (SIGKILL: their rows stay
// in the database and their devices in the kernel, so only a live check notices), and sees
// CNI STATUS fail with code 50 naming the daemon, and succeed again once it is restarted;
// a pod started after each recovery gets its network.
func TestHealthFollowsDatapath(t *testing.T) {
	env, ctx := startNode(t)
	runPod(ctx, t, env, "before")
	nodeJoin(ctx, t, env)
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })
	if err := cniStatus(ctx, env); err != nil {
		t.Fatalf("STATUS on a healthy node: %v", err)
	}
	for _, name := range []string{"ovs-vswitchd", "ovn-controller"} {
		p, err := env.rig.Daemon(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = p.Wait()
		var last error
		eventually(ctx, t, "STATUS fails without "+name, func() bool {
			last = cniStatus(ctx, env)
			var e *types.Error
			return errors.As(last, &e) && e.Code == types.ErrPluginNotAvailable && strings.Contains(e.Details, name)
		})
		t.Logf("STATUS without %s: %v", name, last)
		if _, err := env.rig.RestartDaemon(ctx, name); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, "STATUS recovers with "+name+" back", func() bool { return cniStatus(ctx, env) == nil })
		runPod(ctx, t, env, "after-"+name)
	}
	log := env.daemonLog()
	for _, want := range []string{`msg="node datapath not ready"`, `msg="node datapath ready"`} {
		if !strings.Contains(log, want) {
			t.Errorf("daemon log lacks %q", want)
		}
	}
	// A check caught while the killed daemon's socket still took connections reads "not
	// answering" (the connection reset); one after, "not running" (refused): either names it.
	for _, name := range []string{"ovs-vswitchd", "ovn-controller"} {
		if !strings.Contains(log, name+" not running") && !strings.Contains(log, name+" not answering") {
			t.Errorf("daemon log lacks %q or %q", name+" not running", name+" not answering")
		}
	}
}

// cniStatus asks the plugin for STATUS as containerd 2 does, every few seconds.
func cniStatus(ctx context.Context, env *env) error {
	list, err := env.kubelet.ConfList(ctx)
	if err != nil {
		return err
	}
	return libcni.NewCNIConfig([]string{env.kubelet.BinDir}, nil).GetStatusNetworkList(ctx, list)
}
