package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RealNodeRequest says how to run a real node in the rig.
type RealNodeRequest struct {
	// Name is the Node's name (the kubelet's --hostname-override).
	Name string
	// CNIConfDir and CNIBinDir are containerd's CNI config and plugin directories: where
	// edgeovn writes its conflist and installs its plugin and loopback, as k3s's
	// /etc/cni/net.d and /opt/cni/bin with flannel off. The conf dir holds nothing else.
	CNIConfDir string
	CNIBinDir  string
	// Images are OCI layout tars imported into containerd before the kubelet starts.
	Images []string
	// SandboxImage is the pinned sandbox (pause) image's name; one of Images must be it.
	SandboxImage string
	// KubeletExtra flags come last on the kubelet's command line.
	KubeletExtra []string
}

func (req RealNodeRequest) validate() error {
	var errs []error
	if req.Name == "" {
		errs = append(errs, errors.New("no node name"))
	}
	for what, dir := range map[string]string{"CNI conf dir": req.CNIConfDir, "CNI bin dir": req.CNIBinDir} {
		if !filepath.IsAbs(dir) {
			errs = append(errs, fmt.Errorf("%s %q is not an absolute path", what, dir))
		}
	}
	if req.SandboxImage == "" || len(req.Images) == 0 {
		errs = append(errs, fmt.Errorf("sandbox image %q and %d image tars: both are needed", req.SandboxImage, len(req.Images)))
	}
	return errors.Join(errs...)
}

// RealNode is a kubelet and a containerd (with Debian's runc) running in the rig's network
// namespace against its API server. Its fields are fixed once StartRealNode returns.
type RealNode struct {
	Name string
	// Dir holds the node's state: containerd's root and state, the kubelet's root and certs,
	// pod logs, configs.
	Dir              string
	ContainerdSocket string
	Containerd       *Process
	Kubelet          *Process

	rig    *Rig
	req    RealNodeRequest
	cgroup string // the kubelet's cgroupRoot, unique to this rig and node

	closeOnce sync.Once
	closeErr  error
}

// drainTimeout bounds the graceful part of a node's teardown: the kubelet stopping every pod
// (containerd's CNI DEL to edgeovn for each sandbox).
const drainTimeout = 90 * time.Second

// cleanupTimeout bounds removing what containerd still holds once the pods are stopped.
const cleanupTimeout = 60 * time.Second

// StartRealNode starts a real node: containerd, the images imported, then the kubelet, which
// registers the Node. It returns once the Node exists; it is Ready only when the network
// plugin's CNI STATUS passes (edgeovn must run: start it first). Close (or the rig's Close)
// stops the node's pods through the kubelet, stops the kubelet by PID, removes the stopped
// sandboxes through containerd (so their shims exit), stops containerd by PID, and removes
// whatever is left by PID and path: processes in the node's cgroups, the sandboxes' network
// namespaces and CNI cache entries, shim sockets, mounts under its dir.
func (r *Rig) StartRealNode(ctx context.Context, req RealNodeRequest) (*RealNode, error) {
	if err := req.validate(); err != nil {
		return nil, fmt.Errorf("start real node: %w", err)
	}
	if r.opts.Detach {
		return nil, fmt.Errorf("start real node %s: a detached rig cannot have one (StopDir would leave its pods, shims and cgroups)", req.Name)
	}
	for _, c := range RealNodeParts {
		if err := checkBinary(c, r.opts.componentPath(c)); err != nil {
			return nil, fmt.Errorf("start real node %s: %w", req.Name, err)
		}
	}
	n := &RealNode{Name: req.Name, Dir: r.path("node-" + req.Name), rig: r, req: req, cgroup: "/" + r.Netns + "-" + req.Name}
	n.ContainerdSocket = n.path("containerd.sock")
	if err := os.Mkdir(n.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("start real node %s: %w", req.Name, err)
	}
	if err := r.onClose(n.Close); err != nil {
		return nil, fmt.Errorf("start real node %s: %w", req.Name, err)
	}
	if err := n.start(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("start real node %s: %w", req.Name, err), n.Close())
	}
	r.log.Info("real node up", "node", n.Name, "dir", n.Dir, "cgroup", n.cgroup)
	return n, nil
}

func (n *RealNode) start(ctx context.Context) error {
	if err := createCgroups(n.cgroup, n.shimCgroup()); err != nil {
		return err
	}
	if err := shareMount(n.path("kubelet")); err != nil {
		return err
	}
	if err := n.linkShim(); err != nil {
		return err
	}
	if err := n.startContainerd(ctx); err != nil {
		return err
	}
	if err := n.importImages(ctx); err != nil {
		return err
	}
	return n.startKubelet(ctx)
}

// shimCgroup is where containerd puts its shims (runc option ShimCgroup), inside the node's
// cgroup tree, so that teardown finds them.
func (n *RealNode) shimCgroup() string { return n.cgroup + "/shims" }

func (n *RealNode) path(elem ...string) string {
	return filepath.Join(append([]string{n.Dir}, elem...)...)
}

// shareMount bind-mounts dir onto itself and makes it shared, so that mounts the kubelet makes
// under it in its own mount namespace (volumes) reach this one, where containerd runs.
func shareMount(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind mount %s: %w", dir, err)
	}
	if err := unix.Mount("", dir, "", unix.MS_SHARED, ""); err != nil {
		return fmt.Errorf("make %s shared: %w", dir, err)
	}
	return nil
}

// Close tears the node down (see StartRealNode); calling it again returns the first result.
func (n *RealNode) Close() error {
	n.closeOnce.Do(func() { n.closeErr = n.teardown() })
	return n.closeErr
}

func (n *RealNode) teardown() error {
	var errs []error
	if n.running(n.Kubelet) && n.running(n.Containerd) {
		ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
		if err := n.drainPods(ctx); err != nil {
			n.rig.log.Warn("real node: pods not stopped through the kubelet; removing what is left", "node", n.Name, "err", err)
		}
		cancel()
	}
	if n.Kubelet != nil {
		errs = append(errs, n.Kubelet.Stop())
	}
	var inv inventory
	if n.running(n.Containerd) {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		var err error
		if inv, err = n.takeInventory(ctx); err == nil {
			err = n.removeContainers(ctx, inv)
		}
		if err != nil {
			n.rig.log.Warn("real node: containerd's sandboxes not all removed; removing what is left", "node", n.Name, "err", err)
		}
		cancel()
	}
	if n.Containerd != nil {
		errs = append(errs, n.Containerd.Stop())
	}
	errs = append(errs, n.sweep(inv))
	return errors.Join(errs...)
}

func (n *RealNode) running(p *Process) bool {
	if p == nil {
		return false
	}
	select {
	case <-p.Done():
		return false
	default:
		return true
	}
}

// drainPods deletes every pod bound to the node and waits until the kubelet has removed them
// all, which it does only once their sandboxes are stopped (CNI DEL done, netns removed).
func (n *RealNode) drainPods(ctx context.Context) error {
	pods := n.rig.kube.CoreV1().Pods(metav1.NamespaceAll)
	sel := metav1.ListOptions{FieldSelector: "spec.nodeName=" + n.Name}
	grace := int64(1)
	for {
		list, err := pods.List(ctx, sel)
		if err != nil {
			return fmt.Errorf("list pods of node %s: %w", n.Name, err)
		}
		if len(list.Items) == 0 {
			return nil
		}
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				_ = n.rig.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pods of node %s still there: %s", n.Name, podNames(list.Items))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func podNames(pods []corev1.Pod) string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	return strings.Join(names, ", ")
}
