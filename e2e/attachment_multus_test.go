package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/multus"
	"github.com/edgeovn/edgeovn/e2e/podsim"
	"github.com/edgeovn/edgeovn/e2e/skip"
)

// multusBinary is the real Multus thin plugin, built from its Go module at the version
// Kube-OVN pins (v4.3.0) by `make deps` (e2e/scripts/build-multus.sh) into .cache/bin;
// EDGEOVN_MULTUS names it (the Makefile exports it). Without it the test cannot run: under
// CI=true that fails.
func multusBinary(t *testing.T) string {
	p := os.Getenv("EDGEOVN_MULTUS")
	if p == "" {
		skip.Now(t, "EDGEOVN_MULTUS (the multus thin plugin v4.3.0) not set")
	}
	if _, err := os.Stat(p); err != nil {
		skip.Now(t, "multus plugin: %v", err)
	}
	return p
}

// multusKubelet is the node's runtime with Multus as its primary CNI, delegating the cluster
// network to edgeovn's own conflist (as Multus's thin plugin does with the conflist it finds)
// and each selected NAD to the plugin the NAD names: the runtime's bin dir holds multus next to
// what edgeovn installed (edgeovn, kube-ovn, loopback).
func (ae *attachEnv) multusKubelet(ctx context.Context, t *testing.T, bin string) *podsim.Kubelet {
	t.Helper()
	own, err := ae.kubelet.ConfList(ctx) // edgeovn's conflist, once written and installed
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	binDir, confDir := filepath.Join(dir, "bin"), filepath.Join(dir, "net.d")
	for _, d := range []string{binDir, confDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"multus": bin}
	for _, name := range []string{"edgeovn", "kube-ovn", "loopback"} {
		links[name] = filepath.Join(ae.kubelet.BinDir, name)
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(binDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	ae.writeMultusConf(t, own.Bytes, multusDirs{conf: confDir, bin: binDir, own: dir})
	k := *ae.kubelet
	k.BinDir, k.ConfDir, k.CacheDir = binDir, confDir, filepath.Join(dir, "cache")
	return &k
}

// multusDirs is where a node's runtime finds Multus's conflist (conf) and the plugins (bin),
// and where Multus keeps its cache and log (own).
type multusDirs struct{ conf, bin, own string }

// writeMultusConf writes the Multus thin plugin's conflist, delegating the cluster network
// to edgeovn's conflist own, as 00-multus.conflist (sorting before edgeovn's) in dirs.conf:
// a temporary file renamed, as a runtime watching the directory needs.
func (ae *attachEnv) writeMultusConf(t *testing.T, own []byte, dirs multusDirs) {
	t.Helper()
	var delegate map[string]any
	if err := json.Unmarshal(own, &delegate); err != nil {
		t.Fatal(err)
	}
	conf := map[string]any{"cniVersion": "1.0.0", "name": "multus-cni-network", "plugins": []any{map[string]any{
		"type": "multus", "kubeconfig": ae.rig.Kubeconfig, "binDir": dirs.bin, "cniDir": filepath.Join(dirs.own, "multus"),
		"logFile": filepath.Join(dirs.own, "multus.log"), "logLevel": "verbose", "delegates": []any{delegate},
	}}}
	b, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dirs.conf, ".00-multus.conflist.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dirs.conf, "00-multus.conflist")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dirs.own, "multus.log"))
			t.Logf("--- multus.log ---\n%s", log)
		}
	})
}

// TestAttachmentsMultus: the real Multus thin plugin (v4.3.0) as the node's CNI, edgeovn its
// cluster network and the plugin of two kube-ovn NADs: one ADD through Multus gives the pod
// three interfaces with the annotated addresses and MACs, Multus's network-status names all
// three; two pods reach each other over each attachment; DEL through Multus and the pod's
// deletion leave no address or port, over 20 cycles.
func TestAttachmentsMultus(t *testing.T) {
	bin := multusBinary(t)
	env, ctx := startNode(t)
	ae := startAttachEnv(ctx, t, env)
	k := ae.multusKubelet(ctx, t, bin)
	run := func(name string) *podsim.Sandbox {
		pod, err := k.CreatePod(ctx, "default", name, map[string]string{multus.NetworksAnnotation: "a,b"})
		if err != nil {
			t.Fatal(err)
		}
		sb, err := k.RunSandbox(ctx, pod)
		if sb != nil {
			t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, ae.daemonLog())
		}
		return sb
	}
	providers := map[string]string{"eth0": "ovn", "net1": "a.default.ovn", "net2": "b.default.ovn"}
	var sbs []*podsim.Sandbox
	for _, name := range []string{"mm-1", "mm-2"} {
		sb := run(name)
		sbs = append(sbs, sb)
		want := ae.annotatedIfaces(ctx, t, name, providers)
		if got := podIfaces(ctx, t, sb); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("pod %s interfaces %v, want the annotated %v", name, got, want)
		}
		p, err := k.Kube.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		status := p.Annotations["k8s.v1.cni.cncf.io/network-status"]
		for _, s := range []string{`"default/a"`, `"default/b"`, `"interface": "net1"`, `"interface": "net2"`} {
			if !strings.Contains(status, s) {
				t.Fatalf("pod %s network-status lacks %s:\n%s", name, s, status)
			}
		}
		t.Logf("pod %s through multus (ADD %v): %v", name, sb.AddTime.Round(time.Microsecond), want)
	}
	for _, pfx := range []string{"eth0", "net1", "net2"} {
		dst := strings.Fields(podIfaces(ctx, t, sbs[1])[pfx])[1]
		ip := strings.Split(dst, "/")[0]
		if out, err := runIn(ctx, sbs[0], "ping", "-c", "3", "-i", "0.2", "-W", "1", ip); err != nil {
			t.Fatalf("mm-1 -> %s over %s: %v\n%s", ip, pfx, err, out)
		}
	}
	for _, sb := range sbs {
		if err := k.StopSandbox(ctx, sb, true); err != nil {
			t.Fatal(err)
		}
		if err := k.DeletePod(ctx, sb.Pod); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		sb := run(fmt.Sprintf("mcycle-%d", i))
		if err := k.StopSandbox(ctx, sb, true); err != nil {
			t.Fatal(err)
		}
		if err := k.DeletePod(ctx, sb.Pod); err != nil {
			t.Fatal(err)
		}
	}
	eventually(ctx, t, "no address or port left", func() bool {
		ipam := ae.ipamList(ctx, t)
		lsps := ae.nbctl(ctx, t, "--bare", "--columns=name", "list", "Logical_Switch_Port")
		return !strings.Contains(ipam, "default/m") && !strings.Contains(lsps, ".default.")
	})
	ports, _ := env.rig.Run(ctx, "ovs-vsctl", "--db="+env.rig.OVSEndpoint, "list-ports", "br-int")
	if strings.Contains(string(ports), "_h") {
		t.Errorf("br-int keeps pod ports after every DEL:\n%s", ports)
	}
}
