package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/realpods"
)

// sample is the create-to-Running time of every pod of a network's rounds, and of each round.
type sample struct {
	each []time.Duration // sorted
	all  []time.Duration // per round: the first create to the last pod Running
	load []string        // per round: the machine's 1-minute load average at its end
}

func (s *sample) add(r sample) {
	s.each = append(s.each, r.each...)
	slices.Sort(s.each)
	s.all = append(s.all, r.all...)
	s.load = append(s.load, r.load...)
}

func (s sample) pct(p int) time.Duration { return benchkit.Pct(s.each, p) }

func (s sample) row(name string) {
	var all []string
	for _, d := range s.all {
		all = append(all, ms(d))
	}
	fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", name, ms(s.pct(50)), ms(s.pct(95)), ms(s.each[len(s.each)-1]),
		strings.Join(all, ", "), strings.Join(s.load, ", "))
}

// loadAverage is the first field of /proc/loadavg: other work on a shared machine slows
// runc and the shims for both networks alike.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// createAtOnce creates the pods concurrently in their own namespace and times each from just
// before its create call to the moment a watch shows it Running; then it deletes them and
// waits until the kubelet has removed them all (their sandboxes' CNI DEL done). Every pod must
// get its address from want: the network under test.
func (b *bench) createAtOnce(ctx context.Context, namespace string, pods int, want netip.Prefix) (sample, error) {
	kube := b.rig.Kube()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return sample{}, fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	rw := watchRunning(wctx, kube, namespace, want)
	starts := make([]time.Time, pods)
	errs := make(chan error, pods)
	var wg sync.WaitGroup
	begin := time.Now()
	for i := range pods {
		wg.Go(func() {
			pod := realpods.TestServerPod(namespace, fmt.Sprintf("p%d", i), nodeName)
			pod.Spec.Containers[0].ReadinessProbe = nil // Running, not Ready, is timed
			starts[i] = time.Now()
			if _, err := realpods.Create(ctx, kube, pod); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return sample{}, err
	}
	seen, err := rw.wait(ctx, pods)
	if err != nil {
		return sample{}, err
	}
	var s sample
	last := begin
	for i, start := range starts {
		at := seen[fmt.Sprintf("p%d", i)]
		s.each = append(s.each, at.Sub(start))
		if at.After(last) {
			last = at
		}
	}
	slices.Sort(s.each)
	s.all = []time.Duration{last.Sub(begin)}
	s.load = []string{loadAverage()}
	return s, b.deleteAll(ctx, namespace)
}

// deleteAll deletes the namespace's pods and waits until none is left.
func (b *bench) deleteAll(ctx context.Context, namespace string) error {
	pods := b.rig.Kube().CoreV1().Pods(namespace)
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("delete pods of %s: %w", namespace, err)
	}
	for {
		list, err := pods.List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pods of %s not removed: %w", namespace, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
