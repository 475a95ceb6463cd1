package e2e

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// world is the truth table's cluster: namespaces x, y, z, each with pods a, b, c, every pod
// serving TCP 80 and 81 and UDP 80; the rig's host probes too.
type world struct {
	env      *env
	pods     []*tpod
	nsLabels map[string]map[string]string
	netns    map[string]ns.NetNS // by pod key
	host     ns.NetNS
	policies []*networkingv1.NetworkPolicy // in the API now
}

var (
	truthNamespaces = []string{"x", "y", "z"}
	truthPods       = []string{"a", "b", "c"}
	targets         = []target{{corev1.ProtocolTCP, 80}, {corev1.ProtocolTCP, 81}, {corev1.ProtocolUDP, 80}}
)

// containerPorts: the usual named ports, and "web", which is 80 on pods a and c but 81 on b.
func containerPorts(pod string) []corev1.ContainerPort {
	web := int32(80)
	if pod == "b" {
		web = 81
	}
	return []corev1.ContainerPort{
		{Name: "serve-80-tcp", ContainerPort: 80, Protocol: corev1.ProtocolTCP},
		{Name: "serve-81-tcp", ContainerPort: 81, Protocol: corev1.ProtocolTCP},
		{Name: "serve-80-udp", ContainerPort: 80, Protocol: corev1.ProtocolUDP},
		{Name: "web", ContainerPort: web, Protocol: corev1.ProtocolTCP},
	}
}

func startWorld(ctx context.Context, t *testing.T, e *env) *world {
	t.Helper()
	w := &world{env: e, nsLabels: map[string]map[string]string{}, netns: map[string]ns.NetNS{}}
	kube := e.kubelet.Kube
	for _, n := range truthNamespaces {
		w.nsLabels[n] = map[string]string{"ns": n, "team": map[string]string{"x": "red", "y": "blue", "z": "blue"}[n]}
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: w.nsLabels[n]}}
		if _, err := kube.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 9)
	for _, n := range truthNamespaces {
		for _, name := range truthPods {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, nn, err := w.startPod(ctx, t, n, name)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				w.pods, w.netns[p.key()] = append(w.pods, p), nn
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("%v\n%s", err, e.daemonLog())
	}
	sort.Slice(w.pods, func(i, j int) bool { return w.pods[i].key() < w.pods[j].key() })
	host, err := ns.GetNS(e.rig.NetnsPath)
	if err != nil {
		t.Fatal(err)
	}
	w.host = host
	t.Cleanup(func() { host.Close() })
	return w
}

// startPod creates the pod, runs its sandbox and starts its servers.
func (w *world) startPod(ctx context.Context, t *testing.T, namespace, name string) (*tpod, ns.NetNS, error) {
	labels := map[string]string{"pod": name}
	pod, err := w.env.kubelet.CreatePod(ctx, namespace, name, nil, func(p *corev1.Pod) {
		p.Labels = labels
		p.Spec.Containers[0].Ports = containerPorts(name)
	})
	if err != nil {
		return nil, nil, err
	}
	sb, err := w.env.kubelet.RunSandbox(ctx, pod)
	if sb != nil {
		t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
	}
	if err != nil {
		return nil, nil, err
	}
	nn, err := ns.GetNS(sb.Netns)
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { nn.Close() })
	if err := serve(t, nn, sb.IP()); err != nil {
		return nil, nil, fmt.Errorf("servers in %s/%s: %w", namespace, name, err)
	}
	return &tpod{ns: namespace, name: name, labels: labels, ip: sb.IP(), ports: containerPorts(name)}, nn, nil
}

// serve listens on TCP 80 and 81 (accept, close) and UDP 80 (echo) in the pod's namespace.
func serve(t *testing.T, nn ns.NetNS, ip netip.Addr) error {
	return nn.Do(func(ns.NetNS) error {
		for _, port := range []int{80, 81} {
			ln, err := net.Listen("tcp", netip.AddrPortFrom(ip, uint16(port)).String())
			if err != nil {
				return err
			}
			t.Cleanup(func() { ln.Close() })
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
		}
		pc, err := net.ListenPacket("udp", netip.AddrPortFrom(ip, 80).String())
		if err != nil {
			return err
		}
		t.Cleanup(func() { pc.Close() })
		go func() {
			buf := make([]byte, 64)
			for {
				n, from, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				_, _ = pc.WriteTo(buf[:n], from)
			}
		}()
		return nil
	})
}

