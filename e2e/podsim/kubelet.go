package podsim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/plugins/pkg/testutils"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Kubelet is the simulated kubelet + container runtime of one node.
type Kubelet struct {
	Kube     kubernetes.Interface
	Node     string
	NodeIP   netip.Addr // reported as the Node's InternalIP; invalid: none
	ConfDir  string     // where edgeovn writes its conflist
	BinDir   string     // where edgeovn installs its plugin
	CacheDir string     // libcni's result cache
	// HostNetns, if set, is the network namespace the runtime runs in (the simulated host's),
	// so plugins that create host-side links do so there. Empty: the caller's.
	HostNetns string
}

// loopbackConf is the network containerd's CRI plugin attaches to every sandbox before the pod
// network, for lo; the loopback plugin must be in the bin dir.
var loopbackConf = []byte(`{"cniVersion":"1.0.0","name":"cni-loopback","plugins":[{"type":"loopback"}]}`)

// Sandbox is a pod sandbox with its network attached.
type Sandbox struct {
	Pod         *corev1.Pod
	Netns       string // path
	ContainerID string
	Result      *types100.Result
	AddTime     time.Duration // wall time of the pod network's CNI ADD, runtime included
	DelTime     time.Duration // the same for its last CNI DEL
	// portMappings are what the runtime passes in the "portMappings" capability.
	portMappings []map[string]any
}

// NetnsName is the name `ip netns exec` knows the sandbox by.
func (s *Sandbox) NetnsName() string { return filepath.Base(s.Netns) }

// IP is the sandbox's first address as the CNI result reported it.
func (s *Sandbox) IP() netip.Addr {
	if s.Result == nil || len(s.Result.IPs) == 0 {
		return netip.Addr{}
	}
	a, _ := netip.AddrFromSlice(s.Result.IPs[0].Address.IP)
	return a.Unmap()
}

// EnsureNode registers the Node object with its InternalIP, as kubelet does at start.
func (k *Kubelet) EnsureNode(ctx context.Context) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: k.Node}}
	created, err := k.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create node %s: %w", k.Node, err)
	}
	if !k.NodeIP.IsValid() {
		return nil
	}
	for {
		created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: k.NodeIP.String()}}
		_, err = k.Kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			break
		}
		// The controller annotated the node meanwhile: report on the latest version.
		if created, err = k.Kube.CoreV1().Nodes().Get(ctx, k.Node, metav1.GetOptions{}); err != nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("report address of node %s: %w", k.Node, err)
	}
	return nil
}

// CreatePod creates a pod already scheduled to this node (and the namespace's default
// ServiceAccount, which admission requires and no controller-manager creates here).
// Options, if any, change the pod before it is created (ports, for instance).
func (k *Kubelet) CreatePod(ctx context.Context, namespace, name string, annotations map[string]string, options ...func(*corev1.Pod)) (*corev1.Pod, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "default"}}
	if _, err := k.Kube.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create service account %s/default: %w", namespace, err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations},
		Spec: corev1.PodSpec{
			NodeName:                     k.Node,
			AutomountServiceAccountToken: new(bool),
			Containers:                   []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}},
		},
	}
	for _, o := range options {
		o(pod)
	}
	p, err := k.Kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create pod %s/%s: %w", namespace, name, err)
	}
	return p, nil
}

// DeletePod deletes the pod object at once (grace period 0), as after the sandbox stopped.
func (k *Kubelet) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	zero := int64(0)
	err := k.Kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// ConfList waits until a CNI config, every plugin it names and loopback are installed
