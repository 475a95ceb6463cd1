package failover

import (
	"context"
	"fmt"
	"net/netip"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// Namespace holds the scenario's pods.
const Namespace = "failover"

// leaderWritesSettle is how long after the kill the dead leader's last writes are taken to
// have landed. It must stay below the lease duration minus the retry period.
const leaderWritesSettle = time.Second

// Request says how the scenario runs.
type Request struct {
	BinDir string
	Node   string // the rig's host (the first leader); its pods' nodeName
	// Pods are created at once (20 at a time); the leader is killed once KillAfter of them are
	// allocated.
	Pods      int
	KillAfter int
	// LeaseFlags are both processes' lease timings (--lease-duration=...).
	LeaseFlags []string
}

// Result is what happened, for the caller to judge.
type Result struct {
	Leader, Standby *harness.Process
	// AtKill is each pod's annotated address when the leader was killed.
	AtKill map[string]netip.Addr
	// ToTakeover: from the kill to the standby holding the Lease; ToNextAllocation: to the
	// first pod annotated after the kill; ToAll: to every pod annotated.
	ToTakeover, ToNextAllocation, ToAll time.Duration
	// Annotated and Ports: each pod's annotated address, each pod port's address in
	// northbound, by "namespace/name" and by port name.
	Annotated map[string]netip.Addr
	Ports     map[string]netip.Addr
}

// Run runs the scenario on rig. The processes it starts stop with the rig.
func Run(ctx context.Context, rig *harness.Rig, req Request) (Result, error) {
	var res Result
	cl, err := benchkit.Connect(ctx, rig)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	w := &watcher{rig: rig, cl: cl}
	if res.Leader, err = daemon.Start(ctx, rig, daemon.Spec{Name: "edgeovn-a", Node: req.Node, BinDir: req.BinDir,
		Extra: append([]string{"--log-level=info"}, req.LeaseFlags...)}); err != nil {
		return res, err
	}
	if err := w.until(ctx, "the rig's host leads", func() bool { return w.holder(ctx) == req.Node }); err != nil {
		return res, err
	}
	sb := daemon.Standby{Name: "host-b", MetricsPort: 10666, BinDir: req.BinDir,
		Extra: append([]string{"--log-level=info"}, req.LeaseFlags...)}
	if res.Standby, err = daemon.StartStandby(ctx, rig, sb); err != nil {
		return res, err
	}
	if err := w.until(ctx, "host-b campaigns", func() bool { return logHas(res.Standby, "controller role held elsewhere") }); err != nil {
		return res, err
	}
	if err := createNamespace(ctx, cl.Kube, Namespace); err != nil {
		return res, err
	}
	created := make(chan error, 1)
	go func() { created <- createPods(ctx, cl, req) }()
	if err := w.until(ctx, "pods allocated before the kill", func() bool { return w.allocated(ctx) >= req.KillAfter }); err != nil {
		return res, err
	}
	if err := syscall.Kill(res.Leader.PID, syscall.SIGKILL); err != nil {
		return res, fmt.Errorf("kill leader: %w", err)
	}
	killed := time.Now()
	_ = res.Leader.Wait()
	// What the dead leader wrote: its requests in flight at the kill land within the settle
	// time, and the Lease cannot pass before it expires (a duration, minus one retry period,
	// after the last renewal), so nothing here is the next leader's yet.
	time.Sleep(leaderWritesSettle)
	before := w.annotated(ctx)
	res.AtKill = before
	if err := w.afterKill(ctx, killed, before, &res); err != nil {
		return res, err
	}
	if err := <-created; err != nil {
		return res, err
	}
	if err := w.until(ctx, "every pod allocated", func() bool { return w.allocated(ctx) == req.Pods }); err != nil {
		return res, err
	}
	res.ToAll = time.Since(killed)
	return res, w.settle(ctx, req.Pods, &res)
}

// afterKill times the takeover and the first allocation after the kill.
func (w *watcher) afterKill(ctx context.Context, killed time.Time, before map[string]netip.Addr, res *Result) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := w.until(ctx, "host-b holds the Lease", func() bool { return w.holder(ctx) == "host-b" })
		res.ToTakeover = time.Since(killed)
		return err
	})
	g.Go(func() error {
		err := w.until(ctx, "a pod allocated after the kill", func() bool {
			for k := range w.annotated(ctx) {
				if _, old := before[k]; !old {
					return true
				}
			}
			return false
		})
		res.ToNextAllocation = time.Since(killed)
		return err
	})
	return g.Wait()
}

// settle waits until every pod's port carries its annotated address, then records both.
func (w *watcher) settle(ctx context.Context, pods int, res *Result) error {
	err := w.until(ctx, "ports follow annotations", func() bool {
		ann, ports := w.annotated(ctx), w.ports(ctx)
		if len(ann) != pods {
			return false
		}
		for k, ip := range ann {
			if ports[portName(k)] != ip {
				return false
			}
		}
		return true
	})
	res.Annotated, res.Ports = w.annotated(ctx), w.ports(ctx)
	return err
}

// createPods creates the pods, 20 at a time.
func createPods(ctx context.Context, cl *benchkit.Clients, req Request) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(20)
	for i := range req.Pods {
		g.Go(func() error {
			_, err := cl.Kube.CoreV1().Pods(Namespace).Create(ctx, pod(fmt.Sprintf("p-%03d", i), req.Node), metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("create pod p-%03d: %w", i, err)
			}
			return nil
		})
	}
	return g.Wait()
}
