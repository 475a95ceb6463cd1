package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containernetworking/cni/pkg/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

func main() {
	dir := flag.String("dir", ".cache/demo", "run directory of the demo")
	bin := flag.String("bin", "bin", "directory holding edgeovn and edgeovn-cni (make build)")
	flag.Parse()
	abs, err := filepath.Abs(*dir)
	if err == nil {
		switch flag.Arg(0) {
		case "up":
			err = up(abs, *bin)
		case "down":
			err = down(abs)
		default:
			err = fmt.Errorf("usage: demo [-dir DIR] [-bin DIR] up|down")
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func up(dir, bin string) error {
	if err := harness.Preflight(); err != nil {
		return fmt.Errorf("this host cannot run the demo yet (run `make deps` as root): %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, _ = filepath.Abs(bin)
	fmt.Println("starting ovsdb-server (NB, SB, Open_vSwitch), ovn-northd, ovs-vswitchd, ovn-controller, etcd, kube-apiserver ...")
	rig, err := harness.Start(ctx, harness.Options{Dir: dir, Detach: true, Keep: true})
	if err != nil {
		return err
	}
	k := daemon.Kubelet(rig, "edge-1")
	_, err = daemon.Start(ctx, rig, daemon.Spec{Node: k.Node, BinDir: bin})
	if err != nil {
		return err
	}
	fmt.Printf("edgeovn running (log: %s)\n", filepath.Join(dir, "edgeovn.log"))
	sandboxes, err := runPods(ctx, k, dir)
	if err != nil {
		return fmt.Errorf("%w\n(tear down with: make demo-down)", err)
	}
	a, b := sandboxes[0], sandboxes[1]
	out, err := podsim.Ping(ctx, a, b.IP())
	fmt.Printf("\n$ ip netns exec %s ping -c 3 %s    # %s -> %s\n%s", a.NetnsName(), b.IP(), a.Pod.Name, b.Pod.Name, out)
	if err != nil {
		return fmt.Errorf("%w\n(tear down with: make demo-down)", err)
	}
	fmt.Printf("\nEverything is still running. Look around:\n")
	fmt.Printf("  . %s/rig.env; ip netns exec $EOVN_NETNS ovn-nbctl --db=$EOVN_NB show\n", dir)
	fmt.Printf("  %s/edgeovn ipam --db %s/ipam.db\n", bin, dir)
	fmt.Printf("Tear down with: make demo-down\n")
	return nil
}

func runPods(ctx context.Context, k *podsim.Kubelet, dir string) ([]*podsim.Sandbox, error) {
	if err := k.EnsureNode(ctx); err != nil {
		return nil, err
	}
	// As containerd does: no sandbox before the network plugin answers STATUS.
	fmt.Println("waiting for the edgeovn CNI plugin to answer STATUS (node datapath ready) ...")
	wait, cancel := context.WithTimeout(ctx, readyWait)
	err := k.WaitReady(wait)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("edgeovn's node role did not become ready in %v (see edgeovn.log): %w", readyWait, err)
	}
	var out []*podsim.Sandbox
	var netns []string
	for _, name := range []string{"demo-a", "demo-b"} {
		pod, err := k.CreatePod(ctx, "default", name, nil)
		if err != nil {
			return nil, err
		}
		sb, err := runSandbox(ctx, k, pod)
		if sb != nil {
			netns = append(netns, sb.Netns)
		}
		// Recorded before checking err, so demo-down removes even a half-made sandbox.
		if werr := os.WriteFile(filepath.Join(dir, "pod-netns"), []byte(strings.Join(netns, "\n")), 0o644); werr != nil {
			return nil, werr
		}
		if err != nil {
			return nil, err
		}
		fmt.Printf("pod default/%s: %s in netns %s (CNI ADD took %v)\n", name, sb.IP(), sb.NetnsName(), sb.AddTime.Round(time.Millisecond))
		out = append(out, sb)
	}
	return out, nil
}

// readyWait bounds the wait for STATUS; addTries bounds the ADDs of one pod, as kubelet
// retries a sandbox whose ADD failed with "try again later" (CNI code 11).
const (
	readyWait = time.Minute
	addTries  = 5
)

// runSandbox runs the pod's sandbox, again after an ADD the plugin asked to retry.
func runSandbox(ctx context.Context, k *podsim.Kubelet, pod *corev1.Pod) (*podsim.Sandbox, error) {
	for try := 1; ; try++ {
		sb, err := k.RunSandbox(ctx, pod)
		var cniErr *types.Error
		if err == nil || !errors.As(err, &cniErr) || cniErr.Code != types.ErrTryAgainLater || try == addTries {
			return sb, err
		}
		fmt.Printf("pod default/%s: the plugin asked to try again (%s), as kubelet would: try %d of %d\n", pod.Name, cniErr.Msg, try+1, addTries)
		if sb != nil {
			_ = k.StopSandbox(ctx, sb, true)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(try) * 200 * time.Millisecond):
		}
	}
}

func down(dir string) error {
	b, _ := os.ReadFile(filepath.Join(dir, "pod-netns")) // read before StopDir removes dir
	if err := harness.StopDir(dir); err != nil {
		return err
	}
	for _, p := range strings.Fields(string(b)) {
		if err := podsim.RemoveNetns(p); err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
		}
	}
	fmt.Println("demo torn down")
	return nil
}
