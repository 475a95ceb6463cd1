package harness

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/tmp/plain`:           "/tmp/plain",
		`/tmp/a\040b`:          "/tmp/a b",
		`/tmp/tab\011and\134x`: "/tmp/tab\tand\\x",
		`/tmp/trailing\04`:     `/tmp/trailing\04`,
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRealNodeRequestValidate: every missing or relative field is named in one error.
func TestRealNodeRequestValidate(t *testing.T) {
	err := RealNodeRequest{CNIConfDir: "net.d"}.validate()
	if err == nil {
		t.Fatal("empty request accepted")
	}
	for _, want := range []string{"no node name", `CNI conf dir "net.d" is not an absolute path`, `CNI bin dir "" is not an absolute path`, "sandbox image"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	ok := RealNodeRequest{Name: "n", CNIConfDir: "/c", CNIBinDir: "/b", Images: []string{"/p.tar"}, SandboxImage: "x/pause:1"}
	if err := ok.validate(); err != nil {
		t.Fatalf("valid request refused: %v", err)
	}
}

// TestKubeletConfig: the rendered configuration has the settings this host needs.
func TestKubeletConfig(t *testing.T) {
	n := &RealNode{Name: "n", Dir: "/tmp/r/node-n", ContainerdSocket: "/tmp/r/node-n/containerd.sock", cgroup: "/eovn-1-n"}
	var cfg map[string]any
	data, err := kubeletConfig(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("kubelet config: %v\n%s", err, data)
	}
	for key, want := range map[string]any{
		"kind": "KubeletConfiguration", "cgroupDriver": "cgroupfs", "cgroupRoot": "/eovn-1-n",
		"failSwapOn": false, "failCgroupV1": false, "imageGCHighThresholdPercent": float64(100),
		"containerRuntimeEndpoint": "unix:///tmp/r/node-n/containerd.sock",
	} {
		if cfg[key] != want {
			t.Errorf("%s = %v, want %v", key, cfg[key], want)
		}
	}
}

// TestShimSocket: the socket path containerd 2.2 gave a sandbox's shim (seen in its log:
// "connecting to shim <id>" address=unix:///run/containerd/s/<hash>).
func TestShimSocket(t *testing.T) {
	n := &RealNode{ContainerdSocket: "/tmp/eovn-3310526766/node-edge-1/containerd.sock"}
	id := "da510f20b2430ffb4a8deac9f6630885dc9bb4a845457aa9f509920cc6d8d3e5"
	if got, want := n.shimSocket(id), "/run/containerd/s/c8d0000dcb648a6da871eaadec0191184734c2674ed95b0282ce03bba6af5c13"; got != want {
		t.Fatalf("shimSocket = %s, want %s", got, want)
	}
	args := strings.Fields("/x/containerd-shim-runc-v2 -namespace k8s.io -id " + id + " -address " + n.ContainerdSocket)
	if got := n.shimID(args); got != id {
		t.Fatalf("shimID(%v) = %q", args, got)
	}
	other := strings.Fields("/x/containerd-shim-runc-v2 -namespace k8s.io -id " + id + " -address /run/containerd/containerd.sock")
	if got := n.shimID(other); got != "" {
		t.Fatalf("another containerd's shim taken for this node's: %q", got)
	}
	for _, bad := range []string{"", "../../etc", strings.Repeat("g", 64), id[:63]} {
		if validID(bad) {
			t.Errorf("validID(%q) = true", bad)
		}
	}
}
