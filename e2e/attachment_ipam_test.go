package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/multus"
	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// The macvlan network: a Subnet with the IPAM-only provider mv.default, its first hundred
// addresses excluded, and a NAD of macvlan (bridge mode on a veth parent in the host's
// namespace) with "ipam": {"type": "kube-ovn", "provider": "mv.default"}.
const (
	mvSubnet   = "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: mv\nspec:\n  protocol: IPv4\n  cidrBlock: 172.19.0.0/24\n  gateway: 172.19.0.1\n  provider: mv.default\n  excludeIps:\n  - 172.19.0.2..172.19.0.100\n"
	mvParent   = "mvparent"
	mvProvider = "mv.default"
)

var (
	mvCIDR     = netip.MustParsePrefix("172.19.0.0/24")
	mvExcluded = [2]netip.Addr{netip.MustParseAddr("172.19.0.2"), netip.MustParseAddr("172.19.0.100")}
)

// mvConf is the macvlan NAD's config with ipam as given (the rig's daemon socket added to it).
func mvConf(name, ipam string) string {
	return fmt.Sprintf(`{"cniVersion":"0.3.1","name":%q,"type":"macvlan","master":%q,"mode":"bridge","ipam":%s}`, name, mvParent, ipam)
}

func mvIPAM(env *env, provider string) string {
	return fmt.Sprintf(`{"type":"kube-ovn","server_socket":"/run/openvswitch/kube-ovn-daemon.sock","provider":%q,"serverSocket":%q}`, provider, daemon.Socket(env.rig))
}

