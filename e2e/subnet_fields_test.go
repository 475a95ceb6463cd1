package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// Kube-OVN's Subnet examples for disableGatewayCheck, enableMulticastSnoop and mtu, from its
// documentation (guide/subnet), unchanged: none has a cidrBlock.
const (
	kubeOVNGatewayCheck = `apiVersion: kubeovn.io/v1
kind: Subnet
metadata:
  name: disable-gw-check
spec:
  disableGatewayCheck: true
`
	kubeOVNMulticast = `apiVersion: kubeovn.io/v1
kind: Subnet
metadata:
  name: sample1
spec:
  enableMulticastSnoop: true
`
	kubeOVNMTU = `apiVersion: kubeovn.io/v1
kind: Subnet
metadata:
  name: sample1
spec:
  mtu: 1300
`
)

// TestSubnetFields: Kube-OVN's examples for disableGatewayCheck, enableMulticastSnoop and mtu
// applied unchanged name no field unsupported (they are refused for their missing cidrBlock,
// naming it). A Subnet with mtu: 1300 gives its pods' eth0 that MTU (the default subnet's keep
// the node's 1400) and a 1300-byte packet with DF crosses to another subnet; an mtu out of
// range is refused naming it and the next pod still gets 1300. With enableMulticastSnoop a
// group's traffic reaches the pod that joined it and no other pod of the switch (tcpdump
// there); turned off, the switch floods it to every pod again.
func TestSubnetFields(t *testing.T) {
	env, _ := startNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(env.rig.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	subnets := dyn.Resource(kubeovn.SubnetResource)
	waitCondition(ctx, t, subnets, "ovn-default", kubeovn.ConditionValidated, "True", "")
	for _, doc := range []string{kubeOVNGatewayCheck, kubeOVNMulticast, kubeOVNMTU} {
		name := strings.Fields(doc[strings.Index(doc, "name:"):])[1]
		applyYAML(ctx, t, subnets, doc)
		waitCondition(ctx, t, subnets, name, kubeovn.ConditionUnsupported, "False", "")
		waitCondition(ctx, t, subnets, name, kubeovn.ConditionValidated, "False", "cidrBlock")
		if err := subnets.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(ctx, t, "subnet "+name+" gone", func() bool {
			_, err := subnets.Get(ctx, name, metav1.GetOptions{})
			return err != nil
		})
	}

	t.Run("mtu", func(t *testing.T) { checkSubnetMTU(ctx, t, env, subnets) })
	t.Run("multicast", func(t *testing.T) { checkMulticastSnoop(ctx, t, env, subnets) })
}

func inSubnet(name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Annotations = map[string]string{annotation.LogicalSwitch: name} }
}

