// Command attachbench measures CNI ADD latency of pods with 0, 1 and 2 kube-ovn attachment
// networks (Multus NetworkAttachmentDefinitions) on the real rig (OVN, OVS userspace
// datapath, kube-apiserver), in one run with the three kinds interleaved: through edgeovn alone
// (libcni runs the cluster network's ADD, then each attachment's as Multus delegates it, one
// after the other, as the runtime would see it), and, with -multus, through the real Multus
// thin plugin as the node's CNI. It then deletes every pod and counts what edgeovn left (IPAM
// allocations, northbound ports, br-int ports): the goal is 0. It prints tables.
//
//	go run ./bench/attachbench -bin bin -pods 30 [-multus /path/to/multus]   (as root)
//
// The Multus plugin is built from its Go module at the version Kube-OVN pins (v4.3.0), as
// e2e/attachment_multus_test.go says.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

type config struct {
	bin, multus, crd string
	pods             int
}

func main() {
	var c config
	benchkit.BinFlag(&c.bin)
	flag.StringVar(&c.multus, "multus", "", "the Multus thin plugin (v4.3.0); empty: edgeovn alone")
	flag.StringVar(&c.crd, "crd", "e2e/testdata/nad-crd.yaml", "Multus's NetworkAttachmentDefinition CRD")
	flag.IntVar(&c.pods, "pods", 30, "pods per kind (0, 1, 2 attachments) and path")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "attachbench:", err)
		os.Exit(1)
	}
}

// selections are the pods' k8s.v1.cni.cncf.io/networks by number of attachments.
var selections = []string{"", "a", "a,b"}

func run(c config) error {
	if err := harness.Preflight(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	rig, err := harness.Start(ctx, harness.Options{})
	if err != nil {
		return err
	}
	defer rig.Stop()
	k := daemon.Kubelet(rig, "bench-1")
	if _, err := daemon.Start(ctx, rig, daemon.Spec{Node: k.Node, BinDir: c.bin, Extra: []string{"--log-level=warn"}}); err != nil {
		return err
	}
	if err := k.EnsureNode(ctx); err != nil {
		return err
	}
	if err := k.WaitReady(ctx); err != nil {
		return err
	}
	nets, err := setUp(ctx, rig, c.crd)
	if err != nil {
		return err
	}
	paths := []path{{name: "edgeovn alone (libcni: cluster network, then each NAD as Multus delegates)", kubelet: k, nets: nets, delegate: true}}
	if c.multus != "" {
		mk, err := multusKubelet(ctx, rig, k, c.multus)
		if err != nil {
			return err
		}
		paths = append(paths, path{name: "through Multus v4.3.0 (one ADD)", kubelet: mk, nets: nets})
	}
	fmt.Printf("\nCNI ADD of a pod with 0, 1, 2 kube-ovn attachments, %d pods per kind and path, kinds interleaved, one host (userspace datapath)\n\n", c.pods)
	fmt.Println("| path | attachments | ADD p50 | ADD p95 |")
	fmt.Println("|---|---|---|---|")
	for _, p := range paths {
		times, err := p.measure(ctx, c.pods)
		if err != nil {
			return err
		}
		for n, d := range times {
			fmt.Printf("| %s | %d | %s | %s |\n", p.name, n, benchkit.Ms(benchkit.Pct(d, 50)), benchkit.Ms(benchkit.Pct(d, 95)))
		}
	}
	left, err := leftovers(ctx, rig, c.bin)
	if err != nil {
		return err
	}
	fmt.Printf("\nafter %d pods created and deleted: %s\n", c.pods*len(selections)*len(paths), left)
	return nil
}

// path is one way the runtime reaches edgeovn.
type path struct {
	name     string
	kubelet  *podsim.Kubelet
	nets     map[string][]byte // NAD name -> the config Multus hands its plugin
	delegate bool              // run each attachment's ADD/DEL here (no Multus)
}

// measure creates pods of each kind in turn, timing their ADD (all of it: the cluster
// network's and every attachment's), then deletes them all.
func (p path) measure(ctx context.Context, pods int) ([][]time.Duration, error) {
	times := make([][]time.Duration, len(selections))
	type running struct {
		sb  *podsim.Sandbox
		sel string
	}
	var all []running
	defer func() {
		for _, r := range all {
			_ = podsim.RemoveNetns(r.sb.Netns)
		}
	}()
	for i := range pods {
		for n, sel := range selections {
			ann := map[string]string{}
			if sel != "" {
				ann["k8s.v1.cni.cncf.io/networks"] = sel
			}
			pod, err := p.kubelet.CreatePod(ctx, "default", fmt.Sprintf("ab-%s-%d-%d", short(p.delegate), n, i), ann)
			if err != nil {
				return nil, err
			}
			sb, err := p.kubelet.RunSandbox(ctx, pod)
			if sb != nil {
				all = append(all, running{sb, sel})
			}
			if err != nil {
				return nil, err
			}
			took := sb.AddTime
			if p.delegate {
				for j, name := range names(sel) {
					start := time.Now()
					if _, err := p.kubelet.AddAttachment(ctx, sb, p.nets[name], fmt.Sprintf("net%d", j+1)); err != nil {
						return nil, err
					}
					took += time.Since(start)
				}
			}
			times[n] = append(times[n], took)
		}
	}
	for _, r := range all {
		if p.delegate {
			ns := names(r.sel)
			for j := len(ns) - 1; j >= 0; j-- {
				if err := p.kubelet.DelAttachment(ctx, r.sb, p.nets[ns[j]], fmt.Sprintf("net%d", j+1)); err != nil {
					return nil, err
				}
			}
		}
		if err := p.kubelet.StopSandbox(ctx, r.sb, true); err != nil {
			return nil, err
		}
		if err := p.kubelet.DeletePod(ctx, r.sb.Pod); err != nil {
			return nil, err
		}
	}
	return times, nil
}

func short(delegate bool) string {
	if delegate {
		return "d"
	}
	return "m"
}

func names(sel string) []string {
	if sel == "" {
		return nil
	}
	return strings.Split(sel, ",")
}

// leftovers counts what edgeovn still holds of the bench's pods once they are all deleted
// (waiting up to 10 s for the controller to catch up with the deletions).
func leftovers(ctx context.Context, rig *harness.Rig, bin string) (string, error) {
	var msg string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ipam, err := exec.CommandContext(ctx, bin+"/edgeovn", "ipam", "--db", daemon.IPAMDatabase(rig)).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("edgeovn ipam: %w\n%s", err, ipam)
		}
		lsps, err := rig.Run(ctx, "ovn-nbctl", "--db="+rig.NBEndpoint, "--bare", "--columns=name", "list", "Logical_Switch_Port")
		if err != nil {
			return "", err
		}
		ports, err := rig.Run(ctx, "ovs-vsctl", "--db="+rig.OVSEndpoint, "list-ports", "br-int")
		if err != nil {
			return "", err
		}
		a, l, o := strings.Count(string(ipam), "default/ab-"), strings.Count(string(lsps), "ab-"), strings.Count(string(ports), "_h")
		msg = fmt.Sprintf("%d addresses, %d northbound ports, %d br-int pod ports left (goal: 0)", a, l, o)
		if a+l+o == 0 || time.Now().After(deadline) {
			return msg, nil
		}
	}
}
