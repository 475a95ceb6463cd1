package realpods

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/edgeovn/edgeovn/e2e/images"
)

// TestServerPod is a pod bound to node that runs the testserver image, never pulled (it is
// imported), with its readiness probe on /healthz of its HTTP port (the kubelet probes from
// the host), no service account token (no controller-manager publishes the root CA here) and
// a 1 s grace period (testserver exits on SIGTERM at once).
func TestServerPod(namespace, name, node string) *corev1.Pod {
	grace := int64(1)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"app": "testserver"}},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			AutomountServiceAccountToken:  new(bool),
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name:            "server",
				Image:           images.TestServer,
				ImagePullPolicy: corev1.PullNever,
				Ports: []corev1.ContainerPort{
					{Name: "tcp", ContainerPort: images.TestServerPort, Protocol: corev1.ProtocolTCP},
					{Name: "udp", ContainerPort: images.TestServerPort, Protocol: corev1.ProtocolUDP},
					{Name: "http", ContainerPort: images.TestServerHTTPPort, Protocol: corev1.ProtocolTCP},
				},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(images.TestServerHTTPPort)}},
					PeriodSeconds: 1,
				},
			}},
		},
	}
}

// Create creates the pod, and first its namespace's default ServiceAccount, which admission
// requires and no controller creates here.
func Create(ctx context.Context, kube kubernetes.Interface, pod *corev1.Pod) (*corev1.Pod, error) {
	if err := ensureServiceAccount(ctx, kube, pod.Namespace); err != nil {
		return nil, err
	}
	p, err := kube.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return p, nil
}

// ensureServiceAccount creates the namespace's default ServiceAccount unless it exists.
func ensureServiceAccount(ctx context.Context, kube kubernetes.Interface, namespace string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "default"}}
	if _, err := kube.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/default: %w", namespace, err)
	}
	return nil
}

// Running reports whether the kubelet reports the pod Running with a pod IP.
func Running(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" }

// Ready reports whether the pod's Ready condition is true.
func Ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Wait polls the pod until cond holds and returns it; it fails when ctx ends, saying what
// the pod's status was.
func Wait(ctx context.Context, kube kubernetes.Interface, namespace, name string, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	for {
		p, err := kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil && cond(p) {
			return p, nil
		}
		select {
		case <-ctx.Done():
			return p, fmt.Errorf("pod %s/%s: %w (last: %s, get: %v)", namespace, name, ctx.Err(), describe(p), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// describe summarizes a pod's status for an error message.
func describe(p *corev1.Pod) string {
	if p == nil {
		return "no pod"
	}
	s := fmt.Sprintf("phase %s, ip %q, ready %t", p.Status.Phase, p.Status.PodIP, Ready(p))
	for _, c := range p.Status.ContainerStatuses {
		s += fmt.Sprintf("; container %s restarts %d", c.Name, c.RestartCount)
		if w := c.State.Waiting; w != nil {
			s += fmt.Sprintf(" waiting %s: %s", w.Reason, w.Message)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			s += fmt.Sprintf("; %s: %s", c.Type, c.Message)
		}
	}
	return s
}

// IP is the pod's status.podIP.
func IP(p *corev1.Pod) (netip.Addr, error) {
	a, err := netip.ParseAddr(p.Status.PodIP)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("pod %s/%s: podIP %q: %w", p.Namespace, p.Name, p.Status.PodIP, err)
	}
	return a, nil
}

// ServerAddr is the pod's testserver TCP/UDP address.
func ServerAddr(ip netip.Addr) netip.AddrPort { return netip.AddrPortFrom(ip, images.TestServerPort) }

func httpURL(ip netip.Addr, path string) string {
	return "http://" + netip.AddrPortFrom(ip, images.TestServerHTTPPort).String() + path
}
