package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/cni/podnet"
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

// nodeJoin waits for the controller's join annotations on env's node.
func nodeJoin(ctx context.Context, t *testing.T, env *env) annotation.Network {
	t.Helper()
	var n annotation.Network
	node := env.kubelet.Node
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

// TestHostPort: a pod's hostPorts (TCP and UDP), served by edgeovn's daemon from the
// portMappings its plugin takes (no portmap chained), take connections from outside the host
// (the client's address kept), from the host itself on its address and on 127.0.0.1, from
// another pod and from the pod itself (hairpin; both masqueraded, as OVN would otherwise
// send the reply straight back past the host's conntrack). A restart keeps the rules and
// rewrites nothing; a deleted table is repaired; bad input and a host port another pod holds
// fail the ADD with an error naming the mapping and lose nothing; DEL removes exactly that
// pod's rules.
func TestHostPort(t *testing.T) {
	env, ctx := startNode(t)
	withHostPort := func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{
			{ContainerPort: 8080, HostPort: 18080, Protocol: corev1.ProtocolTCP},
			{ContainerPort: 8080, HostPort: 18080, Protocol: corev1.ProtocolUDP}}
	}
	pod, err := env.kubelet.CreatePod(ctx, "default", "web", nil, withHostPort)
	if err != nil {
		t.Fatal(err)
	}
	nodeJoin(ctx, t, env)
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })
	sb := runSandbox(ctx, t, env, pod)
	client := runPod(ctx, t, env, "client")
	outside, outsideNetns := addOutside(ctx, t, env)
	srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: sb.Netns, Port: 8080, Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	// The conflist chains nothing after edgeovn, whose plugin takes the portMappings.
	list, err := env.kubelet.ConfList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Capabilities map[string]bool `json:"capabilities"`
	}
	if err := json.Unmarshal(list.Plugins[0].Bytes, &conf); err != nil || len(list.Plugins) != 1 || !conf.Capabilities["portMappings"] {
		t.Fatalf("conflist: want edgeovn alone with the portMappings capability (err %v): %s", err, list.Bytes)
	}

	host := netip.AddrPortFrom(env.rig.NodeIP, 18080)
	reach := hostPortProbe{ctx: ctx, t: t, env: env}
	reach.answers("outside, tcp", outsideNetns, corev1.ProtocolTCP, netip.MustParseAddrPort("198.51.100.1:18080"), outside)
	reach.answers("outside, udp", outsideNetns, corev1.ProtocolUDP, netip.MustParseAddrPort("198.51.100.1:18080"), outside)
	reach.answers("the host, its address", env.rig.NetnsPath, corev1.ProtocolTCP, host, netip.Addr{})
	reach.answers("the host, 127.0.0.1", env.rig.NetnsPath, corev1.ProtocolTCP, netip.MustParseAddrPort("127.0.0.1:18080"), netip.Addr{})
	reach.answers("another pod, tcp", client.Netns, corev1.ProtocolTCP, host, netip.Addr{})
	reach.answers("another pod, udp", client.Netns, corev1.ProtocolUDP, host, netip.Addr{})
	reach.answers("the pod itself (hairpin)", sb.Netns, corev1.ProtocolTCP, host, netip.Addr{})
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	err = podsim.TCPEcho(ctx, podsim.Echo{ClientNetns: outsideNetns, ServerNetns: sb.Netns,
		Listen: netip.AddrPortFrom(sb.IP(), 8080), Dial: netip.MustParseAddrPort("198.51.100.1:18080")})
	if err != nil {
		t.Fatalf("outside -> host port 18080 -> pod %s:8080, 140 KB echoed: %v\n%s", sb.IP(), err, nftRules(ctx, env))
	}

	checkHostPortRefusals(ctx, t, env, sb)
	checkHostPortRestart(ctx, t, env, sb)

	if err := env.kubelet.StopSandbox(ctx, sb, true); err != nil {
		t.Fatal(err)
	}
	if rules := nftRules(ctx, env); strings.Contains(rules, "18080") || strings.Contains(rules, "edgeovn-hostport") {
		t.Fatalf("host port rules left after CNI DEL:\n%s", rules)
	}
}

// runSandbox runs the pod's sandbox and removes its namespace when the test ends.
func runSandbox(ctx context.Context, t *testing.T, env *env, pod *corev1.Pod) *podsim.Sandbox {
	t.Helper()
	sb, err := env.kubelet.RunSandbox(ctx, pod)
	if sb != nil {
		t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, env.daemonLog())
	}
	return sb
}

type hostPortProbe struct {
	ctx context.Context
	t   *testing.T
	env *env
}

