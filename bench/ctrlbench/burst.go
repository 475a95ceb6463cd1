package main

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/e2e/benchkit"
)

// createParallel is how many creates the bench has in flight: enough that the API server, not
// the bench, sets the pace of creation.
const createParallel = 64

// burstResult is one burst of pods created at once.
type burstResult struct {
	pods     int
	created  time.Duration   // first create sent to the last one answered
	all      time.Duration   // first create sent to every pod annotated and its port present
	perPod   []time.Duration // each pod's create sent to the bench seeing it annotated
	creates  []time.Duration // each pod's create sent to answered
	after    []time.Duration // each pod's create answered to the bench seeing it annotated
	loadavg  string          // at the end
	creating time.Time
	profile  string // where its CPU profile went, or why not
	cpu      cpuShare
	calls    string // the API requests the burst cost, or why not read
}

// profileSpan is how long a burst's CPU profile runs.
const profileSpan = 10 * time.Second

// traceSpan is how long a burst's execution trace runs (its first seconds).
const traceSpan = 5 * time.Second

// burst creates n pods at once and times them until each is annotated and has its port.
// A CPU profile (-profile) covers its first profileSpan.
func (b *bench) burst(ctx context.Context, name string, n int) (burstResult, error) {
	r := burstResult{pods: n}
	profiled, traced := b.prof.cpu(ctx, name, profileSpan), b.prof.trace(ctx, name, traceSpan)
	cpu0 := b.snapshotCPU()
	calls0, callsErr := b.readAPICalls(ctx)
	names, sent, answered, err := b.create(ctx, n)
	if err != nil {
		return r, err
	}
	r.creating = sent[names[0]]
	for _, t := range sent {
		r.creating = minTime(r.creating, t)
	}
	r.created = time.Since(r.creating)
	if err := until(ctx, fmt.Sprintf("%d pods annotated with their ports", n), func() bool { return b.allDone(names) }); err != nil {
		return r, err
	}
	r.cpu = b.snapshotCPU().since(cpu0)
	r.calls = b.apiCallsSince(ctx, calls0, callsErr, n)
	var last time.Time
	for _, name := range names {
		a, _ := b.seen.at(name)
		last = maxTime(last, a)
		if !b.cfg.floor {
			p, _ := b.ports.at(annotation.PortName(namespace, name))
			last = maxTime(last, p)
		}
		r.perPod = append(r.perPod, a.Sub(sent[name]))
		r.creates = append(r.creates, answered[name].Sub(sent[name]))
		r.after = append(r.after, a.Sub(answered[name]))
	}
	r.all = last.Sub(r.creating)
	r.loadavg = benchkit.LoadAvg()
	r.profile = strings.TrimSpace(profiled() + "\n" + traced())
	return r, nil
}

// create creates n new pods on the node, createParallel at a time, and returns their names,
// when each create was sent and when it was answered.
func (b *bench) create(ctx context.Context, n int) ([]string, map[string]time.Time, map[string]time.Time, error) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("p-%04d", b.number+i)
	}
	b.number += n
	var mu sync.Mutex
	sent, answered := make(map[string]time.Time, n), make(map[string]time.Time, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(createParallel)
	for _, name := range names {
		g.Go(func() error {
			t := time.Now()
			if _, err := b.cl.Kube.CoreV1().Pods(namespace).Create(gctx, pod(name), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create pod %s: %w", name, err)
			}
			done := time.Now()
			mu.Lock()
			sent[name], answered[name] = t, done
			mu.Unlock()
			return nil
		})
	}
	return names, sent, answered, g.Wait()
}

func (b *bench) allDone(names []string) bool {
	for _, name := range names {
		if _, ok := b.seen.at(name); !ok {
			return false
		}
		if _, ok := b.ports.at(annotation.PortName(namespace, name)); !ok && !b.cfg.floor {
			return false
		}
	}
	return true
}

// fill creates pods until the namespace holds total, and waits until all are allocated.
func (b *bench) fill(ctx context.Context, total int) error {
	if b.number >= total {
		return nil
	}
	r, err := b.burst(ctx, "fill", total-b.number)
	if err != nil {
		return fmt.Errorf("fill to %d pods: %w", total, err)
	}
	fmt.Printf("\nfilled to %d pods: %d more created at once, all annotated with ports in %s (%.1f pods/s), load average %s\n",
		total, r.pods, benchkit.Ms(r.all), r.rate(), r.loadavg)
	if r.profile != "" {
		fmt.Println(r.profile)
	}
	return nil
}

// apiCallsSince says what the burst of n pods cost the API server since calls0.
func (b *bench) apiCallsSince(ctx context.Context, calls0 apiCalls, err0 error, n int) string {
	calls, err := b.readAPICalls(ctx)
	if err = cmp.Or(err0, err); err != nil {
		return "API requests over the burst: not read: " + err.Error()
	}
	return calls.since(calls0, n)
}

func (r burstResult) rate() float64 { return float64(r.pods) / r.all.Seconds() }

func (r burstResult) print() {
	fmt.Printf("\n%d pods created at once (%d creates in flight) on one node; until every pod is annotated allocated and its northbound port exists\n\n", r.pods, createParallel)
	fmt.Println("| pods | creates answered | all annotated with ports | pods/s | last create answered to all done | per pod create to annotated p50 | p95 | max | load average |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	fmt.Printf("| %d | %s | %s | %.1f | %s | %s | %s | %s | %s |\n", r.pods, benchkit.Ms(r.created), benchkit.Ms(r.all), r.rate(), benchkit.Ms(max(0, r.all-r.created)),
		benchkit.Ms(benchkit.Pct(r.perPod, 50)), benchkit.Ms(benchkit.Pct(r.perPod, 95)), benchkit.Ms(benchkit.Pct(r.perPod, 100)), r.loadavg)
	fmt.Printf("\nwhere each pod's time goes: its create sent to answered p50 %s, p95 %s; answered to annotated p50 %s, p95 %s\n",
		benchkit.Ms(benchkit.Pct(r.creates, 50)), benchkit.Ms(benchkit.Pct(r.creates, 95)), benchkit.Ms(benchkit.Pct(r.after, 50)), benchkit.Ms(benchkit.Pct(r.after, 95)))
	fmt.Println(r.cpu)
	fmt.Println(r.calls)
	fmt.Println("\ngoals: >= 200 pods/s, p95 <= 500 ms")
	if r.profile != "" {
		fmt.Println(r.profile)
	}
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.PodSpec{NodeName: nodeName, AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}}}}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
