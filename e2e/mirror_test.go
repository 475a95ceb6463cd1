package e2e

import (
	"context"
	"encoding/json"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestMirrorAnnotation: pings run before any mirroring; annotating pod a with
// ovn.kubernetes.io/mirror: "true" (and e, and f which is annotated before it is wired) makes mirror0 appear on the host, and tcpdump on it
// sees every request and reply of a's ping already in flight (Kube-OVN #2801) and nothing of
// c's ping to d, whose pods are not annotated; turning a's annotation off stops a's packets
// while e's still come.
func TestMirrorAnnotation(t *testing.T) {
	env, ctx := startNode(t)
	a, b, c, d, e := runPod(ctx, t, env, "mir-a"), runPod(ctx, t, env, "mir-b"), runPod(ctx, t, env, "mir-c"),
		runPod(ctx, t, env, "mir-d"), runPod(ctx, t, env, "mir-e")
	for _, p := range [][2]*podsim.Sandbox{{a, b}, {c, d}, {e, b}} {
		retryPing(ctx, t, p[0], p[1].IP(), p[0].Pod.Name+" -> "+p[1].Pod.Name)
		pinger, err := podsim.StartPinger(p[0], p[1].IP(), 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pinger.Stop() })
	}
	setMirror(ctx, t, env, a, "true")
	setMirror(ctx, t, env, e, "true")
	waitLink(ctx, t, env, "mirror0")
	// A pod annotated before it is wired is mirrored once its port is plugged.
	f := runPodIn(ctx, t, env, "default", "mir-f", func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[annotation.Mirror] = "true"
	})
	retryPing(ctx, t, f, b.IP(), "mir-f -> mir-b")
	pf, err := podsim.StartPinger(f, b.IP(), 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pf.Stop() })

	flows := mirrorCapture(ctx, t, env)
	checkEveryPacket(t, flows, a.IP(), b.IP())
	checkEveryPacket(t, flows, e.IP(), b.IP())
	checkEveryPacket(t, flows, f.IP(), b.IP())
	if n := flows.between(c.IP(), d.IP()); n != 0 {
		t.Errorf("mirror0 shows %d packets between mir-c and mir-d, which are not annotated", n)
	}

	setMirror(ctx, t, env, a, "false")
	time.Sleep(500 * time.Millisecond) // the change, and a's last mirrored reply, pass
	flows = mirrorCapture(ctx, t, env)
	if n := flows.between(a.IP(), b.IP()); n != 0 {
		t.Errorf("mirror0 shows %d packets of mir-a after its annotation was turned off", n)
	}
	checkEveryPacket(t, flows, e.IP(), b.IP())
}

// TestMirrorGlobal: with --enable-mirror every pod's packets are mirrored, none annotated.
func TestMirrorGlobal(t *testing.T) {
	env, ctx := startNodeFlags(t, "--enable-mirror")
	a, b, c, d := runPod(ctx, t, env, "mir-a"), runPod(ctx, t, env, "mir-b"), runPod(ctx, t, env, "mir-c"), runPod(ctx, t, env, "mir-d")
	for _, p := range [][2]*podsim.Sandbox{{a, b}, {c, d}} {
		retryPing(ctx, t, p[0], p[1].IP(), p[0].Pod.Name+" -> "+p[1].Pod.Name)
		pinger, err := podsim.StartPinger(p[0], p[1].IP(), 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pinger.Stop() })
	}
	waitLink(ctx, t, env, "mirror0")
	flows := mirrorCapture(ctx, t, env)
	checkEveryPacket(t, flows, a.IP(), b.IP())
	checkEveryPacket(t, flows, c.IP(), d.IP())
}

