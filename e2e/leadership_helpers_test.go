package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// leaseName is the controller Lease both processes compete for.
const leaseNamespace, leaseName = "kube-system", "edgeovn-controller"

// leaseHolder returns the controller Lease's holder ("" when released or absent).
func leaseHolder(ctx context.Context, rig *harness.Rig) string {
	l, err := rig.Kube().CoordinationV1().Leases(leaseNamespace).Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// startStandby starts a second host's edgeovn in the env's rig with the suite's lease timings
// and prints its log if the test fails.
func (e *env) startStandby(ctx context.Context, t *testing.T, s daemon.Standby) *harness.Process {
	t.Helper()
	s.BinDir = e.bins
	s.Extra = append(append([]string{}, daemonFlags...), s.Extra...)
	p, err := daemon.StartStandby(ctx, e.rig, s)
	if err != nil {
		t.Fatalf("start %s: %v", s.Name, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(processLog(p))
		}
	})
	return p
}

func processLog(p *harness.Process) string {
	b, _ := os.ReadFile(p.Log)
	return "--- " + p.Log + " ---\n" + string(b)
}

func logHas(p *harness.Process, s string) bool {
	b, _ := os.ReadFile(p.Log)
	return strings.Contains(string(b), s)
}

// podIPs returns what each pod's annotations say it was allocated, by "namespace/name".
func podIPs(ctx context.Context, t *testing.T, rig *harness.Rig, namespace string) map[string]netip.Addr {
	t.Helper()
	pods, err := rig.Kube().CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]netip.Addr{}
	for _, p := range pods.Items {
		if n, err := annotation.Decode(p.Annotations); err == nil && len(n.IPs) > 0 {
			out[p.Namespace+"/"+p.Name] = n.IPs[0]
		}
	}
	return out
}

// portIPs returns each edgeovn pod port's address in northbound, by port name.
func portIPs(ctx context.Context, t *testing.T, rig *harness.Rig) map[string]netip.Addr {
	t.Helper()
	out, err := rig.Run(ctx, "ovn-nbctl", "--db="+rig.NBEndpoint, "--format=csv", "--data=bare", "--no-headings",
		"--columns=name,addresses", "find", "Logical_Switch_Port", "external_ids:owner-kind=Pod")
	if err != nil {
		t.Fatalf("list pod ports: %v\n%s", err, out)
	}
	ports := map[string]netip.Addr{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, addrs, ok := strings.Cut(line, ",")
		if !ok {
			continue
		}
		f := strings.Fields(addrs)
		if len(f) < 2 {
			continue
		}
		ip, err := netip.ParseAddr(f[1])
		if err != nil {
			t.Fatalf("port %s: addresses %q", name, addrs)
		}
		ports[name] = ip
	}
	return ports
}

// duplicates lists every address held twice among the pods' annotations, and among the pod
// ports in northbound.
func duplicates(pods map[string]netip.Addr, ports map[string]netip.Addr) []string {
	var dups []string
	for what, m := range map[string]map[string]netip.Addr{"annotation": pods, "port": ports} {
		seen := map[netip.Addr]string{}
		for k, ip := range m {
			if o, dup := seen[ip]; dup {
				dups = append(dups, fmt.Sprintf("%s %s: %s and %s", what, ip, o, k))
			}
			seen[ip] = k
		}
	}
	return dups
}

// apiPod creates a pod on the rig's node as an API object only (no sandbox): the controller
// allocates on the pod object.
func (e *env) apiPod(ctx context.Context, t *testing.T, name string, annotations map[string]string) *corev1.Pod {
	t.Helper()
	p, err := e.kubelet.CreatePod(ctx, "default", name, annotations)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// apiPodObject returns the pod "namespace/name".
func (e *env) apiPodObject(ctx context.Context, t *testing.T, key string) *corev1.Pod {
	t.Helper()
	ns, name, _ := strings.Cut(key, "/")
	p, err := e.rig.Kube().CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