// probeTimeout bounds one probe: an OVN ACL drop shows as a timeout.
const probeTimeout = 400 * time.Millisecond

// retryTimeout bounds a probe of a cell that disagreed: on two busy cores a handshake
// through the userspace datapath sometimes takes longer than probeTimeout.
const retryTimeout = 1500 * time.Millisecond

// probe reports whether from (a network namespace) reaches ip with t within timeout.
func probe(ctx context.Context, from ns.NetNS, ip netip.Addr, t target, timeout time.Duration) bool {
	addr := netip.AddrPortFrom(ip, uint16(t.port)).String()
	ok := false
	err := from.Do(func(ns.NetNS) error {
		d := net.Dialer{Timeout: timeout}
		if t.proto == corev1.ProtocolTCP {
			c, err := d.DialContext(ctx, "tcp", addr)
			if err == nil {
				ok = true
				c.Close()
			}
			return nil
		}
		c, err := d.DialContext(ctx, "udp", addr)
		if err != nil {
			return nil
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(timeout))
		buf := make([]byte, 8)
		if _, err := c.Write([]byte("probe")); err == nil {
			n, err := c.Read(buf)
			ok = err == nil && string(buf[:n]) == "probe"
		}
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("enter network namespace %s: %v", from.Path(), err))
	}
	return ok
}

// cell is one probe of the matrix: source -> destination on target.
type cell struct {
	src, dst *tpod
	t        target
}

func (c cell) String() string { return fmt.Sprintf("%s -> %s %s", c.src.key(), c.dst.key(), c.t) }

// probeAll probes the cells concurrently and returns the reachable ones.
func (w *world) probeAll(ctx context.Context, cells []cell, timeout time.Duration) map[cell]bool {
	got := make(map[cell]bool, len(cells))
	var mu sync.Mutex
	sem := make(chan struct{}, 96)
	var wg sync.WaitGroup
	for _, c := range cells {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ok := probe(ctx, w.netns[c.src.key()], c.dst.ip, c.t, timeout)
			mu.Lock()
			got[c] = ok
			mu.Unlock()
		}()
	}
	wg.Wait()
	return got
}

func (w *world) cells() []cell {
	var out []cell
	for _, s := range w.pods {
		for _, d := range w.pods {
			for _, t := range targets {
				out = append(out, cell{s, d, t})
			}
		}
	}
	return out
}

// check probes the whole matrix until it matches the oracle (OVN takes a moment to apply a
// change): mismatched cells are probed again, and a match must hold for one more full
// pass. It fails the test with the matrix of what differs when the deadline passes.
func (w *world) check(ctx context.Context, t *testing.T, what string) {
	t.Helper()
	o := oracle{policies: w.policies, nsLabels: w.nsLabels, pods: w.pods}
	begin := time.Now()
	deadline := begin.Add(60 * time.Second)
	dumped := false
	pending := w.cells()
	confirmed := false
	timeout := probeTimeout
	for {
		got := w.probeAll(ctx, pending, timeout)
		var wrong []cell
		for _, c := range pending {
			if got[c] != o.allowed(c.src, c.dst, c.t) {
				wrong = append(wrong, c)
			}
		}
		switch {
		case len(wrong) == 0 && confirmed:
			if dumped {
				t.Logf("%s: matched after %v", what, time.Since(begin).Round(time.Millisecond))
			}
			w.checkHost(ctx, t, what)
			return
		case len(wrong) == 0:
			confirmed, pending, timeout = true, w.cells(), probeTimeout
			continue
		case time.Now().After(deadline):
			t.Fatalf("%s: %d of %d probes differ from the API's semantics:\n%s\n%s\n%s", what, len(wrong), len(pending),
				describe(wrong, o), w.diagnose(ctx, wrong[0]), w.nbState(ctx))
		}
		if !dumped && time.Since(begin) > 8*time.Second {
			dumped = true
			t.Logf("%s: still differs after %v:\n%s%s", what, time.Since(begin).Round(time.Millisecond), describe(wrong, o), w.diagnose(ctx, wrong[0]))
		}
		confirmed, pending, timeout = false, wrong, retryTimeout
		time.Sleep(200 * time.Millisecond)
	}
}

func describe(wrong []cell, o oracle) string {
	var b strings.Builder
	for _, c := range wrong {
		fmt.Fprintf(&b, "  %s: got %v, want %v\n", c, !o.allowed(c.src, c.dst, c.t), o.allowed(c.src, c.dst, c.t))
	}
	return b.String()
}

