package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestHostNetwork is Kube-OVN's host wiring: the controller gives the node a join address and
// its port on the join switch and says so in the Node's annotations; the node role puts ovn0
// on br-int with that address and routes the pods through it. So the host reaches its pods
// (kubelet's probes), a pod reaches its host, and a pod reaches the outside through the
// host's masquerade: the outside network (another namespace behind a veth) has no route to
// the pods, so its replies come back only because the host rewrote the source.
func TestHostNetwork(t *testing.T) {
	env, ctx := startNode(t)
	a := runPod(ctx, t, env, "pod-a")

	join := nodeJoin(ctx, t, env)
	t.Logf("node %s: join address %v, MAC %s", node, join.IPs, join.MAC)
	eventually(ctx, t, "ovn0 with the join address on the host", func() bool {
		out, err := env.rig.Run(ctx, "ip", "-o", "-4", "addr", "show", "dev", "ovn0")
		return err == nil && strings.Contains(string(out), " "+join.IPs[0].String()+"/")
	})
	if !env.lspExists(ctx, t, "node-"+node) {
		t.Fatalf("no join port node-%s in OVN NB", node)
	}

	eventually(ctx, t, "host reaches pod-a", func() bool {
		_, err := env.rig.Run(ctx, "ping", "-c", "1", "-W", "1", a.IP().String())
		return err == nil
	})
	if out, err := podsim.Ping(ctx, a, env.rig.NodeIP); err != nil {
		t.Fatalf("pod-a cannot reach its host at %s: %v\n%s", env.rig.NodeIP, err, out)
	}

	if err := podsim.TCPBetween(ctx, env.rig.NetnsPath, a.Netns, a.IP()); err != nil {
		t.Fatalf("tcp from the host to pod-a: %v", err)
	}

	outside, outsideNetns := addOutside(ctx, t, env)
	if out, err := podsim.Ping(ctx, a, outside); err != nil {
		t.Fatalf("pod-a cannot reach the outside %s through the host: %v\n%s\n%s", outside, err, out, nftRules(ctx, env))
	}
	if err := podsim.TCPBetween(ctx, a.Netns, outsideNetns, outside); err != nil {
		t.Fatalf("tcp from pod-a to the outside: %v", err)
	}
}

// nodeJoin waits for the controller's join annotations on the node.
func nodeJoin(ctx context.Context, t *testing.T, env *env) annotation.Network {
	t.Helper()
	var n annotation.Network
	eventually(ctx, t, "join annotations on node "+node, func() bool {
		obj, err := env.kubelet.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false
		}
		n, err = annotation.Decode(obj.Annotations)
		return err == nil && n.Switch == "join" && obj.Annotations[annotation.PortNameKey] == "node-"+node
	})
	return n
}

// addOutside connects the host to an "outside" namespace over a veth (198.51.100.0/24, TEST-NET-2)
// whose only route is that subnet, and returns the outside's address and namespace path.
func addOutside(ctx context.Context, t *testing.T, env *env) (netip.Addr, string) {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "eovn-out-" + hex.EncodeToString(b)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", name).Run() })
	run("link", "add", "out0", "netns", env.rig.Netns, "type", "veth", "peer", "name", "eth0", "netns", name)
	run("-n", env.rig.Netns, "addr", "add", "198.51.100.1/24", "dev", "out0")
	run("-n", env.rig.Netns, "link", "set", "out0", "up")
	run("-n", name, "addr", "add", "198.51.100.2/24", "dev", "eth0")
	run("-n", name, "link", "set", "eth0", "up")
	run("-n", name, "link", "set", "lo", "up")
	return netip.MustParseAddr("198.51.100.2"), "/var/run/netns/" + name
}

func nftRules(ctx context.Context, env *env) string {
	out, err := env.rig.Run(ctx, "nft", "list", "ruleset")
	if err != nil {
		return "(nft list ruleset: " + err.Error() + ")"
	}
	return string(out)
}

// TestHostPort: a pod's hostPort (portmap, chained after edgeovn in the config edgeovn wrote)
// takes a connection from outside the host to the pod, and the reply finds its way back
// through ovn0 and the host's connection tracking.
func TestHostPort(t *testing.T) {
	env, ctx := startNode(t)
	withHostPort := func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 18080, Protocol: corev1.ProtocolTCP}}
	}
	pod, err := env.kubelet.CreatePod(ctx, "default", "web", nil, withHostPort)
	if err != nil {
		t.Fatal(err)
	}
	nodeJoin(ctx, t, env)
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })
	sb, err := env.kubelet.RunSandbox(ctx, pod)
	if sb != nil {
		t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, env.daemonLog())
	}
	_, outsideNetns := addOutside(ctx, t, env)
	err = podsim.TCPEcho(ctx, podsim.Echo{ClientNetns: outsideNetns, ServerNetns: sb.Netns,
		Listen: netip.AddrPortFrom(sb.IP(), 8080), Dial: netip.MustParseAddrPort("198.51.100.1:18080")})
	if err != nil {
		t.Fatalf("outside -> host port 18080 -> pod %s:8080: %v\n%s", sb.IP(), err, nftRules(ctx, env))
	}
	// portmap was told its backend (probed once by edgeovn), so it probes nothing per ADD.
	list, err := env.kubelet.ConfList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pm struct {
		Backend string `json:"backend"`
	}
	if err := json.Unmarshal(list.Plugins[len(list.Plugins)-1].Bytes, &pm); err != nil || (pm.Backend != "iptables" && pm.Backend != "nftables") {
		t.Fatalf("portmap's backend %q in the conflist (err %v), want iptables or nftables: %s", pm.Backend, err, list.Bytes)
	}
	if err := env.kubelet.StopSandbox(ctx, sb, true); err != nil {
		t.Fatal(err)
	}
	if rules := nftRules(ctx, env); strings.Contains(rules, "18080") {
		t.Fatalf("host port rules left after CNI DEL:\n%s", rules)
	}
}
