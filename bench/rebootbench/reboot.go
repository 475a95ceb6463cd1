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
var flags = []string{"--lease-duration=4s", "--lease-renew-deadline=3s", "--lease-retry-period=500ms"}

// bootFlags are the booted edgeovn's own flags: its log level and the profiles.
func bootFlags(o options) []string {
	f := []string{logLevel(o.steps)}
	if o.pprof != "" {
		f = append(f, "--pprof")
	}
	return f
}

// logLevel is the booted edgeovn's: debug logs each ADD's steps, which -steps prints.
func logLevel(steps bool) string {
	if steps {
		return "--log-level=debug"
	}
	return "--log-level=info"
}

// result is one reboot's figures.
type result struct {
	pods        int
	boot, ovs   time.Duration // to every pod reachable; -1: not all were
	edgeovn     time.Duration // from edgeovn's start after the reboot to every pod reachable
	addP99      time.Duration
	retried     int // pods that needed more than one ADD
	unreachable int // pods that did not reach their gateway at reachDeadline
	noSandbox   int // of which: every ADD failed
	timeline    timeline
}

func (r result) print() {
	show := func(d time.Duration) string {
		if d < 0 {
			return "never"
		}
		return d.Round(10 * time.Millisecond).String()
	}
	fmt.Printf("%6d  %14s  %14s  %15s  %10s  %9d  %16s\n", r.pods, show(r.boot), show(r.ovs), show(r.edgeovn),
		r.addP99.Round(time.Millisecond), r.retried, fmt.Sprintf("%d (%d no ADD)", r.unreachable, r.noSandbox))
}

// reboot runs one reboot of a rig with n pods.
func reboot(ctx context.Context, bin string, n int, o options) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	rig, err := harness.Start(ctx, harness.Options{Keep: o.keep})
	if err != nil {
		return result{}, err
	}
	defer rig.Stop()
	if o.keep {
		defer fmt.Println("rig directory kept:", rig.Dir)
	}
	k := daemon.Kubelet(rig, "bench-1")
	if _, err := startEdgeovn(ctx, rig, k, bin, "edgeovn", logLevel(false)); err != nil {
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
	var tl timeline
	tl.bootCPU = sampleCPU(nil)
	bt, err := rig.RebootUnits(ctx, func(ctx context.Context) error {
		tl.edgeovnStart = time.Now()
		var err error
		tl.edgeovn, err = startEdgeovn(ctx, rig, k, bin, "edgeovn-boot", bootFlags(o)...)
		tl.edgeovnReady = time.Now()
		return err
	})
	if err != nil {
		return result{}, err
	}
	tl.boot = bt
	var prof *profiler
	if o.pprof != "" {
		if prof, err = newProfiler(o.pprof, o.pprofSeconds, rig); err != nil {
			return result{}, err
		}
	}
	r, err := afterBoot(ctx, k, before, &tl, rig.Processes(), prof)
	if err == nil && o.steps {
		tl.steps, err = readSteps(tl.edgeovn.Log) // before the rig's directory goes
	}
	if r.boot >= 0 {
		r.edgeovn = r.boot - tl.edgeovnStart.Sub(bt.Start)
	}
	r.timeline = tl
	return r, err
}

// startEdgeovn starts edgeovn and waits for CNI STATUS to say ready.
func startEdgeovn(ctx context.Context, rig *harness.Rig, k *podsim.Kubelet, bin, name string, extra ...string) (*harness.Process, error) {
	p, err := daemon.Start(ctx, rig, daemon.Spec{Name: name, Node: k.Node, BinDir: bin, Extra: append(extra, flags...)})
	if err != nil {
		return nil, err
	}
	return p, k.WaitReady(ctx)
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

// afterBoot re-creates every sandbox at once and measures until every pod is reachable:
// each pod, once its ADD succeeded, pings its gateway, then its neighbour (the next pod's
// address), until 60 s after the daemons' start.
func afterBoot(ctx context.Context, k *podsim.Kubelet, before []*podsim.Sandbox, tl *timeline, procs []*harness.Process, prof *profiler) (result, error) {
	bt := tl.boot
	rctx, cancel := context.WithDeadline(ctx, bt.Start.Add(reachDeadline))
	defer cancel()
	pods := make([]podRun, len(before))
	cpu := sampleCPU(procs)
	tl.bootCPU = bootUse(tl.bootCPU, cpu)
	tl.burst = time.Now()
	prof.startCPU(ctx)
	var wg sync.WaitGroup
	for i, sb := range before {
		neighbour := before[(i+1)%len(before)].IP()
		wg.Go(func() { pods[i] = runPod(ctx, rctx, k, sb.Pod, neighbour) })
	}
	wg.Wait()
	tl.cpu = cpu.since(procs)
	tl.pods = pods
	select { // for the timeline; the burst did not wait for it
	case tl.apiReadyz = <-bt.APIReadyz:
	case <-time.After(10 * time.Second):
	}
	if err := prof.finish(ctx); err != nil {
		return result{}, err
	}
	r := result{pods: len(before)}
	var last time.Time
	var took []time.Duration
	defer func() {
		for _, p := range pods {
			if p.sb != nil {
				_ = podsim.RemoveNetns(p.sb.Netns)
			}
		}
	}()
	for _, p := range pods {
		took = append(took, p.took)
		if p.adds > 1 {
			r.retried++
		}
		if p.neighbour.After(last) {
			last = p.neighbour
		}
	}
	slices.Sort(took)
	r.addP99 = took[(len(took)*99+99)/100-1]
	r.boot, r.ovs = -1, -1
	if allReached(pods) {
		r.boot, r.ovs = last.Sub(bt.Start), last.Sub(bt.OVSUp)
	}
	r.unreachable = unreachableAt(ctx, pods, bt.Start.Add(reachDeadline))
	for _, p := range pods {
		if p.sb == nil {
			r.noSandbox++
		}
	}
	return r, nil
}

// finalProbe bounds the probe of each pod at reachDeadline.
const finalProbe = 5 * time.Second

// unreachableAt probes every pod's gateway again at the moment at (a pod reached once may
// have been cut off since: issue 29's pods were) and counts those that do not answer within
// finalProbe, and those that never got a sandbox.
func unreachableAt(ctx context.Context, pods []podRun, at time.Time) int {
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(at)):
	}
	ctx, cancel := context.WithTimeout(ctx, finalProbe)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	for _, p := range pods {
		wg.Go(func() {
			if p.sb == nil || podsim.ReachAll(ctx, p.sb, gateway).IsZero() {
				mu.Lock()
				n++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return n
}

// podRun is one pod's life after the reboot.
type podRun struct {
	sb                 *podsim.Sandbox
	adds               int
	took               time.Duration // its last ADD
	added              time.Time     // when its last ADD returned
	gateway, neighbour time.Time     // when it reached each; zero: not before the deadline
}

func runPod(ctx, reach context.Context, k *podsim.Kubelet, pod *corev1.Pod, neighbour netip.Addr) podRun {
	var p podRun
	p.sb, p.adds, p.took = recreate(ctx, k, pod)
	p.added = time.Now()
	if p.sb == nil {
		return p
	}
	if p.gateway = podsim.ReachAll(reach, p.sb, gateway); !p.gateway.IsZero() {
		p.neighbour = podsim.ReachAll(reach, p.sb, neighbour)
	}
	return p
}

func allReached(pods []podRun) bool {
	return !slices.ContainsFunc(pods, func(p podRun) bool { return p.neighbour.IsZero() })
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
