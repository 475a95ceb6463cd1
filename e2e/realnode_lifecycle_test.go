package e2e

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/realpods"
)

// checkContainerRestart kills the container's process; the kubelet starts a new container in
// the same sandbox, which keeps its network: same address, no new CNI ADD, traffic works.
func (e *realEnv) checkContainerRestart(ctx context.Context, t *testing.T, a, b *corev1.Pod) *corev1.Pod {
	adds, container := e.networkAdds(a.Name), a.Status.ContainerStatuses[0].ContainerID
	pid := e.containerPID(ctx, t, a)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill container of pod %s (pid %d): %v", a.Name, pid, err)
	}
	restarted, err := realpods.Wait(ctx, e.rig.Kube(), "default", a.Name, func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 1 && cs[0].ContainerID != container && cs[0].State.Running != nil && realpods.Ready(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	if restarted.Status.PodIP != a.Status.PodIP {
		t.Fatalf("pod %s changed address from %s to %s on a container restart", a.Name, a.Status.PodIP, restarted.Status.PodIP)
	}
	if n := e.networkAdds(a.Name); n != adds {
		t.Fatalf("pod %s: %d CNI ADDs after the container restart, %d before: the sandbox's network was set up again", a.Name, n, adds)
	}
	e.checkTraffic(ctx, t, restarted, b)
	return restarted
}

// containerPID finds the pid of the pod's container task in containerd.
func (e *realEnv) containerPID(ctx context.Context, t *testing.T, p *corev1.Pod) int {
	t.Helper()
	id, ok := strings.CutPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
	if !ok {
		t.Fatalf("pod %s: container id %q", p.Name, p.Status.ContainerStatuses[0].ContainerID)
	}
	return e.taskPID(ctx, t, id)
}

// taskPID is the pid of a running containerd task.
func (e *realEnv) taskPID(ctx context.Context, t *testing.T, id string) int {
	t.Helper()
	out, err := e.node.Ctr(ctx, "tasks", "ls")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == id && f[2] == "RUNNING" {
			pid, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("ctr tasks ls: %q", line)
			}
			return pid
		}
	}
	t.Fatalf("no running task %s in:\n%s", id, out)
	return 0
}

