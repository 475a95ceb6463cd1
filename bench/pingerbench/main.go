package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/pinger"
)

func main() {
	pods := flag.Int("pods", 1000, "pod targets")
	perHost := flag.Int("pods-per-host", 100, "pods per simulated host (hosts = pods / this)")
	rounds := flag.Int("rounds", 5, "rounds measured")
	flag.Parse()
	if err := run(context.Background(), *pods, *perHost, *rounds, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pingerbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, pods, perHost, rounds int, out io.Writer) error {
	l := newLister(pods, perHost)
	m := pinger.NewMetrics()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.Collectors()...)
	p := pinger.New(pinger.Config{Node: "host-0", PodsPerNode: perHost, MaxTargets: pods + len(l.nodes), Lister: l,
		DNSServer: netip.MustParseAddr("127.0.0.1"), InternalDNS: "kubernetes.default", Metrics: m,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	baseRSS := status("VmRSS")
	fmt.Fprintf(out, "pinger rounds with %d pod targets on %d hosts (+%d ovn0 targets), 3 requests each, over loopback\n", pods, len(l.nodes), len(l.nodes))
	fmt.Fprintf(out, "%-6s %-10s %-10s %-8s %-8s\n", "round", "wall", "cpu", "sent", "lost")
	for i := range rounds {
		before := cpu()
		r := p.Round(ctx)
		if r.Err != "" {
			return fmt.Errorf("round %d: %s", i, r.Err)
		}
		sent, lost := 0, 0
		for _, t := range r.Targets {
			sent += t.Sent
			lost += t.Lost()
		}
		fmt.Fprintf(out, "%-6d %-10v %-10v %-8d %-8d\n", i+1, r.Took.Round(time.Millisecond), (cpu() - before).Round(time.Millisecond), sent, lost)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	series := 0
	if mfs, err := reg.Gather(); err == nil {
		for _, mf := range mfs {
			series += len(mf.Metric)
		}
	}
	fmt.Fprintf(out, "RSS %s before the first round, %s after (peak %s); Go heap in use %.1f MiB before, %.1f MiB after; %d exported series\n",
		baseRSS, status("VmRSS"), status("VmHWM"), float64(base.HeapInuse)/(1<<20), float64(ms.HeapInuse)/(1<<20), series)
	fmt.Fprintln(out, "(the internal DNS lookup asks 127.0.0.1:53; with nothing there it fails fast and is not part of the cost)")
	return nil
}

// cpu is this process's user+system CPU time.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func status(key string) string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, key+":") {
			return strings.TrimSpace(strings.TrimPrefix(l, key+":"))
		}
	}
	return "?"
}

// lister is a cluster of hosts whose pods and ovn0s have loopback addresses.
type lister struct {
	nodes []corev1.Node
	pods  map[string][]corev1.Pod
}

func allocated(ip netip.Addr) map[string]string {
	return map[string]string{"ovn.kubernetes.io/ip_address": ip.String(), "ovn.kubernetes.io/cidr": "127.0.0.0/8",
		"ovn.kubernetes.io/mac_address": "0a:00:00:00:00:01", "ovn.kubernetes.io/gateway": "127.0.0.1",
		"ovn.kubernetes.io/logical_switch": "ovn-default", "ovn.kubernetes.io/allocated": "true", "ovn.kubernetes.io/routed": "true"}
}

func newLister(pods, perHost int) *lister {
	l := &lister{pods: map[string][]corev1.Pod{}}
	next := netip.MustParseAddr("127.1.0.1")
	hostIP := netip.MustParseAddr("127.2.0.1")
	for i := 0; i*perHost < pods; i++ {
		name := fmt.Sprintf("host-%d", i)
		l.nodes = append(l.nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: allocated(hostIP)}})
		hostIP = hostIP.Next()
		for j := 0; j < perHost && i*perHost+j < pods; j++ {
			l.pods[name] = append(l.pods[name], corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", j), Namespace: "default", Annotations: allocated(next)}})
			next = next.Next()
		}
	}
	return l
}

func (l *lister) ListNodes(context.Context) ([]corev1.Node, error) { return l.nodes, nil }

func (l *lister) ListPods(_ context.Context, node string, limit int) ([]corev1.Pod, error) {
	ps := l.pods[node]
	return ps[:min(limit, len(ps))], nil
}
