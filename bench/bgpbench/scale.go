package main

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/bgp"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/benchkit"
)

// inFlight is how many API requests the bench keeps in flight when it creates or annotates
// the scale pods.
const inFlight = 32

// usage is edgeovn's and its speaker's resident memory and CPU over an idle window.
type usage struct {
	rssKB, speakerKB int
	cpu, speakerCPU  time.Duration // utime+stime over idle
	idle             time.Duration
	loadavg          string
}

// burstResult is the burst: n pods annotated at once, until each peer's RIB held all.
type burstResult struct {
	n          int
	patched    time.Duration // the last annotation answered by the API server
	frr, gobgp time.Duration // 0: that peer not run
}

// scalePods creates n pods on the host, without sandboxes (the announcement reads the API
// objects; the controller allocates their addresses without one), and waits until every one
// is allocated.
func (w *world) scalePods(ctx context.Context, n int) ([]string, error) {
	names := make([]string, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(inFlight)
	for i := range n {
		names[i] = fmt.Sprintf("scale-%d", i)
		g.Go(func() error {
			_, err := w.kubelet.CreatePod(gctx, "default", names[i], nil)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	deadline, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for {
		list, err := w.c.Central.Kube().CoreV1().Pods("default").List(deadline, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		allocated := 0
		for _, p := range list.Items {
			if strings.HasPrefix(p.Name, "scale-") && p.Annotations["ovn.kubernetes.io/allocated"] == "true" {
				allocated++
			}
		}
		if allocated >= n {
			return names, nil
		}
		select {
		case <-deadline.Done():
			return nil, fmt.Errorf("%d of %d scale pods allocated: %w", allocated, n, deadline.Err())
		case <-time.After(time.Second):
		}
	}
}

// burst annotates every pod of names bgp=local at once (inFlight patches in flight) and
// times, from the first patch sent, until each peer's RIB holds a route for each.
func (w *world) burst(ctx context.Context, names []string) (burstResult, error) {
	r := burstResult{n: len(names)}
	kube := w.c.Central.Kube().CoreV1().Pods("default")
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, bgp.Annotation, bgp.PolicyLocal))
	var patched atomic.Int64
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(inFlight)
	sent := make(chan error, 1)
	go func() {
		for _, name := range names {
			g.Go(func() error {
				_, err := kube.Patch(gctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
				patched.Store(int64(time.Since(start)))
				return err
			})
		}
		sent <- g.Wait()
	}()
	var err error
	r.frr, r.gobgp, err = w.waitCounts(ctx, start, func(n int) bool { return n >= len(names) })
	if werr := <-sent; werr != nil {
		return r, fmt.Errorf("burst of %d pods: annotate: %w", len(names), werr)
	}
	r.patched = time.Duration(patched.Load())
	if err != nil {
		return r, fmt.Errorf("burst of %d pods: FRR after %v, gobgpd after %v: %w", len(names), r.frr, r.gobgp, err)
	}
	return r, nil
}

// waitCounts waits until the number of routes in each peer's RIB satisfies ok, and returns
// when each did, since start.
func (w *world) waitCounts(ctx context.Context, start time.Time, ok func(int) bool) (frr, gobgp time.Duration, err error) {
	host := netip.MustParseAddr(hostAddr)
	err = until(ctx, func() bool {
		if frr == 0 {
			if n, err := w.frr.PrefixesFrom(ctx, host); err == nil && ok(n) {
				frr = time.Since(start)
			}
		}
		if w.gobgpd != nil && gobgp == 0 {
			if n, err := w.gobgpd.Destinations(ctx); err == nil && ok(n) {
				gobgp = time.Since(start)
			}
		}
		return frr > 0 && (w.gobgpd == nil || gobgp > 0)
	})
	return frr, gobgp, err
}

// subnetBurst annotates the pods' Subnet (ovn-default) bgp=local, one API write for all n
// pods: the speaker's own rate, without the API's per-pod patches; then removes the
// annotation: the withdrawal of all n. Each is timed until each peer's RIB holds n (then 0).
func (w *world) subnetBurst(ctx context.Context, n int) (announce, withdraw burstResult, err error) {
	dyn, err := dynamic.NewForConfig(w.c.Central.RESTConfig())
	if err != nil {
		return announce, withdraw, err
	}
	subnets := dyn.Resource(kubeovn.SubnetResource)
	annotate := func(v string) (burstResult, error) {
		r := burstResult{n: n}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, bgp.Annotation, v)
		start := time.Now()
		if _, err := subnets.Patch(ctx, kubeovn.DefaultSubnet, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return r, fmt.Errorf("annotate subnet %s: %w", kubeovn.DefaultSubnet, err)
		}
		r.patched = time.Since(start)
		want := func(got int) bool { return got >= n }
		if v == "null" {
			want = func(got int) bool { return got == 0 }
		}
		r.frr, r.gobgp, err = w.waitCounts(ctx, start, want)
		return r, err
	}
	if announce, err = annotate(fmt.Sprintf("%q", bgp.PolicyLocal)); err != nil {
		return announce, withdraw, err
	}
	withdraw, err = annotate("null")
	return announce, withdraw, err
}

// usage reads edgeovn's and its speaker's VmRSS after settle, then their CPU over idle.
func (w *world) usage(ctx context.Context, settle, idle time.Duration) (usage, error) {
	u := usage{idle: idle}
	if err := sleep(ctx, settle); err != nil {
		return u, err
	}
	speaker := w.speakerPID()
	var err error
	if u.rssKB, err = benchkit.VmRSS(w.daemon.PID); err != nil {
		return u, err
	}
	c0, err := benchkit.CPUTime(w.daemon.PID)
	if err != nil {
		return u, err
	}
	var s0 time.Duration
	if speaker != 0 {
		u.speakerKB, _ = benchkit.VmRSS(speaker)
		s0, _ = benchkit.CPUTime(speaker)
	}
	if err := sleep(ctx, idle); err != nil {
		return u, err
	}
	c1, err := benchkit.CPUTime(w.daemon.PID)
	if err != nil {
		return u, err
	}
	u.cpu = c1 - c0
	if speaker != 0 {
		s1, err := benchkit.CPUTime(speaker)
		if err != nil {
			return u, fmt.Errorf("edgeovn-bgp %d ended in the idle window: %w", speaker, err)
		}
		u.speakerCPU = s1 - s0
	}
	u.loadavg = benchkit.LoadAvg()
	return u, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func printScale(n, peers int, off, on usage, b, subnetOn, subnetOff burstResult) {
	peerNames := "FRR 8.4"
	if peers > 1 {
		peerNames = "FRR 8.4 and gobgpd"
	}
	fmt.Printf("\nbgpbench -scale: 1 host, %d pods (API objects allocated by the controller, no sandboxes), peers: %s\n\n", n, peerNames)
	fmt.Println("| | edgeovn VmRSS | edgeovn-bgp VmRSS | both | edgeovn idle CPU | edgeovn-bgp idle CPU | load average |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---|")
	for _, r := range []struct {
		when string
		u    usage
	}{{"BGP off (no neighbour)", off}, {fmt.Sprintf("BGP on, %d peer(s), %d pods announced", peers, n), on}} {
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", r.when, mib(r.u.rssKB), mib(r.u.speakerKB), mib(r.u.rssKB+r.u.speakerKB),
			cpuShare(r.u.cpu, r.u.idle, r.u.rssKB), cpuShare(r.u.speakerCPU, r.u.idle, r.u.speakerKB), r.u.loadavg)
	}
	fmt.Printf("\nburst: %d pods annotated %s=%s at once (%d patches in flight, the last answered after %s)\n", n, bgp.Annotation, bgp.PolicyLocal, inFlight, benchkit.Ms(b.patched))
	b.printPeers("in")
	fmt.Printf("subnet %s annotated %s=%s (one write, answered after %s):\n", kubeovn.DefaultSubnet, bgp.Annotation, bgp.PolicyLocal, benchkit.Ms(subnetOn.patched))
	subnetOn.printPeers("in")
	fmt.Printf("its annotation removed (answered after %s):\n", benchkit.Ms(subnetOff.patched))
	subnetOff.printPeers("withdrawn from")
}

// printPeers prints, for each peer, when the burst was complete and the rate.
func (b burstResult) printPeers(how string) {
	fmt.Printf("  all %d /32s %s FRR's RIB after %s: %.0f pods/s\n", b.n, how, benchkit.Ms(b.frr), float64(b.n)/b.frr.Seconds())
	if b.gobgp > 0 {
		fmt.Printf("  all %d /32s %s gobgpd's RIB after %s: %.0f pods/s\n", b.n, how, benchkit.Ms(b.gobgp), float64(b.n)/b.gobgp.Seconds())
	}
}

func mib(kb int) string {
	if kb == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
}

// cpuShare is cpu as a share of one core over idle ("-": no such process, rssKB 0).
func cpuShare(cpu, idle time.Duration, rssKB int) string {
	if rssKB == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f%% (%s over %s)", 100*cpu.Seconds()/idle.Seconds(), cpu, idle)
}
