package plugin

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
)

// TestDaemonDown checks the codes a runtime sees when the daemon's socket stays missing (each
// tried again until the call's timeout): DEL
// must fail with "try again later" rather than succeed and leak the daemon's port and veth.
func TestDaemonDown(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "missing.sock")
	conf := []byte(`{"cniVersion":"1.1.0","name":"edgeovn","type":"edgeovn","serverSocket":"` + sock + `","timeout":"300ms"}`)
	args := &skel.CmdArgs{ContainerID: "c1", Netns: "/var/run/netns/x", IfName: "eth0",
		Args: "K8S_POD_NAMESPACE=default;K8S_POD_NAME=web", StdinData: conf}
	ctx := context.Background()
	tests := []struct {
		name string
		run  func() error
		want uint
	}{
		{"ADD", func() error { return cmdAdd(ctx, args) }, types.ErrTryAgainLater},
		{"DEL", func() error { return cmdDel(ctx, args) }, types.ErrTryAgainLater},
		{"GC", func() error { return cmdGC(ctx, args) }, types.ErrTryAgainLater},
		{"STATUS", func() error { return cmdStatus(ctx, args) }, types.ErrPluginNotAvailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cniCode(t, tt.run()); got != tt.want {
				t.Errorf("code = %d, want %d", got, tt.want)
			}
		})
	}
}