// startMacvlanEnv adds the macvlan network to an attachment rig.
func startMacvlanEnv(ctx context.Context, t *testing.T, env *env) *attachEnv {
	t.Helper()
	ae := startAttachEnv(ctx, t, env)
	// The parent is one end of a veth pair (this kernel has no dummy links); the pods'
	// macvlans in bridge mode reach each other through it.
	for _, args := range [][]string{{"link", "add", mvParent, "type", "veth", "peer", "name", mvParent + "-p"},
		{"link", "set", mvParent + "-p", "up"}, {"link", "set", mvParent, "up"}} {
		if out, err := env.rig.Run(ctx, "ip", args...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	subnets := ae.dyn.Resource(kubeovn.SubnetResource)
	applyYAML(ctx, t, subnets, mvSubnet)
	waitCondition(ctx, t, subnets, "mv", kubeovn.ConditionReady, "True", "")
	waitCondition(ctx, t, subnets, "mv", kubeovn.ConditionUnsupported, "False", "")
	ae.nads["mv"] = mvConf("mv", mvIPAM(env, mvProvider))
	ae.createNAD(ctx, t, "mv", ae.nads["mv"])
	return ae
}

// checkMacvlanAddr: the address macvlan put on net1 is the one the CNI result and the pod's
// mv.default annotations name, in the Subnet and outside its excludeIps.
func (ae *attachEnv) checkMacvlanAddr(ctx context.Context, t *testing.T, ap *attachedPod) {
	t.Helper()
	got := ap.nets["net1"]
	if !mvCIDR.Contains(got) || got.Compare(mvExcluded[0]) >= 0 && got.Compare(mvExcluded[1]) <= 0 {
		t.Fatalf("pod %s net1 address %s: want one in %s outside the excluded %s..%s", ap.sb.Pod.Name, got, mvCIDR, mvExcluded[0], mvExcluded[1])
	}
	ann := ae.annotatedIfaces(ctx, t, ap.sb.Pod.Name, map[string]string{"net1": mvProvider})["net1"]
	if _, pfx, _ := strings.Cut(ann, " "); pfx != netip.PrefixFrom(got, 24).String() {
		t.Fatalf("pod %s: net1 got %s, its %s annotations say %s", ap.sb.Pod.Name, got, mvProvider, ann)
	}
}

// TestAttachmentsMacvlanIPAM: macvlan with edgeovn (installed as kube-ovn) as its IPAM takes
// its addresses from the Subnet whose provider is "<nad>.<namespace>", honouring excludeIps;
// the pod's net1 is macvlan's (no OVN port), two pods on one parent reach each other, an
// IPAM GC with no valid attachment removes no pod port, bad ipam sections get a CNI error
// naming the field and leak nothing, and 100 create/delete cycles leave no address held (the
// IPAM and the Subnet's status).
func TestAttachmentsMacvlanIPAM(t *testing.T) {
	env, ctx := startNode(t)
	ae := startMacvlanEnv(ctx, t, env)
	p1 := ae.runAttached(ctx, t, "mv-1", "mv")
	p2 := ae.runAttached(ctx, t, "mv-2", "mv")
	for _, p := range []*attachedPod{p1, p2} {
		ae.checkMacvlanAddr(ctx, t, p)
		if out, _ := runIn(ctx, p.sb, "ip", "-d", "link", "show", "net1"); !strings.Contains(out, "macvlan mode bridge") {
			t.Fatalf("pod %s net1 is not macvlan's:\n%s", p.sb.Pod.Name, out)
		}
		if lsp := p.sb.Pod.Name + ".default." + mvProvider; env.lspExists(ctx, t, lsp) {
			t.Fatalf("an IPAM-only attachment got an OVN port %s", lsp)
		}
		t.Logf("pod %s: %v", p.sb.Pod.Name, podIfaces(ctx, t, p.sb))
	}
	if out, err := pingIf(ctx, p1.sb, p2.nets["net1"], "net1"); err != nil {
		t.Fatalf("mv-1 -> mv-2 over macvlan: %v\n%s", err, out)
	}
	if out, err := pingIf(ctx, p2.sb, p1.nets["net1"], "net1"); err != nil {
		t.Fatalf("mv-2 -> mv-1 over macvlan: %v\n%s", err, out)
	}

	t.Run("ipam gc keeps the pod ports", func(t *testing.T) { ae.checkIPAMGC(ctx, t) })
	t.Run("bad ipam sections", func(t *testing.T) { ae.checkBadIPAM(ctx, t, p1) })

	portsBefore := ae.brIntPorts(ctx, t)
	const cycles = 100
	start := time.Now()
	for i := range cycles {
		ap := ae.runAttached(ctx, t, fmt.Sprintf("mvc-%d", i), "mv")
		ae.checkMacvlanAddr(ctx, t, ap)
		ae.delAttached(ctx, t, ap, "mv")
	}
	t.Logf("%d create/delete cycles of a macvlan pod in %v", cycles, time.Since(start).Round(time.Millisecond))
	ae.waitMacvlanHeld(ctx, t, 2, "mvc-")
	if lsps := ae.nbctl(ctx, t, "--bare", "--columns=name", "list", "Logical_Switch_Port"); strings.Contains(lsps, "mvc-") {
		t.Fatalf("northbound ports of the cycles' pods left:\n%s", lsps)
	}
	if after := ae.brIntPorts(ctx, t); after != portsBefore {
		t.Fatalf("br-int ports after the cycles:\n%s\nwant those before:\n%s", after, portsBefore)
	}
	for _, p := range []*attachedPod{p1, p2} {
		ae.delAttached(ctx, t, p, "mv")
	}
	ae.waitMacvlanHeld(ctx, t, 0, "mv-")
}

// waitMacvlanHeld waits until the mv Subnet holds want addresses (its status and the IPAM)
// and no pod whose name starts with prefix holds any.
func (ae *attachEnv) waitMacvlanHeld(ctx context.Context, t *testing.T, want int, prefix string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		u, err := ae.dyn.Resource(kubeovn.SubnetResource).Get(ctx, "mv", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sn, err := kubeovn.FromUnstructured(u)
		if err != nil {
			t.Fatal(err)
		}
		ipam := ae.ipamList(ctx, t)
		held := 0
		for _, line := range strings.Split(ipam, "\n") {
			if strings.Contains(line, "172.19.0.") {
				held++
			}
		}
		last = fmt.Sprintf("status v4usingIPs %v, ipam %d:\n%s", sn.Status.V4UsingIPs, held, ipam)
		if int(sn.Status.V4UsingIPs) == want && held == want && !strings.Contains(ipam, "default/"+prefix) {
			t.Logf("subnet mv: %d addresses held (status and ipam), none by %s*", want, prefix)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("subnet mv: want %d addresses held, none by %s*; %s", want, prefix, last)
		}
	}
}

// pingIf pings dst from the sandbox through the interface ifName.
func pingIf(ctx context.Context, sb interface{ NetnsName() string }, dst netip.Addr, ifName string) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", sb.NetnsName(), "ping", "-c3", "-i0.2", "-W2", "-I", ifName, dst.String()).CombinedOutput()
	return string(out), err
}

// brIntPorts lists br-int's ports.
func (ae *attachEnv) brIntPorts(ctx context.Context, t *testing.T) string {
	t.Helper()
	out, err := ae.rig.Run(ctx, "ovs-vsctl", "--db="+ae.rig.OVSEndpoint, "list-ports", "br-int")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// checkIPAMGC: a GC of the macvlan network (the binary called as its IPAM, with no valid
// attachment, as a GC of that network alone would list) removes no pod port: the list is the
// macvlan network's, not the pods' primary ones.
func (ae *attachEnv) checkIPAMGC(ctx context.Context, t *testing.T) {
	before := ae.brIntPorts(ctx, t)
	conf := strings.Replace(mvConf("mv", mvIPAM(ae.env, mvProvider)), `"cniVersion":"0.3.1"`, `"cniVersion":"1.1.0","cni.dev/valid-attachments":[]`, 1)
	cmd := exec.CommandContext(ctx, filepath.Join(ae.kubelet.BinDir, "kube-ovn"))
	cmd.Env = []string{"CNI_COMMAND=GC", "CNI_PATH=" + ae.kubelet.BinDir}
	cmd.Stdin = strings.NewReader(conf)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kube-ovn GC as macvlan's IPAM: %v\n%s", err, out)
	}
	if after := ae.brIntPorts(ctx, t); after != before {
		t.Fatalf("an IPAM GC of the macvlan network changed br-int's ports:\nbefore %s\nafter  %s", before, after)
	}
}

// checkBadIPAM: a malformed ipam section, one without a provider, an OVN provider and a
// provider no Subnet has each fail the ADD with a CNI error naming the field and take no
// address, and the runtime's DEL that follows succeeds and leaves no interface; a pod selecting a NAD whose provider has no Subnet gets an
// AttachmentFailed Event naming it and nothing allocated.
func (ae *attachEnv) checkBadIPAM(ctx context.Context, t *testing.T, p *attachedPod) {
	ipamBefore := ae.ipamList(ctx, t)
	cases := []struct{ name, ipam, want string }{
		{"malformed", `{"type":"kube-ovn","provider":5}`, "field ipam.provider is a JSON number"},
		{"no provider", fmt.Sprintf(`{"type":"kube-ovn","serverSocket":%q}`, daemon.Socket(ae.rig)), "ipam.provider is required"},
		{"ovn provider", `{"type":"kube-ovn","provider":"a.default.ovn"}`, `ipam.provider "a.default.ovn" names an OVN network`},
		{"no subnet", mvIPAM(ae.env, "mvorphan.default"), "ipam.provider mvorphan.default: no Subnet has spec.provider mvorphan.default"},
	}
	for i, c := range cases {
		ifName, conf := fmt.Sprintf("bad%d", i), []byte(mvConf("bad", c.ipam))
		start := time.Now()
		_, err := ae.kubelet.AddAttachment(ctx, p.sb, conf, ifName)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: ADD error %v, want it to name %q", c.name, err, c.want)
		}
		t.Logf("%s (%v): %v", c.name, time.Since(start).Round(time.Millisecond), err)
		// The runtime's DEL after a failed ADD succeeds and takes macvlan's interface (macvlan
		// v1.9.1 leaves it behind when its IPAM fails: its rollback checks a shadowed err).
		if err := ae.kubelet.DelAttachment(ctx, p.sb, conf, ifName); err != nil {
			t.Errorf("%s: DEL after the failed ADD: %v", c.name, err)
		}
		if out, _ := runIn(ctx, p.sb, "ip", "link", "show", ifName); !strings.Contains(out, "does not exist") {
			t.Errorf("%s: ADD and DEL left %s in the pod:\n%s", c.name, ifName, out)
		}
	}
	if after := ae.ipamList(ctx, t); after != ipamBefore {
		t.Errorf("bad ipam sections changed the IPAM:\nbefore %s\nafter %s", ipamBefore, after)
	}
	ae.createNAD(ctx, t, "mvorphan", mvConf("mvorphan", mvIPAM(ae.env, "mvorphan.default")))
	pod, err := ae.kubelet.CreatePod(ctx, "default", "bad-mv", map[string]string{multus.NetworksAnnotation: "mvorphan"})
	if err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(ctx, t, ae.env, pod, "AttachmentFailed")
	if !strings.Contains(ev.Message, "no Subnet has provider mvorphan.default") {
		t.Errorf("pod bad-mv: event %q, want it to name the provider", ev.Message)
	}
	t.Logf("bad-mv: %s", ev.Message)
	if ipam := ae.ipamList(ctx, t); strings.Contains(ipam, "default/bad-mv") {
		t.Errorf("pod bad-mv got an address:\n%s", ipam)
	}
	if err := ae.kubelet.DeletePod(ctx, pod); err != nil {
		t.Fatal(err)
	}
}
