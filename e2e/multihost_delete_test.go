package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestNodeDeleted: a host leaves the cluster for good: its edgeovn and ovn-controller stop,
// its pod is deleted (as the pod garbage collector does for a node that is gone) and its
// Node deleted. Its pod's and its join port, its router policies and address set go from the
// northbound, its chassis and Geneve endpoint from the southbound, the other hosts' tunnels
// to it with them, and its join and pod addresses from the IPAM, while the remaining hosts'
// pods keep talking.
func TestNodeDeleted(t *testing.T) {
	cl, ctx := startCluster(t, 3)
	a, b, c := runPod(ctx, t, cl.hosts[0], "a"), runPod(ctx, t, cl.hosts[1], "b"), runPod(ctx, t, cl.hosts[2], "c")
	retryPing(ctx, t, a, c.IP(), "pod a (edge-1) -> pod c (edge-3)")
	retryPing(ctx, t, a, b.IP(), "pod a (edge-1) -> pod b (edge-2)")
	gone := cl.hosts[2]
	join := joinIP(ctx, t, cl, "edge-3")

	start := time.Now()
	if err := gone.daemon.Stop(); err != nil {
		t.Fatal(err)
	}
	ctl, err := gone.rig.Daemon("ovn-controller")
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := gone.kubelet.DeletePod(ctx, c.Pod); err != nil {
		t.Fatal(err)
	}
	if err := gone.kubelet.Kube.CoreV1().Nodes().Delete(ctx, "edge-3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	nb, sb := "--db="+cl.c.Central.NBEndpoint, "--db="+cl.c.Central.SBEndpoint
	for what, cond := range map[string]func() bool{
		"edge-3's join port and pod c's port gone": func() bool {
			out := cl.central(ctx, t, "ovn-nbctl", nb, "--bare", "--columns=name", "list", "Logical_Switch_Port")
			return !strings.Contains(out, "node-edge-3") && !strings.Contains(out, "c.default") && strings.Contains(out, "node-edge-1")
		},
		"edge-3's router policies gone": func() bool {
			return !strings.Contains(cl.central(ctx, t, "ovn-nbctl", nb, "lr-policy-list", "ovn-cluster"), join)
		},
		"edge-3's address set gone": func() bool {
			return !strings.Contains(cl.central(ctx, t, "ovn-nbctl", nb, "--bare", "--columns=name", "list", "Address_Set"), "edge_3.")
		},
		"edge-3's chassis and Geneve endpoint gone": func() bool {
			return !strings.Contains(cl.central(ctx, t, "ovn-sbctl", sb, "--bare", "--columns=name", "list", "Chassis"), "edge-3") &&
				!strings.Contains(cl.central(ctx, t, "ovn-sbctl", sb, "--bare", "--columns=ip", "list", "Encap"), gone.rig.NodeIP.String())
		},
		"the other hosts' tunnels to edge-3 gone": func() bool {
			for i, h := range cl.hosts[:2] {
				out, err := h.rig.Run(ctx, "ovs-vsctl", "--db="+h.rig.OVSEndpoint, "--bare", "--columns=options", "find", "Interface", "type=geneve")
				if err != nil || !slices.Equal(remoteIPs(string(out)), []string{cl.hosts[1-i].rig.NodeIP.String()}) {
					return false
				}
			}
			return true
		},
	} {
		eventually(ctx, t, what, cond)
	}
	t.Logf("edge-3 stopped and deleted: its rows, chassis and tunnels gone %v later (under load)", time.Since(start).Round(time.Millisecond))
	leader := leaderHost(ctx, t, cl)
	eventually(ctx, t, "edge-3's join address and pod c's address released in the leader's IPAM", func() bool {
		list := leader.ipamList(ctx, t)
		return !strings.Contains(list, "node:edge-3") && !strings.Contains(list, "["+c.IP().String()+"]") &&
			strings.Contains(list, "node:edge-1") && strings.Contains(list, "default/a")
	})
	retryPing(ctx, t, a, b.IP(), "pod a (edge-1) -> pod b (edge-2) after edge-3 left")
	if err := podsim.TCP(ctx, a, b); err != nil {
		t.Fatalf("tcp pod a -> pod b after edge-3 left: %v", err)
	}
}

// joinIP is the node's join address, from the controller's annotation on its Node.
func joinIP(ctx context.Context, t *testing.T, cl *cluster, node string) string {
	t.Helper()
	var ip string
	eventually(ctx, t, "join annotation on "+node, func() bool {
		n, err := cl.hosts[0].kubelet.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false
		}
		a, err := annotation.Decode(n.Annotations)
		if err != nil || a.Switch != "join" || len(a.IPs) == 0 {
			return false
		}
		ip = a.IPs[0].String()
		return true
	})
	return ip
}

// leaderHost is the host whose edgeovn holds the controller Lease (its identity is the node
// name) once the Lease is held by a running host.
func leaderHost(ctx context.Context, t *testing.T, cl *cluster) *env {
	t.Helper()
	var leader *env
	eventually(ctx, t, "a running host holding the controller Lease", func() bool {
		l, err := cl.hosts[0].kubelet.Kube.CoordinationV1().Leases("kube-system").Get(ctx, "edgeovn-controller", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false
		}
		i := slices.Index(cl.names, *l.Spec.HolderIdentity)
		if i < 0 {
			return false
		}
		select {
		case <-cl.hosts[i].daemon.Done():
			return false
		default:
		}
		leader = cl.hosts[i]
		return true
	})
	return leader
}
