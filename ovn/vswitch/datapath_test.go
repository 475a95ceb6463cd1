package vswitch

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDetectDatapathType(t *testing.T) {
	const release = "6.1.0-test"
	modDir := filepath.Join("lib", "modules", release)
	tests := []struct {
		name  string
		files map[string]string // path under the fake root -> content ("/" suffix: directory)
		want  string
	}{
		{"empty tree", nil, DatapathNetdev},
		{"module loaded", map[string]string{"sys/module/openvswitch/": ""}, DatapathSystem},
		{"module in modules.dep", map[string]string{
			filepath.Join(modDir, "modules.dep"): "kernel/net/nsh/nsh.ko.xz:\n" +
				"kernel/net/openvswitch/openvswitch.ko.xz: kernel/net/nsh/nsh.ko.xz kernel/net/netfilter/nf_conntrack.ko.xz\n",
		}, DatapathSystem},
		{"module built in", map[string]string{
			filepath.Join(modDir, "modules.builtin"): "kernel/net/ipv4/tcp_cubic.ko\nkernel/net/openvswitch/openvswitch.ko\n",
		}, DatapathSystem},
		{"only vport modules", map[string]string{
			filepath.Join(modDir, "modules.dep"): "kernel/net/openvswitch/vport-vxlan.ko: kernel/net/openvswitch/openvswitch_x.ko\n",
		}, DatapathNetdev},
		{"other kernel's modules", map[string]string{
			"lib/modules/5.10.0-old/modules.dep": "kernel/net/openvswitch/openvswitch.ko: \n",
		}, DatapathNetdev},
		{"other modules loaded", map[string]string{"sys/module/bridge/": ""}, DatapathNetdev},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for path, content := range tt.files {
				full := filepath.Join(root, path)
				if path[len(path)-1] == '/' {
					if err := os.MkdirAll(full, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := detectDatapathType(root, release); got != tt.want {
				t.Errorf("detectDatapathType = %q, want %q", got, tt.want)
			}
		})
	}
}
