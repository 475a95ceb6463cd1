package e2e

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// settleTimeout bounds the wait for a change to reach OpenFlow before a matrix is probed.
const settleTimeout = 5 * time.Second

// nbCfg reads NB_Global's nb_cfg (edgeovn bumps it after each policy change it writes) and
// hv_cfg (the lowest nb_cfg every ovn-controller reports installed); -1, -1 when unreadable.
func (w *world) nbCfg(ctx context.Context) (nb, hv int64) {
	out, err := w.env.rig.Run(ctx, "ovn-nbctl", "--db="+w.env.rig.NBEndpoint, "--bare", "--columns=nb_cfg,hv_cfg", "list", "NB_Global")
	f := strings.Fields(string(out))
	if err != nil || len(f) != 2 {
		return -1, -1
	}
	nb, err1 := strconv.ParseInt(f[0], 10, 64)
	hv, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return -1, -1
	}
	return nb, hv
}

// change makes an API change and waits, for at most settleTimeout, until edgeovn has
// announced a change (NB_Global nb_cfg moved past what it was before) and ovn-controller has
// installed it (hv_cfg caught up): probing earlier only measures how far OVN lags behind.
// It is a shortcut and not a condition: a change spread over several namespaces is announced
// more than once, and check probes until the matrix matches whatever this wait saw.
func (w *world) change(ctx context.Context, do func()) {
	before, _ := w.nbCfg(ctx)
	do()
	deadline := time.Now().Add(settleTimeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if nb, hv := w.nbCfg(ctx); before >= 0 && nb > before && hv >= nb {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ufidRe finds a megaflow's id in a dpif/dump-flows line.
var ufidRe = regexp.MustCompile(`^ufid:([0-9a-f-]+) `)

// megaflows returns the ids of the datapath's cached megaflows entering from the pod's port.
func (w *world) megaflows(ctx context.Context, t *testing.T, pod *tpod) map[string]bool {
	t.Helper()
	out := w.vswitchd(ctx, "dpif/dump-flows", "-m", "br-int")
	if failed(out) {
		t.Fatal(out)
	}
	port := "in_port(" + w.bridgePort(ctx, pod) + ")"
	ids := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if m := ufidRe.FindStringSubmatch(line); m != nil && strings.Contains(line, port) {
			ids[m[1]] = true
		}
	}
	return ids
}

// checkFlowCachePurged: on the userspace datapath a policy change empties ovs-vswitchd's
// flow cache once ovn-controller has installed it, so no megaflow translated from the old
// rules outlives them. With max-idle raised nothing else removes the megaflows of x/a's
// traffic to y/a, which a policy fencing z/c leaves as they were: they must go all the same.
func (w *world) checkFlowCachePurged(ctx context.Context, t *testing.T) {
	t.Helper()
	vsctl := func(args ...string) {
		t.Helper()
		if _, err := w.env.rig.Run(ctx, "ovs-vsctl", append([]string{"--db=" + w.env.rig.OVSEndpoint}, args...)...); err != nil {
			t.Fatal(err)
		}
	}
	vsctl("set", "Open_vSwitch", ".", "other_config:max-idle=600000")
	defer vsctl("remove", "Open_vSwitch", ".", "other_config", "max-idle")
	xa, ya := w.pod("x/a"), w.pod("y/a")
	var cached map[string]bool
	eventually(ctx, t, "megaflows of x/a's traffic to y/a", func() bool {
		probe(ctx, w.netns["x/a"], ya.ip, target{corev1.ProtocolTCP, 80}, retryTimeout)
		cached = w.megaflows(ctx, t, xa)
		return len(cached) > 0
	})
	np := ingress(pol("z", "pod", "c"))
	np.Name = "flow-cache"
	w.change(ctx, func() { w.setPolicies(ctx, t, []*networkingv1.NetworkPolicy{np}) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		now := w.megaflows(ctx, t, xa)
		left := 0
		for id := range cached {
			if now[id] {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d megaflows of x/a cached before a policy change are still there 30s after it:\n%s",
				left, len(cached), w.datapathFlows(ctx, cell{xa, ya, target{corev1.ProtocolTCP, 80}}))
		}
		time.Sleep(200 * time.Millisecond)
	}
	w.setPolicies(ctx, t, nil)
}

// pod returns the truth table's pod by key.
func (w *world) pod(key string) *tpod {
	for _, p := range w.pods {
		if p.key() == key {
			return p
		}
	}
	panic("no pod " + key)
}
