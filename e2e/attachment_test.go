package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/multus"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

var (
	crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	nadResource = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}
)

// attachEnv is a node with Multus's NAD CRD (its upstream definition), the Subnets of two
// attachment networks (providers a.default.ovn, b.default.ovn) and their NADs as Kube-OVN's
// docs write them (b as a conflist with portmap).
type attachEnv struct {
	*env
	dyn dynamic.Interface
	// nads are the NADs' configs as Multus hands them to the plugin they name, by NAD name.
	nads map[string]string
}

func startAttachEnv(ctx context.Context, t *testing.T, env *env) *attachEnv {
	t.Helper()
	dyn, err := dynamic.NewForConfig(env.rig.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	crd, err := os.ReadFile("testdata/nad-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	applyYAML(ctx, t, dyn.Resource(crdResource), string(crd))
	subnets := dyn.Resource(kubeovn.SubnetResource)
	waitCondition(ctx, t, subnets, "ovn-default", kubeovn.ConditionValidated, "True", "") // the CRD is served
	for _, s := range []string{"a:172.17.0", "b:172.18.0"} {
		name, net, _ := strings.Cut(s, ":")
		applyYAML(ctx, t, subnets, fmt.Sprintf("apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: att-%s\nspec:\n  protocol: IPv4\n  cidrBlock: %s.0/24\n  gateway: %s.1\n  provider: %s.default.ovn\n",
			name, net, net, name))
		waitCondition(ctx, t, subnets, "att-"+name, kubeovn.ConditionReady, "True", "")
		waitCondition(ctx, t, subnets, "att-"+name, kubeovn.ConditionUnsupported, "False", "")
	}
	// A node needs no serverSocket in a NAD (the plugin's default is the daemon's socket);
	// the rig's daemon listens elsewhere.
	ae := &attachEnv{env: env, dyn: dyn, nads: nadConfigs(env)}
	for name, conf := range ae.nads {
		ae.createNAD(ctx, t, name, conf)
	}
	return ae
}

// nadConfigs are the configs of NADs a and b as env's host hands them to its plugin: the
// NADs' own, and the host's daemon socket (each simulated host has its own).
func nadConfigs(env *env) map[string]string {
	sock := daemon.Socket(env.rig)
	return map[string]string{
		"a": fmt.Sprintf(`{"cniVersion":"0.3.1","name":"a","type":"kube-ovn","server_socket":"/run/openvswitch/kube-ovn-daemon.sock","provider":"a.default.ovn","serverSocket":%q}`, sock),
		"b": fmt.Sprintf(`{"cniVersion":"0.3.1","name":"b","plugins":[{"type":"kube-ovn","server_socket":"/run/openvswitch/kube-ovn-daemon.sock","provider":"b.default.ovn","serverSocket":%q}]}`, sock),
	}
}

// createNAD creates a NAD, waiting for the CRD to be served.
func (ae *attachEnv) createNAD(ctx context.Context, t *testing.T, name, config string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
		"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": map[string]any{"config": config}}}
	var last error
	eventually(ctx, t, "NetworkAttachmentDefinition "+name+" created", func() bool {
		_, last = ae.dyn.Resource(nadResource).Namespace("default").Create(ctx, obj, metav1.CreateOptions{})
		return last == nil
	})
}

// delegateConf is what Multus hands the plugin a NAD names: the plugin's config itself, or
// for a conflist each plugin with the list's cniVersion and name.
func delegateConf(t *testing.T, conf string) []byte {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(conf), &m); err != nil {
		t.Fatal(err)
	}
	plugins, ok := m["plugins"].([]any)
	if !ok {
		return []byte(conf)
	}
	p := plugins[0].(map[string]any)
	p["cniVersion"], p["name"] = m["cniVersion"], m["name"]
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// attachedPod is a pod with its sandbox and attachment results by interface.
type attachedPod struct {
	sb   *podsim.Sandbox
	nets map[string]netip.Addr // interface -> address the CNI result reported
}

