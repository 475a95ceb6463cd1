package main

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// reachDeadline is how long after the daemons' start a pod may take to be reachable before
// it counts as unreachable.
const reachDeadline = 60 * time.Second

// maxAdds is how many ADDs a pod gets after the reboot, as kubelet retries a failed sandbox.
const maxAdds = 5

// flags are the flags edgeovn runs with: a restarted daemon takes its Lease back quickly.
var flags = []string{"--log-level=info", "--lease-duration=4s", "--lease-renew-deadline=3s", "--lease-retry-period=500ms"}

// result is one reboot's figures.
type result struct {
	pods        int
	boot, ovs   time.Duration // to every pod reachable; -1: not all were
	edgeovn     time.Duration // from edgeovn's start after the reboot to every pod reachable
	addP99      time.Duration
	retried     int // pods that needed more than one ADD
	unreachable int
}

func (r result) print() {
	show := func(d time.Duration) string {
		if d < 0 {
			return "never"
		}
		return d.Round(10 * time.Millisecond).String()
	}
	fmt.Printf("%6d  %14s  %14s  %14s  %10s  %12d  %16d\n", r.pods, show(r.boot), show(r.ovs), show(r.edgeovn),
		r.addP99.Round(time.Millisecond), r.retried, r.unreachable)
}

// reboot runs one reboot of a rig with n pods.
func reboot(ctx context.Context, bin string, n int, keep bool) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	rig, err := harness.Start(ctx, harness.Options{Keep: keep})
	if err != nil {
		return result{}, err
	}
	defer rig.Stop()
	if keep {
		defer fmt.Println("rig directory kept:", rig.Dir)
	}
	k := daemon.Kubelet(rig, "bench-1")
	if err := startEdgeovn(ctx, rig, k, bin, "edgeovn"); err != nil {
		return result{}, err
	}
	if err := k.EnsureNode(ctx); err != nil {
		return result{}, err
	}
	before, err := firstSandboxes(ctx, k, n)
	if err != nil {
		return result{}, err
	}
	for _, sb := range before {
		if err := podsim.RemoveNetns(sb.Netns); err != nil {
			return result{}, err
		}
	}
	bt, err := rig.Reboot(ctx)
	if err != nil {
		return result{}, err
	}
	started := time.Now()
	if err := startEdgeovn(ctx, rig, k, bin, "edgeovn-boot"); err != nil {
		return result{}, err
	}
	r, err := afterBoot(ctx, k, before, bt)
	if r.boot >= 0 {
		r.edgeovn = r.boot - started.Sub(bt.Start)
	}
	return r, err
}

func startEdgeovn(ctx context.Context, rig *harness.Rig, k *podsim.Kubelet, bin, name string) error {
	if _, err := daemon.Start(ctx, rig, daemon.Spec{Name: name, Node: k.Node, BinDir: bin, Extra: flags}); err != nil {
		return err
	}
	return k.WaitReady(ctx)
}

// firstSandboxes creates the pods and their sandboxes, a few at a time.
func firstSandboxes(ctx context.Context, k *podsim.Kubelet, n int) ([]*podsim.Sandbox, error) {
	out := make([]*podsim.Sandbox, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range out {
		g.Go(func() error {
			pod, err := k.CreatePod(gctx, "default", fmt.Sprintf("r%03d", i), nil)
			if err == nil {
				out[i], err = k.RunSandbox(gctx, pod)
			}
			return err
		})
	}
	return out, g.Wait()
}

// afterBoot re-creates every sandbox at once and measures until every pod is reachable.
func afterBoot(ctx context.Context, k *podsim.Kubelet, before []*podsim.Sandbox, bt harness.BootTimes) (result, error) {
	after := make([]*podsim.Sandbox, len(before))
	adds := make([]int, len(before))
	took := make([]time.Duration, len(before))
	var wg sync.WaitGroup
	for i, sb := range before {
		wg.Go(func() { after[i], adds[i], took[i] = recreate(ctx, k, sb.Pod) })
	}
	wg.Wait()
	defer func() {
		for _, sb := range after {
			if sb != nil {
				_ = podsim.RemoveNetns(sb.Netns)
			}
		}
	}()
	r := result{pods: len(before), boot: -1, ovs: -1}
	var live []*podsim.Sandbox
	for i, sb := range after {
		if adds[i] > 1 {
			r.retried++
		}
		if sb == nil {
			r.unreachable++
			continue
		}
		live = append(live, sb)
	}
	slices.Sort(took)
	r.addP99 = took[(len(took)*99+99)/100-1]
	rctx, cancel := context.WithDeadline(ctx, bt.Start.Add(reachDeadline))
	defer cancel()
	var last time.Time
	for _, reach := range podsim.WaitReachable(rctx, live, gateway) {
		if reach.At.IsZero() {
			r.unreachable++
		} else if reach.At.After(last) {
			last = reach.At
		}
	}
	if r.unreachable == 0 {
		r.boot, r.ovs = last.Sub(bt.Start), last.Sub(bt.OVSUp)
	}
	return r, nil
}

// recreate runs a new sandbox for the pod, retrying a failed ADD (after its DEL) up to
// maxAdds times; it returns the sandbox (nil if every ADD failed), the ADDs made and the
// last ADD's duration.
func recreate(ctx context.Context, k *podsim.Kubelet, pod *corev1.Pod) (*podsim.Sandbox, int, time.Duration) {
	var took time.Duration
	for n := 1; n <= maxAdds; n++ {
		sb, err := k.RunSandbox(ctx, pod)
		if sb != nil {
			took = sb.AddTime
		}
		if err == nil {
			return sb, n, took
		}
		if sb != nil {
			_ = k.StopSandbox(ctx, sb, true)
		}
	}
	return nil, maxAdds, took
}

// gateway is the default subnet's (ovn-default, 10.42.0.0/16) router port.
var gateway = netip.MustParseAddr("10.42.0.1")