func checkSubnetMTU(ctx context.Context, t *testing.T, env *env, subnets dynamic.NamespaceableResourceInterface) {
	applyYAML(ctx, t, subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: small\nspec:\n  cidrBlock: 10.12.0.0/24\n  mtu: 1300\n  disableGatewayCheck: true\n")
	waitCondition(ctx, t, subnets, "small", kubeovn.ConditionReady, "True", "")
	waitCondition(ctx, t, subnets, "small", kubeovn.ConditionUnsupported, "False", "")
	var m *podsim.Sandbox
	view, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	eventually(view, t, "a pod of small with mtu 1300", func() bool {
		// The node's Subnet view follows the API a moment after the controller's status.
		if m != nil {
			_ = env.kubelet.StopSandbox(ctx, m, true)
			_ = env.kubelet.DeletePod(ctx, m.Pod)
		}
		m = runPodIn(ctx, t, env, "default", fmt.Sprintf("m%d", time.Now().UnixNano()%100000), inSubnet("small"))
		mtu := linkMTU(ctx, t, m)
		t.Logf("pod %s of small: mtu %d", m.Pod.Name, mtu)
		return mtu == 1300
	})
	d := runPod(ctx, t, env, "d")
	if got := linkMTU(ctx, t, d); got != 1400 {
		t.Errorf("default subnet's pod: mtu %d, want the node's 1400", got)
	}
	if out, err := exec.CommandContext(ctx, "ip", "netns", "exec", m.NetnsName(), "ping", "-c", "3", "-w", "5", "-M", "do", "-s", "1272", d.IP().String()).CombinedOutput(); err != nil {
		t.Errorf("1300-byte DF ping small -> default: %v\n%s", err, out)
	}
	if out, err := exec.CommandContext(ctx, "ip", "netns", "exec", m.NetnsName(), "ping", "-c", "1", "-M", "do", "-s", "1273", d.IP().String()).CombinedOutput(); err == nil {
		t.Errorf("1301-byte DF ping left a 1300 interface:\n%s", out)
	}

	patchSubnet(ctx, t, subnets, "small", map[string]any{"mtu": 70000})
	waitCondition(ctx, t, subnets, "small", kubeovn.ConditionValidated, "False", "mtu 70000 is outside 68-65535")
	waitCondition(ctx, t, subnets, "small", kubeovn.ConditionReady, "True", "change refused")
	m2 := runPodIn(ctx, t, env, "default", "m-after", inSubnet("small"))
	if got := linkMTU(ctx, t, m2); got != 1300 {
		t.Errorf("pod after a refused mtu: %d, want 1300 kept", got)
	}
}

// linkMTU is the MTU of the sandbox's eth0, read with ip in its namespace.
func linkMTU(ctx context.Context, t *testing.T, sb *podsim.Sandbox) int {
	t.Helper()
	out, err := exec.CommandContext(ctx, "ip", "-n", sb.NetnsName(), "-o", "link", "show", "eth0").CombinedOutput()
	if err != nil {
		t.Fatalf("ip link in %s: %v\n%s", sb.Pod.Name, err, out)
	}
	f := strings.Fields(string(out))
	for i := range f[:len(f)-1] {
		if f[i] == "mtu" {
			var m int
			_, _ = fmt.Sscan(f[i+1], &m)
			return m
		}
	}
	t.Fatalf("no mtu in %s", out)
	return 0
}

func checkMulticastSnoop(ctx context.Context, t *testing.T, env *env, subnets dynamic.NamespaceableResourceInterface) {
	applyYAML(ctx, t, subnets, "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: mc\nspec:\n  cidrBlock: 10.13.0.0/24\n  enableMulticastSnoop: true\n")
	waitCondition(ctx, t, subnets, "mc", kubeovn.ConditionReady, "True", "")
	member, sender, outsider := runPodIn(ctx, t, env, "default", "member", inSubnet("mc")),
		runPodIn(ctx, t, env, "default", "sender", inSubnet("mc")), runPodIn(ctx, t, env, "default", "outsider", inSubnet("mc"))
	group := netip.MustParseAddrPort("239.1.1.1:5000")
	c, err := podsim.JoinGroup(member, "eth0", group)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	eventually(ctx, t, "the member's IGMP report snooped (southbound IGMP_Group)", func() bool {
		out, err := env.rig.Run(ctx, "ovn-sbctl", "--db="+env.rig.SBEndpoint, "--columns=address", "list", "IGMP_Group")
		return err == nil && strings.Contains(string(out), "239.1.1.1")
	})
	seen := func(when string) (bool, bool) {
		t.Helper()
		got := make(chan bool, 1)
		go func() { got <- captures(outsider, "udp port 5000", 4*time.Second) }()
		time.Sleep(500 * time.Millisecond) // tcpdump listening
		var member bool
		for i := 0; i < 6; i++ {
			if err := podsim.SendGroup(sender, group, when); err != nil {
				t.Fatal(err)
			}
			if podsim.Received(c, 300*time.Millisecond) == when {
				member = true
			}
		}
		return member, <-got
	}
	if member, out := seen("snooping"); !member || out {
		t.Errorf("snooping on: member received %v (want true), outsider saw it %v (want false)", member, out)
	}
	patchSubnet(ctx, t, subnets, "mc", map[string]any{"enableMulticastSnoop": false})
	eventually(ctx, t, "snooping off: the outsider sees the group's traffic", func() bool {
		_, out := seen("flooded")
		return out
	})
}

// captures says whether tcpdump on the sandbox's eth0 sees a packet matching filter in wait.
func captures(sb *podsim.Sandbox, filter string, wait time.Duration) bool {
	args := append([]string{"netns", "exec", sb.NetnsName(), "timeout", fmt.Sprint(int(wait.Seconds())), "tcpdump", "-ni", "eth0", "-c", "1"}, strings.Fields(filter)...)
	// Not CommandContext: killing timeout at the deadline would leave tcpdump running.
	return exec.Command("ip", args...).Run() == nil
}