// (edgeovn's node role writes them all), and returns the alphabetically first config, as containerd picks it.
func (k *Kubelet) ConfList(ctx context.Context) (*libcni.NetworkConfigList, error) {
	for {
		files, _ := libcni.ConfFiles(k.ConfDir, []string{".conflist"})
		if len(files) > 0 {
			list, err := libcni.ConfListFromFile(files[0])
			if err == nil && k.pluginsInstalled(list) {
				return list, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for cni config in %s: %w", k.ConfDir, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// WaitReady waits until the network plugin answers CNI STATUS with success, as containerd 2.x
// does before it marks the node Ready and starts sandboxes.
func (k *Kubelet) WaitReady(ctx context.Context) error {
	for {
		list, err := k.ConfList(ctx)
		if err != nil {
			return err
		}
		err = k.cni().GetStatusNetworkList(ctx, list)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for cni status: %w (last: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Status runs CNI STATUS once, as containerd 2.x does every few seconds: nil when the network
// plugin says it is ready, else its error.
func (k *Kubelet) Status(ctx context.Context) error {
	list, err := k.ConfList(ctx)
	if err != nil {
		return err
	}
	return k.cni().GetStatusNetworkList(ctx, list)
}

func (k *Kubelet) pluginsInstalled(list *libcni.NetworkConfigList) bool {
	if _, err := os.Stat(filepath.Join(k.BinDir, "loopback")); err != nil {
		return false
	}
	for _, p := range list.Plugins {
		if _, err := os.Stat(filepath.Join(k.BinDir, p.Network.Type)); err != nil {
			return false
		}
	}
	return true
}

// RunSandbox creates the pod's network namespace and runs CNI ADD on lo (loopback), then on
// eth0 (the pod network), as containerd does.
func (k *Kubelet) RunSandbox(ctx context.Context, pod *corev1.Pod) (*Sandbox, error) {
	return k.RunSandboxWithPorts(ctx, pod, portMappings(pod))
}

// RunSandboxWithPorts is RunSandbox with the "portMappings" capability given as is, not
// taken from the pod: for input a real kubelet would not send (port 0, a mapping twice).
func (k *Kubelet) RunSandboxWithPorts(ctx context.Context, pod *corev1.Pod, mappings []map[string]any) (*Sandbox, error) {
	list, err := k.ConfList(ctx)
	if err != nil {
		return nil, err
	}
	netns, err := testutils.NewNS()
	if err != nil {
		return nil, fmt.Errorf("create netns for pod %s: %w", pod.Name, err)
	}
	remember(netns.Path(), k.ConfDir)
	sb := &Sandbox{Pod: pod, Netns: netns.Path(), ContainerID: randomID(), portMappings: mappings}
	lo, err := libcni.ConfListFromBytes(loopbackConf)
	if err != nil {
		return sb, fmt.Errorf("loopback config: %w", err)
	}
	err = k.onHost(func() error {
		_, err := k.cni().AddNetworkList(ctx, lo, k.loopbackConf(sb))
		return err
	})
	if err != nil {
		return sb, fmt.Errorf("cni add of lo for pod %s: %w", pod.Name, err)
	}
	var res types.Result
	start := time.Now() // the pod network's ADD alone, as the figures report it
	err = k.onHost(func() (err error) {
		res, err = k.cni().AddNetworkList(ctx, list, k.runtimeConf(sb))
		return err
	})
	sb.AddTime = time.Since(start)
	if err != nil {
		return sb, fmt.Errorf("cni add for pod %s: %w", pod.Name, err)
	}
	if sb.Result, err = types100.NewResultFromResult(res); err != nil {
		return sb, fmt.Errorf("cni result for pod %s: %w", pod.Name, err)
	}
	return sb, nil
}

// StopSandbox runs CNI DEL; with removeNetns it also deletes the namespace, as a runtime
// does after the sandbox stopped.
func (k *Kubelet) StopSandbox(ctx context.Context, sb *Sandbox, removeNetns bool) error {
	list, err := k.ConfList(ctx)
	if err != nil {
		return err
	}
	lo, err := libcni.ConfListFromBytes(loopbackConf)
	if err != nil {
		return fmt.Errorf("loopback config: %w", err)
	}
	if err := k.onHost(func() error {
		start := time.Now()
		if err := k.cni().DelNetworkList(ctx, list, k.runtimeConf(sb)); err != nil {
			return err
		}
		sb.DelTime = time.Since(start)
		return k.cni().DelNetworkList(ctx, lo, k.loopbackConf(sb))
	}); err != nil {
		return fmt.Errorf("cni del for pod %s: %w", sb.Pod.Name, err)
	}
	if removeNetns {
		return RemoveNetns(sb.Netns)
	}
	return nil
}

// Finish reports the pod's containers as stopped for good, with phase Succeeded or Failed,
// as the kubelet does when a Job's pod ends: the object stays, its sandbox is gone.
func (k *Kubelet) Finish(ctx context.Context, pod *corev1.Pod, phase corev1.PodPhase) error {
	cur, err := k.Kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	cur.Status.Phase = phase
	if _, err := k.Kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("set pod %s/%s %s: %w", pod.Namespace, pod.Name, phase, err)
	}
	return nil
}

// RemoveNetns unmounts and removes a namespace made by RunSandbox; a missing one is fine.
// The unmount is lazy: the rig's daemons run in mount namespaces of their own (ip netns
// exec), to which the bind mount propagated, and a plain unmount fails with EBUSY there.
func RemoveNetns(path string) error {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		forget(path)
		return nil
	}
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && err != unix.EINVAL {
		return fmt.Errorf("unmount netns %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove netns %s: %w", path, err)
	}
	forget(path)
	return nil
}

// onHost runs f (which execs plugins) in the host netns: a child forked from a thread in a
// namespace starts in that namespace.
func (k *Kubelet) onHost(f func() error) error {
	if k.HostNetns == "" {
		return f()
	}
	return inNetns(k.HostNetns, f)
}

func (k *Kubelet) cni() *libcni.CNIConfig {
	return libcni.NewCNIConfigWithCacheDir([]string{k.BinDir}, k.CacheDir, nil)
}

func (k *Kubelet) runtimeConf(sb *Sandbox) *libcni.RuntimeConf {
	rc := &libcni.RuntimeConf{
		ContainerID: sb.ContainerID,
		NetNS:       sb.Netns,
		IfName:      "eth0",
		Args: [][2]string{
			{"IgnoreUnknown", "1"},
			{"K8S_POD_NAMESPACE", sb.Pod.Namespace},
			{"K8S_POD_NAME", sb.Pod.Name},
			{"K8S_POD_INFRA_CONTAINER_ID", sb.ContainerID},
			{"K8S_POD_UID", string(sb.Pod.UID)},
		},
	}
	if len(sb.portMappings) > 0 {
		rc.CapabilityArgs = map[string]any{"portMappings": sb.portMappings}
	}
	return rc
}

// loopbackConf is the runtime config of the sandbox's lo network.
func (k *Kubelet) loopbackConf(sb *Sandbox) *libcni.RuntimeConf {
	rc := k.runtimeConf(sb)
	rc.IfName = "lo"
	return rc
}

func randomID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// portMappings are the pod's hostPorts as the kubelet hands them to the CNI "portMappings"
// capability (which edgeovn's daemon serves).
func portMappings(pod *corev1.Pod) []map[string]any {
	var out []map[string]any
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort == 0 {
				continue
			}
			proto := strings.ToLower(string(p.Protocol))
			if proto == "" {
				proto = "tcp"
			}
			out = append(out, map[string]any{"hostPort": p.HostPort, "containerPort": p.ContainerPort, "protocol": proto})
		}
	}
	return out
}
