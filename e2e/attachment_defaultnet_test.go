package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/multus"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestDefaultNetworkMultus: through the real Multus thin plugin, a pod whose
// v1.multus-cni.io/default-network names the kube-ovn NAD a has its primary interface eth0
// on a's Subnet (att-a, 172.17.0.0/24, provider a.default.ovn) instead of its namespace's
// (ovn-default): the annotated address and MAC, the default route via att-a's gateway, its
// attachment b on net1 as usual, and it reaches a pod on ovn-default. Its DEL and deletion
// leave no address or port. A default-network naming a missing NAD fails the ADD and gets an
// AttachmentFailed Event naming the annotation, with nothing allocated.
func TestDefaultNetworkMultus(t *testing.T) {
	bin := multusBinary(t)
	env, ctx := startNode(t)
	ae := startAttachEnv(ctx, t, env)
	k := ae.multusKubelet(ctx, t, bin)
	run := func(name string, ann map[string]string) (*podsim.Sandbox, error) {
		pod, err := k.CreatePod(ctx, "default", name, ann)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := k.RunSandbox(ctx, pod)
		if sb != nil {
			t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
		}
		return sb, err
	}
	plain, err := run("dn-plain", nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, ae.daemonLog())
	}
	sb, err := run("dn-1", map[string]string{multus.DefaultNetworkAnnotation: "default/a", multus.NetworksAnnotation: "b"})
	if err != nil {
		t.Fatalf("%v\n%s", err, ae.daemonLog())
	}
	want := ae.annotatedIfaces(ctx, t, "dn-1", map[string]string{"eth0": "ovn", "net1": "b.default.ovn"})
	got := podIfaces(ctx, t, sb)
	if fmt.Sprint(got) != fmt.Sprint(want) || !strings.Contains(got["eth0"], " 172.17.0.") {
		t.Fatalf("pod dn-1 interfaces %v, want the annotated %v with eth0 on att-a (172.17.0.0/24)", got, want)
	}
	p, err := k.Kube.CoreV1().Pods("default").Get(ctx, "dn-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sw := p.Annotations[annotation.LogicalSwitch]; sw != "att-a" {
		t.Errorf("pod dn-1 logical_switch %q, want att-a", sw)
	}
	if out, err := runIn(ctx, sb, "ip", "route", "show", "default"); err != nil || !strings.Contains(out, "via 172.17.0.1 dev eth0") {
		t.Errorf("pod dn-1 default route %q %v, want via att-a's gateway 172.17.0.1 on eth0", out, err)
	}
	retryPing(ctx, t, sb, plain.IP(), "default-network pod on att-a -> pod on ovn-default")
	t.Logf("pod dn-1 through multus with default-network default/a (ADD %v): %v", sb.AddTime, got)

	// A missing NAD: the ADD fails, an Event names the annotation, nothing is allocated.
	if _, err := run("dn-bad", map[string]string{multus.DefaultNetworkAnnotation: "default/nosuch"}); err == nil {
		t.Errorf("pod dn-bad with a default-network naming a missing NAD: ADD succeeded")
	}
	ev := waitEventNamed(ctx, t, k, "dn-bad", "AttachmentFailed")
	if !strings.Contains(ev, multus.DefaultNetworkAnnotation) || !strings.Contains(ev, "default/nosuch not found") {
		t.Errorf("dn-bad event %q: want it to name %s and default/nosuch", ev, multus.DefaultNetworkAnnotation)
	}
	if ipam := ae.ipamList(ctx, t); strings.Contains(ipam, "default/dn-bad") {
		t.Errorf("addresses allocated for dn-bad:\n%s", ipam)
	}

	for _, s := range []*podsim.Sandbox{sb, plain} {
		if err := k.StopSandbox(ctx, s, true); err != nil {
			t.Fatal(err)
		}
		if err := k.DeletePod(ctx, s.Pod); err != nil {
			t.Fatal(err)
		}
	}
	eventually(ctx, t, "no address or port of dn-1 left", func() bool {
		lsps := ae.nbctl(ctx, t, "--bare", "--columns=name", "list", "Logical_Switch_Port")
		return !strings.Contains(ae.ipamList(ctx, t), "default/dn-1") && !strings.Contains(lsps, "dn-1.default")
	})
}

// waitEventNamed waits for an Event with reason on pod name and returns its message.
func waitEventNamed(ctx context.Context, t *testing.T, k *podsim.Kubelet, name, reason string) string {
	t.Helper()
	var msg string
	eventually(ctx, t, "event "+reason+" on pod "+name, func() bool {
		evs, err := k.Kube.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=" + reason})
		if err != nil || len(evs.Items) == 0 {
			return false
		}
		msg = evs.Items[len(evs.Items)-1].Message
		return true
	})
	return msg
}
