package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestStaticAddress: a pod that pins ip_address and mac_address (Kube-OVN's annotations) gets
// exactly them; a second pod pinning the same address gets a clear Event and no address.
func TestStaticAddress(t *testing.T) {
	env, ctx := startNode(t)
	k := env.kubelet
	pins := map[string]string{annotation.IPAddress: "10.42.5.5", annotation.MACAddress: "0a:00:00:00:05:05"}
	pod, err := k.CreatePod(ctx, "default", "pinned", pins)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := k.RunSandbox(ctx, pod)
	if sb != nil {
		t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
	}
	if err != nil {
		t.Fatal(err)
	}
	mac := sb.Result.Interfaces[len(sb.Result.Interfaces)-1].Mac
	if sb.IP().String() != "10.42.5.5" || mac != "0a:00:00:00:05:05" {
		t.Fatalf("pinned pod got %s / %s, want 10.42.5.5 / 0a:00:00:00:05:05", sb.IP(), mac)
	}
	t.Logf("pinned pod got %s / %s", sb.IP(), mac)

	second, err := k.CreatePod(ctx, "default", "squatter", map[string]string{annotation.IPAddress: "10.42.5.5"})
	if err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(ctx, t, env, second, "AddressConflict")
	if !strings.Contains(ev.Message, "10.42.5.5") {
		t.Fatalf("conflict event does not name the address: %q", ev.Message)
	}
	t.Logf("second pod's event: %s: %s", ev.Reason, ev.Message)
	got, err := k.Kube.CoreV1().Pods("default").Get(ctx, "squatter", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations[annotation.Allocated] == "true" || env.lspExists(ctx, t, "squatter.default") {
		t.Fatalf("conflicting pod was allocated: %v", got.Annotations)
	}
	if !strings.Contains(env.ipamList(ctx, t), "default/pinned") || strings.Contains(env.ipamList(ctx, t), "default/squatter") {
		t.Fatalf("ipam after conflict:\n%s", env.ipamList(ctx, t))
	}
	checkJoinClaimRefused(ctx, t, env)
}

// checkJoinClaimRefused: a pod whose annotations claim an address of the join network (the
// nodes' ovn0 addresses) as already allocated is never adopted: an Event says why, and it has
// no port and no address in the IPAM.
func checkJoinClaimRefused(ctx context.Context, t *testing.T, env *env) {
	t.Helper()
	claim := map[string]string{annotation.Allocated: "true", annotation.Routed: "true", annotation.LogicalSwitch: "join",
		annotation.IPAddress: "100.64.0.2", annotation.CIDR: "100.64.0.0/16", annotation.Gateway: "100.64.0.1",
		annotation.MACAddress: "0a:00:00:00:06:06"}
	intruder, err := env.kubelet.CreatePod(ctx, "default", "intruder", claim)
	if err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(ctx, t, env, intruder, "AllocationFailed")
	if !strings.Contains(ev.Message, "join") || !strings.Contains(ev.Message, "100.64.0.2") {
		t.Fatalf("join claim event does not name the switch and address: %q", ev.Message)
	}
	if env.lspExists(ctx, t, "intruder.default") || strings.Contains(env.ipamList(ctx, t), "default/intruder") {
		t.Fatalf("a pod claiming a join address was adopted:\n%s", env.ipamList(ctx, t))
	}
}

func waitEvent(ctx context.Context, t *testing.T, env *env, pod *corev1.Pod, reason string) corev1.Event {
	t.Helper()
	sel := fields.Set{"involvedObject.name": pod.Name, "reason": reason}.AsSelector().String()
	var found corev1.Event
	eventually(ctx, t, "event "+reason+" on pod "+pod.Name, func() bool {
		list, err := env.kubelet.Kube.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil || len(list.Items) == 0 {
			return false
		}
		found = list.Items[0]
		return true
	})
	return found
}
