package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/podqos"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/iperf"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// world is the cluster and the two pods: the sender a and the receiver b.
type world struct {
	c    *harness.Cluster
	a, b *podsim.Sandbox
	k    *podsim.Kubelet
}

func startWorld(ctx context.Context, bin string, hosts int) (*world, error) {
	c, err := harness.StartCluster(ctx, harness.ClusterOptions{Hosts: hosts})
	if err != nil {
		return nil, err
	}
	w := &world{c: c}
	if err := w.start(ctx, bin); err != nil {
		c.Stop()
		return nil, err
	}
	return w, nil
}

func (w *world) start(ctx context.Context, bin string) error {
	var kubelets []*podsim.Kubelet
	for i, h := range w.c.Hosts {
		node := fmt.Sprintf("edge-%d", i+1)
		if _, err := daemon.Start(ctx, h, daemon.Spec{Node: node, BinDir: bin}); err != nil {
			return err
		}
		k := daemon.Kubelet(h, node)
		if err := k.EnsureNode(ctx); err != nil {
			return err
		}
		if err := k.WaitReady(ctx); err != nil {
			return fmt.Errorf("node %s: %w", node, err)
		}
		kubelets = append(kubelets, k)
	}
	w.k = kubelets[0]
	var err error
	if w.a, err = runPod(ctx, kubelets[0], "qos-a"); err != nil {
		return err
	}
	if w.b, err = runPod(ctx, kubelets[len(kubelets)-1], "qos-b"); err != nil {
		return err
	}
	for range 50 { // the datapath drops first packets while it resolves neighbours
		if _, err = podsim.Ping(ctx, w.a, w.b.IP()); err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return err
}

func runPod(ctx context.Context, k *podsim.Kubelet, name string) (*podsim.Sandbox, error) {
	pod, err := k.CreatePod(ctx, "default", name, nil)
	if err != nil {
		return nil, err
	}
	return k.RunSandbox(ctx, pod)
}

// annotate merge-patches the pod's annotations (nil removes one).
func (w *world) annotate(ctx context.Context, pod string, kv map[string]*string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": kv}})
	if err != nil {
		return err
	}
	_, err = w.k.Kube.CoreV1().Pods("default").Patch(ctx, pod, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

func str(s string) *string { return &s }

// limited sets the limit (ingress_rate on b, or egress_rate on a), lets it land, and measures
// a -> b; the limit is removed afterwards.
func (w *world) limited(ctx context.Context, dir string, udp bool, mbit, seconds float64) (float64, error) {
	pod, key := "qos-b", podqos.IngressRate
	if dir == "egress" {
		pod, key = "qos-a", podqos.EgressRate
	}
	v := strconv.FormatFloat(mbit, 'f', -1, 64)
	if err := w.annotate(ctx, pod, map[string]*string{key: str(v)}); err != nil {
		return 0, err
	}
	defer func() { _ = w.annotate(ctx, pod, map[string]*string{key: nil}) }()
	time.Sleep(time.Second)
	r := iperf.Request{ClientNetns: w.a.NetnsName(), ServerNetns: w.b.NetnsName(), Server: w.b.IP(), Seconds: seconds}
	if udp {
		r.UDPMbit = 2 * mbit
	}
	res, err := iperf.Run(ctx, r)
	return res.Mbit, err
}

func (w *world) unlimited(ctx context.Context, seconds float64) (float64, error) {
	time.Sleep(time.Second)
	res, err := iperf.Run(ctx, iperf.Request{ClientNetns: w.a.NetnsName(), ServerNetns: w.b.NetnsName(), Server: w.b.IP(), Seconds: seconds})
	return res.Mbit, err
}

type durations []time.Duration

func (d durations) median() time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Millisecond)
}

func (d durations) max() time.Duration { return slices.Max(d).Round(time.Millisecond) }

// changes times n changes of a's egress_rate (10 and 20 in turn): from the API server's
// answer to the patch to the new rate in a's qdisc, polled every 5 ms.
func (w *world) changes(ctx context.Context, n int) (durations, error) {
	var took durations
	for i := range n {
		mbit := 10 + 10*(i%2)
		start := time.Now()
		if err := w.annotate(ctx, "qos-a", map[string]*string{podqos.EgressRate: str(strconv.Itoa(mbit))}); err != nil {
			return nil, err
		}
		acked := time.Now()
		want := fmt.Sprintf("rate %dMbit", mbit)
		for {
			out, err := exec.CommandContext(ctx, "ip", "netns", "exec", w.a.NetnsName(), "tc", "qdisc", "show", "dev", "eth0").Output()
			if err != nil {
				return nil, err
			}
			if strings.Contains(string(out), want) {
				break
			}
			if time.Since(start) > 30*time.Second {
				return nil, fmt.Errorf("egress_rate %d not in force after 30 s: %s", mbit, out)
			}
			time.Sleep(5 * time.Millisecond)
		}
		took = append(took, time.Since(acked))
	}
	return took, nil
}
