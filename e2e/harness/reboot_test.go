package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestReboot: after Reboot every rig daemon runs under a new PID, from the databases it had
// (a northbound switch, an Open_vSwitch bridge and a namespace in etcd survive), in boot order,
// and an extra process (edgeovn's place) is killed and not started again.
func TestReboot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := startRig(t, ctx, Options{})
	run(t, ctx, r, "ovn-nbctl", "--db="+r.NBEndpoint, "ls-add", "sw-keep")
	run(t, ctx, r, "ovs-vsctl", "--db="+r.OVSEndpoint, "add-br", "br-keep", "--", "set", "Bridge", "br-keep", "datapath_type=netdev")
	if _, err := r.Kube().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "keep"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	extra, err := r.Start(ctx, ProcessSpec{Name: "sleeper", Path: "sleep", Args: []string{"600"}})
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]int{}
	for _, name := range rigDaemons {
		p, err := r.Daemon(name)
		if err != nil {
			t.Fatal(err)
		}
		old[name] = p.PID
	}

	bt, err := r.Reboot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bt.Start.IsZero() || !bt.OVSUp.After(bt.Start) {
		t.Errorf("boot times %+v: OVS up must follow the start", bt)
	}
	select {
	case <-extra.Done():
	default:
		t.Errorf("the extra process (pid %d) survived the reboot", extra.PID)
	}
	if p, _ := r.Daemon("sleeper"); p != extra {
		t.Errorf("the extra process was started again")
	}
	for _, name := range rigDaemons {
		p, err := r.Daemon(name)
		if err != nil || p.PID == old[name] {
			t.Fatalf("%s after reboot: %v (pid %d, was %d)", name, err, p.PID, old[name])
		}
	}
	if out := run(t, ctx, r, "ovn-nbctl", "--db="+r.NBEndpoint, "ls-list"); !strings.Contains(out, "sw-keep") {
		t.Errorf("northbound lost its switch: %q", out)
	}
	if out := run(t, ctx, r, "ovs-vsctl", "--db="+r.OVSEndpoint, "list-br"); !strings.Contains(out, "br-keep") {
		t.Errorf("Open_vSwitch lost its bridge: %q", out)
	}
	if _, err := r.Kube().CoreV1().Namespaces().Get(ctx, "keep", metav1.GetOptions{}); err != nil {
		t.Errorf("etcd lost the namespace: %v", err)
	}
}

// TestBootOrder: the rig's daemons boot in their order, the control plane a test added after
// the API server, each once, and processes that are not the rig's (edgeovn, a real node's
// kubelet and containerd: their boot is the caller's or RealNode.Reboot's) not at all.
func TestBootOrder(t *testing.T) {
	var procs []*Process
	for _, name := range []string{"kube-scheduler", "edgeovn", "kube-apiserver", "etcd", "ovn-controller", "ovs-vswitchd",
		vswitchDB.name, "ovn-northd", sbDB.name, nbDB.name, "kube-controller-manager", "edge-1-kubelet", "ovn-controller"} {
		procs = append(procs, &Process{Name: name})
	}
	got := strings.Join(bootOrder(procs), " ")
	want := strings.Join(append(append([]string{}, rigDaemons...), "kube-controller-manager", "kube-scheduler"), " ")
	if got != want {
		t.Errorf("boot order %q, want %q", got, want)
	}
	if got := bootOrder(procs[:1]); len(got) != 1 || got[0] != "kube-scheduler" {
		t.Errorf("boot order of a rig with only kube-scheduler: %v", got)
	}
}
