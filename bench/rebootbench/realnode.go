package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/images"
	"github.com/edgeovn/edgeovn/e2e/realpods"
)

// realNode is the real node's name in -kubelet mode.
const realNode = "bench-1"

// realResult is one real-node reboot's timeline, each moment from the first daemon's start;
// a negative reach means not every pod was reached by reachDeadline.
type realResult struct {
	pods                         int
	edgeovn, containerd, kubelet time.Duration // each answered
	firstAdd, lastAdd            time.Duration // the booted edgeovn answered them
	allReady, allReached         time.Duration
	retried, unreachableAtDead   int
}

func printRealHeader() {
	fmt.Printf("%6s  %9s  %11s  %9s  %10s  %10s  %10s  %12s  %16s  %9s  %16s\n", "pods", "edgeovn", "containerd", "kubelet",
		"first ADD", "last ADD", "all Ready", "all reached", "kubelet->reached", "ADDs > 1", "unreachable@60s")
}

func (r realResult) print() {
	show := func(d time.Duration) string {
		if d < 0 {
			return "never"
		}
		return d.Round(10 * time.Millisecond).String()
	}
	reached := time.Duration(-1)
	if r.allReached >= 0 {
		reached = r.allReached - r.kubelet
	}
	fmt.Printf("%6d  %9s  %11s  %9s  %10s  %10s  %10s  %12s  %16s  %9d  %16d\n", r.pods, show(r.edgeovn), show(r.containerd), show(r.kubelet),
		show(r.firstAdd), show(r.lastAdd), show(r.allReady), show(r.allReached), show(reached), r.retried, r.unreachableAtDead)
}

// rebootRealNode runs one reboot of a rig whose real node (kubelet, containerd) runs a
// Deployment of n testserver pods (harness.RealNode.Reboot: everything SIGKILLed at once,
// tmpfs state removed, booted in order with edgeovn before containerd and the kubelet), and
// measures until every pod answers the host and its neighbour.
func rebootRealNode(ctx context.Context, bin string, n int, keep bool) (realResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	work, err := os.MkdirTemp("", "rebootbench-")
	if err != nil {
		return realResult{}, err
	}
	defer os.RemoveAll(work)
	tars, err := images.Build(ctx, work)
	if err != nil {
		return realResult{}, err
	}
	rig, err := harness.Start(ctx, harness.Options{Keep: keep})
	if err != nil {
		return realResult{}, err
	}
	defer rig.Stop()
	if keep {
		defer fmt.Println("rig directory kept:", rig.Dir)
	}
	node, before, err := startRealPods(ctx, rig, bin, tars, n)
	if err != nil {
		return realResult{}, err
	}
	// Before the node's teardown: its drain deletes the pods, which the ReplicaSet replaces.
	defer func() {
		if cm, err := rig.Daemon("kube-controller-manager"); err == nil {
			_ = cm.Kill()
		}
	}()
	k := daemon.Kubelet(rig, realNode)
	bt, err := node.Reboot(ctx, func(ctx context.Context) error {
		_, err := startEdgeovn(ctx, rig, k, bin, "edgeovn-boot", logLevel(false))
		return err
	})
	if err != nil {
		return realResult{}, err
	}
	return afterRealBoot(ctx, rig, before, bt)
}

// startRealPods starts edgeovn, the real node, the controller-manager and the Deployment, and
// returns its pods once all are Ready.
func startRealPods(ctx context.Context, rig *harness.Rig, bin string, tars []string, n int) (*harness.RealNode, []corev1.Pod, error) {
	k := daemon.Kubelet(rig, realNode)
	if _, err := startEdgeovn(ctx, rig, k, bin, "edgeovn", logLevel(false)); err != nil {
		return nil, nil, err
	}
	node, err := rig.StartRealNode(ctx, harness.RealNodeRequest{Name: realNode, CNIConfDir: k.ConfDir, CNIBinDir: k.BinDir,
		Images: tars, SandboxImage: images.Pause})
	if err != nil {
		return nil, nil, err
	}
	if _, err := node.WaitReady(ctx, corev1.ConditionTrue); err != nil {
		return nil, nil, err
	}
	if _, err := rig.StartControllerManager(ctx, harness.ControllerManagerRequest{
		Controllers: []string{"deployment-controller", "replicaset-controller", "root-ca-certificate-publisher-controller"}}); err != nil {
		return nil, nil, err
	}
	if err := realpods.CreateDeployment(ctx, rig.Kube(), realpods.TestServerDeployment("default", "web", realNode, int32(n))); err != nil {
		return nil, nil, err
	}
	pods, err := realpods.WaitAll(ctx, rig.Kube(), "default", "web", n, func(p *corev1.Pod) bool { return realpods.Running(p) && realpods.Ready(p) })
	return node, pods, err
}