// answers sends a request from netns to addr and wants the pod "web" to answer, seeing the
// client as from (when valid).
func (p hostPortProbe) answers(what, netns string, proto corev1.Protocol, addr netip.AddrPort, from netip.Addr) {
	p.t.Helper()
	var a podsim.Answer
	var err error
	for range 3 { // a first packet may meet an unresolved neighbour
		if a, err = podsim.Send(p.ctx, podsim.SendRequest{Netns: netns, Protocol: proto, Addr: addr}); err == nil {
			break
		}
	}
	if err != nil || a.Server != "web" {
		p.t.Fatalf("%s -> %s %s: answer %+v, %v\n%s", what, proto, addr, a, err, nftRules(p.ctx, p.env))
	}
	if from.IsValid() && a.Client.Addr() != from {
		p.t.Fatalf("%s -> %s %s: the pod saw the client as %s, want %s", what, proto, addr, a.Client, from)
	}
	p.t.Logf("%s -> %s %s: answered, client seen as %s", what, proto, addr, a.Client)
}

// checkHostPortRefusals: bad mappings, and a host port another pod holds, fail the ADD with
// an error naming the mapping; nothing of the refused pod is left and web's rules stay.
func checkHostPortRefusals(ctx context.Context, t *testing.T, env *env, web *podsim.Sandbox) {
	t.Helper()
	before := hostPortTables(ctx, t, env)
	cases := []struct {
		name     string
		mappings []map[string]any
		want     string
	}{
		{"port0", []map[string]any{{"hostPort": 0, "containerPort": 80, "protocol": "tcp"}}, "hostPort must be 1-65535"},
		{"twice", []map[string]any{{"hostPort": 18081, "containerPort": 80, "protocol": "tcp"}, {"hostPort": 18081, "containerPort": 81, "protocol": "TCP"}}, "take the same host port"},
		{"taken", []map[string]any{{"hostPort": 18080, "containerPort": 80, "protocol": "tcp"}}, "is already mapped to container " + web.ContainerID},
		{"badip", []map[string]any{{"hostPort": 18082, "containerPort": 80, "protocol": "tcp", "hostIP": "10.0.0.300"}}, "hostIP is not an IP address"},
	}
	for _, c := range cases {
		pod, err := env.kubelet.CreatePod(ctx, "default", "refused-"+c.name, nil)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := env.kubelet.RunSandboxWithPorts(ctx, pod, c.mappings)
		if sb != nil {
			t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("ADD of %s: error %v, want one saying %q", c.name, err, c.want)
		}
		t.Logf("ADD of %s refused: %v", c.name, err)
		if ports, _ := env.rig.Run(ctx, "ovs-vsctl", "--db="+env.rig.OVSEndpoint, "list-ports", "br-int"); strings.Contains(string(ports), podsimHostIf(sb)) {
			t.Fatalf("refused ADD of %s left its port on br-int:\n%s", c.name, ports)
		}
	}
	if after := hostPortTables(ctx, t, env); after != before {
		t.Fatalf("refused ADDs changed the host port rules:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// checkHostPortRestart: edgeovn restarted keeps the rules (restored from the pod port's
// record, nothing rewritten); the table deleted by hand is repaired.
func checkHostPortRestart(ctx context.Context, t *testing.T, env *env, web *podsim.Sandbox) {
	t.Helper()
	before := hostPortTables(ctx, t, env)
	if err := syscall.Kill(env.daemon.PID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = env.daemon.Wait()
	env.startDaemon(ctx, t, "edgeovn-restarted")
	if after := hostPortTables(ctx, t, env); after != before {
		t.Fatalf("a restart changed the host port rules:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if strings.Contains(env.daemonLog(), "host port rules") {
		t.Fatalf("the restarted daemon rewrote host port rules that were right:\n%s", env.daemonLog())
	}
	if _, err := env.rig.Run(ctx, "nft", "delete", "table", "ip", "edgeovn-hostport"); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the deleted host port table repaired", func() bool { return hostPortTables(ctx, t, env) == before })
	if !strings.Contains(env.daemonLog(), "repaired: host port rules differed") {
		t.Fatalf("repair not logged:\n%s", env.daemonLog())
	}
	err := podsim.TCPEcho(ctx, podsim.Echo{ClientNetns: env.rig.NetnsPath, ServerNetns: web.Netns,
		Listen: netip.AddrPortFrom(web.IP(), 8080), Dial: netip.AddrPortFrom(env.rig.NodeIP, 18080)})
	if err != nil {
		t.Fatalf("host -> host port after restart and repair: %v\n%s", err, nftRules(ctx, env))
	}
}

// hostPortTables is both families' host port tables as nft prints them ("" for none).
func hostPortTables(ctx context.Context, t *testing.T, env *env) string {
	t.Helper()
	var out strings.Builder
	for _, family := range []string{"ip", "ip6"} {
		b, err := env.rig.Run(ctx, "nft", "list", "table", family, "edgeovn-hostport")
		if err == nil {
			out.Write(b)
		}
	}
	return out.String()
}

// podsimHostIf is the host end's name edgeovn gives the sandbox's veth.
func podsimHostIf(sb *podsim.Sandbox) string { return podnet.HostIfName(sb.ContainerID) }
