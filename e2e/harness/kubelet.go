package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeletHealthzPort is the kubelet's healthz, on 127.0.0.1 of the rig's namespace.
const kubeletHealthzPort = 10248

// clusterDNS is k3s's cluster DNS address, the kube-dns Service's ClusterIP.
const clusterDNS = "10.43.0.10"

// kubeletConfig renders the KubeletConfiguration (as JSON, which the kubelet reads like
// YAML): cgroupfs under the node's own cgroup root, swap and cgroup v1 tolerated (this host
// has both), its logs, volume plugins and state under the node's dir, images never collected
// (only imported ones exist), no eviction over this shared machine's disk, webhook
// authentication off and everything authorized (the API server holds no kubelet client
// certificate), and the node status written every 2 s so that a change of the network
// plugin's readiness shows within seconds.
func kubeletConfig(n *RealNode) ([]byte, error) {
	cfg := map[string]any{
		"apiVersion":                  "kubelet.config.k8s.io/v1beta1",
		"kind":                        "KubeletConfiguration",
		"containerRuntimeEndpoint":    "unix://" + n.ContainerdSocket,
		"cgroupDriver":                "cgroupfs",
		"cgroupRoot":                  n.cgroup,
		"failSwapOn":                  false,
		"failCgroupV1":                false,
		"podLogsDir":                  n.path("pod-logs"),
		"volumePluginDir":             n.path("kubelet", "volume-plugins"),
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"evictionHard": map[string]string{
			"memory.available": "1Mi", "nodefs.available": "0%", "nodefs.inodesFree": "0%", "imagefs.available": "0%",
		},
		"authentication": map[string]any{
			"anonymous": map[string]bool{"enabled": false},
			"webhook":   map[string]bool{"enabled": false},
		},
		"authorization":             map[string]string{"mode": "AlwaysAllow"},
		"readOnlyPort":              0,
		"healthzBindAddress":        "127.0.0.1",
		"healthzPort":               kubeletHealthzPort,
		"clusterDNS":                []string{clusterDNS},
		"clusterDomain":             "cluster.local",
		"nodeStatusUpdateFrequency": "2s",
		"shutdownGracePeriod":       "0s",
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("render kubelet config: %w", err)
	}
	return b, nil
}

// kernelTunables are the sysctls the kubelet sets on the host at start unless they already
// hold these values (kubelet's setupKernelTunables). On this shared machine it must not change
// them, so its mount namespace shows it files holding exactly these values.
var kernelTunables = map[string]string{
	"vm/overcommit_memory":      "1",
	"vm/panic_on_oom":           "0",
	"kernel/panic":              "10",
	"kernel/panic_on_oops":      "1",
	"kernel/keys/root_maxkeys":  "1000000",
	"kernel/keys/root_maxbytes": "25000000",
}

// kubeletWrapper is the shell run by unshare in the kubelet's own mount namespace (a copy of
// this machine's, propagation unchanged, so the shared kubelet root dir still propagates its
// volume mounts to containerd): it makes /proc private there and binds the tunables' files
// over /proc/sys, then execs the kubelet (argument 1 on). Nothing it mounts is seen outside.
func kubeletWrapper(n *RealNode) (string, error) {
	var b strings.Builder
	b.WriteString("set -e\nmount --make-private /proc\n")
	dir := n.path("sysctl")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	for key, val := range kernelTunables {
		f := filepath.Join(dir, strings.ReplaceAll(key, "/", "."))
		if err := os.WriteFile(f, []byte(val+"\n"), 0o444); err != nil {
			return "", fmt.Errorf("write %s: %w", f, err)
		}
		fmt.Fprintf(&b, "mount --bind %s /proc/sys/%s\n", f, key)
	}
	b.WriteString(`exec "$@"` + "\n")
	return b.String(), nil
}

// startKubelet starts the kubelet in the rig's network namespace, with a token kubeconfig for
// the rig's API server, and waits until its healthz answers and it has registered its Node.
func (n *RealNode) startKubelet(ctx context.Context) error {
	conf := n.path("kubelet.json")
	data, err := kubeletConfig(n)
	if err != nil {
		return fmt.Errorf("start kubelet: %w", err)
	}
	if err := os.WriteFile(conf, data, 0o644); err != nil {
		return fmt.Errorf("start kubelet: write %s: %w", conf, err)
	}
	script, err := kubeletWrapper(n)
	if err != nil {
		return fmt.Errorf("start kubelet: %w", err)
	}
	args := []string{"--mount", "--propagation", "unchanged", "--", "/bin/sh", "-c", script, "kubelet",
		n.rig.opts.componentPath(Kubelet),
		"--config=" + conf,
		"--kubeconfig=" + n.rig.Kubeconfig,
		"--root-dir=" + n.path("kubelet"),
		"--cert-dir=" + n.path("kubelet-pki"),
		"--hostname-override=" + n.Name,
		"--node-ip=" + n.rig.NodeIP.String(),
		"--v=1",
	}
	spec := ProcessSpec{Name: n.Name + "-kubelet", Path: "unshare", Args: append(args, n.req.KubeletExtra...), HostMounts: true}
	healthz := httpOK(n.rig.NetnsPath, fmt.Sprintf("http://127.0.0.1:%d/healthz", kubeletHealthzPort))
	n.Kubelet, err = n.rig.spawn(ctx, spec, func(ctx context.Context) error {
		if err := healthz(ctx); err != nil {
			return err
		}
		_, err := n.rig.kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("node %s not registered yet", n.Name)
		}
		return err
	})
	return err
}