// runAttached creates the pod selecting networks (options applied to it), runs its sandbox
// (eth0) and each attachment's ADD as Multus delegates it, in the selection's order.
func (ae *attachEnv) runAttached(ctx context.Context, t *testing.T, name, networks string, options ...func(*corev1.Pod)) *attachedPod {
	t.Helper()
	pod, err := ae.kubelet.CreatePod(ctx, "default", name, map[string]string{multus.NetworksAnnotation: networks}, options...)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := ae.kubelet.RunSandbox(ctx, pod)
	if sb != nil {
		t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, ae.daemonLog())
	}
	ap := &attachedPod{sb: sb, nets: map[string]netip.Addr{"eth0": sb.IP()}}
	sel, err := multus.ParseSelection(networks, "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sel {
		res, err := ae.kubelet.AddAttachment(ctx, sb, delegateConf(t, ae.nads[s.Name]), s.Interface)
		if err != nil {
			t.Fatalf("%v\n%s", err, ae.daemonLog())
		}
		if len(res.IPs) != 1 {
			t.Fatalf("pod %s %s: ADD result ips %v, want one", name, s.Interface, res.IPs)
		}
		ap.nets[s.Interface], _ = netip.AddrFromSlice(res.IPs[0].Address.IP.To4())
	}
	return ap
}

// delAttached runs the attachments' DELs (as Multus does, last first), the sandbox's, and
// deletes the pod.
func (ae *attachEnv) delAttached(ctx context.Context, t *testing.T, ap *attachedPod, networks string) {
	t.Helper()
	sel, err := multus.ParseSelection(networks, "default")
	if err != nil {
		t.Fatal(err)
	}
	for i := len(sel) - 1; i >= 0; i-- {
		if err := ae.kubelet.DelAttachment(ctx, ap.sb, delegateConf(t, ae.nads[sel[i].Name]), sel[i].Interface); err != nil {
			t.Fatal(err)
		}
	}
	if err := ae.kubelet.StopSandbox(ctx, ap.sb, true); err != nil {
		t.Fatal(err)
	}
	if err := ae.kubelet.DeletePod(ctx, ap.sb.Pod); err != nil {
		t.Fatal(err)
	}
}

// podIfaces lists the pod's interfaces other than lo: "name mac addr/len".
func podIfaces(ctx context.Context, t *testing.T, sb *podsim.Sandbox) map[string]string {
	t.Helper()
	out, err := runIn(ctx, sb, "ip", "-o", "-4", "addr", "show")
	if err != nil {
		t.Fatalf("ip addr in %s: %v\n%s", sb.Pod.Name, err, out)
	}
	ifs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[1] == "lo" {
			continue
		}
		mac, err := runIn(ctx, sb, "cat", "/sys/class/net/"+f[1]+"/address")
		if err != nil {
			t.Fatal(err)
		}
		ifs[f[1]] = strings.TrimSpace(mac) + " " + f[3]
	}
	return ifs
}

func runIn(ctx context.Context, sb *podsim.Sandbox, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", sb.NetnsName()}, args...)...).CombinedOutput()
	return string(out), err
}

// annotatedIfaces is what the pod's annotations say its interfaces are: "mac addr/len" for
// eth0 and each attachment's interface.
func (ae *attachEnv) annotatedIfaces(ctx context.Context, t *testing.T, name string, providers map[string]string) map[string]string {
	t.Helper()
	p, err := ae.kubelet.Kube.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for ifName, prov := range providers {
		n, err := annotation.KeysFor(prov).Decode(p.Annotations)
		if err != nil {
			t.Fatalf("pod %s provider %s: %v (%v)", name, prov, err, p.Annotations)
		}
		out[ifName] = n.MAC.String() + " " + n.Prefixes()[0].String()
	}
	return out
}