// afterRealBoot measures the pods' return: every pod Ready again in a new container (the API's
// view), and every pod answering the host's /healthz and exchanging with its neighbour (the
// network's view), until reachDeadline after the boot; then each pod is asked again.
func afterRealBoot(ctx context.Context, rig *harness.Rig, before []corev1.Pod, bt harness.NodeBootTimes) (realResult, error) {
	r := realResult{pods: len(before), edgeovn: bt.UnitsUp.Sub(bt.Start), containerd: bt.ContainerdUp.Sub(bt.Start), kubelet: bt.KubeletUp.Sub(bt.Start)}
	deadline := bt.Start.Add(reachDeadline)
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	client := realpods.NewClient(rig.DialContext)
	var ready time.Time
	var wg sync.WaitGroup
	wg.Go(func() {
		old := map[string]string{}
		for _, p := range before {
			old[p.Name] = p.Status.ContainerStatuses[0].ContainerID
		}
		_, err := realpods.WaitAll(rctx, rig.Kube(), "default", "web", len(before), func(p *corev1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].ContainerID != old[p.Name] && realpods.Ready(p)
		})
		if err == nil {
			ready = time.Now()
		}
	})
	reached := make([]time.Time, len(before))
	for i := range before {
		wg.Go(func() { reached[i] = reachPod(rctx, client, &before[i], &before[(i+1)%len(before)]) })
	}
	wg.Wait()
	r.allReady, r.allReached = since(bt.Start, ready), 0
	for _, at := range reached {
		if at.IsZero() {
			r.allReached = -1
			break
		}
		r.allReached = max(r.allReached, at.Sub(bt.Start))
	}
	r.unreachableAtDead = unreachableRealAt(ctx, client, before, deadline)
	log, err := rig.Daemon("edgeovn-boot")
	if err != nil {
		return r, err
	}
	first, last, perPod := addTimes(log.Log)
	r.firstAdd, r.lastAdd = since(bt.Start, first), since(bt.Start, last)
	for _, n := range perPod {
		if n > 1 {
			r.retried++
		}
	}
	return r, nil
}

func since(start, at time.Time) time.Duration {
	if at.IsZero() {
		return -1
	}
	return at.Sub(start)
}

// reachPod tries the pod until it answers the host and exchanges with its neighbour, and
// returns when; zero if not before ctx ends.
func reachPod(ctx context.Context, c *realpods.Client, p, neighbour *corev1.Pod) time.Time {
	from, _ := realpods.IP(p)
	to, _ := realpods.IP(neighbour)
	for ctx.Err() == nil {
		try, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := c.Healthz(try, from)
		if err == nil {
			_, err = c.Dial(try, realpods.DialRequest{From: from, Proto: "tcp", To: realpods.ServerAddr(to)})
		}
		cancel()
		if err == nil {
			return time.Now()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return time.Time{}
}

// unreachableRealAt asks every pod's /healthz from the host again at the moment at and counts
// those that do not answer within finalProbe.
func unreachableRealAt(ctx context.Context, c *realpods.Client, pods []corev1.Pod, at time.Time) int {
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(at)):
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	n := 0
	for i := range pods {
		wg.Go(func() {
			ip, _ := realpods.IP(&pods[i])
			pctx, cancel := context.WithTimeout(ctx, finalProbe)
			defer cancel()
			if c.Healthz(pctx, ip) != nil {
				mu.Lock()
				n++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return n
}

// addTimes reads an edgeovn log: the first and last "pod network added" (slog text, time=
// first) and how many ADDs each pod got.
func addTimes(path string) (first, last time.Time, perPod map[string]int) {
	perPod = map[string]int{}
	b, _ := os.ReadFile(path)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if !strings.Contains(line, `msg="pod network added"`) || len(f) == 0 {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(f[0], "time="))
		if err != nil {
			continue
		}
		if first.IsZero() {
			first = at
		}
		last = at
		for _, kv := range f {
			if pod, ok := strings.CutPrefix(kv, "pod="); ok {
				perPod[pod]++
			}
		}
	}
	return first, last, perPod
}
