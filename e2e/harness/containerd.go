package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// containerdConfig renders containerd 2.x's configuration (version 3) for one real node:
// its own root, state and sockets under dir; CRI with runc (Debian's) through the runc shim,
// cgroupfs, runc's state under the node's state dir, the shims in the node's cgroup tree; restrict_oom_score_adj, without which
// every sandbox fails here ("can't get final child's PID from pipe": no CAP_SYS_RESOURCE);
// the CNI conf and bin dirs edgeovn writes to, as k3s points its containerd at
// /etc/cni/net.d and /opt/cni/bin with flannel off; the sandbox image pinned so it is never
// pulled or collected; NRI and CDI off (nothing here uses them, and they would read /etc and
// /var/run).
func containerdConfig(n *RealNode, runc string) string {
	q := func(s string) string { return "'" + s + "'" } // TOML literal string: no escapes
	return `version = 3
root = ` + q(n.path("containerd", "root")) + `
state = ` + q(n.path("containerd", "state")) + `

[grpc]
  address = ` + q(n.ContainerdSocket) + `

[ttrpc]
  address = ` + q(n.ContainerdSocket+".ttrpc") + `

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = ` + q(n.req.SandboxImage) + `

  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = true
    enable_cdi = false
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = ` + q(runc) + `
          Root = ` + q(n.path("containerd", "state", "runc")) + `
          SystemdCgroup = false
          ShimCgroup = ` + q(n.shimCgroup()) + `
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [` + q(n.req.CNIBinDir) + `]
      conf_dir = ` + q(n.req.CNIConfDir) + `
      max_conf_num = 1

  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'

  [plugins.'io.containerd.internal.v1.opt']
    path = ` + q(n.path("containerd", "opt")) + `

  [plugins.'io.containerd.nri.v1.nri']
    disable = true
`
}

// startContainerd writes the config and starts containerd in the rig's network namespace and
// this machine's mount namespace (see ProcessSpec.HostMounts), with the node's bin dir (its
// own runc shim) first on PATH; it waits until containerd answers on its socket. containerd
// runs in a UTS namespace of its own whose hostname is the node's name, as on a real host:
// hostNetwork containers share their shim's, so they answer with the node's name, which the
// upstream e2e tests expect of a hostNetwork endpoint (not this machine's hostname).
func (n *RealNode) startContainerd(ctx context.Context) error {
	runc, err := exec.LookPath("runc")
	if err != nil {
		return fmt.Errorf("start containerd: %w", err)
	}
	conf := n.path("containerd.toml")
	if err := os.WriteFile(conf, []byte(containerdConfig(n, runc)), 0o644); err != nil {
		return fmt.Errorf("start containerd: write %s: %w", conf, err)
	}
	spec := ProcessSpec{Name: n.Name + "-containerd", Path: "unshare", HostMounts: true,
		Args: append([]string{"--uts", "sh", "-c", hostnameThenExec, n.Name, n.rig.opts.componentPath(Containerd)},
			"--config", conf, "--log-level", "info"),
		Env: []string{"PATH=" + n.path("bin") + ":" + os.Getenv("PATH")}}
	n.Containerd, err = n.rig.spawn(ctx, spec, func(ctx context.Context) error {
		_, err := n.Ctr(ctx, "version")
		return err
	})
	return err
}

// hostnameThenExec is run by sh in containerd's new UTS namespace: it sets the namespace's
// hostname to $0 (the node's name) and execs the rest (containerd keeps the PID).
const hostnameThenExec = `echo "$0" > /proc/sys/kernel/hostname && exec "$@"`

// linkShim puts the runc shim in the node's bin dir, which comes first on containerd's PATH:
// containerd 2.x runs the first containerd-shim-runc-v2 it finds there, and a system one
// (Debian's containerd 1.6) must not be it.
func (n *RealNode) linkShim() error {
	dir := n.path("bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	shim := n.rig.opts.componentPath(ContainerdShim)
	if err := os.Symlink(shim, filepath.Join(dir, string(ContainerdShim))); err != nil {
		return fmt.Errorf("link runc shim: %w", err)
	}
	return nil
}

// Ctr runs ctr against the node's containerd in the "k8s.io" namespace (the CRI's) and
// returns its standard output; a failure's error includes its standard error.
func (n *RealNode) Ctr(ctx context.Context, args ...string) ([]byte, error) {
	full := append([]string{"--address", n.ContainerdSocket, "--namespace", "k8s.io"}, args...)
	cmd := exec.CommandContext(ctx, n.rig.opts.componentPath(Ctr), full...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// importImages imports the OCI layout tars into the CRI's image store, unpacked for its
// snapshotter, so that pods with imagePullPolicy Never (and the pinned sandbox) find them.
func (n *RealNode) importImages(ctx context.Context) error {
	for _, tar := range n.req.Images {
		if _, err := n.Ctr(ctx, "images", "import", "--snapshotter", "overlayfs", tar); err != nil {
			return fmt.Errorf("import image %s into node %s: %w", tar, n.Name, err)
		}
	}
	return nil
}
