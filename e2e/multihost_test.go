package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// placedPod is a pod sandbox and the host it runs on.
type placedPod struct {
	sb   *podsim.Sandbox
	host int
}

// TestMultiHost: pods on three hosts, each wired by its own host's edgeovn (the same binary
// and flags but the node name; one of them holds the controller Lease). Every pod reaches
// every other pod, on its host and across hosts over Geneve, with ping and TCP; every pod
// reaches its own host and the other hosts; each host has a Geneve tunnel to each other host,
// its chassis's southbound encapsulation address is its underlay address, and each pod port
// is pinned to, and bound on, its own host's chassis.
func TestMultiHost(t *testing.T) {
	cl, ctx := startCluster(t, 3)
	var pods []placedPod
	for i, name := range []string{"a1", "a2", "b", "c"} {
		host := max(i-1, 0) // a1 and a2 on edge-1: one same-host pair
		pods = append(pods, placedPod{runPod(ctx, t, cl.hosts[host], name), host})
	}
	for _, p := range pods {
		node := cl.names[p.host]
		got := strings.Trim(strings.TrimSpace(cl.central(ctx, t, "ovn-nbctl", "--db="+cl.c.Central.NBEndpoint,
			"get", "Logical_Switch_Port", p.sb.Pod.Name+".default", "options:requested-chassis")), `"`)
		if got != node {
			t.Errorf("pod %s on %s: requested-chassis %q", p.sb.Pod.Name, node, got)
		}
	}
	checkBindings(ctx, t, cl, pods)
	checkTunnels(ctx, t, cl)

	start := time.Now()
	for _, a := range pods {
		for _, b := range pods {
			if a.sb == b.sb {
				continue
			}
			retryPing(ctx, t, a.sb, b.sb.IP(), fmt.Sprintf("pod %s (%s) -> pod %s (%s)", a.sb.Pod.Name, cl.names[a.host], b.sb.Pod.Name, cl.names[b.host]))
			if err := podsim.TCP(ctx, a.sb, b.sb); err != nil {
				t.Fatalf("tcp %s (%s) -> %s (%s): %v", a.sb.Pod.Name, cl.names[a.host], b.sb.Pod.Name, cl.names[b.host], err)
			}
		}
	}
	t.Logf("pod matrix (%d pairs, ping and 140 KB TCP each) in %v (under load)", len(pods)*(len(pods)-1), time.Since(start).Round(time.Millisecond))
	for _, p := range pods {
		for i, h := range cl.hosts {
			what := fmt.Sprintf("pod %s (%s) -> host %s (%s)", p.sb.Pod.Name, cl.names[p.host], cl.names[i], h.rig.NodeIP)
			retryPing(ctx, t, p.sb, h.rig.NodeIP, what)
			if err := podsim.TCPBetween(ctx, p.sb.Netns, h.rig.NetnsPath, h.rig.NodeIP); err != nil {
				t.Fatalf("tcp %s: %v", what, err)
			}
		}
	}
}

// retryPing pings until a reply comes (the datapath drops the first packets to a host whose
// MAC it has not resolved yet), for at most 20 s.
func retryPing(ctx context.Context, t *testing.T, from *podsim.Sandbox, to netip.Addr, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var out string
	var err error
	for ctx.Err() == nil {
		if out, err = podsim.Ping(ctx, from, to); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: no ping reply in 20 s: %v\n%s", what, err, out)
}

// checkBindings: each pod port is bound (southbound Port_Binding) on its own host's chassis.
func checkBindings(ctx context.Context, t *testing.T, cl *cluster, pods []placedPod) {
	t.Helper()
	sb := "--db=" + cl.c.Central.SBEndpoint
	for _, p := range pods {
		lsp := p.sb.Pod.Name + ".default"
		uuid := strings.TrimSpace(cl.central(ctx, t, "ovn-sbctl", sb, "--bare", "--columns=chassis", "find", "Port_Binding", "logical_port="+lsp))
		if uuid == "" {
			t.Errorf("port %s is bound on no chassis", lsp)
			continue
		}
		name := strings.Trim(strings.TrimSpace(cl.central(ctx, t, "ovn-sbctl", sb, "get", "Chassis", uuid, "name")), `"`)
		if name != cl.names[p.host] {
			t.Errorf("port %s bound on chassis %q, want its host %s", lsp, name, cl.names[p.host])
		}
	}
}

// checkTunnels: on each host, ovs-vsctl shows one Geneve tunnel to every other host's
// underlay address, and the southbound has the host's chassis with its underlay address as
// Geneve endpoint.
func checkTunnels(ctx context.Context, t *testing.T, cl *cluster) {
	t.Helper()
	for i, h := range cl.hosts {
		var want []string
		for j, o := range cl.hosts {
			if j != i {
				want = append(want, o.rig.NodeIP.String())
			}
		}
		var got []string
		var out []byte
		var err error
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			out, err = h.rig.Run(ctx, "ovs-vsctl", "--db="+h.rig.OVSEndpoint, "--bare", "--columns=options", "find", "Interface", "type=geneve")
			if got = remoteIPs(string(out)); err == nil && slices.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: geneve tunnels to %v, want %v: %v\n%s", cl.names[i], got, want, err, out)
			}
		}
		t.Logf("%s: geneve tunnels to %v", cl.names[i], got)
		ip := strings.TrimSpace(cl.central(ctx, t, "ovn-sbctl", "--db="+cl.c.Central.SBEndpoint, "--bare", "--columns=ip",
			"find", "Encap", "chassis_name="+cl.names[i], "type=geneve"))
		if ip != h.rig.NodeIP.String() {
			t.Errorf("chassis %s: southbound Geneve endpoint %q, want its underlay address %s", cl.names[i], ip, h.rig.NodeIP)
		}
	}
}

// remoteIPs picks the remote_ip values out of `--bare --columns=options` output, sorted.
func remoteIPs(out string) []string {
	var ips []string
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, "remote_ip="); ok {
			ips = append(ips, strings.Trim(v, `",`))
		}
	}
	slices.Sort(ips)
	return ips
}
