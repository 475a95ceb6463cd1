package e2e

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// TestOwnNodeDeleted: a host whose own Node is deleted while its edgeovn runs removes its ovn0
// (the controller has removed its join port, so ovn0 led nowhere) and its CNI STATUS says why;
// the Node registered again, the controller gives it a join port, ovn0 comes back bound, STATUS
// passes and the host's pod reaches its host through it again.
func TestOwnNodeDeleted(t *testing.T) {
	cl, ctx := startCluster(t, 2)
	h := cl.hosts[1]
	b := runPod(ctx, t, h, "b")
	eventually(ctx, t, "edge-2's ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, h.rig) })
	retryPing(ctx, t, b, h.rig.NodeIP, "pod b -> its host edge-2")

	start := time.Now()
	if err := h.kubelet.Kube.CoreV1().Nodes().Delete(ctx, "edge-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "edge-2 removed ovn0 from br-int and the kernel", func() bool {
		out, err := h.rig.Run(ctx, "ovs-vsctl", "--db="+h.rig.OVSEndpoint, "list-ports", "br-int")
		_, lerr := h.rig.Run(ctx, "ip", "link", "show", "ovn0")
		return err == nil && !strings.Contains(string(out), "ovn0") && lerr != nil
	})
	var status error
	eventually(ctx, t, "edge-2's CNI STATUS says its Node was deleted", func() bool {
		status = h.kubelet.Status(ctx)
		return status != nil && strings.Contains(status.Error(), "Node object was deleted")
	})
	t.Logf("Node deleted: ovn0 removed and STATUS failing %v later (under load): %v", time.Since(start).Round(time.Millisecond), status)

	back := time.Now()
	if err := h.kubelet.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "edge-2's ovn0 back and bound", func() bool { return daemon.HostInterfaceBound(ctx, h.rig) })
	eventually(ctx, t, "edge-2's CNI STATUS passes", func() bool { return h.kubelet.Status(ctx) == nil })
	t.Logf("Node registered again: ovn0 bound and STATUS passing %v later (under load)", time.Since(back).Round(time.Millisecond))
	retryPing(ctx, t, b, h.rig.NodeIP, "pod b -> its host edge-2 after the Node came back")
}