// TestAttachments: a pod selecting two kube-ovn NADs gets three interfaces, each with the
// address and MAC its annotations ("ovn.", "a.default.ovn.", "b.default.ovn.kubernetes.io/")
// name; two such pods reach each other over each attachment Subnet, and eth0 keeps the only
// default route. The runtime is libcni calling the plugin with each NAD's config on net1 and
// net2, as Multus delegates (the plugin found as "kube-ovn" in the bin dir the node installed).
// After 100 create/delete cycles no address or port is left. Bad selections get an
// AttachmentFailed Event naming the attachment and nothing is allocated for them.
func TestAttachments(t *testing.T) {
	env, ctx := startNode(t)
	ae := startAttachEnv(ctx, t, env)
	const networks = "a,b"
	p1 := ae.runAttached(ctx, t, "multi-1", networks)
	p2 := ae.runAttached(ctx, t, "multi-2", networks)
	providers := map[string]string{"eth0": "ovn", "net1": "a.default.ovn", "net2": "b.default.ovn"}
	for _, p := range []*attachedPod{p1, p2} {
		want := ae.annotatedIfaces(ctx, t, p.sb.Pod.Name, providers)
		got := podIfaces(ctx, t, p.sb)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("pod %s interfaces %v, want the annotated %v", p.sb.Pod.Name, got, want)
		}
		t.Logf("pod %s: %v", p.sb.Pod.Name, got)
		routes, _ := runIn(ctx, p.sb, "ip", "-4", "route", "show", "default")
		if strings.Count(routes, "default") != 1 || !strings.Contains(routes, "dev eth0") {
			t.Fatalf("pod %s default routes %q: want one, via eth0", p.sb.Pod.Name, routes)
		}
		for _, lsp := range []string{"default", "default.a.default.ovn", "default.b.default.ovn"} {
			if !env.lspExists(ctx, t, p.sb.Pod.Name+"."+lsp) {
				t.Fatalf("no port %s.%s", p.sb.Pod.Name, lsp)
			}
		}
	}
	for _, ifName := range []string{"eth0", "net1", "net2"} {
		if out, err := podsim.Ping(ctx, p1.sb, p2.nets[ifName]); err != nil {
			t.Fatalf("%s -> %s over %s: %v\n%s", p1.sb.Pod.Name, p2.nets[ifName], ifName, err, out)
		}
		if out, err := podsim.Ping(ctx, p2.sb, p1.nets[ifName]); err != nil {
			t.Fatalf("%s -> %s over %s: %v\n%s", p2.sb.Pod.Name, p1.nets[ifName], ifName, err, out)
		}
	}

	t.Run("bad selections", func(t *testing.T) { ae.checkBadSelections(ctx, t) })
	t.Run("restart with the ipam database lost", func(t *testing.T) { ae.checkRestart(ctx, t, p1, p2) })

	const cycles = 100
	start := time.Now()
	for i := range cycles {
		ap := ae.runAttached(ctx, t, fmt.Sprintf("cycle-%d", i), networks)
		ae.delAttached(ctx, t, ap, networks)
	}
	t.Logf("%d create/delete cycles with two attachments in %v", cycles, time.Since(start).Round(time.Millisecond))
	eventually(ctx, t, "no address or port left by the cycles", func() bool {
		return !strings.Contains(ae.ipamList(ctx, t), "default/cycle-") && !strings.Contains(ae.nbctl(ctx, t, "--bare", "--columns=name", "list", "Logical_Switch_Port"), "cycle-")
	})
	// The cycles' ports go with their DELs; the "gone" pod's (its namespace removed without a
	// DEL) go with the port sweep, two checks after the kernel has torn its namespace down,
	// which under load lags behind the namespace's removal by seconds.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		ports, _ := env.rig.Run(ctx, "ovs-vsctl", "--db="+env.rig.OVSEndpoint, "list-ports", "br-int")
		n := strings.Count(string(ports), "_net")
		if n == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("br-int still holds %d attachment ports a minute after the cycles, want the 4 of multi-1 and multi-2:\n%s", n, ports)
		}
	}
}