// TestMirrorIfaceTaken: a mirror interface name a link of the host's already has is refused
// with a Warning Event on the Node; the link, br-int and the pods' network stay as they were.
func TestMirrorIfaceTaken(t *testing.T) {
	env, ctx := startNodeFlags(t, "--mirror-iface=taken0")
	if out, err := env.rig.Run(ctx, "ip", "link", "add", "taken0", "type", "veth", "peer", "name", "taken0p"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	a, b := runPod(ctx, t, env, "mir-a"), runPod(ctx, t, env, "mir-b")
	setMirror(ctx, t, env, a, "true")
	eventually(ctx, t, "a MirrorRefused Event on the Node", func() bool {
		evs, err := env.rig.Kube().CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs.Items {
			if ev.Reason == "MirrorRefused" && strings.Contains(ev.Message, "taken0") {
				t.Logf("event: %s", ev.Message)
				return true
			}
		}
		return false
	})
	out, err := env.rig.Run(ctx, "ip", "-d", "link", "show", "taken0")
	if err != nil || !strings.Contains(string(out), "veth") || strings.Contains(string(out), "openvswitch") {
		t.Errorf("the host's link taken0 changed: %v %s", err, out)
	}
	if out := env.vsctl(ctx, t, "--columns=name", "list", "Mirror"); strings.TrimSpace(out) != "" {
		t.Errorf("a Mirror row was made: %s", out)
	}
	if out := env.vsctl(ctx, t, "list-ports", "br-int"); strings.Contains(out, "taken0") {
		t.Errorf("taken0 was added to br-int: %s", out)
	}
	retryPing(ctx, t, a, b.IP(), "mir-a -> mir-b with the mirror refused")
}

func setMirror(ctx context.Context, t *testing.T, env *env, sb *podsim.Sandbox, value string) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotation.Mirror: value}}})
	if _, err := env.rig.Kube().CoreV1().Pods(sb.Pod.Namespace).Patch(ctx, sb.Pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func waitLink(ctx context.Context, t *testing.T, env *env, name string) {
	t.Helper()
	eventually(ctx, t, name+" up on the host", func() bool {
		out, err := env.rig.Run(ctx, "ip", "link", "show", name)
		return err == nil && strings.Contains(string(out), ",UP")
	})
}

// icmpLine is one tcpdump -e -nn line of an echo request or reply.
var icmpLine = regexp.MustCompile(`([0-9.]+) > ([0-9.]+): ICMP echo (request|reply), id \d+, seq (\d+)`)

// mirrored is what tcpdump saw on mirror0: the sequence numbers of echo requests and replies
// by source and destination.
type mirrored map[[2]netip.Addr]map[string][]int

func mirrorCapture(ctx context.Context, t *testing.T, env *env) mirrored {
	t.Helper()
	_, out := captureOut(ctx, t, env.rig.Netns, "mirror0", "icmp", func() { time.Sleep(2500 * time.Millisecond) })
	m := mirrored{}
	for _, l := range icmpLine.FindAllStringSubmatch(out, -1) {
		src, err1 := netip.ParseAddr(l[1])
		dst, err2 := netip.ParseAddr(l[2])
		seq, _ := strconv.Atoi(l[4])
		if err1 != nil || err2 != nil {
			continue
		}
		k := [2]netip.Addr{src, dst}
		if m[k] == nil {
			m[k] = map[string][]int{}
		}
		m[k][l[3]] = append(m[k][l[3]], seq)
	}
	return m
}

func (m mirrored) between(x, y netip.Addr) int {
	n := 0
	for _, k := range [][2]netip.Addr{{x, y}, {y, x}} {
		for _, seqs := range m[k] {
			n += len(seqs)
		}
	}
	return n
}

// checkEveryPacket: the capture holds a run of at least 15 requests from src to dst with no
// sequence number missing, each with its reply (the capture may end between the two).
func checkEveryPacket(t *testing.T, m mirrored, src, dst netip.Addr) {
	t.Helper()
	req, rep := m[[2]netip.Addr{src, dst}]["request"], m[[2]netip.Addr{dst, src}]["reply"]
	if len(req) < 15 {
		t.Errorf("%s -> %s: %d echo requests mirrored in 2.5 s of a 10/s ping, want 15 or more", src, dst, len(req))
		return
	}
	replied := map[int]bool{}
	for _, s := range rep {
		replied[s] = true
	}
	for i, s := range req {
		if i > 0 && s != req[i-1]+1 {
			t.Errorf("%s -> %s: requests %d to %d not mirrored", src, dst, req[i-1]+1, s-1)
		}
		if !replied[s] && i != len(req)-1 {
			t.Errorf("%s -> %s: reply to request %d not mirrored", src, dst, s)
		}
	}
	t.Logf("%s -> %s: %d requests (seq %d..%d) and %d replies mirrored", src, dst, len(req), req[0], req[len(req)-1], len(rep))
}