// checkRecreate force-deletes pod b and at once creates a pod of the same name: the kubelet
// tears the old sandbox down (CNI DEL) while it sets the new one up (CNI ADD), in either
// order. The new pod gets a working network, which the old sandbox's DEL leaves alone.
func (e *realEnv) checkRecreate(ctx context.Context, t *testing.T, a, b *corev1.Pod) *corev1.Pod {
	dels := e.networkDels(b.Name)
	grace := int64(0)
	if err := e.rig.Kube().CoreV1().Pods("default").Delete(ctx, b.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	nb := e.runPod(ctx, t, b.Name)
	if nb.UID == b.UID {
		t.Fatalf("pod %s was not re-created", b.Name)
	}
	eventually(ctx, t, "the old sandbox of pod "+b.Name+" deleted through CNI DEL", func() bool { return e.networkDels(b.Name) > dels })
	e.checkAddresses(ctx, t, a, nb)
	e.checkTraffic(ctx, t, a, nb)
	return nb
}

// checkNotReady stops edgeovn: containerd's CNI STATUS fails, so the kubelet reports the node
// NotReady (NetworkPluginNotReady) and starts no new pod, while a and b keep talking (their
// datapath is OVS and OVN). With edgeovn back the node is Ready and the waiting pod runs.
func (e *realEnv) checkNotReady(ctx context.Context, t *testing.T, a, b *corev1.Pod) {
	from, to := podIP(t, a), realpods.ServerAddr(podIP(t, b))
	for _, proto := range []string{"tcp", "udp"} {
		if err := e.client.Stream(ctx, from, proto, to); err != nil {
			t.Fatal(err)
		}
	}
	stats := func() map[string]realpods.StreamStats {
		out := map[string]realpods.StreamStats{}
		for _, proto := range []string{"tcp", "udp"} {
			st, err := e.client.Stats(ctx, from, proto, to)
			if err != nil {
				t.Fatal(err)
			}
			out[proto] = st
		}
		return out
	}
	eventually(ctx, t, "streams from a to b flowing", func() bool { s := stats(); return s["tcp"].OK > 0 && s["udp"].OK > 0 })

	if err := e.daemon.Stop(); err != nil {
		t.Fatal(err)
	}
	c, err := e.node.WaitReady(ctx, corev1.ConditionFalse)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("edgeovn stopped: node Ready=%s %s: %s", c.Status, c.Reason, c.Message)
	if !strings.Contains(c.Message, "NetworkPluginNotReady") {
		t.Fatalf("node NotReady for another reason than the network plugin: %s", c.Message)
	}
	during := stats()
	if _, err := realpods.Create(ctx, e.rig.Kube(), realpods.TestServerPod("default", "late", node)); err != nil {
		t.Fatal(err)
	}
	var held string
	eventually(ctx, t, "the kubelet holding pod late back for the network", func() bool {
		held = e.podEvent(ctx, t, "late", "NetworkNotReady")
		return held != ""
	})
	t.Logf("pod late: %s", held)
	if p, err := e.rig.Kube().CoreV1().Pods("default").Get(ctx, "late", metav1.GetOptions{}); err != nil || realpods.Running(p) {
		t.Fatalf("pod late running while the node is NotReady (%v)", err)
	}

	e.startDaemon(ctx, t, "edgeovn")
	if _, err := e.node.WaitReady(ctx, corev1.ConditionTrue); err != nil {
		t.Fatal(err)
	}
	after := stats()
	for proto, st := range after {
		t.Logf("%s a -> b: %d exchanges, %d failed (%d while the node was NotReady and later)", proto, st.OK, st.Failed, st.OK-during[proto].OK)
		if st.Failed != 0 || st.OK <= during[proto].OK {
			t.Errorf("%s from pod a to pod b: %d failed (last: %s); %d exchanges at NotReady, %d after: traffic must keep flowing",
				proto, st.Failed, st.LastError, during[proto].OK, st.OK)
		}
	}
	late, err := realpods.Wait(ctx, e.rig.Kube(), "default", "late", func(p *corev1.Pod) bool { return realpods.Running(p) && realpods.Ready(p) })
	if err != nil {
		t.Fatal(err)
	}
	e.checkTraffic(ctx, t, late, a)
}

// checkSandboxRestart kills the pod's sandbox (pause) process: the kubelet stops the sandbox
// (CNI DEL), makes a new one (a new network namespace, CNI ADD under a new container ID) and
// restarts the container in it. The pod keeps its address, which edgeovn allocated to the pod,
// not to the sandbox, and its traffic works again.
func (e *realEnv) checkSandboxRestart(ctx context.Context, t *testing.T, a, b *corev1.Pod) *corev1.Pod {
	a, err := e.rig.Kube().CoreV1().Pods("default").Get(ctx, a.Name, metav1.GetOptions{}) // its current container
	if err != nil {
		t.Fatal(err)
	}
	adds, container := e.networkAdds(a.Name), a.Status.ContainerStatuses[0].ContainerID
	pid := e.sandboxPID(ctx, t, a)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill sandbox of pod %s (pid %d): %v", a.Name, pid, err)
	}
	eventually(ctx, t, "a new sandbox for pod "+a.Name+" through CNI ADD", func() bool { return e.networkAdds(a.Name) > adds })
	na, err := realpods.Wait(ctx, e.rig.Kube(), "default", a.Name, func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].ContainerID != container && cs[0].State.Running != nil && realpods.Ready(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	if na.Status.PodIP != a.Status.PodIP {
		t.Fatalf("pod %s: address %s in its new sandbox, %s before", a.Name, na.Status.PodIP, a.Status.PodIP)
	}
	e.checkTraffic(ctx, t, na, b)
	return na
}

// sandboxPID finds the pid of the pod's sandbox task: containerd labels the sandbox container
// with the pod's name and kind "sandbox".
func (e *realEnv) sandboxPID(ctx context.Context, t *testing.T, p *corev1.Pod) int {
	t.Helper()
	filter := `labels."io.kubernetes.pod.name"==` + p.Name + `,labels."io.kubernetes.pod.uid"==` + string(p.UID) + `,labels."io.cri-containerd.kind"==sandbox`
	out, err := e.node.Ctr(ctx, "containers", "ls", "-q", filter)
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Fields(string(out))
	if len(ids) == 0 {
		t.Fatalf("no sandbox container for pod %s", p.Name)
	}
	return e.taskPID(ctx, t, ids[len(ids)-1])
}

// checkRestartKeepsReady restarts edgeovn as systemctl restart does. A CNI STATUS made while
// it is down (containerd makes one every 5 s, which may land there) waits for the new daemon
// and passes, so the kubelet keeps the node Ready: its Ready condition does not change.
func (e *realEnv) checkRestartKeepsReady(ctx context.Context, t *testing.T) {
	before, err := e.node.ReadyCondition(ctx)
	if err != nil || before.Status != corev1.ConditionTrue {
		t.Fatalf("node not Ready before the restart: %+v, %v", before, err)
	}
	if err := e.daemon.Stop(); err != nil {
		t.Fatal(err)
	}
	status := make(chan error, 1)
	go func() { status <- cniStatus(ctx, e.env) }()
	select {
	case err := <-status:
		t.Fatalf("CNI STATUS answered while edgeovn was down (%v): it must wait for the restart", err)
	case <-time.After(500 * time.Millisecond):
	}
	e.startDaemon(ctx, t, "edgeovn")
	if err := <-status; err != nil {
		t.Fatalf("CNI STATUS made during the restart: %v", err)
	}
	restarted := time.Now()
	var after corev1.NodeCondition
	eventually(ctx, t, "the kubelet reporting the node after its next runtime check", func() bool {
		after, err = e.node.ReadyCondition(ctx)
		return err == nil && after.LastHeartbeatTime.After(restarted.Add(6*time.Second))
	})
	if after.Status != corev1.ConditionTrue || !after.LastTransitionTime.Equal(&before.LastTransitionTime) {
		t.Fatalf("node Ready changed across the restart: %s since %s (%s), was %s since %s",
			after.Status, after.LastTransitionTime, after.Message, before.Status, before.LastTransitionTime)
	}
}