// checkBadSelections: each bad selection gets an AttachmentFailed Event naming what is wrong,
// its CNI ADD fails at once naming it too, and the pod gets nothing (no address, no port),
// its primary network included.
func (ae *attachEnv) checkBadSelections(ctx context.Context, t *testing.T) {
	cases := []struct{ name, networks, ann, event string }{
		{"bad-missing", "a,gone", "", "attachment default/gone: NetworkAttachmentDefinition default/gone not found"},
		{"bad-json", `[{"name":"a"`, "", "malformed JSON"},
		{"bad-dup", "a@data,b@data", "", "attachments default/a and default/b both ask for interface data"},
		{"bad-static", "a,b", "172.17.0.9", "attachment default/b: address 172.17.0.9 belongs to subnet att-a"},
	}
	ae.createNAD(ctx, t, "orphan", `{"cniVersion":"0.3.1","type":"kube-ovn","provider":"orphan.default.ovn"}`)
	cases = append(cases, struct{ name, networks, ann, event string }{"bad-orphan", "orphan", "", "no Subnet has provider orphan.default.ovn"})
	var pods []*corev1.Pod
	for _, c := range cases {
		ann := map[string]string{multus.NetworksAnnotation: c.networks}
		if c.ann != "" {
			ann["b.default.ovn.kubernetes.io/ip_address"] = c.ann
		}
		pod, err := ae.kubelet.CreatePod(ctx, "default", c.name, ann)
		if err != nil {
			t.Fatal(err)
		}
		pods = append(pods, pod)
		ev := waitEvent(ctx, t, ae.env, pod, "AttachmentFailed")
		if !strings.Contains(ev.Message, c.event) {
			t.Errorf("pod %s: event %q, want it to name %q", c.name, ev.Message, c.event)
		}
		t.Logf("%s: %s", c.name, ev.Message)
		ae.checkAddRefused(ctx, t, pod, c.event)
	}
	ipam := ae.ipamList(ctx, t)
	for _, p := range pods {
		if strings.Contains(ipam, "default/"+p.Name) || ae.lspExists(ctx, t, p.Name+".default") {
			t.Errorf("bad pod %s got an address or a port:\n%s", p.Name, ipam)
		}
		if err := ae.kubelet.DeletePod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
}

// checkAddRefused: the pod's CNI ADD fails with the controller's reason (naming want), at once
// rather than at its timeout (the rig's is the daemon's default, 60 s).
func (ae *attachEnv) checkAddRefused(ctx context.Context, t *testing.T, pod *corev1.Pod, want string) {
	t.Helper()
	actx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	start := time.Now()
	sb, err := ae.kubelet.RunSandbox(actx, pod)
	if sb != nil {
		t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("pod %s: CNI ADD %v, want an error naming %q", pod.Name, err, want)
		return
	}
	t.Logf("%s: CNI ADD refused in %v: %v", pod.Name, time.Since(start).Round(time.Millisecond), err)
}

// checkRestart: edgeovn killed, its IPAM database lost, a pod with attachments deleted
// meanwhile; the restarted controller claims the live pods' attachments from their
// annotations before it allocates (a new pod gets other addresses), removes the gone pod's
// attachment ports, and the live pods still reach each other over each attachment.
func (ae *attachEnv) checkRestart(ctx context.Context, t *testing.T, p1, p2 *attachedPod) {
	gone := ae.runAttached(ctx, t, "gone", "a,b")
	ae.stopDaemon(t)
	if err := ae.kubelet.DeletePod(ctx, gone.sb.Pod); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(ae.ipamDB + suffix)
	}
	ae.startDaemon(ctx, t, "edgeovn-restarted")
	eventually(ctx, t, "the gone pod's attachment ports removed", func() bool {
		return !ae.lspExists(ctx, t, "gone.default.a.default.ovn") && !ae.lspExists(ctx, t, "gone.default.b.default.ovn")
	})
	fresh := ae.runAttached(ctx, t, "fresh", "a,b")
	for _, ifName := range []string{"net1", "net2"} {
		if ip := fresh.nets[ifName]; ip == p1.nets[ifName] || ip == p2.nets[ifName] {
			t.Fatalf("new pod got %s on %s, which a live pod holds", ip, ifName)
		}
		if out, err := podsim.Ping(ctx, p1.sb, p2.nets[ifName]); err != nil {
			t.Fatalf("after the restart, %s over %s: %v\n%s", p2.nets[ifName], ifName, err, out)
		}
	}
	list := ae.ipamList(ctx, t)
	for _, want := range []string{"default/multi-1 a.default.ovn", "default/multi-2 b.default.ovn"} {
		found := false
		for _, line := range strings.Split(list, "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[1]+" "+f[2] == want {
				found = true
			}
		}
		if !found {
			t.Fatalf("rebuilt ipam lacks %s:\n%s", want, list)
		}
	}
	ae.delAttached(ctx, t, fresh, "a,b")
}
