package node

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/podqos"
	"github.com/edgeovn/edgeovn/agent/podwatch"
	"github.com/edgeovn/edgeovn/cni/server"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// podShaper applies the pods' QoS annotations (podqos): at CNI ADD, as the server's Shaper,
// and at each change of a pod of this node once the pod watch runs.
type podShaper struct {
	shaper  *podqos.Shaper
	ovs     *vswitch.Client
	log     *slog.Logger
	watcher atomic.Pointer[podwatch.Watcher]
	queue   atomic.Pointer[workqueue.TypedRateLimitingInterface[string]]
}

// recheckDelay: a port given its QoS row after its creation is shaped again after this, in
// case ovs-vswitchd reset its qdisc on a reconfiguration that had not seen the row yet
// (podqos.Shaper.Apply); its reconfigurations take milliseconds.
const recheckDelay = 2 * time.Second

var _ server.Shaper = (*podShaper)(nil)

func newPodShaper(ovs *vswitch.Client, log *slog.Logger) *podShaper {
	return &podShaper{ovs: ovs, log: log,
		shaper: podqos.New(podqos.Request{Ports: ovs, MaxRateMbit: linkSpeedMbit("/sys/class/net"), Log: log})}
}

// PortQoS is CNI ADD's: the port of a pod with QoS annotations is created with its QoS row.
func (p *podShaper) PortQoS(r server.ShapeRequest) string {
	if w := p.watcher.Load(); w != nil {
		if pod, ok := w.Pod(r.Namespace, r.Name); ok && podqos.Wanted(pod.Annotations) {
			return vswitch.QoSTypeNoop
		}
	}
	return ""
}

// ShapePort is CNI ADD's: the pod is in the watch's cache (ADD waited for its allocation).
func (p *podShaper) ShapePort(ctx context.Context, r server.ShapeRequest) error {
	w := p.watcher.Load()
	if w == nil {
		return nil
	}
	pod, ok := w.Pod(r.Namespace, r.Name)
	if !ok {
		return nil
	}
	recheck, err := p.shaper.Apply(ctx, pod, podqos.Target{HostIf: r.Port, Netns: r.Netns, IfName: r.IfName})
	if q := p.queue.Load(); recheck && q != nil {
		(*q).AddAfter(r.Namespace+"/"+r.Name, recheckDelay)
	}
	return err
}

// run applies each change of this node's pods until ctx ends; a failure is retried with
// the workqueue's backoff.
func (p *podShaper) run(ctx context.Context, kube *kubeapi.Client, node string, w *podwatch.Watcher) error {
	events, stop := newNodeRecorder(ctx, kube, node)
	defer stop()
	p.shaper.SetEvents(events)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	context.AfterFunc(ctx, q.ShutDown)
	p.queue.Store(&q)
	if err := w.OnChange(func(ns, name string) { q.Add(ns + "/" + name) }); err != nil {
		return err
	}
	for {
		key, quit := q.Get()
		if quit {
			return nil
		}
		recheck, err := p.sync(ctx, w, key)
		switch {
		case err != nil && ctx.Err() == nil:
			p.log.Warn("apply pod qos, will retry", "pod", key, "err", err)
			q.AddRateLimited(key)
		case recheck:
			q.Forget(key)
			q.AddAfter(key, recheckDelay)
		default:
			q.Forget(key)
		}
		q.Done(key)
	}
}

func (p *podShaper) sync(ctx context.Context, w *podwatch.Watcher, key string) (recheck bool, err error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return false, nil
	}
	pod, ok := w.Pod(ns, name)
	if !ok {
		p.shaper.Forget(ns, name)
		return false, nil
	}
	if !podqos.Wanted(pod.Annotations) {
		// Pay only for what is used: a pod without limits on a node where no port is shaped
		// has nothing to apply or undo, and reading every pod port at each change of each
		// pod made a burst of N pods cost N x N port reads.
		shaped, err := p.ovs.AnyOwnedQoS(ctx)
		if err != nil {
			return false, err
		}
		if !shaped {
			p.shaper.Forget(ns, name) // nothing in force, nothing to keep saying
			return false, nil
		}
	}
	ports, err := p.ovs.Ports(ctx, Bridge)
	if err != nil {
		return false, err
	}
	for _, port := range ports {
		ids := port.ExternalIDs
		if ids[server.ExtIDPodNamespace] != ns || ids[server.ExtIDPodName] != name || ids[server.ExtIDProvider] != "" ||
			(ids[server.ExtIDPodUID] != "" && ids[server.ExtIDPodUID] != string(pod.UID)) {
			continue
		}
		t := podqos.Target{HostIf: port.Name, Netns: ids[server.ExtIDPodNetns], IfName: ids[server.ExtIDIfName]}
		again, err := p.shaper.Apply(ctx, pod, t)
		if err != nil {
			return false, err
		}
		recheck = recheck || again
	}
	return recheck, nil // no port: not wired yet, its ADD applies the limits
}

// linkSpeedMbit is the fastest speed of the host's physical network devices (those with a
// device behind them), the ceiling of a sensible rate; podqos's default when none says.
func linkSpeedMbit(sysNet string) float64 {
	entries, err := os.ReadDir(sysNet)
	if err != nil {
		return 0
	}
	var fastest float64
	for _, e := range entries {
		dir := filepath.Join(sysNet, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "device")); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "speed"))
		if err != nil {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && v > fastest {
			fastest = v
		}
	}
	return fastest
}