// checkHost: the pods' own host always reaches them (kubelet probes), whatever the policies.
func (w *world) checkHost(ctx context.Context, t *testing.T, what string) {
	t.Helper()
	begin := time.Now()
	pending := w.pods
	for len(pending) > 0 {
		var failed []*tpod
		for _, p := range pending {
			if !probe(ctx, w.host, p.ip, target{corev1.ProtocolTCP, 80}, retryTimeout) {
				failed = append(failed, p)
			}
		}
		if len(failed) > 0 && time.Since(begin) > 30*time.Second {
			t.Fatalf("%s: the host cannot reach %s on tcp/80\n%s", what, failed[0].key(), w.nbState(ctx))
		}
		if len(failed) > 0 && len(failed) == len(pending) && len(pending) < len(w.pods) {
			t.Logf("%s: the host still cannot reach %s after %v", what, failed[0].key(), time.Since(begin).Round(time.Millisecond))
		}
		pending = failed
	}
}

func (w *world) nbState(ctx context.Context) string {
	out, _ := w.env.rig.Run(ctx, "ovn-nbctl", "--db="+w.env.rig.NBEndpoint, "list", "Port_Group", "--", "list", "ACL", "--", "list", "Address_Set")
	return w.env.datapathAborts() + string(out)
}

// datapathAborts returns ovs-vswitchd's emergency log lines (an abort takes every flow down,
// which looks like a policy that blocks too much).
func (e *env) datapathAborts() string {
	b, _ := os.ReadFile(filepath.Join(e.rig.Dir, "ovs-vswitchd.log"))
	var out strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "|EMER|") {
			out.WriteString("ovs-vswitchd aborted: " + line + "\n")
		}
	}
	return out.String()
}

// setPolicies makes the API hold exactly these policies (deleting the others).
func (w *world) setPolicies(ctx context.Context, t *testing.T, want []*networkingv1.NetworkPolicy) {
	t.Helper()
	api := w.env.kubelet.Kube.NetworkingV1()
	keep := map[string]bool{}
	for _, np := range want {
		keep[np.Namespace+"/"+np.Name] = true
	}
	for _, np := range w.policies {
		if keep[np.Namespace+"/"+np.Name] {
			continue
		}
		if err := api.NetworkPolicies(np.Namespace).Delete(ctx, np.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	for _, np := range want {
		_, err := api.NetworkPolicies(np.Namespace).Create(ctx, np, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var cur *networkingv1.NetworkPolicy
			if cur, err = api.NetworkPolicies(np.Namespace).Get(ctx, np.Name, metav1.GetOptions{}); err == nil {
				np.ResourceVersion = cur.ResourceVersion
				_, err = api.NetworkPolicies(np.Namespace).Update(ctx, np, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			t.Fatalf("create policy %s/%s: %v", np.Namespace, np.Name, err)
		}
	}
	w.policies = want
}

// setPodLabels relabels a pod in the API and in the oracle's model.
func (w *world) setPodLabels(ctx context.Context, t *testing.T, key string, labels map[string]string) {
	t.Helper()
	for _, p := range w.pods {
		if p.key() != key {
			continue
		}
		patch := mergeLabels(p.labels, labels)
		if _, err := w.env.kubelet.Kube.CoreV1().Pods(p.ns).Patch(ctx, p.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		p.labels = labels
		return
	}
	t.Fatalf("no pod %s", key)
}

// setNamespaceLabels relabels a namespace in the API and in the oracle's model.
func (w *world) setNamespaceLabels(ctx context.Context, t *testing.T, name string, labels map[string]string) {
	t.Helper()
	patch := mergeLabels(w.nsLabels[name], labels)
	if _, err := w.env.kubelet.Kube.CoreV1().Namespaces().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	w.nsLabels[name] = labels
}

// mergeLabels is the merge patch from old labels to new ones (removed keys set to null).
func mergeLabels(old, cur map[string]string) []byte {
	parts := []string{}
	for k := range old {
		if _, ok := cur[k]; !ok {
			parts = append(parts, fmt.Sprintf("%q:null", k))
		}
	}
	for k, v := range cur {
		parts = append(parts, fmt.Sprintf("%q:%q", k, v))
	}
	return []byte(`{"metadata":{"labels":{` + strings.Join(parts, ",") + `}}}`)
}
