package podsim

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// MarkRunning reports the pod as a kubelet does once its containers run and pass their
// readiness probes: phase Running, podIP/podIPs from the sandbox's CNI result, hostIP from
// the node, the conditions PodScheduled, Initialized, ContainersReady and Ready true, and a
// running, ready status per container. The endpoint controllers then list the pod as a ready
// endpoint of the Services that select it.
func (k *Kubelet) MarkRunning(ctx context.Context, sb *Sandbox) error {
	return k.setStatus(ctx, sb, true)
}

// MarkNotReady reports the pod's containers as running but failing readiness (Ready and
// ContainersReady false): its Services list it as a not-ready endpoint.
func (k *Kubelet) MarkNotReady(ctx context.Context, sb *Sandbox) error {
	return k.setStatus(ctx, sb, false)
}

func (k *Kubelet) setStatus(ctx context.Context, sb *Sandbox, ready bool) error {
	pods := k.Kube.CoreV1().Pods(sb.Pod.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pods.Get(ctx, sb.Pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		k.runningStatus(&cur.Status, cur.Spec.Containers, sb, ready)
		_, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("report pod %s/%s running (ready %t): %w", sb.Pod.Namespace, sb.Pod.Name, ready, err)
	}
	return nil
}

// runningStatus fills st as the kubelet reports a running pod; times already set are kept.
func (k *Kubelet) runningStatus(st *corev1.PodStatus, containers []corev1.Container, sb *Sandbox, ready bool) {
	now := metav1.NewTime(time.Now())
	st.Phase = corev1.PodRunning
	if st.StartTime == nil {
		st.StartTime = &now
	}
	st.PodIPs = nil
	for _, a := range sb.IPs() {
		st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: a.String()})
	}
	st.PodIP = ""
	if len(st.PodIPs) > 0 {
		st.PodIP = st.PodIPs[0].IP
	}
	if k.NodeIP.IsValid() {
		st.HostIP = k.NodeIP.String()
		st.HostIPs = []corev1.HostIP{{IP: st.HostIP}}
	}
	readyStatus := corev1.ConditionFalse
	if ready {
		readyStatus = corev1.ConditionTrue
	}
	for _, c := range []struct {
		t corev1.PodConditionType
		s corev1.ConditionStatus
	}{
		{corev1.PodScheduled, corev1.ConditionTrue},
		{corev1.PodReadyToStartContainers, corev1.ConditionTrue},
		{corev1.PodInitialized, corev1.ConditionTrue},
		{corev1.ContainersReady, readyStatus},
		{corev1.PodReady, readyStatus},
	} {
		setCondition(st, c.t, c.s, now)
	}
	st.ContainerStatuses = containerStatuses(st.ContainerStatuses, containers, ready, now)
}

// setCondition sets one condition, moving its transition time only when its status changes.
func setCondition(st *corev1.PodStatus, t corev1.PodConditionType, s corev1.ConditionStatus, now metav1.Time) {
	for i := range st.Conditions {
		if st.Conditions[i].Type != t {
			continue
		}
		if st.Conditions[i].Status != s {
			st.Conditions[i].Status, st.Conditions[i].LastTransitionTime = s, now
		}
		return
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now})
}

// containerStatuses reports every container running since its first report, ready or not.
func containerStatuses(old []corev1.ContainerStatus, containers []corev1.Container, ready bool, now metav1.Time) []corev1.ContainerStatus {
	prev := map[string]corev1.ContainerStatus{}
	for _, s := range old {
		prev[s.Name] = s
	}
	out := make([]corev1.ContainerStatus, 0, len(containers))
	for _, c := range containers {
		id, at := "containerd://"+randomID(), now
		if p, ok := prev[c.Name]; ok && p.State.Running != nil {
			id, at = p.ContainerID, p.State.Running.StartedAt
		}
		out = append(out, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, ContainerID: id,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}},
			Ready: ready, Started: new(true),
		})
	}
	return out
}

// IPs are the sandbox's addresses as the CNI result reported them, in order.
func (s *Sandbox) IPs() []netip.Addr {
	if s.Result == nil {
		return nil
	}
	var out []netip.Addr
	for _, ip := range s.Result.IPs {
		if a, ok := netip.AddrFromSlice(ip.Address.IP); ok {
			out = append(out, a.Unmap())
		}
	}
	return out
}
