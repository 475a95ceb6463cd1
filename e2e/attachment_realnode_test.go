package e2e

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/multus"
	"github.com/edgeovn/edgeovn/e2e/realpods"
)

// TestAttachmentsRealNode: the real kubelet and containerd run the real Multus thin plugin
// (v4.3.0) as the node's CNI (its conflist sorts before edgeovn's in containerd's config
// directory), delegating eth0 to edgeovn and the two kube-ovn NADs a and b to edgeovn's
// kube-ovn link. Two testserver pods selecting a and b reach Running and Ready; Multus's
// network-status names both attachments with the annotated addresses; each pod exchanges
// TCP (200 KB each way: an unfilled checksum would show) and UDP with the other's address
// on net1 and on net2, the answering pod seeing the client's own address on that Subnet (so
// the traffic went over the attachment); once the pods are deleted no attachment address or
// port is left.
func TestAttachmentsRealNode(t *testing.T) {
	bin := multusBinary(t)
	e, ctx := startRealNode(t)
	ae := startAttachEnv(ctx, t, e.env)
	own, err := ae.kubelet.ConfList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := linkMultus(bin, e.kubelet.BinDir); err != nil {
		t.Fatal(err)
	}
	ae.writeMultusConf(t, own.Bytes, multusDirs{conf: e.kubelet.ConfDir, bin: e.kubelet.BinDir, own: t.TempDir()})
	pods := []*corev1.Pod{ae.runRealAttached(ctx, t, e, "rn-1"), ae.runRealAttached(ctx, t, e, "rn-2")}
	nets := map[string]map[string]netip.Addr{} // pod -> interface -> address
	for _, p := range pods {
		nets[p.Name] = realAttachments(t, p)
		t.Logf("pod %s through multus on the real node: %v", p.Name, nets[p.Name])
	}
	for _, pair := range [][2]*corev1.Pod{{pods[0], pods[1]}, {pods[1], pods[0]}} {
		from, to := pair[0], pair[1]
		for _, ifName := range []string{"net1", "net2"} {
			for _, proto := range []string{"tcp", "udp"} {
				req := realpods.DialRequest{From: podIP(t, from), Proto: proto, To: realpods.ServerAddr(nets[to.Name][ifName])}
				if proto == "tcp" {
					req.Bytes = 200_000
				}
				ans, err := e.client.Dial(ctx, req)
				if err != nil {
					t.Fatalf("pod %s to pod %s over %s: %v", from.Name, to.Name, ifName, err)
				}
				if want := nets[from.Name][ifName]; ans.Server != to.Name || ans.Client.Addr() != want {
					t.Fatalf("%s from pod %s to %s (%s): answered by %q seeing client %s; want %s seeing %s",
						proto, from.Name, req.To, ifName, ans.Server, ans.Client, to.Name, want)
				}
			}
		}
	}
	for _, p := range pods {
		zero := int64(0)
		if err := e.rig.Kube().CoreV1().Pods("default").Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(ctx, t, "no attachment address or port left", func() bool {
		lsps := ae.nbctl(ctx, t, "--bare", "--columns=name", "list", "Logical_Switch_Port")
		return !strings.Contains(ae.ipamList(ctx, t), "default/rn-") && !strings.Contains(lsps, "rn-")
	})
}

// runRealAttached creates a testserver pod selecting a and b on the real node and waits
// until the kubelet reports it Running and Ready.
func (ae *attachEnv) runRealAttached(ctx context.Context, t *testing.T, e *realEnv, name string) *corev1.Pod {
	t.Helper()
	pod := realpods.TestServerPod("default", name, node)
	pod.Annotations = map[string]string{multus.NetworksAnnotation: "a,b"}
	if _, err := realpods.Create(ctx, e.rig.Kube(), pod); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	p, err := realpods.Wait(wctx, e.rig.Kube(), "default", name, func(p *corev1.Pod) bool { return realpods.Running(p) && realpods.Ready(p) })
	if err != nil {
		t.Fatalf("%v\n%s", err, e.daemonLog())
	}
	return p
}

// realAttachments is the pod's annotated attachment addresses by interface, each also in
// Multus's network-status.
func realAttachments(t *testing.T, p *corev1.Pod) map[string]netip.Addr {
	t.Helper()
	status := p.Annotations["k8s.v1.cni.cncf.io/network-status"]
	out := map[string]netip.Addr{}
	for ifName, prov := range attachProviders {
		n, err := annotation.KeysFor(prov).Decode(p.Annotations)
		if err != nil {
			t.Fatalf("pod %s provider %s: %v", p.Name, prov, err)
		}
		out[ifName] = n.IPs[0]
		for _, s := range []string{`"interface": "` + ifName + `"`, `"` + n.IPs[0].String() + `"`} {
			if !strings.Contains(status, s) {
				t.Fatalf("pod %s network-status lacks %s:\n%s", p.Name, s, status)
			}
		}
	}
	return out
}

// linkMultus puts the Multus plugin in the runtime's CNI bin dir.
func linkMultus(bin, binDir string) error {
	return os.Symlink(bin, filepath.Join(binDir, "multus"))
}
