package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

func main() {
	var bin string
	benchkit.BinFlag(&bin)
	pods := flag.Int("pods", 20, "pods per plugin, one after the other")
	afterOVN0 := flag.Bool("after-ovn0", false, "start the pods once the host's ovn0 is bound (as on a node that has been up a moment), not as edgeovn starts")
	flag.BoolVar(&dualRun, "dual", false, "measure dual-stack pods against IPv4-only pods of one edgeovn (a dual-stack cluster CIDR and an IPv4-only Subnet), alternating; no reference plugins")
	flag.BoolVar(&vpcRun, "vpc", false, "measure pods of a custom VPC (kubeovn.io/v1 Vpc and its Subnet) against pods of the default VPC of one edgeovn, alternating; no reference plugins")
	flag.BoolVar(&keep, "keep", false, "keep the rig's directory (logs, databases) and run edgeovn at debug level, to read where the time went")
	flag.Parse()
	if err := run(bin, *pods, *afterOVN0); err != nil {
		fmt.Fprintln(os.Stderr, "cnibench:", err)
		os.Exit(1)
	}
}

type sample struct{ add, del []time.Duration }

// keep: -keep; dualRun: -dual; vpcRun: -vpc.
var keep, dualRun, vpcRun bool

func run(bin string, pods int, afterOVN0 bool) error {
	if err := harness.Preflight(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if dualRun || vpcRun {
		rig, err := harness.Start(ctx, harness.Options{Keep: keep})
		if err != nil {
			return err
		}
		defer rig.Stop()
		if vpcRun {
			return vpcPair.run(ctx, rig, bin, pods)
		}
		return dualPair.run(ctx, rig, bin, pods)
	}
	work, err := os.MkdirTemp("", "cnibench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	peerBin, err := buildPeers(work)
	if err != nil {
		return err
	}
	rig, err := harness.Start(ctx, harness.Options{Keep: keep})
	if err != nil {
		return err
	}
	defer rig.Stop()
	eovn, err := benchEdgeovn(ctx, rig, bin, pods, afterOVN0)
	if err != nil {
		return err
	}
	peer, err := benchPeer(ctx, rig, peerBin, work, pods)
	if err != nil {
		return err
	}
	fmt.Printf("\nCNI latency through libcni, %d pods one after the other, one host (%s)\n\n", pods, "userspace datapath")
	fmt.Println("| plugin | first ADD after start | ADD p50 | ADD p95 | DEL p50 |")
	fmt.Println("|---|---|---|---|---|")
	label := "edgeovn (OVN port bound, ovn-installed)"
	if afterOVN0 {
		label = "edgeovn, pods once ovn0 is bound"
	}
	row(label, eovn)
	row("bridge + host-local (reference plugins)", peer)
	return nil
}

func row(name string, s sample) {
	first := s.add[0]
	warm := slices.Clone(s.add[1:])
	slices.Sort(warm)
	dels := slices.Clone(s.del)
	slices.Sort(dels)
	fmt.Printf("| %s | %v | %v | %v | %v |\n", name, benchkit.Ms(first), benchkit.Ms(benchkit.Pct(warm, 50)), benchkit.Ms(benchkit.Pct(warm, 95)), benchkit.Ms(benchkit.Pct(dels, 50)))
}

func benchEdgeovn(ctx context.Context, rig *harness.Rig, bin string, pods int, afterOVN0 bool) (sample, error) {
	k := daemon.Kubelet(rig, "bench-1")
	level := "--log-level=warn"
	if keep {
		level = "--log-level=debug"
		fmt.Println("rig directory (kept):", rig.Dir)
	}
	_, err := daemon.Start(ctx, rig, daemon.Spec{Node: k.Node, BinDir: bin, Extra: []string{level}})
	if err != nil {
		return sample{}, err
	}
	if err := k.EnsureNode(ctx); err != nil {
		return sample{}, err
	}
	if err := k.WaitReady(ctx); err != nil {
		return sample{}, err
	}
	if afterOVN0 {
		if err := waitOVN0(ctx, rig); err != nil {
			return sample{}, err
		}
	}
	return cycle(ctx, k, pods, func(name string) (*corev1.Pod, error) {
		return k.CreatePod(ctx, "default", name, nil)
	})
}

func benchPeer(ctx context.Context, rig *harness.Rig, peerBin, work string, pods int) (sample, error) {
	conf := filepath.Join(work, "peer.d")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		return sample{}, err
	}
	list := fmt.Sprintf(`{"cniVersion":"1.0.0","name":"peer","plugins":[{"type":"bridge","bridge":"cnibench0",
"isGateway":true,"ipMasq":false,"ipam":{"type":"host-local","dataDir":%q,"ranges":[[{"subnet":"10.88.0.0/16"}]]}}]}`,
		filepath.Join(work, "host-local"))
	if err := os.WriteFile(filepath.Join(conf, "10-peer.conflist"), []byte(list), 0o644); err != nil {
		return sample{}, err
	}
	k := &podsim.Kubelet{ConfDir: conf, BinDir: peerBin, CacheDir: filepath.Join(work, "peercache"), HostNetns: rig.NetnsPath}
	return cycle(ctx, k, pods, func(name string) (*corev1.Pod, error) {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}}, nil
	})
}

// cycle runs ADD for every pod, then DEL for every pod, timing each call on the pod network
// (the runtime's lo network, attached and removed around it, is not timed).
func cycle(ctx context.Context, k *podsim.Kubelet, pods int, newPod func(string) (*corev1.Pod, error)) (sample, error) {
	var s sample
	var sbs []*podsim.Sandbox
	defer func() {
		for _, sb := range sbs {
			_ = podsim.RemoveNetns(sb.Netns)
		}
	}()
	for i := range pods {
		pod, err := newPod(fmt.Sprintf("bench-%d", i))
		if err != nil {
			return s, err
		}
		sb, err := k.RunSandbox(ctx, pod)
		if sb != nil {
			sbs = append(sbs, sb)
		}
		if err != nil {
			return s, err
		}
		s.add = append(s.add, sb.AddTime)
	}
	for _, sb := range sbs {
		if err := k.StopSandbox(ctx, sb, false); err != nil {
			return s, err
		}
		s.del = append(s.del, sb.DelTime)
	}
	return s, nil
}

// peerVersion is the plugins release edgeovn builds against.
const peerVersion = "v1.9.1"

// buildPeers builds the reference plugins from the module cache, as a runtime would ship them.
func buildPeers(work string) (string, error) {
	dir := filepath.Join(work, "peerbin")
	for _, p := range []string{"plugins/main/bridge", "plugins/ipam/host-local", "plugins/main/loopback"} {
		// go install pkg@version builds outside this module: the peers' own dependencies
		// never enter edgeovn's go.mod.
		cmd := exec.Command("go", "install", "github.com/containernetworking/plugins/"+p+"@"+peerVersion)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOBIN="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build %s: %w\n%s", p, err, out)
		}
	}
	return dir, nil
}

// waitOVN0 waits until ovn-controller has bound the host's ovn0: the datapaths are then local
// and their flows computed, which the first pod otherwise waits for.
func waitOVN0(ctx context.Context, rig *harness.Rig) error {
	for {
		if daemon.HostInterfaceBound(ctx, rig) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for ovn0 to be bound: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
