package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestEncapAddress: the encapsulation address follows the host. A host whose default route
// changes (a new source address) gets its chassis's Geneve endpoint moved in the southbound,
// the other hosts' tunnels follow, and its pods stay reachable across hosts. A host with no
// default route, started with the loopback endpoint an older edgeovn wrote, has that removed,
// stays not ready (CNI STATUS saying why) and registers no 127.0.0.1; given a route, it turns
// ready and registers its own address.
func TestEncapAddress(t *testing.T) {
	const noRoute = 2 // edge-3
	cl, ctx := startClusterWith(t, clusterSpec{hosts: 3, unready: []int{noRoute},
		prepare: func(ctx context.Context, t *testing.T, i int, h *harness.Rig) {
			if i != noRoute {
				return
			}
			mustRun(ctx, t, h, "ovs-vsctl", "--db="+h.OVSEndpoint, "set", "Open_vSwitch", ".", "external_ids:ovn-encap-ip=127.0.0.1")
			mustRun(ctx, t, h, "ip", "route", "del", "default")
		}})
	a, b := runPod(ctx, t, cl.hosts[0], "a"), runPod(ctx, t, cl.hosts[1], "b")
	retryPing(ctx, t, a, b.IP(), "pod a (edge-1) -> pod b (edge-2)")

	third := cl.hosts[noRoute]
	eventually(ctx, t, "the loopback endpoint removed on edge-3", func() bool { return encapIPOf(ctx, third) == "" })
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		err := third.kubelet.Status(ctx)
		if err == nil || !strings.Contains(err.Error(), "no IPv4 default route") {
			t.Fatalf("edge-3 without a default route: CNI STATUS = %v, want not ready saying there is no default route", err)
		}
		if got := cl.sbEncaps(ctx, t, "ip=127.0.0.1") + cl.sbEncaps(ctx, t, "chassis_name=edge-3"); got != "" {
			t.Fatalf("edge-3 without a default route registered a Geneve endpoint: %s", got)
		}
	}
	t.Logf("edge-3 without a default route: not ready: %v", third.kubelet.Status(ctx))

	moveEncap(ctx, t, cl, 1, 0) // edge-3, no chassis yet, has no tunnels to follow
	retryPing(ctx, t, a, b.IP(), "pod a (edge-1) -> pod b (edge-2) after edge-2's endpoint moved")
	if err := podsim.TCP(ctx, a, b); err != nil {
		t.Fatalf("tcp pod a -> pod b after edge-2's endpoint moved: %v", err)
	}

	mustRun(ctx, t, third.rig, "ip", "route", "add", "default", "via", harness.UnderlayGateway().String(), "dev", harness.PhyBridge())
	if err := third.kubelet.WaitReady(ctx); err != nil {
		t.Fatalf("edge-3 with a default route again: %v", err)
	}
	eventually(ctx, t, "edge-3 registered at its underlay address", func() bool {
		return strings.TrimSpace(cl.sbEncaps(ctx, t, "chassis_name=edge-3")) == third.rig.NodeIP.String()
	})
	c := runPod(ctx, t, third, "c")
	retryPing(ctx, t, c, a.IP(), "pod c (edge-3) -> pod a (edge-1)")
	retryPing(ctx, t, c, b.IP(), "pod c (edge-3) -> pod b (edge-2, at its moved endpoint)")
}

// moveEncap gives host i a second underlay address and makes it the default route's source:
// its chassis's Geneve endpoint moves to it, edgeovn logs the move, and the tunnels of the
// hosts named follow.
func moveEncap(ctx context.Context, t *testing.T, cl *cluster, i int, others ...int) {
	t.Helper()
	h, name := cl.hosts[i], cl.names[i]
	a4 := h.rig.NodeIP.As4()
	a4[3] += 100
	moved := netip.AddrFrom4(a4)
	start := time.Now()
	mustRun(ctx, t, h.rig, "ip", "addr", "add", netip.PrefixFrom(moved, harness.UnderlayPrefix().Bits()).String(), "dev", harness.PhyBridge())
	mustRun(ctx, t, h.rig, "ip", "route", "replace", "default", "via", harness.UnderlayGateway().String(),
		"dev", harness.PhyBridge(), "src", moved.String())
	eventually(ctx, t, name+"'s southbound Geneve endpoint moved to "+moved.String(), func() bool {
		return strings.TrimSpace(cl.sbEncaps(ctx, t, "chassis_name="+name)) == moved.String()
	})
	t.Logf("%s: default route's source %s -> %s, southbound Encap moved %v later (under load)", name, h.rig.NodeIP, moved, time.Since(start).Round(time.Millisecond))
	for _, j := range others {
		o := cl.hosts[j]
		eventually(ctx, t, cl.names[j]+"'s tunnel to "+name+" follows", func() bool {
			out, err := o.rig.Run(ctx, "ovs-vsctl", "--db="+o.rig.OVSEndpoint, "--bare", "--columns=options", "find", "Interface", "type=geneve")
			return err == nil && strings.Contains(strings.Join(remoteIPs(string(out)), " "), moved.String())
		})
	}
	if log, _ := os.ReadFile(h.daemon.Log); !strings.Contains(string(log), `msg="encapsulation address changed" role=node from=`+h.rig.NodeIP.String()+" encap_ip="+moved.String()) {
		t.Errorf("%s's edgeovn did not log the move", name)
	}
}

// sbEncaps lists the southbound Encap rows' ip matching cond ("column=value").
func (cl *cluster) sbEncaps(ctx context.Context, t *testing.T, cond string) string {
	t.Helper()
	return cl.central(ctx, t, "ovn-sbctl", "--db="+cl.c.Central.SBEndpoint, "--bare", "--columns=ip", "find", "Encap", cond)
}

// encapIPOf is the host's Open_vSwitch ovn-encap-ip, "" when unset.
func encapIPOf(ctx context.Context, e *env) string {
	out, err := e.rig.Run(ctx, "ovs-vsctl", "--db="+e.rig.OVSEndpoint, "--if-exists", "get", "Open_vSwitch", ".", "external_ids:ovn-encap-ip")
	if err != nil {
		return fmt.Sprintf("(error: %v)", err)
	}
	return strings.Trim(strings.TrimSpace(string(out)), `"`)
}

func mustRun(ctx context.Context, t *testing.T, r *harness.Rig, name string, args ...string) {
	t.Helper()
	if _, err := r.Run(ctx, name, args...); err != nil {
		t.Fatal(err)
	}
}
